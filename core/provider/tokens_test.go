package provider

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

func TestTokenSetUnmarshal(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want TokenSet
	}{
		{"all_fields", `{"access_token":"at","id_token":"it","refresh_token":"rt","expires_at":1700000000,"expires_in":3600,
			"scope":"openid email","token_type":"Bearer","session_state":"ss","authorization_details":[{"type":"payment","actions":["read"]}]}`,
			TokenSet{AccessToken: "at", IDToken: "it", RefreshToken: "rt", ExpiresAt: ptr(int64(1700000000)), ExpiresIn: ptr(int64(3600)),
				Scope: "openid email", TokenType: "Bearer", SessionState: "ss",
				AuthorizationDetails: []core.AuthorizationDetail{{Type: "payment", Actions: []string{"read"}}}}},
		{"expires_in_as_string", `{"access_token":"at","expires_in":"3599"}`,
			TokenSet{AccessToken: "at", ExpiresIn: ptr(int64(3599))}},
		{"expires_in_as_float", `{"expires_in":3600.0}`, TokenSet{ExpiresIn: ptr(int64(3600))}},
		{"scope_as_list_joined", `{"scope":["openid","user:read:email"]}`, TokenSet{Scope: "openid user:read:email"}},
		{"nulls_are_absent", `{"access_token":null,"expires_in":null,"authorization_details":null}`, TokenSet{}},
		{"extra_members_kept", `{"access_token":"at","ext_expires_in":3599,"x":"y"}`,
			TokenSet{AccessToken: "at", Extra: map[string]any{"ext_expires_in": json.Number("3599"), "x": "y"}}},
		{"empty_authorization_details_kept_empty", `{"authorization_details":[]}`,
			TokenSet{AuthorizationDetails: []core.AuthorizationDetail{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got TokenSet
			if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTokenSetUnmarshalRejects(t *testing.T) {
	for _, in := range []string{
		`null`, `[]`, `"x"`, `{"access_token":1}`, `{"expires_in":"soon"}`, `{"expires_in":1e300}`,
		`{"scope":3}`, `{"authorization_details":{}}`, `{`,
	} {
		var ts TokenSet
		if err := json.Unmarshal([]byte(in), &ts); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestTokenSetJSONRoundTrip(t *testing.T) {
	in := TokenSet{AccessToken: "at", ExpiresAt: ptr(int64(10)), TokenType: "bearer",
		Extra: map[string]any{"x": "y", "access_token": "must not win"}}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out TokenSet
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	want := in
	want.Extra = map[string]any{"x": "y"}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("round trip: %s -> %+v, want %+v", raw, out, want)
	}
}

func TestDefaultAccount(t *testing.T) {
	full := TokenSet{
		AccessToken: "at", IDToken: "it", RefreshToken: "rt", ExpiresAt: ptr(int64(100)), ExpiresIn: ptr(int64(60)),
		Scope: "s", TokenType: "Bearer", SessionState: "ss",
		AuthorizationDetails: []core.AuthorizationDetail{{Type: "t"}}, Extra: map[string]any{"x": 1},
	}
	got := DefaultAccount(full)
	want := TokenSet{AccessToken: "at", IDToken: "it", RefreshToken: "rt", ExpiresAt: ptr(int64(100)),
		Scope: "s", TokenType: "bearer", SessionState: "ss"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultAccount =\n%+v, want\n%+v", got, want)
	}
	*got.ExpiresAt = 1
	if *full.ExpiresAt != 100 {
		t.Error("DefaultAccount shares ExpiresAt with its input")
	}
}

func TestAccountTokens(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	cases := []struct {
		name    string
		p       OAuthProvider
		in      TokenSet
		wantAt  *int64
		wantTT  string
		wantOut func(TokenSet) bool
	}{
		{"expires_at_from_expires_in", oauthOK(), TokenSet{AccessToken: "a", ExpiresIn: ptr(int64(3600))}, ptr(int64(1_700_003_600)), "", nil},
		{"expires_at_given_wins", oidcOK(), TokenSet{ExpiresAt: ptr(int64(5)), ExpiresIn: ptr(int64(3600))}, ptr(int64(5)), "", nil},
		{"no_expiry", oauthOK(), TokenSet{AccessToken: "a"}, nil, "", nil},
		{"token_type_lowercased", oauthOK(), TokenSet{TokenType: "DPoP"}, nil, "dpop", nil},
		{"custom_callback_sees_expires_at_and_result_lowercased", func() OAuthProvider {
			p := oauthOK()
			p.Account = func(ts TokenSet) TokenSet {
				return TokenSet{AccessToken: ts.AccessToken, ExpiresAt: ts.ExpiresAt, TokenType: "BEARER", Extra: map[string]any{"k": 1}}
			}
			return p
		}(), TokenSet{AccessToken: "a", ExpiresIn: ptr(int64(10)), RefreshToken: "dropped"}, ptr(int64(1_700_000_010)), "bearer",
			func(ts TokenSet) bool { return ts.RefreshToken == "" && ts.Extra["k"] == 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.AccountTokens(tc.in, now)
			if !reflect.DeepEqual(got.ExpiresAt, tc.wantAt) {
				t.Errorf("ExpiresAt = %v, want %v", got.ExpiresAt, tc.wantAt)
			}
			if got.TokenType != tc.wantTT {
				t.Errorf("TokenType = %q, want %q", got.TokenType, tc.wantTT)
			}
			if got.ExpiresIn != nil && tc.wantOut == nil {
				t.Errorf("default account kept expires_in")
			}
			if tc.wantOut != nil && !tc.wantOut(got) {
				t.Errorf("custom callback result not used: %+v", got)
			}
			if tc.in.ExpiresAt == nil && tc.in.ExpiresIn != nil && tc.in.ExpiresAt != nil {
				t.Errorf("input changed")
			}
		})
	}
}

func TestTokenSetAccount(t *testing.T) {
	ts := TokenSet{AccessToken: "at", RefreshToken: "", ExpiresAt: ptr(int64(9)), ExpiresIn: ptr(int64(3)),
		Scope: "openid", TokenType: "Bearer", AuthorizationDetails: []core.AuthorizationDetail{}}
	typ, ok := TypeOIDC.AccountType()
	if !ok {
		t.Fatal("oidc has no account type")
	}
	a := ts.Account("user-1", "google", typ, "sub-1")
	want := core.Account{
		UserID: "user-1", Provider: "google", Type: core.AccountTypeOIDC, ProviderAccountID: "sub-1",
		AccessToken: ptr("at"), AuthorizationDetails: []core.AuthorizationDetail{}, ExpiresAt: ptr(int64(9)), ExpiresIn: ptr(int64(3)),
		Scope: ptr("openid"), TokenType: ptr("bearer"),
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("Account =\n%+v, want\n%+v", a, want)
	}
	*a.ExpiresAt = 0
	if *ts.ExpiresAt != 9 {
		t.Error("Account shares ExpiresAt with the token set")
	}
}
