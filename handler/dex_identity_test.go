package handler_test

import (
	"net/url"
	"testing"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core/provider"
)

// Finding 6 against a real dex: a dex user whose address is spelt with
// capitals (dex sends it as configured) finds the user of the address
// signed up by e-mail: OAuthAccountNotLinked, not a second user.
func TestDexAddressSpelling(t *testing.T) {
	var dex *provision.DexServer
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{providers: func(t *testing.T, base string) []provider.Provider {
		dex = provision.Dex(t, provision.DexConfig{
			Clients: []provision.DexClient{{ID: provision.DefaultDexClientID, Secret: provision.DefaultDexClientSecret, RedirectURIs: []string{base + "/callback/dex"}}},
			Users:   []provision.DexUser{{Email: "Victim@Example.COM", Password: provision.DefaultDexUserPassword}},
		})
		if dex == nil {
			t.SkipNow()
		}
		p := &provider.OIDCConfig[map[string]any]{}
		p.ID, p.Name, p.Issuer = "dex", "Dex", dex.Issuer
		p.ClientID, p.ClientSecret = provision.DefaultDexClientID, provision.DefaultDexClientSecret
		return []provider.Provider{smtp.emailProvider(t), p}
	}})
	signInByEmail(t, e, smtp, "victim@example.com")
	e.client = e.newClient()
	res := e.post("/auth/signin/dex", url.Values{"csrfToken": {e.csrf()}})
	cb, err := dex.Login(t.Context(), res.Header.Get("Location"), "Victim@Example.COM", provision.DefaultDexUserPassword)
	if err != nil {
		t.Fatal(err)
	}
	res = e.get(cb.String())
	wantLocation(t, e, res, "/auth/signin", "error", "OAuthAccountNotLinked")
	if snap := e.store.Snapshot(); len(snap.Users) != 1 || len(snap.Accounts) != 1 {
		t.Errorf("%d users, %d accounts: want only the e-mail user: %+v", len(snap.Users), len(snap.Accounts), snap.Users)
	}
}
