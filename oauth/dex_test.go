package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
	"github.com/authport/authport/oauth/oauthtest"
)

// The dex tests run the whole authorization-code flow against a real
// OpenID provider: dex, started for each test on loopback by
// oauthtest.Dex, with its default client and user. Its redirect URI is
// http://127.0.0.1:3000/auth/callback/dex.

const dexBase = "http://127.0.0.1:3000/auth"

func dexProvider(d *provider.OIDCConfig[map[string]any], issuer string, checks ...provider.Check) {
	d.ID, d.Name, d.Issuer = "dex", "dex", issuer
	d.ClientID, d.ClientSecret = oauthtest.DefaultDexClientID, oauthtest.DefaultDexClientSecret
	d.Checks = checks
}

func TestDexFlows(t *testing.T) {
	no := false
	cases := []struct {
		name    string
		checks  []provider.Check
		idToken *bool
		values  []string // the checks that have a value to keep
	}{
		{"pkce", []provider.Check{provider.CheckPKCE}, nil, []string{"pkce"}},
		{"state", []provider.Check{provider.CheckState}, nil, []string{"state"}},
		{"pkce state nonce", []provider.Check{provider.CheckPKCE, provider.CheckState, provider.CheckNonce}, nil,
			[]string{"pkce", "state", "nonce"}},
		{"idToken false", nil, &no, []string{"pkce"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := oauthtest.Dex(t, oauthtest.DexConfig{})
			if d == nil {
				return
			}
			var full, kept provider.TokenSet
			p := &provider.OIDCConfig[map[string]any]{IDToken: tc.idToken}
			dexProvider(p, d.Issuer, tc.checks...)
			p.Account = func(ts provider.TokenSet) provider.TokenSet {
				full, kept = ts, provider.DefaultAccount(ts)
				return kept
			}
			s := newSetup(t, &http.Client{Timeout: 30 * time.Second}, dexBase, p)
			authURL, checks := s.begin(t, "dex")
			if got := checkNames(checks); strings.Join(got, ",") != strings.Join(tc.values, ",") {
				t.Errorf("check values %v, want %v", got, tc.values)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			in := s.dexSignIn(ctx, t, d, authURL, checks)
			if full.ExpiresIn == nil {
				t.Fatalf("dex's token response has no expires_in: %+v", full)
			}
			acc := assertSignedIn(t, s.store, in, "dex", oauthtest.DefaultDexUserEmail, time.Duration(*full.ExpiresIn)*time.Second)
			if acc.Type != core.AccountTypeOIDC || acc.ProviderAccountID == "" || acc.IDToken == nil || kept.IDToken == "" ||
				*acc.IDToken != kept.IDToken || *acc.AccessToken != kept.AccessToken || *acc.ExpiresAt != *kept.ExpiresAt {
				t.Errorf("account %+v, want the tokens the account callback kept %+v", acc, kept)
			}
			if in.User.Name == nil || *in.User.Name == "" {
				t.Errorf("user %+v has no name from dex", in.User)
			}
		})
	}
}

// dexSignIn logs dex's default user in at authURL and calls back with
// the check values Begin returned, failing the test if either fails.
func (s *setup) dexSignIn(ctx context.Context, t *testing.T, d *oauthtest.DexServer, authURL string, checks oauth.Checks) *auth.SignIn {
	t.Helper()
	back, err := d.Login(ctx, authURL, oauthtest.DefaultDexUserEmail, oauthtest.DefaultDexUserPassword)
	if err != nil {
		t.Fatalf("dex login: %v", err)
	}
	in, err := s.callback(back, checks, "dex")
	if err != nil {
		t.Fatalf("Callback: %v", err)
	}
	return in
}

// TestDexRejects: what dex itself refuses (a code used twice) and a
// forged state, each with nothing stored.
func TestDexRejects(t *testing.T) {
	d := oauthtest.Dex(t, oauthtest.DexConfig{})
	if d == nil {
		return
	}
	p := &provider.OIDCConfig[map[string]any]{}
	dexProvider(p, d.Issuer, provider.CheckPKCE, provider.CheckState, provider.CheckNonce)
	s := newSetup(t, &http.Client{Timeout: 30 * time.Second}, dexBase, p)
	ctx := context.Background()

	authURL, checks := s.begin(t, "dex")
	back, err := d.Login(ctx, authURL, oauthtest.DefaultDexUserEmail, oauthtest.DefaultDexUserPassword)
	if err != nil {
		t.Fatal(err)
	}
	forged := *back
	setQuery(&forged, "state", "forged")
	if _, err := s.callback(&forged, checks, "dex"); !errors.Is(err, oauth.ErrStateMismatch) {
		t.Errorf("forged state: %v", err)
	}
	if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Accounts)+len(snap.Sessions) != 0 {
		t.Fatalf("stored %+v after a forged state", snap)
	}
	// The same code, with the same check values (as an attacker who
	// copied the callback and the check cookies would): the first use
	// signs in; the second is refused before the code reaches dex, since
	// the check values are single-use on the server.
	if _, err := s.callback(back, checks, "dex"); err != nil {
		t.Fatal(err)
	}
	before := s.store.Snapshot()
	if _, err := s.callback(back, checks, "dex"); !errors.Is(err, oauth.ErrCallbackReplayed) {
		t.Errorf("replayed code: %v, want ErrCallbackReplayed", err)
	}
	if after := s.store.Snapshot(); len(after.Sessions) != len(before.Sessions) || len(after.Users) != 1 || len(after.Accounts) != 1 {
		t.Errorf("a replayed code stored %+v", after)
	}
}
