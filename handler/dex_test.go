package handler_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/jwt"
)

// OIDC sign-in end to end through the handler against a real dex: the
// sign-in page's form, the redirect to dex, dex's login form, the callback,
// the session, with database and with JWT sessions.
func TestDexSignIn(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			var dex *provision.DexServer
			e := newEnv(t, envOpts{strategy: strategy, providers: func(t *testing.T, base string) []provider.Provider {
				dex = provision.Dex(t, provision.DexConfig{Clients: []provision.DexClient{{
					ID: provision.DefaultDexClientID, Secret: provision.DefaultDexClientSecret, RedirectURIs: []string{base + "/callback/dex"},
				}}})
				if dex == nil {
					t.SkipNow()
				}
				p := &provider.OIDCConfig[map[string]any]{}
				p.ID, p.Name, p.Issuer = "dex", "Dex", dex.Issuer
				p.ClientID, p.ClientSecret = provision.DefaultDexClientID, provision.DefaultDexClientSecret
				p.Style = provider.ButtonStyle{BrandColor: "#ffcc00", Logo: "https://img.example/dex.svg"}
				return []provider.Provider{p}
			}})
			page := e.get("/auth/signin?callbackUrl=%2Fwelcome")
			if !strings.Contains(page.body, `action="`+e.base+`/signin/dex"`) || !strings.Contains(page.body, "Sign in with Dex") ||
				!strings.Contains(page.body, `style="--provider-bg:#ffcc00;--provider-color:#000"`) || !strings.Contains(page.body, `src="https://img.example/dex.svg"`) {
				t.Errorf("sign-in page lacks the styled Dex button:\n%s", page.body)
			}
			res := e.post("/auth/signin/dex", url.Values{"csrfToken": {e.csrf()}})
			wantStatus(t, res, http.StatusSeeOther)
			authURL := res.Header.Get("Location")
			if !strings.HasPrefix(authURL, dex.Issuer+"/auth") {
				t.Fatalf("redirected to %s, want dex's authorization endpoint", authURL)
			}
			if setCookie(res, "authjs.pkce.code_verifier") == nil {
				t.Errorf("no PKCE cookie: %v", res.Header["Set-Cookie"])
			}
			cb, err := dex.Login(t.Context(), authURL, provision.DefaultDexUserEmail, provision.DefaultDexUserPassword)
			if err != nil {
				t.Fatal(err)
			}
			res = e.get(cb.String())
			wantStatus(t, res, http.StatusFound)
			wantLocation(t, e, res, "/welcome")
			s := e.session()
			if u, _ := s["user"].(map[string]any); u == nil || u["email"] != provision.DefaultDexUserEmail {
				t.Fatalf("session after dex sign-in: %v", s)
			}
			snap := e.store.Snapshot()
			if len(snap.Users) != 1 || len(snap.Accounts) != 1 || snap.Accounts[0].Provider != "dex" {
				t.Errorf("stored %d users, accounts %v", len(snap.Users), snap.Accounts)
			}
			if strategy == auth.StrategyJWT {
				if len(snap.Sessions) != 0 {
					t.Errorf("JWT strategy stored %d sessions", len(snap.Sessions))
				}
				u, _ := url.Parse(e.srv.URL)
				var token string
				for _, c := range e.client.Jar.Cookies(u) {
					if c.Name == "authjs.session-token" {
						token = c.Value
					}
				}
				codec, _ := jwt.NewCodec(secret)
				claims, err := codec.WithClock(e.clock.Now).Decode("authjs.session-token", token)
				if err != nil || claims["sub"] != snap.Users[0].ID {
					t.Errorf("JWT claims %v (%v), want sub %s", claims, err, snap.Users[0].ID)
				}
				// Signing in again while signed in works (the JWT is not
				// taken for a database session token).
				res = e.post("/auth/signin/dex", url.Values{"csrfToken": {e.csrf()}})
				cb, err := dex.Login(t.Context(), res.Header.Get("Location"), provision.DefaultDexUserEmail, provision.DefaultDexUserPassword)
				if err != nil {
					t.Fatal(err)
				}
				res = e.get(cb.String())
				wantStatus(t, res, http.StatusFound)
			} else if len(snap.Sessions) != 1 {
				t.Errorf("database strategy stored %d sessions", len(snap.Sessions))
			}
			// A replayed callback fails its checks (the cookies were used).
			res = e.get(cb.String())
			wantLocation(t, e, res, "/auth/signin", "error", "OAuthCallbackError")
			_ = time.Second
		})
	}
}

// An OAuth account whose e-mail address belongs to a user signed up by
// e-mail is not linked without allowDangerousEmailAccountLinking:
// OAuthAccountNotLinked on the sign-in page.
func TestDexAccountNotLinked(t *testing.T) {
	var dex *provision.DexServer
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		dex = provision.Dex(t, provision.DexConfig{Clients: []provision.DexClient{{
			ID: provision.DefaultDexClientID, Secret: provision.DefaultDexClientSecret, RedirectURIs: []string{base + "/callback/dex"},
		}}})
		if dex == nil {
			t.SkipNow()
		}
		p := &provider.OIDCConfig[map[string]any]{}
		p.ID, p.Name, p.Issuer = "dex", "Dex", dex.Issuer
		p.ClientID, p.ClientSecret = provision.DefaultDexClientID, provision.DefaultDexClientSecret
		return []provider.Provider{smtp.emailProvider(t), p}
	}})
	e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {provision.DefaultDexUserEmail}})
	other := e.newClient()
	req, _ := http.NewRequest("GET", smtp.link(t), nil)
	e.do(other, req) // the e-mail user exists now, signed in elsewhere

	res := e.post("/auth/signin/dex", url.Values{"csrfToken": {e.csrf()}})
	cb, err := dex.Login(t.Context(), res.Header.Get("Location"), provision.DefaultDexUserEmail, provision.DefaultDexUserPassword)
	if err != nil {
		t.Fatal(err)
	}
	res = e.get(cb.String())
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthAccountNotLinked")
	page := e.get(res.Header.Get("Location"))
	if !strings.Contains(page.body, "To confirm your identity, sign in with the same account you used originally.") {
		t.Errorf("sign-in page for OAuthAccountNotLinked:\n%s", page.body)
	}
	if snap := e.store.Snapshot(); len(snap.Accounts) != 1 || snap.Accounts[0].Provider != "email" {
		t.Errorf("accounts %v: want only the e-mail account", snap.Accounts)
	}
}

// A provider that cannot be reached fails at sign-in: OAuthSignin.
func TestOAuthSigninError(t *testing.T) {
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, providers: func(*testing.T, string) []provider.Provider {
		p := &provider.OIDCConfig[map[string]any]{}
		p.ID, p.Name, p.Issuer = "down", "Down", "http://127.0.0.1:1/nowhere"
		p.ClientID, p.ClientSecret = "id", "secret"
		return []provider.Provider{p}
	}})
	res := e.post("/auth/signin/down", url.Values{"csrfToken": {e.csrf()}})
	wantStatus(t, res, http.StatusSeeOther)
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthSignin")
	res = e.get("/auth/callback/down?code=x&state=y")
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthCallbackError")
	_ = time.Second
}
