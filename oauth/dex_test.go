package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/authport/authport/core"
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
		cookies []string
	}{
		{"pkce", []provider.Check{provider.CheckPKCE}, nil, []string{"authjs.pkce.code_verifier"}},
		{"state", []provider.Check{provider.CheckState}, nil, []string{"authjs.state"}},
		{"pkce state nonce", []provider.Check{provider.CheckPKCE, provider.CheckState, provider.CheckNonce}, nil,
			[]string{"authjs.pkce.code_verifier", "authjs.state", "authjs.nonce"}},
		{"idToken false", nil, &no, []string{"authjs.pkce.code_verifier"}},
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
			authURL, cookies := s.begin(t, "dex")
			if got := cookieNames(cookies); len(got) != len(tc.cookies) {
				t.Errorf("check cookies %v, want %v", got, tc.cookies)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			back, err := d.Login(ctx, authURL, oauthtest.DefaultDexUserEmail, oauthtest.DefaultDexUserPassword)
			if err != nil {
				t.Fatalf("dex login: %v", err)
			}
			in, rec, err := s.callback(back, cookies, "dex")
			if err != nil {
				t.Fatalf("Callback: %v", err)
			}
			if full.ExpiresIn == nil {
				t.Fatalf("dex's token response has no expires_in: %+v", full)
			}
			acc := assertSignedIn(t, s.store, in, rec, cookies, "dex", oauthtest.DefaultDexUserEmail, time.Duration(*full.ExpiresIn)*time.Second)
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

	authURL, cookies := s.begin(t, "dex")
	back, err := d.Login(ctx, authURL, oauthtest.DefaultDexUserEmail, oauthtest.DefaultDexUserPassword)
	if err != nil {
		t.Fatal(err)
	}
	forged := *back
	setQuery(&forged, "state", "forged")
	if _, _, err := s.callback(&forged, cookies, "dex"); !errors.Is(err, oauth.ErrStateMismatch) {
		t.Errorf("forged state: %v", err)
	}
	if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Accounts)+len(snap.Sessions) != 0 {
		t.Fatalf("stored %+v after a forged state", snap)
	}
	// The same code, with the same cookies (as an attacker who copied both
	// would): the first use signs in; the second is refused before the
	// code reaches dex, since the check values are single-use on the
	// server (issue 23, item 8).
	if _, _, err := s.callback(back, cookies, "dex"); err != nil {
		t.Fatal(err)
	}
	before := s.store.Snapshot()
	if _, _, err := s.callback(back, cookies, "dex"); !errors.Is(err, oauth.ErrCallbackReplayed) {
		t.Errorf("replayed code: %v, want ErrCallbackReplayed", err)
	}
	if after := s.store.Snapshot(); len(after.Sessions) != len(before.Sessions) || len(after.Users) != 1 || len(after.Accounts) != 1 {
		t.Errorf("a replayed code stored %+v", after)
	}
}
