package handler

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/jwt"
	"github.com/authport/authport/oauth"
)

const checkSecret = "check-cookie-secret-0123456789abcdef"

// checkSetup configures an oauthHandler.
type checkSetup struct {
	base     string   // BaseURL; http://app.example/auth by default
	secrets  []string // checkSecret by default
	now      func() time.Time
	cookies  auth.CookieOptions
	formPost bool // the provider calls back with response_mode=form_post
}

// oauthHandler is a Handler with the OIDC provider "idp", every check on
// and its endpoints configured (Begin needs no network).
func oauthHandler(t *testing.T, s checkSetup) *Handler {
	t.Helper()
	if s.base == "" {
		s.base = "http://app.example/auth"
	}
	if s.secrets == nil {
		s.secrets = []string{checkSecret}
	}
	p := &provider.OIDCConfig[map[string]any]{}
	p.ID, p.Name, p.Issuer, p.ClientID, p.ClientSecret = "idp", "IdP", "https://idp.example", "client", "client-secret"
	p.Authorization = provider.Endpoint{URL: "https://idp.example/authorize"}
	if s.formPost {
		p.Authorization.Params = url.Values{"response_mode": {"form_post"}}
	}
	p.Token = provider.TokenEndpoint{URL: "https://idp.example/token"}
	p.Userinfo = provider.UserinfoEndpoint[map[string]any]{URL: "https://idp.example/userinfo"}
	p.JWKSEndpoint = "https://idp.example/jwks"
	p.Checks = provider.Checks{provider.CheckPKCE, provider.CheckState, provider.CheckNonce}
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{p}, Secrets: s.secrets, BaseURL: s.base, Now: s.now, Cookies: s.cookies})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// begin runs POST /signin/idp's OAuth part and returns the authorization
// URL's query and the cookies set.
func begin(t *testing.T, h *Handler) (url.Values, []*http.Cookie) {
	t.Helper()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, h.base+"/signin/idp", nil)
	to, err := h.beginOAuth(rec, r, "idp")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query(), rec.Result().Cookies()
}

// take runs the callback's reading of the check cookies on a request
// carrying cookies, and returns the check values and the response's
// cookies.
func take(h *Handler, cookies []*http.Cookie) (oauth.Checks, []*http.Cookie) {
	r := httptest.NewRequest(http.MethodGet, h.base+"/callback/idp?code=c", nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	checks := h.takeChecks(rec, r)
	return checks, rec.Result().Cookies()
}

// The check cookies are what Auth.js writes: Auth.js's cookie names (with
// __Secure- on https), in the order PKCE, state, nonce, and an Auth.js JWT
// per cookie, sealed under the cookie's name with the secret, holding
// {value}: the verifier of the code_challenge sent, the state sent, the
// nonce sent. HttpOnly, Path=/, host-only, SameSite=Lax whatever
// Config.Cookies says, 15 minutes.
func TestCheckCookiesAreAuthJSCookies(t *testing.T) {
	codec, err := jwt.NewCodec(checkSecret)
	if err != nil {
		t.Fatal(err)
	}
	for _, secure := range []bool{false, true} {
		base := "http://app.example/auth"
		if secure {
			base = "https://app.example/auth"
		}
		for _, opts := range []auth.CookieOptions{{}, {SameSite: http.SameSiteStrictMode, Domain: "app.example"}} {
			h := oauthHandler(t, checkSetup{base: base, cookies: opts})
			q, cookies := begin(t, h)
			names := cookieNamesFor(secure)
			wantNames := []string{names.PKCECodeVerifier, names.State, names.Nonce}
			prefix := map[bool]string{false: "", true: "__Secure-"}[secure]
			if wantNames[0] != prefix+"authjs.pkce.code_verifier" || wantNames[1] != prefix+"authjs.state" || wantNames[2] != prefix+"authjs.nonce" {
				t.Fatalf("the handler's names %+v are not Auth.js's", names)
			}
			if len(cookies) != 3 {
				t.Fatalf("cookies %v", cookies)
			}
			for i, c := range cookies {
				if c.Name != wantNames[i] {
					t.Errorf("cookie %d is %s, want %s", i, c.Name, wantNames[i])
				}
				if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != secure || c.MaxAge != 900 || c.Domain != "" {
					t.Errorf("cookie %+v (options %+v)", c, opts)
				}
				if d := time.Until(c.Expires); d < 14*time.Minute || d > 16*time.Minute {
					t.Errorf("cookie %s expires in %v, want 15 minutes", c.Name, d)
				}
				if strings.Contains(c.Value, q.Get("state")) || strings.Contains(c.Value, q.Get("nonce")) {
					t.Errorf("cookie %s carries a check value in the clear", c.Name)
				}
				claims, err := codec.Decode(c.Name, c.Value)
				if err != nil {
					t.Errorf("%s: Auth.js's codec cannot open it: %v", c.Name, err)
					continue
				}
				v, _ := claims["value"].(string)
				want := map[int]string{1: q.Get("state"), 2: q.Get("nonce")}[i]
				if i == 0 {
					sum := sha256.Sum256([]byte(v))
					if base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") {
						t.Errorf("%s holds %v, not the verifier of code_challenge %s", c.Name, claims, q.Get("code_challenge"))
					}
				} else if v == "" || v != want {
					t.Errorf("%s holds %v, want value %q", c.Name, claims, want)
				}
				if exp, _ := claims["exp"].(float64); exp == 0 {
					t.Errorf("%s: no exp in %v", c.Name, claims)
				}
				// Another cookie's name is another key.
				if _, err := codec.Decode(c.Name+"x", c.Value); !errors.Is(err, jwt.ErrInvalidToken) {
					t.Errorf("%s opened under another name: %v", c.Name, err)
				}
			}
		}
	}
}

// A provider that calls back with a cross-site POST (response_mode=
// form_post, as Apple) gets SameSite=None check cookies on https, since
// browsers do not send Lax cookies with it; on http (no Secure, which None
// needs) they stay Lax.
func TestCheckCookiesFormPost(t *testing.T) {
	for base, want := range map[string]http.SameSite{
		"https://app.example/auth": http.SameSiteNoneMode,
		"http://app.example/auth":  http.SameSiteLaxMode,
	} {
		h := oauthHandler(t, checkSetup{base: base, formPost: true})
		_, cookies := begin(t, h)
		if len(cookies) != 3 {
			t.Fatalf("%s: cookies %v", base, cookies)
		}
		for _, c := range cookies {
			if c.SameSite != want || c.Secure != strings.HasPrefix(base, "https") || !c.HttpOnly {
				t.Errorf("%s: cookie %+v, want SameSite %v", base, c, want)
			}
		}
		// The callback drops them as Lax cookies, whatever they were set
		// with: the browser matches cookies by name, domain and path.
		_, dropped := take(h, cookies)
		for _, c := range dropped {
			if c.MaxAge != -1 || c.SameSite != http.SameSiteLaxMode {
				t.Errorf("%s: drop %+v", base, c)
			}
		}
	}
}

// The callback opens the check cookies it is sent and drops each one,
// whatever it holds; a value it cannot give has its reason, which the flow
// puts into the refusal of a check that needs it.
func TestTakeChecks(t *testing.T) {
	h := oauthHandler(t, checkSetup{})
	q, cookies := begin(t, h)
	byName := func(cs []*http.Cookie, name string) *http.Cookie {
		for _, c := range cs {
			if c.Name == name {
				return c
			}
		}
		return nil
	}
	droppedAll := func(t *testing.T, sent, got []*http.Cookie) {
		t.Helper()
		for _, c := range sent {
			if d := byName(got, c.Name); d == nil || d.MaxAge != -1 || d.Value != "" || d.Path != "/" || !d.HttpOnly {
				t.Errorf("check cookie %s not dropped: %+v", c.Name, d)
			}
		}
		if len(got) != len(sent) {
			t.Errorf("set %d cookies for the %d sent", len(got), len(sent))
		}
	}

	checks, got := take(h, cookies)
	if checks.State != q.Get("state") || checks.Nonce != q.Get("nonce") || checks.CodeVerifier == "" || checks.Missing != nil {
		t.Errorf("checks %+v, want the values sent", checks)
	}
	droppedAll(t, cookies, got)

	clone := func() []*http.Cookie {
		var out []*http.Cookie
		for _, c := range cookies {
			cc := *c
			out = append(out, &cc)
		}
		return out
	}
	cases := map[string]struct {
		edit  func(cs []*http.Cookie) []*http.Cookie
		check provider.Check
		want  error  // in the reason's chain
		says  string // in the reason
	}{
		"no state cookie": {func(cs []*http.Cookie) []*http.Cookie {
			return []*http.Cookie{cs[0], cs[2]}
		}, provider.CheckState, nil, "sent no authjs.state cookie"},
		"state cookie altered": {func(cs []*http.Cookie) []*http.Cookie {
			cs[1].Value = cs[1].Value[:len(cs[1].Value)-4] + "AAAA"
			return cs
		}, provider.CheckState, jwt.ErrInvalidToken, "authjs.state cookie cannot be opened"},
		// The nonce cookie's sealed value under the state cookie's name:
		// the cookie name is the salt, so it does not open.
		"state cookie of another check": {func(cs []*http.Cookie) []*http.Cookie {
			cs[1].Value = cs[2].Value
			return cs
		}, provider.CheckState, jwt.ErrInvalidToken, "authjs.state"},
		"garbage verifier cookie": {func(cs []*http.Cookie) []*http.Cookie {
			cs[0].Value = "%%%not a token"
			return cs
		}, provider.CheckPKCE, jwt.ErrInvalidToken, "authjs.pkce.code_verifier cookie cannot be opened"},
		"no nonce cookie": {func(cs []*http.Cookie) []*http.Cookie {
			return cs[:2]
		}, provider.CheckNonce, nil, "sent no authjs.nonce cookie"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sent := tc.edit(clone())
			checks, got := take(h, sent)
			reason := checks.Missing[tc.check]
			if reason == nil || (tc.want != nil && !errors.Is(reason, tc.want)) || !strings.Contains(reason.Error(), tc.says) {
				t.Errorf("reason for %s: %v, want %v saying %q", tc.check, reason, tc.want, tc.says)
			}
			if len(checks.Missing) != 1 {
				t.Errorf("reasons %v, want one", checks.Missing)
			}
			droppedAll(t, sent, got)
		})
	}
}

// Check cookies expire after 15 minutes: a callback later finds none to
// open, and says so.
func TestCheckCookiesExpire(t *testing.T) {
	_, cookies := begin(t, oauthHandler(t, checkSetup{}))
	late := oauthHandler(t, checkSetup{now: func() time.Time { return time.Now().Add(oauth.CheckMaxAge + time.Minute) }})
	checks, _ := take(late, cookies)
	for _, c := range []provider.Check{provider.CheckPKCE, provider.CheckState, provider.CheckNonce} {
		if !errors.Is(checks.Missing[c], jwt.ErrExpiredToken) {
			t.Errorf("%s: %v, want the cookie expired", c, checks.Missing[c])
		}
	}
	if checks.State != "" || checks.Nonce != "" || checks.CodeVerifier != "" {
		t.Errorf("expired cookies gave %+v", checks)
	}
}

// A sign-in begun before a secret rotation completes after it, while the
// old secret is still listed; once it is dropped, its cookies do not open.
func TestCheckCookiesSecretRotation(t *testing.T) {
	const old, fresh = "old-secret-0123456789abcdef0123456789", "new-secret-0123456789abcdef0123456789"
	q, cookies := begin(t, oauthHandler(t, checkSetup{secrets: []string{old}}))
	checks, _ := take(oauthHandler(t, checkSetup{secrets: []string{fresh, old}}), cookies)
	if checks.State != q.Get("state") || checks.Missing != nil {
		t.Errorf("begun under the old secret, completed after rotation: %+v", checks)
	}
	checks, _ = take(oauthHandler(t, checkSetup{secrets: []string{fresh}}), cookies)
	if checks.State != "" || !errors.Is(checks.Missing[provider.CheckState], jwt.ErrInvalidToken) {
		t.Errorf("old secret dropped: %+v, want the check cookies unreadable", checks)
	}
}
