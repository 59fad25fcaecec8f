package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/authport/authport/core/provider"
)

func TestTypedProfileBadInput(t *testing.T) {
	for _, in := range []string{``, `null`, `[1]`, `{"sub":`} {
		if _, err := GitHub("a", "b").ProfileFromJSON(context.Background(), []byte(in), provider.TokenSet{}); err == nil {
			t.Errorf("github %q: no error", in)
		}
	}
}

// TestTypedProfileDefaultMapping checks a typed profile without a Profile
// callback goes through DefaultProfile via its JSON form.
func TestTypedProfileDefaultMapping(t *testing.T) {
	p := Google("id", "secret")
	p.Profile = nil
	u, err := p.ProfileFromJSON(context.Background(), []byte(`{"sub":"g1","email":"a@b.c","name":"Ann","picture":"https://p"}`), provider.TokenSet{})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != "g1" || u.Email != "a@b.c" || deref(u.Name) != "Ann" || deref(u.Image) != "https://p" {
		t.Errorf("got %+v", u)
	}
}

func TestGitHubUserinfoEmailFallback(t *testing.T) {
	cases := []struct {
		name      string
		user      string
		emails    string
		emailCode int
		want      string
	}{
		{"public_email_used", `{"id":1,"login":"octo","email":"pub@x.y"}`, `[]`, 200, "pub@x.y"},
		{"primary_verified_email", `{"id":1,"login":"octo","email":null}`,
			`[{"email":"other@x.y","primary":false,"verified":true},{"email":"prim@x.y","primary":true,"verified":true}]`, 200, "prim@x.y"},
		{"first_verified_when_primary_unverified", `{"id":1,"login":"octo"}`,
			`[{"email":"unv@x.y","primary":true,"verified":false},{"email":"ver@x.y","primary":false,"verified":true}]`, 200, "ver@x.y"},
		{"no_verified_email", `{"id":1,"login":"octo"}`, `[{"email":"unv@x.y","primary":true,"verified":false}]`, 200, ""},
		{"emails_forbidden", `{"id":1,"login":"octo"}`, `{"message":"no"}`, 403, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer tok" {
					w.WriteHeader(401)
					return
				}
				switch r.URL.Path {
				case "/user":
					_, _ = w.Write([]byte(tc.user))
				case "/user/emails":
					w.WriteHeader(tc.emailCode)
					_, _ = w.Write([]byte(tc.emails))
				default:
					w.WriteHeader(404)
				}
			}))
			defer srv.Close()
			p := GitHub("id", "secret")
			p.Userinfo.URL = srv.URL + "/user"
			u, ok, err := p.FetchUserinfo(context.Background(), provider.UserinfoRequest{Tokens: provider.TokenSet{AccessToken: "tok"}, Client: srv.Client()})
			if !ok || err != nil {
				t.Fatalf("ok %v err %v", ok, err)
			}
			if u.Email != tc.want || u.ID != "1" || deref(u.Name) != "octo" {
				t.Errorf("got %+v, want email %q", u, tc.want)
			}
		})
	}
	t.Run("user_endpoint_fails", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
		defer srv.Close()
		p := GitHub("id", "secret")
		p.Userinfo.URL = srv.URL + "/user"
		_, _, err := p.FetchUserinfo(context.Background(), provider.UserinfoRequest{Client: srv.Client()})
		if err == nil || !strings.Contains(err.Error(), "500") {
			t.Errorf("err = %v, want the status", err)
		}
	})
}

// The provider's email_verified claim reaches User.EmailVerified, read from
// the provider's JSON: a typed profile's false cannot be told from a
// missing claim, so only what was sent counts.
func TestProfileEmailVerified(t *testing.T) {
	generic := &provider.OIDCConfig[map[string]any]{}
	google := Google("id", "secret")
	for _, tc := range []struct {
		raw  string
		want string
	}{
		{`{"sub":"1","email":"a@b.c","email_verified":false}`, "false"},
		{`{"sub":"1","email":"a@b.c","email_verified":"false"}`, "false"},
		{`{"sub":"1","email":"a@b.c","email_verified":true}`, "true"},
		{`{"sub":"1","email":"a@b.c","email_verified":"TRUE"}`, "true"},
		{`{"sub":"1","email":"a@b.c"}`, "nil"},
		{`{"sub":"1","email":"a@b.c","email_verified":"maybe"}`, "nil"},
		{`{"sub":"1","email_verified":false}`, "nil"},
	} {
		for name, p := range map[string]provider.OAuthProvider{"generic": generic, "google": google} {
			if name == "google" && strings.Contains(tc.raw, `"email_verified":"`) {
				continue // Google's typed profile wants a boolean
			}
			u, err := p.ProfileFromJSON(context.Background(), []byte(tc.raw), provider.TokenSet{})
			if err != nil {
				t.Fatalf("%s %s: %v", name, tc.raw, err)
			}
			got := "nil"
			if u.EmailVerified != nil {
				got = map[bool]string{true: "true", false: "false"}[*u.EmailVerified]
			}
			if got != tc.want {
				t.Errorf("%s %s: EmailVerified %s, want %s", name, tc.raw, got, tc.want)
			}
		}
	}
}

// TestStandardClaimsProfilesDecode checks that the profile types that
// embed StandardClaims decode the standard claims and their own ones from
// one JSON object, their own winning (Auth0's updated_at stays a string,
// LinkedIn's locale raw JSON).
func TestStandardClaimsProfilesDecode(t *testing.T) {
	const in = `{"sub":"s1","name":"Ann","given_name":"A","family_name":"N","email":"a@b.c","email_verified":true,` +
		`"picture":"https://p","preferred_username":"ann","nickname":"an","locale":"de","updated_at":"2024-01-02T03:04:05Z",` +
		`"iss":"https://accounts.google.com","azp":"cid","hd":"b.c","iat":1,"exp":2,"session_state":"st","oid":"o1","tid":"t1",` +
		`"https://slack.com/team_id":"T1"}`
	std := StandardClaims{Sub: "s1", Name: "Ann", GivenName: "A", FamilyName: "N", Email: "a@b.c", EmailVerified: true,
		Picture: "https://p", PreferredUsername: "ann", Nickname: "an", Locale: "de", UpdatedAt: "2024-01-02T03:04:05Z"}
	noUpdated := std
	noUpdated.UpdatedAt = nil
	noLocale := std
	noLocale.Locale = ""
	cases := []struct {
		name      string
		got, want any
	}{
		{"auth0", &Auth0Profile{}, &Auth0Profile{StandardClaims: noUpdated, UpdatedAt: "2024-01-02T03:04:05Z"}},
		{"keycloak", &KeycloakProfile{}, &KeycloakProfile{StandardClaims: std, SessionState: "st"}},
		{"google", &GoogleProfile{}, &GoogleProfile{StandardClaims: std, Iss: "https://accounts.google.com", Azp: "cid", HD: "b.c", Iat: 1, Exp: 2}},
		{"microsoft-entra-id", &MicrosoftEntraIDProfile{}, &MicrosoftEntraIDProfile{StandardClaims: std, OID: "o1", TID: "t1"}},
		{"twitch", &TwitchProfile{}, &TwitchProfile{StandardClaims: std}},
		{"okta", &OktaProfile{}, &OktaProfile{StandardClaims: std}},
		{"slack", &SlackProfile{}, &SlackProfile{StandardClaims: std, TeamID: "T1"}},
		{"linkedin", &LinkedInProfile{}, &LinkedInProfile{StandardClaims: noLocale, Locale: json.RawMessage(`"de"`)}},
	}
	for _, c := range cases {
		if err := json.Unmarshal([]byte(in), c.got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s decoded %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

// TestStandardClaimsNameFallbacks checks each mapping's choice of name
// when the name claim is missing, and that sub, email and picture map.
func TestStandardClaimsNameFallbacks(t *testing.T) {
	const in = `{"sub":"s1","email":"a@b.c","picture":"https://p","given_name":"A","family_name":"N",` +
		`"nickname":"nick","preferred_username":"pref","username":"user"}`
	cases := []struct {
		p interface {
			ProfileFromJSON(context.Context, []byte, provider.TokenSet) (provider.User, error)
		}
		want string // "" for no name
	}{
		{Auth0("c", "s", "example.auth0.com"), "nick"},
		{Keycloak("c", "s", "https://kc.example.com/realms/r"), "pref"},
		{Okta("c", "s", "https://example.okta.com"), "nick"},
		{Logto("c", "s", "https://example.logto.app/oidc"), "user"},
		{Twitch("c", "s"), "pref"},
		{Google("c", "s"), ""},
		{LinkedIn("c", "s"), ""},
		{MicrosoftEntraID("c", "s", ""), ""},
		{Zitadel("c", "s", "https://example.zitadel.cloud"), "A N"}, // StandardClaimsUser
	}
	for _, c := range cases {
		u, err := c.p.ProfileFromJSON(context.Background(), []byte(in), provider.TokenSet{})
		if err != nil || u.ID != "s1" || u.Email != "a@b.c" || deref(u.Image) != "https://p" || deref(u.Name) != c.want {
			t.Errorf("%T: %+v (name %q), %v; want s1, a@b.c, https://p and the name %q", c.p, u, deref(u.Name), err, c.want)
		}
	}
	// The fallbacks past the standard claims: Cognito's username for the
	// name, Frontegg's profilePictureUrl for the picture.
	ctx := context.Background()
	if u, _ := CognitoUser(ctx, CognitoProfile{StandardClaims: StandardClaims{Sub: "s1"}, Username: "cu"}, provider.TokenSet{}); deref(u.Name) != "cu" {
		t.Errorf("cognito without name claims: name %q, want cognito:username", deref(u.Name))
	}
	if u, _ := CognitoUser(ctx, CognitoProfile{StandardClaims: StandardClaims{Sub: "s1", GivenName: "A"}, Username: "cu"}, provider.TokenSet{}); deref(u.Name) != "A" {
		t.Errorf("cognito with a given name: name %q, want A", deref(u.Name))
	}
	if u, _ := FronteggUser(ctx, FronteggProfile{StandardClaims: StandardClaims{Sub: "s1"}, ProfilePictureURL: "https://f"}, provider.TokenSet{}); deref(u.Image) != "https://f" {
		t.Errorf("frontegg without picture: image %q, want profilePictureUrl", deref(u.Image))
	}
	if u, _ := FronteggUser(ctx, FronteggProfile{StandardClaims: StandardClaims{Sub: "s1", Picture: "https://p"}, ProfilePictureURL: "https://f"}, provider.TokenSet{}); deref(u.Image) != "https://p" {
		t.Errorf("frontegg with picture: image %q, want picture", deref(u.Image))
	}
}
