package conformance

import (
	"fmt"
	"slices"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

func authenticatorRules() []rule {
	return slices.Concat(createAuthRules(), getAuthRules(), listAuthRules(), updateCounterRules())
}

// createAuthRules are the rules of createAuthenticator.
func createAuthRules() []rule {
	return []rule{
		{group: string(createAuth), name: "round_trip", needs: []core.Method{createUser, getAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			au := e.newAuthenticator(u.ID, "pa-1")
			got := e.createAuthenticator(t, au)
			expectEqual(t, "createAuthenticator result", got, au)
			fetched := found(t, "getAuthenticator after createAuthenticator", e.getAuthenticator(t, au.CredentialID))
			expectEqual(t, "getAuthenticator", fetched, au)
			expectEqual(t, "stored authenticators", e.state(t).Authenticators, []core.Authenticator{au})
		}},
		{group: string(createAuth), name: "null_and_empty_differ", needs: []core.Method{createUser, getAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			nul, empty := e.newAuthenticator(u.ID, "pa"), e.newAuthenticator(u.ID, "pa")
			nul.Transports, empty.Transports = nil, ptr("")
			nul.Counter, nul.CredentialBackedUp = 0, false
			for _, au := range []core.Authenticator{nul, empty} {
				e.createAuthenticator(t, au)
				got := found(t, fmt.Sprintf("getAuthenticator(%q)", au.CredentialID), e.getAuthenticator(t, au.CredentialID))
				expectEqual(t, "getAuthenticator", got, au)
			}
		}},
		{group: string(createAuth), name: "duplicate_credential_rejected", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			au := e.newAuthenticator(u.ID, "pa")
			e.createAuthenticator(t, au)
			dup := e.newAuthenticator(u.ID, "pa-2")
			dup.CredentialID = au.CredentialID
			e.expectRefused(t, "createAuthenticator with a taken credential id", "the rejected createAuthenticator", core.ErrAlreadyExists, func() error {
				return errOf(e.a.CreateAuthenticator(e.ctx, dup))
			})
		}},
		unknownUserRule(createAuth, "unknown_user_errors", "createAuthenticator for an unknown user", func(e *env, userID string) error {
			_, err := e.a.CreateAuthenticator(e.ctx, e.newAuthenticator(userID, "pa"))
			return err
		}),
		{group: string(createAuth), name: "empty_fields_rejected", needs: []core.Method{createUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			expectInvalid(t, e, "createAuthenticator", e.a.CreateAuthenticator, spoiled(func() core.Authenticator { return e.newAuthenticator(u.ID, "pa") }, map[string]func(*core.Authenticator){
				"empty credentialID":        func(a *core.Authenticator) { a.CredentialID = "" },
				"empty credentialPublicKey": func(a *core.Authenticator) { a.CredentialPublicKey = "" },
				"empty userId":              func(a *core.Authenticator) { a.UserID = "" },
				"empty providerAccountId":   func(a *core.Authenticator) { a.ProviderAccountID = "" },
				"negative counter":          func(a *core.Authenticator) { a.Counter = -1 },
			}))
		}},
	}
}

// getAuthRules are the rules of getAuthenticator.
func getAuthRules() []rule {
	return []rule{
		{group: string(getAuth), name: "finds_authenticator", needs: []core.Method{createUser, createAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			au := e.newAuthenticator(u.ID, "pa")
			e.createAuthenticator(t, au)
			e.createAuthenticator(t, e.newAuthenticator(u.ID, "pa"))
			got := found(t, "getAuthenticator", e.getAuthenticator(t, au.CredentialID))
			expectEqual(t, "getAuthenticator", got, au)
		}},
		{group: string(getAuth), name: "not_found_is_nil", needs: []core.Method{createUser, createAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createAuthenticator(t, e.newAuthenticator(u.ID, "pa"))
			if got := e.getAuthenticator(t, "no-such-credential"); got != nil {
				t.Errorf("getAuthenticator of an unknown id = %s, want nil", show(got))
			}
		}},
	}
}

// listAuthRules are the rules of listAuthenticatorsByUserId.
func listAuthRules() []rule {
	return []rule{
		{group: string(listAuth), name: "lists_the_users_authenticators", needs: []core.Method{createUser, createAuth}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			a2 := e.newAuthenticator(u.ID, "pa")
			a1 := e.newAuthenticator(u.ID, "pa")
			a1.CredentialID = "A" + a1.CredentialID // sorts before a2
			e.createAuthenticator(t, a2)
			e.createAuthenticator(t, a1)
			e.createAuthenticator(t, e.newAuthenticator(other.ID, "pb"))
			got, err := e.a.ListAuthenticatorsByUserID(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "listAuthenticatorsByUserId (ordered by credential id)", got, []core.Authenticator{a1, a2})
		}},
		{group: string(listAuth), name: "unknown_user_empty_list", needs: []core.Method{createUser, createAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createAuthenticator(t, e.newAuthenticator(u.ID, "pa"))
			got, err := e.a.ListAuthenticatorsByUserID(e.ctx, "no-such-user")
			if err != nil {
				t.Errorf("listAuthenticatorsByUserId of an unknown user: %v, want an empty list and no error", err)
			}
			if got == nil || len(got) != 0 {
				t.Errorf("listAuthenticatorsByUserId of an unknown user = %#v, want an empty, non-nil list", got)
			}
		}},
	}
}

// updateCounterRules are the rules of updateAuthenticatorCounter.
func updateCounterRules() []rule {
	return []rule{
		{group: string(updateCounter), name: "updates_counter", needs: []core.Method{createUser, createAuth, getAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			au, other := e.newAuthenticator(u.ID, "pa"), e.newAuthenticator(u.ID, "pa")
			e.createAuthenticator(t, au)
			e.createAuthenticator(t, other)
			got, err := e.a.UpdateAuthenticatorCounter(e.ctx, au.CredentialID, 1<<40)
			if err != nil {
				t.Fatal(err)
			}
			want := au
			want.Counter = 1 << 40
			if got == nil {
				t.Fatal("updateAuthenticatorCounter returned nil and no error")
			}
			expectEqual(t, "updateAuthenticatorCounter result", *got, want)
			if g := e.getAuthenticator(t, au.CredentialID); g == nil {
				t.Error("getAuthenticator after the update = nil")
			} else {
				expectEqual(t, "getAuthenticator after the update", *g, want)
			}
			expectEqual(t, "stored authenticators", e.state(t).Authenticators, sortedAuthenticators(want, other))
		}},
		{group: string(updateCounter), name: "unknown_credential_errors", needs: []core.Method{createUser, createAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.createAuthenticator(t, e.newAuthenticator(u.ID, "pa"))
			before := e.state(t)
			got, err := e.a.UpdateAuthenticatorCounter(e.ctx, "no-such-credential", 3)
			expectErr(t, "updateAuthenticatorCounter of an unknown credential (the spec says it must throw)", err, core.ErrNotFound)
			if got != nil {
				t.Errorf("it also returned %s", show(got))
			}
			e.expectUnchanged(t, before, "the failed updateAuthenticatorCounter")
		}},
		{group: string(updateCounter), name: "negative_counter_rejected", needs: []core.Method{createUser, createAuth}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			au := e.newAuthenticator(u.ID, "pa")
			e.createAuthenticator(t, au)
			e.expectRefused(t, "updateAuthenticatorCounter to -1", "the rejected updateAuthenticatorCounter", core.ErrInvalidInput, func() error {
				return errOf(e.a.UpdateAuthenticatorCounter(e.ctx, au.CredentialID, -1))
			})
		}},
	}
}

// counterRules check core.AuthenticatorCounterAdvancer: the signature
// counter only ever increases, in one atomic step, so that a replayed or
// raced WebAuthn assertion fails.
func counterRules() []rule {
	x := core.ExtensionAdvanceAuthenticatorCounter
	needs := []core.Method{createUser, createAuth, getAuth}
	advance := func(e *env, id string, c int64) (*core.Authenticator, error) {
		return e.a.AdvanceAuthenticatorCounter(e.ctx, id, c)
	}
	// setup stores a user and an authenticator with the counter.
	setup := func(t *testing.T, e *env, counter int64) core.Authenticator {
		u := e.storedUser(t)
		au := e.newAuthenticator(u.ID, e.id("pk"))
		au.Counter = counter
		e.createAuthenticator(t, au)
		return au
	}
	return []rule{
		{group: advanceCounter, name: "exactly_one_of_concurrent_equal_counters_wins", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			const n = 20
			au := setup(t, e, 7)
			results := make([]*core.Authenticator, n)
			errs := make([]error, n)
			coretest.Concurrently(n, func(i int) {
				results[i], errs[i] = advance(e, au.CredentialID, 8)
			})
			expectOneWon(t, errs, core.ErrCounterNotIncreased, "a losing concurrent advance", "concurrent advances to the same counter succeeded")
			want := au
			want.Counter = 8
			for i, err := range errs {
				if err == nil {
					expectEqual(t, "the winning advance's result", results[i], &want)
				}
			}
			if got := e.getAuthenticator(t, au.CredentialID); got == nil || got.Counter != 8 {
				t.Errorf("stored authenticator = %s, want counter 8", show(got))
			}
		}},
		{group: advanceCounter, name: "replayed_or_older_counter_fails", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 7)
			got, err := advance(e, au.CredentialID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Counter != 10 {
				t.Errorf("advance to 10 returned %s", show(got))
			}
			before := e.state(t)
			for _, c := range []int64{10, 9, 7, 1, 0} {
				got, err := advance(e, au.CredentialID, c)
				expectErr(t, fmt.Sprintf("advance to %d with 10 stored", c), err, core.ErrCounterNotIncreased)
				if got != nil {
					t.Errorf("advance to %d with 10 stored returned %s as well as an error", c, show(got))
				}
			}
			e.expectUnchanged(t, before, "the rejected advances")
			if got, err := advance(e, au.CredentialID, 1<<40); err != nil || got == nil || got.Counter != 1<<40 {
				t.Errorf("advance to 2^40 = %s, %v; want the counter 2^40", show(got), err)
			}
		}},
		{group: advanceCounter, name: "zero_counters_mean_no_counter", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 0)
			before := e.state(t)
			for range 3 {
				got, err := advance(e, au.CredentialID, 0)
				if err != nil || got == nil || got.Counter != 0 || got.CredentialID != au.CredentialID {
					t.Errorf("advance 0 → 0 (an authenticator without a counter) = %s, %v; want the authenticator unchanged", show(got), err)
				}
			}
			e.expectUnchanged(t, before, "advancing 0 to 0")
			if got, err := advance(e, au.CredentialID, 3); err != nil || got == nil || got.Counter != 3 {
				t.Errorf("advance 0 → 3 = %s, %v", show(got), err)
			}
			_, err := advance(e, au.CredentialID, 0)
			expectErr(t, "advance 3 → 0", err, core.ErrCounterNotIncreased)
		}},
		{group: advanceCounter, name: "unknown_or_negative_rejected", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 7)
			before := e.state(t)
			_, err := advance(e, "no-such-credential", 8)
			expectErr(t, "advance of an unknown credential", err, core.ErrNotFound)
			_, err = advance(e, au.CredentialID, -1)
			expectErr(t, "advance to a negative counter", err, core.ErrInvalidInput)
			e.expectUnchanged(t, before, "the rejected advances")
		}},
		{group: advanceCounter, name: "cancelled_context_errors", extension: x, needs: needs, run: func(t *testing.T, e *env) {
			au := setup(t, e, 7)
			before := e.state(t)
			ctx, cancel := contextCancelled(e.ctx)
			defer cancel()
			if _, err := e.a.AdvanceAuthenticatorCounter(ctx, au.CredentialID, 8); err == nil {
				t.Error("advance with a cancelled context returned no error")
			}
			e.expectUnchanged(t, before, "advance with a cancelled context")
		}},
	}
}

func sortedAuthenticators(as ...core.Authenticator) []core.Authenticator {
	slices.SortFunc(as, byCredentialID)
	return as
}
