package provider

import (
	"net/url"
	"testing"

	"github.com/authport/authport/core"
)

func TestTypes(t *testing.T) {
	for _, ty := range Types() {
		if !ty.Valid() {
			t.Errorf("%q not valid", ty)
		}
	}
	if Type("saml").Valid() || Type("").Valid() {
		t.Error("unknown type valid")
	}
	for ty, want := range map[Type]bool{TypeEmail: true, TypeCredentials: true, TypeOAuth: false, TypeOIDC: false, TypeWebAuthn: false} {
		if ty.Redirectable() != want {
			t.Errorf("%q.Redirectable() = %v", ty, !want)
		}
	}
	if !TypeOAuth.IsOAuth() || !TypeOIDC.IsOAuth() || TypeEmail.IsOAuth() {
		t.Error("IsOAuth")
	}
	wantAcct := map[Type]core.AccountType{TypeOAuth: core.AccountTypeOAuth, TypeOIDC: core.AccountTypeOIDC, TypeEmail: core.AccountTypeEmail, TypeWebAuthn: core.AccountTypeWebAuthn}
	for ty, want := range wantAcct {
		if got, ok := ty.AccountType(); !ok || got != want || !got.Valid() {
			t.Errorf("%q.AccountType() = %q, %v", ty, got, ok)
		}
	}
	if _, ok := TypeCredentials.AccountType(); ok {
		t.Error("credentials has an account type")
	}
	for _, e := range []EndpointType{EndpointAuthorization, EndpointToken, EndpointUserinfo} {
		if !e.Valid() {
			t.Errorf("%q not valid", e)
		}
	}
	if EndpointType("jwks").Valid() {
		t.Error("jwks endpoint type valid")
	}
}

func TestCommonTypes(t *testing.T) {
	cases := map[Provider]Type{
		oauthOK(): TypeOAuth, oidcOK(): TypeOIDC, emailOK(): TypeEmail, credentialsOK(): TypeCredentials, Passkey(): TypeWebAuthn,
	}
	for p, want := range cases {
		if c := p.Common(); c.Type != want || c.ID == "" || c.Name == "" {
			t.Errorf("%T.Common() = %+v, want type %q", p, c, want)
		}
	}
}

func TestAppProvider(t *testing.T) {
	a, err := NewAppProvider(githubLike(), "https://example.com/api/auth/")
	if err != nil {
		t.Fatal(err)
	}
	if a.SigninURL != "https://example.com/api/auth/signin/github" || a.CallbackURL != "https://example.com/api/auth/callback/github" || a.Type != TypeOAuth {
		t.Errorf("got %+v", a)
	}
	if _, err := NewAppProvider(githubLike(), "/api/auth"); err == nil {
		t.Error("relative base accepted")
	}
	if _, err := NewAppProvider(nil, "https://example.com"); err != nil {
		t.Errorf("nil provider: %v", err)
	}
}

func TestEndpointWithParams(t *testing.T) {
	e := Endpoint{URL: "https://gitlab.com/oauth/authorize?scope=read_user", Params: url.Values{"prompt": {"consent"}}}
	u, err := url.Parse(e.WithParams())
	if err != nil {
		t.Fatal(err)
	}
	if q := u.Query(); q.Get("scope") != "read_user" || q.Get("prompt") != "consent" {
		t.Errorf("WithParams = %s", u)
	}
	if got := (Endpoint{URL: "%zz"}).WithParams(); got != "%zz" {
		t.Errorf("bad URL changed: %q", got)
	}
	o := githubLike().Options()
	if o.Endpoint(EndpointAuthorization).URL != "https://github.com/login/oauth/authorize" ||
		o.Endpoint(EndpointToken).URL != "https://github.com/login/oauth/access_token" ||
		o.Endpoint(EndpointUserinfo).URL != "https://api.github.com/user" || o.Endpoint("x").URL != "" {
		t.Errorf("Options().Endpoint: %+v", o)
	}
}

func TestButtonStyleColor(t *testing.T) {
	if (ButtonStyle{BrandColor: "#111", Bg: "#222"}).Color() != "#111" {
		t.Error("BrandColor does not win")
	}
	if (ButtonStyle{Bg: "#222"}).Color() != "#222" {
		t.Error("deprecated Bg not used as a fallback")
	}
}

func TestOptionsIsACopy(t *testing.T) {
	p := githubLike()
	o := p.Options()
	o.Authorization.Params.Set("scope", "x")
	if p.Authorization.Params.Get("scope") != "read:user user:email" {
		t.Error("Options shares Authorization.Params")
	}
}
