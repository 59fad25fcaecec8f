package handlersec

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// TestCallbackPanics: a callback that panics fails what it ran for as its
// error would, and the server answers: a panicking SignIn refuses the
// sign-in (Configuration, no session, nothing written but the OAuth
// check's record), a panicking JWT or Session callback ends the session
// read without a session, a panicking Redirect refuses the callbackUrl.
// Without the recovery net/http drops the connection (the client sees
// EOF), and a caller of core/auth outside a handler crashes.
func TestCallbackPanics(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
		t.Run(string(strategy), func(t *testing.T) {
			var panicSignIn, panicSession bool
			app := newHookApp(t, testStores[0].open(t), strategy, func(c *auth.Config) {
				c.Callbacks.SignIn = func(context.Context, auth.SignInParams) (auth.SignInDecision, error) {
					if panicSignIn {
						panic("a bug in the application's SignIn callback")
					}
					return auth.SignInDecision{}, nil
				}
				c.Callbacks.JWT = func(_ context.Context, p auth.JWTParams) (map[string]any, error) {
					if panicSession && p.Trigger != auth.JWTSignIn && p.Trigger != auth.JWTSignUp {
						panic("a bug in the application's JWT callback")
					}
					return p.Token, nil
				}
				c.Callbacks.Session = func(_ context.Context, p auth.SessionParams) (map[string]any, error) {
					if panicSession {
						panic("a bug in the application's Session callback")
					}
					return p.Session, nil
				}
				c.Callbacks.Redirect = func(context.Context, auth.RedirectParams) (string, bool) {
					panic("a bug in the application's Redirect callback")
				}
			})
			panicSignIn = true
			res := app.signInOAuth(map[string]any{"id": "gh-1", "email": "octo@example.com"})
			if loc := res.Header.Get("Location"); !strings.Contains(loc, "error=Configuration") {
				t.Errorf("a panicking SignIn callback: %d %q, want the Configuration error page", res.StatusCode, loc)
			}
			noSession(t, "a panicking SignIn callback", res)
			if w := app.store.WritesExcept(core.MethodCreateVerificationToken); len(w) != 0 {
				t.Errorf("a panicking SignIn callback wrote %v", w)
			}
			panicSignIn = false
			app.signInOAuth(map[string]any{"id": "gh-1", "email": "octo@example.com"})
			if s := app.session(); s == nil || s["user"] == nil {
				t.Fatalf("signed in: %v", s)
			}
			panicSession = true
			if res := app.do("GET", "/auth/session", nil); res.StatusCode == 200 && strings.Contains(res.body, "octo@example.com") {
				t.Errorf("a panicking Session/JWT callback: %d %s, want no session", res.StatusCode, res.body)
			}
			panicSession = false
			// Redirect panics: the callbackUrl is refused, the sign-out
			// still answers.
			res = app.do("POST", "/auth/signout", url.Values{"csrfToken": {app.csrf()}, "callbackUrl": {app.srv.URL + "/somewhere"}})
			if res.StatusCode/100 != 3 || strings.Contains(res.Header.Get("Location"), "/somewhere") {
				t.Errorf("a panicking Redirect callback: %d %q, want the callbackUrl refused", res.StatusCode, res.Header.Get("Location"))
			}
		})
	}
}
