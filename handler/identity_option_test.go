package handler_test

import (
	"net/http"
	"testing"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth/oauthtest"
)

// With auth.Config.AllowDangerousUnverifiedEmail, Auth.js's behaviour: a
// profile whose provider says email_verified false creates the user of the
// address, and the owner's e-mail sign-in lands in it, next to the OAuth
// account.
func TestOAuthUnverifiedAddressWithTheOption(t *testing.T) {
	fake := oauthtest.StartFake(t)
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{
		providers: func(t *testing.T, base string) []provider.Provider {
			return []provider.Provider{smtp.emailProvider(t), fake.Provider("fake")}
		},
		authConfig: func(c *auth.Config) { c.AllowDangerousUnverifiedEmail = true },
	})
	res := fakeSignIn(t, fake, e, "fake", map[string]any{"id": "attacker", "email": "Victim@Example.com", "email_verified": false})
	wantStatus(t, res, http.StatusFound)
	e.client = e.newClient()
	signInByEmail(t, e, smtp, "victim@example.com")
	snap := e.store.Snapshot()
	if len(snap.Users) != 1 || len(snap.Accounts) != 2 || snap.Users[0].Email != "victim@example.com" {
		t.Errorf("users %+v, accounts %+v: want one user with the OAuth and the e-mail account", snap.Users, snap.Accounts)
	}
}
