package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/passkeytest"
)

func dangerous(c *auth.Config) { c.AllowDangerousUnverifiedEmail = true }

// With auth.Config.AllowDangerousUnverifiedEmail, Auth.js's behaviour:
// someone signed out signs up with a passkey for an address, and the
// owner's e-mail sign-in later lands in that user, which the passkey still
// signs in to. Without it (the default, e.g. after upgrading a store that
// holds such a user), the owner gets a user of their own and the passkey's
// holder keeps only a user under a reserved address.
func TestUnprovenPasskeyHolder(t *testing.T) {
	signUp := func(t *testing.T, e *idEnv) (*passkeytest.Authenticator, string) {
		t.Helper()
		key, err := passkeytest.NewAuthenticator()
		if err != nil {
			t.Fatal(err)
		}
		attacker := e.browser()
		if res := attacker.ceremony("action=register&email=victim%40example.com", key); res.StatusCode/100 != 3 || attacker.sessionEmail() != "victim@example.com" {
			t.Fatalf("signed-out sign-up with the option: %s, session %q", res.Status, attacker.sessionEmail())
		}
		u := e.user("victim@example.com")
		if u == nil || u.EmailVerified != nil {
			t.Fatalf("the signed-up user: %+v", u)
		}
		return key, u.ID
	}

	t.Run("AuthJS", func(t *testing.T) {
		e := newIDEnv(t, memory.New(), dangerous)
		key, attackerUser := signUp(t, e)
		e.browser().signInByEmail("victim@example.com")
		if u := e.user("victim@example.com"); u == nil || u.ID != attackerUser || u.EmailVerified == nil {
			t.Fatalf("with the option the owner lands in the signed-up user %s: %+v", attackerUser, u)
		}
		later := e.browser()
		if res := later.ceremony("", key); res.StatusCode/100 != 3 || later.sessionEmail() != "victim@example.com" {
			t.Fatalf("the passkey after the owner's sign-in: %s, %q", res.Status, later.sessionEmail())
		}
	})

	t.Run("Default", func(t *testing.T) {
		store := memory.New()
		key, attackerUser := signUp(t, newIDEnv(t, store, dangerous))
		e := newIDEnv(t, store, nil)
		e.browser().signInByEmail("victim@example.com")
		u := e.user("victim@example.com")
		if u == nil || u.ID == attackerUser || u.EmailVerified == nil {
			t.Fatalf("the owner's user %+v: want a new, verified one, not %s", u, attackerUser)
		}
		if list, err := store.ListAuthenticatorsByUserID(context.Background(), u.ID); err != nil || len(list) != 0 {
			t.Fatalf("the owner's user has passkeys: %+v, %v", list, err)
		}
		held, err := store.GetUser(context.Background(), attackerUser)
		if err != nil || held == nil || held.Email != auth.DisplacedEmail(attackerUser) {
			t.Fatalf("the earlier holder %+v, %v: want the address %s", held, err, auth.DisplacedEmail(attackerUser))
		}
		later := e.browser()
		if res := later.ceremony("", key); res.StatusCode/100 != 3 {
			t.Fatalf("the passkey: %s", res.Status)
		}
		if got := later.sessionEmail(); got != auth.DisplacedEmail(attackerUser) {
			t.Fatalf("the passkey signs in as %q, want the displaced user", got)
		}
		// A second e-mail sign-in changes nothing more.
		e.browser().signInByEmail("victim@example.com")
		if again := e.user("victim@example.com"); again == nil || again.ID != u.ID {
			t.Fatalf("second sign-in: %+v", again)
		}
		_ = http.StatusOK
	})
}
