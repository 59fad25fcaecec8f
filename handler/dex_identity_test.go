package handler_test

import (
	"testing"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth/oauthtest"
)

// One e-mail identity against a real dex: a dex user whose address is spelt with
// capitals (dex sends it as configured) finds the user of the address
// signed up by e-mail: OAuthAccountNotLinked, not a second user.
func TestDexAddressSpelling(t *testing.T) {
	var dex *oauthtest.DexServer
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		var p *provider.OIDCConfig[map[string]any]
		dex, p = dexProvider(t, base, oauthtest.DexUser{Email: "Victim@Example.COM", Password: oauthtest.DefaultDexUserPassword})
		return []provider.Provider{smtp.emailProvider(t), p}
	}})
	signInByEmail(t, e, smtp, "victim@example.com")
	e.client = e.newClient()
	res := dexSignIn(t, e, dex, "Victim@Example.COM")
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthAccountNotLinked")
	if snap := e.store.Snapshot(); len(snap.Users) != 1 || len(snap.Accounts) != 1 {
		t.Errorf("%d users, %d accounts: want only the e-mail user: %+v", len(snap.Users), len(snap.Accounts), snap.Users)
	}
}
