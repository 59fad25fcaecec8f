package handler_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/jwt"
	"github.com/authport/authport/oauth/oauthtest"
)

// dexProvider starts a dex for t whose client (the default one) redirects
// to base's dex callback, with users (the default user when none), and
// returns it with the OIDC provider "dex" configured for it; it skips t
// without dex.
func dexProvider(t *testing.T, base string, users ...oauthtest.DexUser) (*oauthtest.DexServer, *provider.OIDCConfig[map[string]any]) {
	t.Helper()
	dex := oauthtest.Dex(t, oauthtest.DexConfig{Users: users, Clients: []oauthtest.DexClient{{
		ID: oauthtest.DefaultDexClientID, Secret: oauthtest.DefaultDexClientSecret, RedirectURIs: []string{base + "/callback/dex"},
	}}})
	if dex == nil {
		t.SkipNow()
	}
	p := &provider.OIDCConfig[map[string]any]{}
	p.ID, p.Name, p.Issuer = "dex", "Dex", dex.Issuer
	p.ClientID, p.ClientSecret = oauthtest.DefaultDexClientID, oauthtest.DefaultDexClientSecret
	return dex, p
}

// OIDC sign-in end to end through the handler against a real dex: the
// sign-in page's form, the redirect to dex, dex's login form, the callback,
// the session, with database and with JWT sessions.
func TestDexSignIn(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			var dex *oauthtest.DexServer
			e := newEnv(t, envOpts{strategy: strategy, providers: func(t *testing.T, base string) []provider.Provider {
				var p *provider.OIDCConfig[map[string]any]
				dex, p = dexProvider(t, base)
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
			cb, err := dex.Login(t.Context(), authURL, oauthtest.DefaultDexUserEmail, oauthtest.DefaultDexUserPassword)
			if err != nil {
				t.Fatal(err)
			}
			res = e.get(cb.String())
			wantStatus(t, res, http.StatusFound)
			wantLocation(t, e, res, "/welcome")
			s := e.session()
			if u, _ := s["user"].(map[string]any); u == nil || u["email"] != oauthtest.DefaultDexUserEmail {
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
				res = dexSignIn(t, e, dex, oauthtest.DefaultDexUserEmail)
				wantStatus(t, res, http.StatusFound)
			} else if len(snap.Sessions) != 1 {
				t.Errorf("database strategy stored %d sessions", len(snap.Sessions))
			}
			// A replayed callback fails its checks (the cookies were used).
			res = e.get(cb.String())
			wantLocation(t, e, res, "/auth/signin", "error", "OAuthCallbackError")
		})
	}
}

// An OAuth account whose e-mail address belongs to a user signed up by
// e-mail is not linked without allowDangerousEmailAccountLinking:
// OAuthAccountNotLinked on the sign-in page.
func TestDexAccountNotLinked(t *testing.T) {
	var dex *oauthtest.DexServer
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		var p *provider.OIDCConfig[map[string]any]
		dex, p = dexProvider(t, base)
		return []provider.Provider{smtp.emailProvider(t), p}
	}})
	e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {oauthtest.DefaultDexUserEmail}})
	other := e.newClient()
	req, _ := http.NewRequest("GET", smtp.link(t), nil)
	e.do(other, req) // the e-mail user exists now, signed in elsewhere

	res := dexSignIn(t, e, dex, oauthtest.DefaultDexUserEmail)
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
}

// A signed-in user who signs in with dex gets the dex account linked to
// them, with database sessions (the flow reads the session cookie) and with
// JWT sessions (the handler decodes the JWT and names the user), even when
// the dex address differs from the user's.
func TestDexLinkWhileSignedIn(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			var dex *oauthtest.DexServer
			smtp := startSMTP(t)
			e := newEnv(t, envOpts{strategy: strategy, providers: func(t *testing.T, base string) []provider.Provider {
				var p *provider.OIDCConfig[map[string]any]
				dex, p = dexProvider(t, base)
				return []provider.Provider{smtp.emailProvider(t), p}
			}})
			const address = "linker@example.com"
			e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {address}})
			res := e.get(smtp.link(t))
			wantStatus(t, res, http.StatusFound)
			if u, _ := e.session()["user"].(map[string]any); u == nil || u["email"] != address {
				t.Fatalf("not signed in by e-mail: %v", e.session())
			}

			res = dexSignIn(t, e, dex, oauthtest.DefaultDexUserEmail)
			wantStatus(t, res, http.StatusFound)
			snap := e.store.Snapshot()
			if len(snap.Users) != 1 {
				t.Fatalf("%d users after linking, want 1: %v", len(snap.Users), snap.Users)
			}
			providers := map[string]string{}
			for _, a := range snap.Accounts {
				providers[a.Provider] = a.UserID
			}
			if len(snap.Accounts) != 2 || providers["email"] != snap.Users[0].ID || providers["dex"] != snap.Users[0].ID {
				t.Errorf("accounts %v: want the e-mail and the dex account of user %s", snap.Accounts, snap.Users[0].ID)
			}
			if u, _ := e.session()["user"].(map[string]any); u == nil || u["email"] != address {
				t.Errorf("session after linking: %v, want still %s", e.session(), address)
			}
		})
	}
}

// dexSignIn signs the env's browser in at dex as email (with dex's default
// password) and returns the response to dex's redirect to the callback.
func dexSignIn(t *testing.T, e *env, dex *oauthtest.DexServer, email string) response {
	t.Helper()
	res := e.post("/auth/signin/dex", url.Values{"csrfToken": {e.csrf()}})
	cb, err := dex.Login(t.Context(), res.Header.Get("Location"), email, oauthtest.DefaultDexUserPassword)
	if err != nil {
		t.Fatal(err)
	}
	return e.get(cb.String())
}
