package provider

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestValidateRules has one case per validation rule: each invalid case
// lists exactly the problems the rule must report, each valid case is a
// near miss the rule must accept.
func TestValidateRules(t *testing.T) {
	type C = []Provider
	cases := []struct {
		rule      string
		providers func() []Provider
		opts      []ValidateOption
		want      []wantProblem
	}{
		{"all_valid", func() C { return C{oauthOK(), oidcOK(), emailOK(), credentialsOK(), Passkey()} }, nil, nil},
		{"no_providers_is_valid", func() C { return nil }, nil, nil},

		// Types.
		{"type/nil_provider", func() C { return C{nil} }, nil,
			[]wantProblem{{0, "Type", "nil"}}},
		{"type/typed_nil_provider", func() C { return C{oauthOK(), (*OIDCConfig[anyProfile])(nil)} }, nil,
			[]wantProblem{{1, "Type", "nil"}}},

		// IDs and names.
		{"id/required", func() C { p := oauthOK(); p.ID = ""; return C{p} }, nil,
			[]wantProblem{{0, "ID", "required"}}},
		{"id/url_safe/slash", func() C { p := oauthOK(); p.ID = "acme/evil"; return C{p} }, nil,
			[]wantProblem{{0, "ID", "URL-safe"}}},
		{"id/url_safe/space", func() C { p := emailOK(); p.ID = "my email"; return C{p} }, nil,
			[]wantProblem{{0, "ID", "URL-safe"}}},
		{"id/url_safe/dotdot", func() C { p := credentialsOK(); p.ID = ".."; return C{p} }, nil,
			[]wantProblem{{0, "ID", "URL-safe"}}},
		{"id/url_safe/accepts_unreserved", func() C { p := oauthOK(); p.ID = "Acme-2.corp_x~y"; return C{p} }, nil, nil},
		{"id/unique", func() C { return C{oauthOK(), emailOK(), oauthOK()} }, nil,
			[]wantProblem{{2, "ID", "duplicate: provider #0"}}},
		{"id/unique_across_types", func() C { p := emailOK(); p.ID = "acme"; return C{oauthOK(), p} }, nil,
			[]wantProblem{{1, "ID", "duplicate"}}},
		{"name/required", func() C { p := oidcOK(); p.Name = " "; return C{p} }, nil,
			[]wantProblem{{0, "Name", "required"}}},

		// OAuth endpoints and client id.
		{"oauth/authorization_url_or_wellknown", func() C { p := oauthOK(); p.Authorization.URL = ""; return C{p} }, nil,
			[]wantProblem{{0, "Authorization.URL", "authorization URL or WellKnown"}}},
		{"oauth/token_url_or_wellknown", func() C { p := oauthOK(); p.Token.URL = ""; return C{p} }, nil,
			[]wantProblem{{0, "Token.URL", "token URL"}}},
		{"oauth/token_handler_instead_of_url", func() C {
			p := oauthOK()
			p.Token = TokenEndpoint{Request: func(context.Context, TokenRequest) (TokenSet, error) { return TokenSet{}, nil }}
			return C{p}
		}, nil, nil},
		{"oauth/userinfo_url_or_wellknown", func() C { p := oauthOK(); p.Userinfo.URL = ""; return C{p} }, nil,
			[]wantProblem{{0, "Userinfo.URL", "userinfo URL"}}},
		{"oauth/wellknown_replaces_endpoints", func() C {
			p := oauthOK()
			p.Authorization, p.Token, p.Userinfo = Endpoint{}, TokenEndpoint{}, UserinfoEndpoint[anyProfile]{}
			p.WellKnown = "https://acme.test/.well-known/oauth-authorization-server"
			return C{p}
		}, nil, nil},
		{"oauth/all_endpoints_missing", func() C {
			p := oauthOK()
			p.Authorization, p.Token, p.Userinfo = Endpoint{}, TokenEndpoint{}, UserinfoEndpoint[anyProfile]{}
			return C{p}
		}, nil, []wantProblem{{0, "Authorization.URL", ""}, {0, "Token.URL", ""}, {0, "Userinfo.URL", ""}}},
		{"oauth/client_id_required", func() C { p := oauthOK(); p.ClientID = ""; return C{p} }, nil,
			[]wantProblem{{0, "ClientID", "required"}}},
		{"oidc/client_id_required", func() C { p := oidcOK(); p.ClientID = ""; return C{p} }, nil,
			[]wantProblem{{0, "ClientID", "required"}}},
		{"oidc/issuer_or_wellknown", func() C { p := oidcOK(); p.Issuer = ""; return C{p} }, nil,
			[]wantProblem{{0, "Issuer", "issuer or WellKnown"}}},
		{"oidc/wellknown_without_issuer", func() C {
			p := oidcOK()
			p.Issuer, p.WellKnown = "", "https://idp.test/.well-known/openid-configuration"
			return C{p}
		}, nil, nil},
		{"oidc/needs_no_endpoints", func() C { return C{oidcOK()} }, nil, nil},

		// URLs.
		{"urls/absolute_http", func() C {
			p := oauthOK()
			p.Authorization.URL = "/authorize"
			p.Token.URL = "ftp://acme.test/token"
			p.Userinfo.URL = "https://"
			p.JWKSEndpoint = "acme.test/jwks"
			p.RedirectProxyURL = "::"
			return C{p}
		}, nil, []wantProblem{
			{0, "Authorization.URL", "absolute"}, {0, "Token.URL", "absolute"}, {0, "Userinfo.URL", "absolute"},
			{0, "JWKSEndpoint", "absolute"}, {0, "RedirectProxyURL", "absolute"},
		}},
		{"urls/oidc_issuer_and_wellknown", func() C {
			p := oidcOK()
			p.Issuer, p.WellKnown = "idp.test", "not a url"
			return C{p}
		}, nil, []wantProblem{{0, "WellKnown", "absolute"}, {0, "Issuer", "absolute"}}},
		{"urls/config_redirect_proxy", func() C { return C{oauthOK()} }, []ValidateOption{WithRedirectProxyURL("proxy")},
			[]wantProblem{{-1, "RedirectProxyURL", "absolute"}}},

		// Checks.
		{"checks/unknown_value", func() C { p := oauthOK(); p.Checks = Checks{"csrf"}; return C{p} }, nil,
			[]wantProblem{{0, "Checks", `"csrf" is not a check`}}},
		{"checks/nonce_only_for_oidc", func() C { p := oauthOK(); p.Checks = Checks{CheckPKCE, CheckNonce}; return C{p} }, nil,
			[]wantProblem{{0, "Checks", "nonce is for OIDC"}}},
		{"checks/nonce_allowed_for_oidc", func() C { p := oidcOK(); p.Checks = Checks{CheckNonce, CheckPKCE}; return C{p} }, nil, nil},
		{"checks/none_not_mixed", func() C { p := oauthOK(); p.Checks = Checks{CheckNone, CheckState}; return C{p} }, nil,
			[]wantProblem{{0, "Checks", "none cannot be combined"}}},
		{"checks/none_not_mixed_oidc", func() C { p := oidcOK(); p.Checks = Checks{CheckNonce, CheckNone}; return C{p} }, nil,
			[]wantProblem{{0, "Checks", "none cannot be combined"}}},
		{"checks/none_alone_is_valid", func() C { p := oauthOK(); p.Checks = Checks{CheckNone}; return C{p} }, nil, nil},
		{"checks/none_with_provider_redirect_proxy", func() C {
			p := oauthOK()
			p.Checks, p.RedirectProxyURL = Checks{CheckNone}, "https://proxy.test/api/auth"
			return C{p}
		}, nil, []wantProblem{{0, "Checks", "redirect proxy"}}},
		{"checks/none_with_config_redirect_proxy", func() C { p := oidcOK(); p.Checks = Checks{CheckNone}; return C{p} },
			[]ValidateOption{WithRedirectProxyURL("https://proxy.test/api/auth")},
			[]wantProblem{{0, "Checks", "redirect proxy"}}},

		// Client overrides.
		{"client/token_endpoint_auth_method", func() C { p := oauthOK(); p.Client.TokenEndpointAuthMethod = "basic"; return C{p} }, nil,
			[]wantProblem{{0, "Client.TokenEndpointAuthMethod", `"basic"`}}},
		{"client/default_max_age", func() C { p := oidcOK(); p.Client.DefaultMaxAge = -1; return C{p} }, nil,
			[]wantProblem{{0, "Client.DefaultMaxAge", "negative"}}},

		// E-mail.
		{"email/from_required", func() C { p := emailOK(); p.From = ""; return C{p} }, nil,
			[]wantProblem{{0, "From", "required"}}},
		{"email/from_is_address", func() C { p := emailOK(); p.From = "Acme"; return C{p} }, nil,
			[]wantProblem{{0, "From", "not an e-mail address"}}},
		{"email/send_required", func() C { p := emailOK(); p.SendVerificationRequest = nil; return C{p} }, nil,
			[]wantProblem{{0, "SendVerificationRequest", "required"}}},
		{"email/max_age_not_negative", func() C { p := emailOK(); p.MaxAge = -time.Second; return C{p} }, nil,
			[]wantProblem{{0, "MaxAge", "negative"}}},

		// Credentials.
		{"credentials/authorize_required", func() C { return C{Credentials(nil)} }, nil,
			[]wantProblem{{0, "Authorize", "required"}}},
		{"credentials/field_names", func() C {
			p := credentialsOK()
			p.Fields = []CredentialField{{Name: "username"}, {Name: ""}, {Name: "username"}}
			return C{p}
		}, nil, []wantProblem{{0, "Fields[1].Name", "required"}, {0, "Fields[2].Name", "duplicate"}}},

		// WebAuthn.
		{"webauthn/user_verification", func() C { p := Passkey(); p.UserVerification = "always"; return C{p} }, nil,
			[]wantProblem{{0, "UserVerification", `"always"`}}},
		{"webauthn/rp_id_bare_host", func() C { p := Passkey(); p.RPID = "https://example.com"; return C{p} }, nil,
			[]wantProblem{{0, "RPID", "bare host"}}},
		{"webauthn/rp_origin_absolute", func() C { p := Passkey(); p.RPOrigin = "example.com"; return C{p} }, nil,
			[]wantProblem{{0, "RPOrigin", "absolute"}}},
		{"webauthn/rp_origin_no_path", func() C { p := Passkey(); p.RPOrigin = "https://example.com/app"; return C{p} }, nil,
			[]wantProblem{{0, "RPOrigin", "path"}}},
		{"webauthn/rp_origin_under_rp_id", func() C {
			p := Passkey()
			p.RPID, p.RPOrigin = "example.com", "https://example.org"
			return C{p}
		}, nil, []wantProblem{{0, "RPOrigin", "not RPID"}}},
		{"webauthn/rp_origin_subdomain_ok", func() C {
			p := Passkey()
			p.RPID, p.RPOrigin, p.RPName = "example.com", "https://login.example.com:8443", "Example"
			return C{p}
		}, nil, nil},

		// Every problem at once.
		{"reports_every_problem", func() C {
			a := oauthOK()
			a.ClientID, a.Checks = "", Checks{CheckNonce}
			b := oidcOK()
			b.ID, b.Issuer = "acme", ""
			return C{a, b, nil, Credentials(nil)}
		}, nil, []wantProblem{
			{0, "ClientID", "required"}, {0, "Checks", "nonce"},
			{1, "ID", "duplicate"}, {1, "Issuer", ""},
			{2, "Type", "nil"},
			{3, "Authorize", "required"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			in := tc.providers()
			out, err := Validate(in, tc.opts...)
			got := problems(t, err)
			matchProblems(t, got, tc.want)
			if err != nil && out != nil {
				t.Errorf("Validate returned providers along with an error")
			}
			if err == nil && len(out) != len(in) {
				t.Errorf("Validate returned %d providers, want %d", len(out), len(in))
			}
		})
	}
}

func TestValidationErrorMessage(t *testing.T) {
	p := oauthOK()
	p.ClientID = ""
	_, err := Validate([]Provider{p, nil})
	want := `invalid provider configuration: 2 problems: provider "acme" (#0): ClientID: required; set it, or AUTH_ACME_ID in the environment when the provider is configured from it; provider #1: Type: provider is nil`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error = %v, want prefix %q", err, want)
	}
	if problems(t, err)[0].ProviderID != "acme" {
		t.Errorf("problem does not name the provider id")
	}
}

// TestValidateDefaults has one case per default Validate applies.
func TestValidateDefaults(t *testing.T) {
	const proxy = "https://proxy.test/api/auth"
	checksOf := func(p Provider) Checks { return p.(OAuthProvider).Options().Checks }
	cases := []struct {
		name  string
		in    Provider
		opts  []ValidateOption
		check func(t *testing.T, out Provider)
	}{
		{"checks/oauth_default_pkce", oauthOK(), nil, func(t *testing.T, out Provider) {
			if got := checksOf(out); !slices.Equal(got, Checks{CheckPKCE}) {
				t.Errorf("checks = %v, want [pkce]", got)
			}
		}},
		{"checks/oidc_default_pkce", oidcOK(), nil, func(t *testing.T, out Provider) {
			if got := checksOf(out); !slices.Equal(got, Checks{CheckPKCE}) {
				t.Errorf("checks = %v, want [pkce]", got)
			}
		}},
		{"checks/given_kept", func() Provider { p := oauthOK(); p.Checks = Checks{CheckState}; return p }(), nil, func(t *testing.T, out Provider) {
			if got := checksOf(out); !slices.Equal(got, Checks{CheckState}) {
				t.Errorf("checks = %v, want [state]", got)
			}
		}},
		{"checks/duplicates_removed", func() Provider { p := oidcOK(); p.Checks = Checks{CheckNonce, CheckNonce, CheckPKCE}; return p }(), nil, func(t *testing.T, out Provider) {
			if got := checksOf(out); !slices.Equal(got, Checks{CheckNonce, CheckPKCE}) {
				t.Errorf("checks = %v, want [nonce pkce]", got)
			}
		}},
		{"checks/state_added_for_provider_redirect_proxy", func() Provider { p := oauthOK(); p.RedirectProxyURL = proxy; return p }(), nil, func(t *testing.T, out Provider) {
			if got := checksOf(out); !slices.Equal(got, Checks{CheckPKCE, CheckState}) {
				t.Errorf("checks = %v, want [pkce state]", got)
			}
		}},
		{"checks/state_added_for_config_redirect_proxy", oidcOK(), []ValidateOption{WithRedirectProxyURL(proxy)}, func(t *testing.T, out Provider) {
			o := out.(OAuthProvider).Options()
			if !slices.Equal(o.Checks, Checks{CheckPKCE, CheckState}) {
				t.Errorf("checks = %v, want [pkce state]", o.Checks)
			}
			if o.RedirectProxyURL != proxy {
				t.Errorf("RedirectProxyURL = %q, want the configuration's %q", o.RedirectProxyURL, proxy)
			}
		}},
		{"checks/state_not_doubled", func() Provider {
			p := oauthOK()
			p.Checks, p.RedirectProxyURL = Checks{CheckState}, proxy
			return p
		}(), nil, func(t *testing.T, out Provider) {
			if got := checksOf(out); !slices.Equal(got, Checks{CheckState}) {
				t.Errorf("checks = %v, want [state]", got)
			}
		}},
		{"checks/provider_redirect_proxy_wins", func() Provider { p := oauthOK(); p.RedirectProxyURL = "https://own.test/"; return p }(),
			[]ValidateOption{WithRedirectProxyURL(proxy)}, func(t *testing.T, out Provider) {
				if got := out.(OAuthProvider).Options().RedirectProxyURL; got != "https://own.test/" {
					t.Errorf("RedirectProxyURL = %q, want the provider's own", got)
				}
			}},
		{"oidc/id_token_default_true", oidcOK(), nil, func(t *testing.T, out Provider) {
			c := out.(*OIDCConfig[anyProfile])
			if c.IDToken == nil || !*c.IDToken || !c.Options().IDToken {
				t.Errorf("IDToken = %v, want true", c.IDToken)
			}
		}},
		{"oidc/id_token_false_kept", func() Provider { p := oidcOK(); p.IDToken = ptr(false); return p }(), nil, func(t *testing.T, out Provider) {
			if out.(OAuthProvider).Options().IDToken {
				t.Errorf("IDToken = true, want the configured false")
			}
		}},
		{"email/max_age_default_24h", func() Provider { p := emailOK(); p.MaxAge = 0; return p }(), nil, func(t *testing.T, out Provider) {
			if got := out.(*EmailConfig).MaxAge; got != 24*time.Hour {
				t.Errorf("MaxAge = %v, want 24h", got)
			}
		}},
		{"email/max_age_given_kept", func() Provider { p := emailOK(); p.MaxAge = time.Hour; return p }(), nil, func(t *testing.T, out Provider) {
			if got := out.(*EmailConfig).MaxAge; got != time.Hour {
				t.Errorf("MaxAge = %v, want 1h", got)
			}
		}},
		{"webauthn/user_verification_default_preferred", &WebAuthnConfig{ID: "wa", Name: "WA"}, nil, func(t *testing.T, out Provider) {
			if got := out.(*WebAuthnConfig).UserVerification; got != UserVerificationPreferred {
				t.Errorf("UserVerification = %q, want preferred", got)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Validate([]Provider{tc.in}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, out[0])
		})
	}
}

// TestValidateDoesNotMutate checks Validate returns copies: the caller's
// providers keep their values, and the copies share no mutable state.
func TestValidateDoesNotMutate(t *testing.T) {
	a := oauthOK()
	a.Authorization.Params = url.Values{"scope": {"read"}}
	a.Client.Extra = map[string]any{"k": "v"}
	b := oidcOK()
	e := emailOK()
	e.MaxAge = 0
	w := &WebAuthnConfig{ID: "wa", Name: "WA"}
	before := []any{*a, *b, *e, *w}
	out, err := Validate([]Provider{a, b, e, w}, WithRedirectProxyURL("https://proxy.test/"))
	if err != nil {
		t.Fatal(err)
	}
	after := []any{*a, *b, *e, *w}
	for i := range before {
		if !reflect.DeepEqual(fmtFuncs(before[i]), fmtFuncs(after[i])) {
			t.Errorf("provider %d changed: %+v -> %+v", i, before[i], after[i])
		}
	}
	if a.Checks != nil || a.RedirectProxyURL != "" || b.IDToken != nil || e.MaxAge != 0 || w.UserVerification != "" {
		t.Errorf("defaults leaked into the caller's providers")
	}
	ga := out[0].(*OAuth2Config[anyProfile])
	if ga == a {
		t.Fatal("Validate returned the caller's pointer")
	}
	ga.Authorization.Params.Set("scope", "changed")
	ga.Client.Extra["k"] = "changed"
	if a.Authorization.Params.Get("scope") != "read" || a.Client.Extra["k"] != "v" {
		t.Errorf("the copy shares maps with the caller's provider")
	}
}

// fmtFuncs drops func fields, which DeepEqual cannot compare.
func fmtFuncs(v any) any {
	rv := reflect.ValueOf(v)
	cp := reflect.New(rv.Type()).Elem()
	cp.Set(rv)
	for i := 0; i < cp.NumField(); i++ {
		f := cp.Field(i)
		if f.Kind() == reflect.Func && f.CanSet() {
			f.Set(reflect.Zero(f.Type()))
		}
		if f.Kind() == reflect.Struct {
			for j := 0; j < f.NumField(); j++ {
				if g := f.Field(j); g.Kind() == reflect.Func && g.CanSet() {
					g.Set(reflect.Zero(g.Type()))
				}
			}
		}
	}
	return cp.Interface()
}

func TestValidateNilOption(t *testing.T) {
	if _, err := Validate([]Provider{oauthOK()}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCallbackTokens(t *testing.T) {
	withID := TokenSet{AccessToken: "at", IDToken: "header.claims.sig"}
	withoutID := TokenSet{AccessToken: "at"}
	cases := []struct {
		name    string
		p       OAuthProvider
		tokens  TokenSet
		wantErr bool
	}{
		{"oidc/id_token_present", oidcOK(), withID, false},
		{"oidc/id_token_missing", oidcOK(), withoutID, true},
		{"oidc/id_token_missing_even_with_IDToken_false", func() OAuthProvider { p := oidcOK(); p.IDToken = ptr(false); return p }(), withoutID, true},
		{"oauth/id_token_not_needed", oauthOK(), withoutID, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.CheckCallbackTokens(tc.tokens)
			if tc.wantErr != (err != nil) {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, ErrMissingIDToken) {
				t.Errorf("err = %v, does not match ErrMissingIDToken", err)
			}
		})
	}
}

// TestNilReceivers checks no exported method panics on a nil provider.
func TestNilReceivers(t *testing.T) {
	var nils = []Provider{
		(*OAuth2Config[anyProfile])(nil), (*OIDCConfig[anyProfile])(nil),
		(*EmailConfig)(nil), (*CredentialsConfig)(nil), (*WebAuthnConfig)(nil),
	}
	for _, p := range nils {
		c := p.Common()
		if !c.Type.Valid() {
			t.Errorf("%T: Common().Type = %q", p, c.Type)
		}
		if o, ok := p.(OAuthProvider); ok {
			_ = o.Options()
			if o.CheckCallbackTokens(TokenSet{IDToken: "x"}) == nil {
				t.Errorf("%T: nil CheckCallbackTokens accepted", p)
			}
			_ = o.AccountTokens(TokenSet{}, time.Now())
			if _, err := o.ProfileFromJSON(t.Context(), []byte(`{"sub":"1"}`), TokenSet{}); err == nil {
				t.Errorf("%T: nil ProfileFromJSON gave no error", p)
			}
			if _, _, err := o.FetchUserinfo(t.Context(), UserinfoRequest{}); err == nil {
				t.Errorf("%T: nil FetchUserinfo gave no error", p)
			}
		}
	}
	var e *EmailConfig
	if e.TokenMaxAge() != DefaultEmailMaxAge {
		t.Error("nil TokenMaxAge")
	}
	if got, err := e.Normalize(" A@B.C "); err != nil || got != "a@b.c" {
		t.Errorf("nil Normalize = %q, %v", got, err)
	}
	var o *OIDCConfig[anyProfile]
	if !o.UsesIDToken() {
		t.Error("nil UsesIDToken")
	}
}

// TestOIDCIDTokenDefault checks IDToken's zero value means true before any
// validation, and that false is honoured.
func TestOIDCIDTokenDefault(t *testing.T) {
	p := oidcOK()
	if !p.UsesIDToken() || !p.Options().IDToken {
		t.Error("IDToken nil does not mean true")
	}
	p.IDToken = ptr(false)
	if p.UsesIDToken() || p.Options().IDToken {
		t.Error("IDToken false ignored")
	}
	if oauthOK().Options().IDToken {
		t.Error("OAuth provider reports IDToken")
	}
}
