package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// cutRounds is how many sequences of calls the cut rule runs, each cut by
// a deadline of its own.
const cutRounds = 40

// cutWait bounds how long a key cut short may stay taken: a store may hold
// a provisional claim until it expires (Redis Cluster: the claim TTL, 30s
// by default), but not for ever.
const cutWait = 45 * time.Second

// cutRules are the rules of calls cut short: an operation whose
// context ends part-way, at any point, leaves every e-mail, account key and
// verification token usable again, at the latest once provisional claims
// have expired, and a retry of the call completes it.
func cutRules() []rule {
	return []rule{{
		group: "cutShort",
		name:  "every e-mail, account and token usable again after calls cut by deadlines",
		needs: []core.Method{
			core.MethodCreateUser, core.MethodGetUserByEmail, core.MethodGetUserByAccount, core.MethodUpdateUser,
			core.MethodDeleteUser, core.MethodLinkAccount, core.MethodUnlinkAccount,
			core.MethodCreateVerificationToken, core.MethodUseVerificationToken,
		},
		run: runCutShort,
	}}
}

// cutCase is what one round used: the keys that must be usable again.
type cutCase struct {
	user          core.User
	email2        string
	account       core.Account
	token         core.VerificationToken
	deadline      time.Duration
	callsReturned int
}

func runCutShort(t *testing.T, e *env) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 24))
	cases := make([]cutCase, 0, cutRounds)
	for range cutRounds {
		u := e.newUser()
		c := cutCase{
			user:    u,
			email2:  e.id("moved") + "@example.com",
			account: e.newAccount(u.ID),
			token:   core.VerificationToken{Identifier: u.Email, Token: e.id("token"), Expires: future()},
			// From 10µs to about 40ms, evenly on a log scale.
			deadline: time.Duration(float64(10*time.Microsecond) * float64(uint64(1)<<rng.IntN(12)) * (1 + rng.Float64())),
		}
		c.callsReturned = cutSequence(e, c)
		cases = append(cases, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*cutWait+30*time.Second)
	defer cancel()
	deadline := time.Now().Add(cutWait)
	for _, c := range cases {
		checkUsable(ctx, t, e, c, deadline)
	}
}

// cutSequence runs a sign-up, link, e-mail change, unlink, relink, token
// and delete sequence under one context that ends after c.deadline, so
// that the call in flight then is cut part-way. It returns how many calls
// returned before the context ended.
func cutSequence(e *env, c cutCase) int {
	ctx, cancel := context.WithTimeout(context.Background(), c.deadline)
	defer cancel()
	key := core.AccountKey{Provider: c.account.Provider, ProviderAccountID: c.account.ProviderAccountID}
	calls := []func() error{
		func() error { _, err := e.a.CreateUser(ctx, c.user); return err },
		func() error { _, err := e.a.LinkAccount(ctx, c.account); return err },
		func() error { _, err := e.a.CreateVerificationToken(ctx, c.token); return err },
		func() error {
			_, err := e.a.UpdateUser(ctx, core.UserUpdate{ID: c.user.ID, Email: core.Set(c.email2)})
			return err
		},
		func() error { _, err := e.a.UnlinkAccount(ctx, key); return err },
		func() error { _, err := e.a.LinkAccount(ctx, c.account); return err },
		func() error { _, err := e.a.UseVerificationToken(ctx, c.token.Key()); return err },
		func() error { _, err := e.a.DeleteUser(ctx, c.user.ID); return err },
	}
	for i, call := range calls {
		if err := call(); err != nil && ctx.Err() != nil {
			return i
		}
	}
	return len(calls)
}

// checkUsable retries what the cut sequence left undone (deleteUser, as
// an application retries a failed call) and checks that the round's
// e-mails, account key and token can be used by new records, waiting
// until until for keys still held by provisional claims.
func checkUsable(ctx context.Context, t *testing.T, e *env, c cutCase, until time.Time) {
	t.Helper()
	where := func() string {
		return fmt.Sprintf("after a sequence cut after %v (%d calls returned)", c.deadline, c.callsReturned)
	}
	if _, err := e.a.DeleteUser(ctx, c.user.ID); err != nil {
		t.Errorf("%s: retried deleteUser: %v", where(), err)
		return
	}
	for _, email := range []string{c.user.Email, c.email2} {
		nu := e.newUser()
		nu.Email = email
		if err := retryTaken(ctx, until, func() error { _, err := e.a.CreateUser(ctx, nu); return err }); err != nil {
			t.Errorf("%s: createUser with the e-mail %q: %v", where(), email, err)
			continue
		}
		if got, err := e.a.GetUserByEmail(ctx, email); err != nil || got == nil || got.ID != nu.ID {
			t.Errorf("%s: getUserByEmail(%q) = %v, %v; want the new user %s", where(), email, got, err, nu.ID)
		}
		if email == c.user.Email {
			acc := c.account
			acc.UserID = nu.ID
			if err := retryTaken(ctx, until, func() error { _, err := e.a.LinkAccount(ctx, acc); return err }); err != nil {
				t.Errorf("%s: linkAccount of the account to a new user: %v", where(), err)
			} else if got, err := e.a.GetUserByAccount(ctx, core.AccountKey{Provider: acc.Provider, ProviderAccountID: acc.ProviderAccountID}); err != nil || got == nil || got.ID != nu.ID {
				t.Errorf("%s: getUserByAccount = %v, %v; want the new user %s", where(), got, err, nu.ID)
			}
		}
	}
	// A token the sequence created and did not use is used here; then the
	// same token can be issued and used again.
	if _, err := e.a.UseVerificationToken(ctx, c.token.Key()); err != nil {
		t.Errorf("%s: useVerificationToken: %v", where(), err)
	}
	if err := retryTaken(ctx, until, func() error { _, err := e.a.CreateVerificationToken(ctx, c.token); return err }); err != nil {
		t.Errorf("%s: createVerificationToken again: %v", where(), err)
		return
	}
	if got, err := e.a.UseVerificationToken(ctx, c.token.Key()); err != nil || got == nil {
		t.Errorf("%s: useVerificationToken of the token issued again = %v, %v; want it", where(), got, err)
	}
}

// retryTaken runs f until it does not fail with core.ErrAlreadyExists or
// until has passed, and returns its last error.
func retryTaken(ctx context.Context, until time.Time, f func() error) error {
	for {
		err := f()
		if !errors.Is(err, core.ErrAlreadyExists) || time.Now().After(until) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
