package providers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// perDeployment are the built-ins that need UserConfig.Issuer: without it
// they fail validation.
var perDeployment = []string{"asgardeo", "auth0", "authentik", "azure-ad-b2c", "beyondidentity", "boxyhq-saml", "cognito",
	"duende-identity-server6", "frontegg", "fusionauth", "identity-server4", "keycloak", "kinde", "logto", "mastodon",
	"mattermost", "nextcloud", "okta", "onelogin", "ory-hydra", "osso", "passage", "ping-id", "united-effects", "zitadel"}

// TestBuiltInsValidate builds every OAuth and OIDC built-in from a full
// UserConfig and validates it: at least 60 of them, each with its id, a
// profile callback and sane checks. Without an issuer, the per-deployment
// ones fail validation and the others still pass.
func TestBuiltInsValidate(t *testing.T) {
	r := BuiltIns()
	full := UserConfig{ClientID: "cid", ClientSecret: "cs", Issuer: "https://idp.example.com", Tenant: "t1"}
	var n int
	for _, id := range r.IDs() {
		p, err := r.New(id, full)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := p.(provider.OAuthProvider)
		if !ok {
			continue
		}
		n++
		if _, err := provider.Validate([]provider.Provider{p}); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		opts := o.Options()
		if opts.ID != id || opts.Name == "" || opts.ClientID != "cid" || opts.ClientSecret != "cs" {
			t.Errorf("%s: options %+v", id, opts.CommonOptions)
		}
		if opts.Checks.Has(provider.CheckNone) {
			t.Errorf("%s: checks %v: a built-in must protect its callback", id, opts.Checks)
		}
		bare, _ := r.New(id, UserConfig{ClientID: "cid", ClientSecret: "cs"})
		_, err = provider.Validate([]provider.Provider{bare})
		if want := slices.Contains(perDeployment, id); (err != nil) != want {
			t.Errorf("%s without an issuer: Validate error %v, want an error: %v", id, err, want)
		}
	}
	if n < 60 {
		t.Errorf("%d OAuth/OIDC built-ins, want at least 60", n)
	}
}

// TestBuiltInArguments checks how factories turn their arguments into
// issuers and parameters.
func TestBuiltInArguments(t *testing.T) {
	issuer := func(p provider.Provider) string { return p.(provider.OAuthProvider).Options().Issuer }
	for _, tc := range []struct {
		p    provider.Provider
		want string
	}{
		{Asgardeo("c", "s", "acme"), "https://api.asgardeo.io/t/acme/oauth2/token"},
		{Asgardeo("c", "s", "https://api.asgardeo.io/t/acme/"), "https://api.asgardeo.io/t/acme/oauth2/token"},
		{OneLogin("c", "s", "acme"), "https://acme.onelogin.com/oidc/2"},
		{OneLogin("c", "s", "https://acme.onelogin.com/oidc/2"), "https://acme.onelogin.com/oidc/2"},
		{Passage("c", "s", "app1"), "https://auth.passage.id/v1/apps/app1"},
		{Descope("P2abc", "s", ""), "https://api.descope.com/P2abc"},
		{BattleNet("c", "s", ""), "https://oauth.battle.net"},
		{BattleNet("c", "s", "https://oauth.battlenet.com.cn"), "https://oauth.battlenet.com.cn"},
		{Salesforce("c", "s", ""), "https://login.salesforce.com"},
		{Kinde("c", "s", "acme.kinde.com/"), "https://acme.kinde.com"},
	} {
		if got := issuer(tc.p); got != tc.want {
			t.Errorf("%s: issuer %q, want %q", tc.p.Common().ID, got, tc.want)
		}
	}
	f := FusionAuth("c", "s", "https://auth.example.com/", "t-1").Options()
	if f.WellKnown != "https://auth.example.com/.well-known/openid-configuration?tenantId=t-1" || f.Authorization.Params.Get("tenantId") != "t-1" {
		t.Errorf("fusionauth tenant: %s %v", f.WellKnown, f.Authorization.Params)
	}
	b := AzureADB2C("c", "s", "https://x.b2clogin.com/tid/v2.0/", "B2C_1_susi").Options()
	if b.WellKnown != "https://x.b2clogin.com/tid/v2.0/.well-known/openid-configuration?p=B2C_1_susi" {
		t.Errorf("b2c policy: %s", b.WellKnown)
	}
	m := Mastodon("c", "s", "mastodon.social").Options()
	if m.Authorization.URL != "https://mastodon.social/oauth/authorize" || m.Token.URL != "https://mastodon.social/oauth/token" {
		t.Errorf("mastodon endpoints: %s %s", m.Authorization.URL, m.Token.URL)
	}
	if w := WorkOS("c", "s", "conn_1").Options(); w.Authorization.Params.Get("connection") != "conn_1" {
		t.Errorf("workos connection: %v", w.Authorization.Params)
	}
	// The per-server built-ins without a server: no endpoint, which
	// Validate reports.
	for _, p := range []provider.OAuthProvider{Mastodon("c", "s", ""), Mattermost("c", "s", ""), Osso("c", "s", ""), Nextcloud("c", "s", "")} {
		o := p.Options()
		if o.Authorization.URL != "" || o.Token.URL != "" || o.Userinfo.URL != "" {
			t.Errorf("%s without a server: endpoints %q %q %q, want none", o.ID, o.Authorization.URL, o.Token.URL, o.Userinfo.URL)
		}
		if _, err := provider.Validate([]provider.Provider{p}); err == nil {
			t.Errorf("%s without a server: Validate passed", o.ID)
		}
	}
	if o := Osso("c", "s", "sso.example.com").Options(); o.Userinfo.URL != "https://sso.example.com/oauth/me" {
		t.Errorf("osso userinfo: %s", o.Userinfo.URL)
	}
}

// TestBuiltInMappings covers mapping branches the flow test's fixtures do
// not reach.
func TestBuiltInMappings(t *testing.T) {
	ctx := context.Background()
	u, _ := YandexUser(ctx, YandexProfile{ID: "1", Emails: []string{"a@x.y"}, DefaultAvatarID: "9/abc", IsAvatarEmpty: true, Login: "l"}, provider.TokenSet{})
	if u.Email != "a@x.y" || u.Image != nil || *u.Name != "l" {
		t.Errorf("yandex: %+v", u)
	}
	u, _ = EVEOnlineUser(ctx, EVEOnlineProfile{}, provider.TokenSet{})
	if u.ID != "" || u.Image != nil {
		t.Errorf("eve without a character: %+v", u)
	}
	var p FoursquareProfile
	u, _ = FoursquareUser(ctx, p, provider.TokenSet{})
	if u.Image != nil || u.Name != nil {
		t.Errorf("foursquare without photo: %+v", u)
	}
	var z ZohoProfile
	for _, in := range []string{`{"ZUID": 694422591}`, `{"ZUID": "694422591"}`} {
		if err := z.ZUID.UnmarshalJSON([]byte(strings.TrimSuffix(strings.SplitN(in, ": ", 2)[1], "}"))); err != nil || z.ZUID != "694422591" {
			t.Errorf("FlexString %s: %q %v", in, z.ZUID, err)
		}
	}
	if err := z.ZUID.UnmarshalJSON([]byte(`{}`)); err == nil {
		t.Error("FlexString accepted an object")
	}
	if _, err := Mastodon("a", "b", "https://m.example").ProfileFromJSON(ctx, []byte(`{}`), provider.TokenSet{}); !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), "no id") {
		t.Errorf("empty profile: %v, want an input error: no id", err)
	}
	u, _ = AzureADB2CUser(ctx, AzureADB2CProfile{StandardClaims: StandardClaims{Sub: "s", Email: "e@x.y", PreferredUsername: "pu"}}, provider.TokenSet{})
	if u.Email != "e@x.y" || *u.Name != "pu" {
		t.Errorf("b2c without emails: %+v", u)
	}
}
