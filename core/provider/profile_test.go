package provider

import (
	"context"
	"errors"
	"testing"
)

func TestDefaultProfile(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want User
	}{
		{"oidc_claims", `{"sub":"s1","id":"ignored","email":"a@b.c","name":"Ann","picture":"https://p/1"}`,
			User{ID: "s1", Email: "a@b.c", Name: ptr("Ann"), Image: ptr("https://p/1")}},
		{"numeric_id_keeps_digits", `{"id":12345678901234567890,"nickname":"nick"}`,
			User{ID: "12345678901234567890", Name: ptr("nick")}},
		{"preferred_username_and_image", `{"id":"x","preferred_username":"pu","image":"https://i"}`,
			User{ID: "x", Name: ptr("pu"), Image: ptr("https://i")}},
		{"empty_strings_fall_through", `{"sub":"","id":"7","name":"","nickname":"n"}`,
			User{ID: "7", Name: ptr("n")}},
	}
	p := oauthOK()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.ProfileFromJSON(context.Background(), []byte(tc.in), TokenSet{})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tc.want.ID || got.Email != tc.want.Email || deref(got.Name) != deref(tc.want.Name) || deref(got.Image) != deref(tc.want.Image) {
				t.Errorf("got %+v (name %s, image %s), want %+v", got, deref(got.Name), deref(got.Image), tc.want)
			}
		})
	}
}

func TestProfileNeedsID(t *testing.T) {
	_, err := oauthOK().ProfileFromJSON(context.Background(), []byte(`{"email":"a@b.c"}`), TokenSet{})
	if !errors.Is(err, errProfileID) {
		t.Errorf("default mapping without id: err = %v, want errProfileID", err)
	}
	p := oidcOK()
	p.Profile = func(context.Context, anyProfile, TokenSet) (User, error) { return User{Email: "x@y.z"}, nil }
	_, err = p.ProfileFromJSON(context.Background(), []byte(`{"sub":"1"}`), TokenSet{})
	if !errors.Is(err, errProfileID) {
		t.Errorf("callback without id: err = %v, want errProfileID", err)
	}
}

func TestProfileFromJSONBadInput(t *testing.T) {
	for _, in := range []string{``, `null`, `[1]`, `{"sub":`} {
		if _, err := oauthOK().ProfileFromJSON(context.Background(), []byte(in), TokenSet{}); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestUserCoreUser(t *testing.T) {
	u := User{ID: "provider-id", Email: "a@b.c", Name: ptr("Ann")}
	c := u.CoreUser("db-id")
	if c.ID != "db-id" || c.Email != "a@b.c" || deref(c.Name) != "Ann" || c.Image != nil || c.EmailVerified != nil {
		t.Errorf("CoreUser = %+v", c)
	}
	*c.Name = "changed"
	if *u.Name != "Ann" {
		t.Error("CoreUser shares Name")
	}
}

func TestFetchUserinfo(t *testing.T) {
	p := oauthOK()
	if _, ok, err := p.FetchUserinfo(context.Background(), UserinfoRequest{}); ok || err != nil {
		t.Fatalf("without a handler: ok %v err %v, want false, nil", ok, err)
	}
	var gotReq UserinfoRequest
	p.Userinfo.Request = func(_ context.Context, req UserinfoRequest) (anyProfile, error) {
		gotReq = req
		return anyProfile{"id": "u1", "email": "a@b.c"}, nil
	}
	u, ok, err := p.FetchUserinfo(context.Background(), UserinfoRequest{Tokens: TokenSet{AccessToken: "at"}})
	if !ok || err != nil || u.ID != "u1" {
		t.Fatalf("got %+v %v %v", u, ok, err)
	}
	if gotReq.Endpoint.URL != "https://acme.test/userinfo" || gotReq.Tokens.AccessToken != "at" {
		t.Errorf("handler got %+v", gotReq)
	}
	p.Userinfo.Request = func(context.Context, UserinfoRequest) (anyProfile, error) { return nil, errors.New("boom") }
	if _, ok, err := p.FetchUserinfo(context.Background(), UserinfoRequest{}); !ok || err == nil {
		t.Errorf("failing handler: ok %v err %v", ok, err)
	}
}
