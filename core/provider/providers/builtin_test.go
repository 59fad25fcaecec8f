package providers

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// builtinCase describes what a built-in factory must produce and how it
// maps a sample profile.
type builtinCase struct {
	id          string
	typ         provider.Type
	make        func() provider.OAuthProvider
	issuer      string
	auth        string // authorization URL ("" for OIDC discovery)
	token       string
	userinfo    string
	params      url.Values      // authorization parameters that must be present
	checks      provider.Checks // as configured (before Validate), nil for the default
	authMethod  string
	color, logo string
	sample      string
	want        provider.User
}

func builtinCases() []builtinCase {
	return []builtinCase{
		{
			id: "github", typ: provider.TypeOAuth, make: func() provider.OAuthProvider { return GitHub("cid", "cs") },
			auth: "https://github.com/login/oauth/authorize", token: "https://github.com/login/oauth/access_token", userinfo: "https://api.github.com/user",
			params: url.Values{"scope": {"read:user user:email"}}, color: "#24292f", logo: "/github.svg",
			sample: `{"login":"octocat","id":583231,"avatar_url":"https://avatars.githubusercontent.com/u/583231?v=4","name":null,"email":"octo@github.com"}`,
			want:   provider.User{ID: "583231", Email: "octo@github.com", Name: ptr("octocat"), Image: ptr("https://avatars.githubusercontent.com/u/583231?v=4")},
		},
		{
			id: "gitlab", typ: provider.TypeOAuth, make: func() provider.OAuthProvider { return GitLab("cid", "cs") },
			auth: "https://gitlab.com/oauth/authorize", token: "https://gitlab.com/oauth/token", userinfo: "https://gitlab.com/api/v4/user",
			params: url.Values{"scope": {"read_user"}}, color: "#FC6D26", logo: "/gitlab.svg",
			sample: `{"id":42,"username":"jdoe","name":"","email":"j@doe.dev","avatar_url":"https://gitlab.com/uploads/a.png"}`,
			want:   provider.User{ID: "42", Email: "j@doe.dev", Name: ptr("jdoe"), Image: ptr("https://gitlab.com/uploads/a.png")},
		},
		{
			id: "discord", typ: provider.TypeOAuth, make: func() provider.OAuthProvider { return Discord("cid", "cs") },
			auth: "https://discord.com/api/oauth2/authorize", token: "https://discord.com/api/oauth2/token", userinfo: "https://discord.com/api/users/@me",
			params: url.Values{"scope": {"identify email"}}, color: "#5865F2", logo: "/discord.svg",
			sample: `{"id":"80351110224678912","username":"nelly","discriminator":"0","global_name":"Nelly","avatar":"a_8342729096ea3675442027381ff50dfe","email":"nelly@discord.com","verified":true}`,
			want: provider.User{ID: "80351110224678912", Email: "nelly@discord.com", Name: ptr("Nelly"),
				Image: ptr("https://cdn.discordapp.com/avatars/80351110224678912/a_8342729096ea3675442027381ff50dfe.gif")},
		},
		{
			id: "google", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return Google("cid", "cs") },
			issuer: "https://accounts.google.com", color: "#1a73e8", logo: "/google.svg",
			sample: `{"iss":"https://accounts.google.com","sub":"110169484474386276334","email":"ann@gmail.com","email_verified":true,"name":"Ann Lee","picture":"https://lh3.googleusercontent.com/a/x"}`,
			want:   provider.User{ID: "110169484474386276334", Email: "ann@gmail.com", Name: ptr("Ann Lee"), Image: ptr("https://lh3.googleusercontent.com/a/x")},
		},
		{
			id: "microsoft-entra-id", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return MicrosoftEntraID("cid", "cs", "contoso.onmicrosoft.com") },
			issuer: "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0", params: url.Values{"scope": {"openid profile email User.Read"}},
			color: "#0072c6", logo: "/microsoft-entra-id.svg",
			sample: `{"sub":"AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ","oid":"00000000-0000-0000-66f3-3332eca7ea81","name":"Megan Bowen","email":"megan@contoso.com","preferred_username":"megan@contoso.com"}`,
			want:   provider.User{ID: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", Email: "megan@contoso.com", Name: ptr("Megan Bowen")},
		},
		{
			id: "apple", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return Apple("com.example.web", "jwt") },
			issuer: "https://appleid.apple.com", params: url.Values{"scope": {"name email"}, "response_mode": {"form_post"}},
			authMethod: "client_secret_post", color: "#000000", logo: "/apple.svg",
			sample: `{"iss":"https://appleid.apple.com","sub":"001234.abcdef.1234","email":"x@privaterelay.appleid.com","email_verified":"true","is_private_email":true,
				"user":{"name":{"firstName":"Tim","lastName":"Apple"},"email":"x@privaterelay.appleid.com"}}`,
			want: provider.User{ID: "001234.abcdef.1234", Email: "x@privaterelay.appleid.com", Name: ptr("Tim Apple")},
		},
		{
			id: "auth0", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return Auth0("cid", "cs", "example.eu.auth0.com") },
			issuer: "https://example.eu.auth0.com/", color: "#EB5424", logo: "/auth0.svg",
			sample: `{"sub":"auth0|507f1f77bcf86cd799439020","nickname":"jdoe","name":"","email":"j@doe.dev","picture":"https://s.gravatar.com/avatar/x.png"}`,
			want:   provider.User{ID: "auth0|507f1f77bcf86cd799439020", Email: "j@doe.dev", Name: ptr("jdoe"), Image: ptr("https://s.gravatar.com/avatar/x.png")},
		},
		{
			id: "keycloak", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return Keycloak("cid", "cs", "https://sso.example.com/realms/main") },
			issuer: "https://sso.example.com/realms/main", color: "#428bca", logo: "/keycloak.svg",
			sample: `{"sub":"f:1:kc","preferred_username":"kcuser","email":"kc@example.com"}`,
			want:   provider.User{ID: "f:1:kc", Email: "kc@example.com", Name: ptr("kcuser")},
		},
		{
			id: "okta", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return Okta("cid", "cs", "https://dev-123456.okta.com/oauth2/default") },
			issuer: "https://dev-123456.okta.com/oauth2/default", checks: provider.Checks{provider.CheckPKCE, provider.CheckState}, color: "#000000", logo: "/okta.svg",
			sample: `{"sub":"00uid4BxXw6I6TV4m0g3","name":"John Doe","email":"john@example.com","picture":"https://okta/p.png"}`,
			want:   provider.User{ID: "00uid4BxXw6I6TV4m0g3", Email: "john@example.com", Name: ptr("John Doe"), Image: ptr("https://okta/p.png")},
		},
		{
			id: "slack", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return Slack("cid", "cs") },
			issuer: "https://slack.com", checks: provider.Checks{provider.CheckNonce}, color: "#611f69", logo: "/slack.svg",
			sample: `{"sub":"U0R7JM","https://slack.com/user_id":"U0R7JM","https://slack.com/team_id":"T0R7GR","email":"krane@slack-corp.com","name":"krane","picture":"https://secure.gravatar.com/avatar/x.jpg"}`,
			want:   provider.User{ID: "U0R7JM", Email: "krane@slack-corp.com", Name: ptr("krane"), Image: ptr("https://secure.gravatar.com/avatar/x.jpg")},
		},
		{
			id: "twitch", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return Twitch("cid", "cs") },
			issuer: "https://id.twitch.tv/oauth2", authMethod: "client_secret_post", color: "#65459B", logo: "/twitch.svg",
			params: url.Values{"scope": {"openid user:read:email"}, "claims": {`{"id_token":{"email":null,"picture":null,"preferred_username":null}}`}},
			sample: `{"sub":"713936733","preferred_username":"streamer","email":"s@twitch.tv","picture":"https://static-cdn.jtvnw.net/p.png"}`,
			want:   provider.User{ID: "713936733", Email: "s@twitch.tv", Name: ptr("streamer"), Image: ptr("https://static-cdn.jtvnw.net/p.png")},
		},
		{
			id: "linkedin", typ: provider.TypeOIDC, make: func() provider.OAuthProvider { return LinkedIn("cid", "cs") },
			issuer: "https://www.linkedin.com/oauth", authMethod: "client_secret_post", color: "#069", logo: "/linkedin.svg",
			params: url.Values{"scope": {"openid profile email"}},
			sample: `{"sub":"782bbtaQ","name":"John Doe","given_name":"John","family_name":"Doe","picture":"https://media.licdn.com/p.jpg","locale":{"country":"US","language":"en"},"email":"doe@email.com","email_verified":true}`,
			want:   provider.User{ID: "782bbtaQ", Email: "doe@email.com", Name: ptr("John Doe"), Image: ptr("https://media.licdn.com/p.jpg")},
		},
	}
}

func TestBuiltInProviders(t *testing.T) {
	for _, tc := range builtinCases() {
		t.Run(tc.id, func(t *testing.T) {
			p := tc.make()
			o := p.Options()
			if o.ID != tc.id || o.Type != tc.typ || o.Name == "" {
				t.Errorf("common = %+v, want id %q type %q", o.CommonOptions, tc.id, tc.typ)
			}
			if o.ClientID != "cid" && tc.id != "apple" {
				t.Errorf("ClientID = %q", o.ClientID)
			}
			if o.Issuer != tc.issuer {
				t.Errorf("Issuer = %q, want %q", o.Issuer, tc.issuer)
			}
			if o.Authorization.URL != tc.auth || o.Token.URL != tc.token || o.Userinfo.URL != tc.userinfo {
				t.Errorf("endpoints = %q %q %q, want %q %q %q", o.Authorization.URL, o.Token.URL, o.Userinfo.URL, tc.auth, tc.token, tc.userinfo)
			}
			for k, vs := range tc.params {
				if got := o.Authorization.Params.Get(k); got != vs[0] {
					t.Errorf("authorization param %s = %q, want %q", k, got, vs[0])
				}
			}
			if len(o.Checks) != len(tc.checks) || (tc.checks != nil && !slices.Equal(o.Checks, tc.checks)) {
				t.Errorf("Checks = %v, want %v", o.Checks, tc.checks)
			}
			if o.Client.TokenEndpointAuthMethod != tc.authMethod {
				t.Errorf("token endpoint auth method = %q, want %q", o.Client.TokenEndpointAuthMethod, tc.authMethod)
			}
			if o.Style.BrandColor != tc.color || o.Style.Logo != tc.logo || o.Style.Bg != "" || o.Style.Text != "" {
				t.Errorf("Style = %+v, want colour %q logo %q", o.Style, tc.color, tc.logo)
			}
			if o.AllowDangerousEmailAccountLinking {
				t.Error("dangerous e-mail linking on by default")
			}
			got, err := p.ProfileFromJSON(context.Background(), []byte(tc.sample), provider.TokenSet{AccessToken: "at"})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tc.want.ID || got.Email != tc.want.Email || deref(got.Name) != deref(tc.want.Name) || deref(got.Image) != deref(tc.want.Image) {
				t.Errorf("profile = {%q %q %s %s}, want {%q %q %s %s}", got.ID, got.Email, deref(got.Name), deref(got.Image),
					tc.want.ID, tc.want.Email, deref(tc.want.Name), deref(tc.want.Image))
			}
			// Given only what the user supplies, every built-in validates.
			if _, err := provider.Validate([]provider.Provider{p}); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestDiscordAvatarURL(t *testing.T) {
	cases := []struct {
		name string
		p    DiscordProfile
		want string
	}{
		{"static_hash_png", DiscordProfile{ID: "1", Avatar: ptr("abc")}, "https://cdn.discordapp.com/avatars/1/abc.png"},
		{"animated_hash_gif", DiscordProfile{ID: "1", Avatar: ptr("a_abc")}, "https://cdn.discordapp.com/avatars/1/a_abc.gif"},
		// (80351110224678912 >> 22) % 6 = 19157197529 % 6 = 5.
		{"default_new_username", DiscordProfile{ID: "80351110224678912", Discriminator: "0"}, "https://cdn.discordapp.com/embed/avatars/5.png"},
		{"default_legacy_discriminator", DiscordProfile{ID: "1", Discriminator: "1337"}, "https://cdn.discordapp.com/embed/avatars/2.png"},
		{"default_empty_hash", DiscordProfile{ID: "1", Discriminator: "0004", Avatar: ptr("")}, "https://cdn.discordapp.com/embed/avatars/4.png"},
		{"garbage_id_no_panic", DiscordProfile{ID: "x/../y", Discriminator: "0"}, "https://cdn.discordapp.com/embed/avatars/0.png"},
		{"id_escaped", DiscordProfile{ID: "a/b", Avatar: ptr("h")}, "https://cdn.discordapp.com/avatars/a%2Fb/h.png"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := DiscordAvatarURL(tc.p); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuiltInFactoryVariants(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"entra_default_tenant_common", MicrosoftEntraID("c", "s", "").Issuer, "https://login.microsoftonline.com/common/v2.0"},
		{"entra_tenant_id", MicrosoftEntraID("c", "s", "9188040d-6c67-4c5b-b112-36a304b66dad").Issuer,
			"https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"},
		{"entra_issuer_url_kept", MicrosoftEntraID("c", "s", "https://login.microsoftonline.com/x/v2.0").Issuer, "https://login.microsoftonline.com/x/v2.0"},
		{"auth0_url_gets_trailing_slash", Auth0("c", "s", "https://example.auth0.com").Issuer, "https://example.auth0.com/"},
		{"auth0_url_with_slash_kept", Auth0("c", "s", "https://example.auth0.com/").Issuer, "https://example.auth0.com/"},
		{"okta_bare_domain", Okta("c", "s", "dev-1.okta.com").Issuer, "https://dev-1.okta.com"},
		{"keycloak_empty_issuer_stays_empty", Keycloak("c", "s", "").Issuer, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
	// A Keycloak without its issuer is reported by Validate.
	_, err := provider.Validate([]provider.Provider{Keycloak("c", "s", "")})
	var ve *provider.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "Issuer" || !strings.Contains(ve.Problems[0].Message, "issuer or WellKnown") {
		t.Errorf("Keycloak without issuer: %v, want one Issuer problem", err)
	}
}

func TestFactoriesReturnFreshValues(t *testing.T) {
	a, b := GitHub("a", "b"), GitHub("a", "b")
	a.Authorization.Params.Set("scope", "changed")
	if b.Authorization.Params.Get("scope") != "read:user user:email" {
		t.Error("GitHub factories share Params")
	}
}

func TestAppleProfileBoolStrings(t *testing.T) {
	for in, want := range map[string]bool{`true`: true, `"true"`: true, `false`: false, `"false"`: false, `null`: false, `1`: false} {
		var p AppleProfile
		if err := json.Unmarshal([]byte(`{"sub":"s","email_verified":`+in+`}`), &p); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if bool(p.EmailVerified) != want {
			t.Errorf("email_verified %s = %v, want %v", in, p.EmailVerified, want)
		}
	}
	u, err := AppleUser(context.Background(), AppleProfile{Sub: "s", Email: "e@x.y"}, provider.TokenSet{})
	if err != nil || u.Name != nil || u.Image != nil {
		t.Errorf("Apple without user object: %+v %v", u, err)
	}
}

func TestRegistry(t *testing.T) {
	r := BuiltIns()
	want := []string{"apple", "auth0", "credentials", "discord", "email", "forwardemail", "github", "gitlab", "google", "keycloak",
		"linkedin", "mailgun", "microsoft-entra-id", "okta", "passkey", "postmark", "resend", "sendgrid", "slack", "twitch"}
	// These built-ins are there; builtins_more_test.go checks the other
	// identity providers.
	for _, id := range want {
		if r[id] == nil {
			t.Errorf("IDs = %v, want %s among them", r.IDs(), id)
		}
	}
	c := UserConfig{ClientID: "cid", ClientSecret: "cs", Issuer: "https://issuer.test/realms/x", Tenant: "t1"}
	for _, id := range want {
		p, err := r.New(id, c)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if p.Common().ID != id {
			t.Errorf("New(%q).Common().ID = %q", id, p.Common().ID)
		}
		if o, ok := p.(provider.OAuthProvider); ok && o.Options().ClientID != "cid" {
			t.Errorf("%s: ClientID not passed", id)
		}
	}
	if p, _ := r.New("microsoft-entra-id", c); p.(provider.OAuthProvider).Options().Issuer != "https://login.microsoftonline.com/t1/v2.0" {
		t.Error("tenant not passed")
	}
	if p, _ := r.New("keycloak", c); p.(provider.OAuthProvider).Options().Issuer != c.Issuer {
		t.Error("issuer not passed")
	}
	if _, err := r.New("myspace", c); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("unknown id: err = %v", err)
	}
	// Each call returns a fresh registry and fresh providers.
	delete(r, "github")
	if _, ok := BuiltIns()["github"]; !ok {
		t.Error("BuiltIns shares its map")
	}
	p1, _ := BuiltIns().New("google", c)
	p2, _ := BuiltIns().New("google", c)
	if p1 == p2 {
		t.Error("factory returned the same value twice")
	}
	// The e-mail and credentials defaults need their callbacks.
	e, _ := BuiltIns().New("email", c)
	cr, _ := BuiltIns().New("credentials", c)
	_, err := provider.Validate([]provider.Provider{e, cr})
	matchProblems(t, err, []wantProblem{
		{0, "From", "required"}, {0, "SendVerificationRequest", "required"}, {1, "Authorize", "required"},
	})
}
