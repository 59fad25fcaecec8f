package passkey_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/internal/refusal"
	"github.com/authport/authport/passkey/passkeytest"
)

// sfEnv is a user u with two passkeys, factor (a second factor) and
// other (not one), and a user v with a passkey of their own, a second
// factor of v's.
type sfEnv struct {
	*passkeytest.Env
	u, v          core.User
	factor, other *passkeytest.Authenticator
	vKey          *passkeytest.Authenticator
}

var ceremony = passkeytest.Ceremony{Origin: passkeytest.Origin}

func newSFEnv(t *testing.T, strategy auth.Strategy) *sfEnv {
	t.Helper()
	e := &sfEnv{Env: passkeytest.NewEnvWith(t, memory.New(), passkeytest.EnvOptions{
		SecondFactors: auth.SecondFactorOptions{Enabled: true},
		Strategy:      strategy,
	})}
	ctx := context.Background()
	e.factor, e.other, e.vKey = e.NewAuthenticator(), e.NewAuthenticator(), e.NewAuthenticator()
	e.u = e.SignUp("u@example.com", e.factor)
	e.AddPasskey(e.u, e.other)
	e.v = e.SignUp("v@example.com", e.vKey)
	for _, add := range []struct {
		user core.User
		key  *passkeytest.Authenticator
	}{{e.u, e.factor}, {e.v, e.vKey}} {
		if _, err := e.Auth.Factors().AddPasskey(ctx, add.user.ID, add.key.CredentialID(), ""); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// pending signs in with key without user verification (one factor),
// which leaves a pending sign-in, and returns its token.
func (e *sfEnv) pending(key *passkeytest.Authenticator) string {
	e.T.Helper()
	si, err := e.SignIn(key, passkeytest.Ceremony{NoUserVerification: true})
	if err != nil {
		e.T.Fatal(err)
	}
	if si.Pending == nil || si.Pending.Token == "" || !slices.Contains(si.Pending.Factors, core.FactorPasskey) {
		e.T.Fatalf("a one-factor sign-in of a user with a passkey factor gave %+v", si)
	}
	return si.Pending.Token
}

func (e *sfEnv) options(userID, pendingToken string) (passkeytest.Options, string) {
	e.T.Helper()
	o, c, err := e.Client.SecondFactorOptions(context.Background(), userID, pendingToken)
	if err != nil {
		e.T.Fatalf("second-factor options: %v", err)
	}
	return o, c
}

func allowed(o passkeytest.Options) []string {
	var ids []string
	for _, c := range o.Options.AllowCredentials {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}

// A passkey answers a pending sign-in: the options allow only the user's
// passkey factors and require user verification; the assertion finishes
// the sign-in as two factors, once.
func TestSecondFactorPending(t *testing.T) {
	for _, strategy := range []auth.Strategy{auth.StrategyJWT, auth.StrategyDatabase} {
		t.Run(string(strategy), func(t *testing.T) {
			e := newSFEnv(t, strategy)
			ctx := context.Background()
			token := e.pending(e.other)
			o, challenge := e.options("", token)
			if o.Action != "authenticate" || o.Options.UserVerification != "required" {
				t.Errorf("options: action %q, userVerification %q", o.Action, o.Options.UserVerification)
			}
			if got := allowed(o); !slices.Equal(got, []string{e.factor.RawCredentialID()}) {
				t.Errorf("allowed credentials %v, want only the factor %s", got, e.factor.RawCredentialID())
			}
			before := e.StoredCounter(e.factor)
			si, err := e.Client.VerifySecondFactor(ctx, challenge, e.Get(e.factor, o, ceremony), "", token, "", false)
			if err != nil {
				t.Fatal(err)
			}
			if si.Pending != nil || si.User.ID != e.u.ID || si.Authentication.Level != auth.LevelMultiFactor ||
				!slices.Contains(si.Authentication.Methods, auth.AMRHardwareKey) || !slices.Contains(si.Authentication.Methods, auth.AMRUser) {
				t.Errorf("sign-in %+v", si)
			}
			if strategy == auth.StrategyDatabase && si.Session.SessionToken == "" {
				t.Error("no database session")
			}
			if strategy == auth.StrategyJWT && si.Claims == nil {
				t.Error("no JWT claims")
			}
			if got := e.StoredCounter(e.factor); got <= before {
				t.Errorf("counter %d, was %d", got, before)
			}
			// The same answer again: the challenge is used.
			if _, err := e.Client.VerifySecondFactor(ctx, challenge, e.Get(e.factor, o, ceremony), "", token, "", false); !refused(err, refusal.ErrChallengeReused) {
				t.Errorf("replayed challenge: %v", err)
			}
			// A new ceremony for the used pending sign-in, through another
			// instance: core/auth refuses it (the options may be made:
			// they reveal only the allowed credentials).
			other := e.Instance()
			if o2, c2, err := other.SecondFactorOptions(ctx, "", token); auth.CodeOf(err) != auth.CodeSecondFactor {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := other.VerifySecondFactor(ctx, c2, e.Get(e.factor, o2, ceremony), "", token, "", false); auth.CodeOf(err) != auth.CodeSecondFactor {
					t.Errorf("a new answer to a used pending sign-in: %v", err)
				}
			}
		})
	}
}

// Refusals change nothing: the pending sign-in still finishes afterwards
// with a good answer, and the factor's counter moved only then.
func TestSecondFactorRefused(t *testing.T) {
	e := newSFEnv(t, auth.StrategyJWT)
	ctx := context.Background()
	token := e.pending(e.other)
	counter := e.StoredCounter(e.factor)
	verify := func(challenge, data, userID, pendingToken string) error {
		_, err := e.Client.VerifySecondFactor(ctx, challenge, data, userID, pendingToken, "", false)
		return err
	}

	// Without user verification: refused before core/auth is asked.
	o, c := e.options("", token)
	if err := verify(c, e.Get(e.factor, o, passkeytest.Ceremony{Origin: passkeytest.Origin, NoUserVerification: true}), "", token); !refused(err, refusal.ErrUserNotVerified) {
		t.Errorf("no UV: %v", err)
	}
	// The user's passkey that is not a factor, and another user's.
	o, c = e.options("", token)
	if err := verify(c, e.Get(e.other, o, ceremony), "", token); !refused(err, refusal.ErrUnknownCredential) {
		t.Errorf("a passkey that is not a factor: %v", err)
	}
	o, c = e.options("", token)
	if err := verify(c, e.Get(e.vKey, o, ceremony), "", token); !refused(err, refusal.ErrUnknownCredential) {
		t.Errorf("another user's passkey: %v", err)
	}
	// A bad signature, another origin.
	o, c = e.options("", token)
	if err := verify(c, e.Get(e.factor, o, passkeytest.Ceremony{Origin: passkeytest.Origin, TamperSignature: true}), "", token); !refused(err, refusal.ErrVerificationFailed) {
		t.Errorf("tampered signature: %v", err)
	}
	o, c = e.options("", token)
	if err := verify(c, e.Get(e.factor, o, passkeytest.Ceremony{Origin: "https://evil.example"}), "", token); !refused(err, refusal.ErrOriginMismatch) {
		t.Errorf("another origin: %v", err)
	}
	// The challenge of another pending sign-in (v's), and of a
	// re-authentication, do not serve this one; nor does an ordinary
	// sign-in's.
	vToken := e.pending(e.vKey)
	vo, vc := e.options("", vToken)
	if err := verify(vc, e.Get(e.factor, vo, ceremony), "", token); !refused(err, refusal.ErrChallengeMismatch) {
		t.Errorf("another pending sign-in's challenge: %v", err)
	}
	ro, rc := e.options(e.u.ID, "")
	if err := verify(rc, e.Get(e.factor, ro, ceremony), "", token); !refused(err, refusal.ErrChallengeMismatch) {
		t.Errorf("a re-authentication's challenge: %v", err)
	}
	so, sc := e.MustOptions("", nil)
	if err := verify(sc, e.Get(e.factor, so, ceremony), "", token); !refused(err, refusal.ErrChallengeMismatch) {
		t.Errorf("an ordinary sign-in's challenge: %v", err)
	}
	// A second-factor challenge does not serve an ordinary sign-in.
	o, c = e.options("", token)
	if _, err := e.Callback(c, "authenticate", e.Get(e.factor, o, ceremony), nil); !refused(err, refusal.ErrChallengeMismatch) {
		t.Errorf("a second-factor challenge for an ordinary sign-in: %v", err)
	}
	// Bad forms and challenges.
	o, c = e.options("", token)
	data := e.Get(e.factor, o, ceremony)
	for name, err := range map[string]error{
		"no challenge":     verify("", data, "", token),
		"no data":          verify(c, "", "", token),
		"not a credential": verify(c, `{"id":1}`, "", token),
		"no pending":       verify(c, data, "", ""),
	} {
		if auth.CodeOf(err) != auth.CodeWebAuthnVerification {
			t.Errorf("%s: %v", name, err)
		}
	}
	form := url.Values{"action": {"register"}, "data": {data}}
	if _, err := e.Client.Passkeys.VerifySecondFactor(ctx, "passkey", form, c, "", token, "", false); !refused(err, refusal.ErrInvalidAction) {
		t.Errorf("action register: %v", err)
	}
	if got := e.StoredCounter(e.factor); got != counter {
		t.Errorf("counter %d after refusals, was %d", got, counter)
	}
	// Options for nobody, and for a user without a passkey factor.
	if _, _, err := e.Client.SecondFactorOptions(ctx, "", ""); !refused(err, refusal.ErrNotAllowed) {
		t.Errorf("options for nobody: %v", err)
	}
	w := e.NewUser("w@example.com")
	if _, _, err := e.Client.SecondFactorOptions(ctx, w.ID, ""); !refused(err, refusal.ErrNotAllowed) {
		t.Errorf("options for a user without passkeys: %v", err)
	}
	// After all that the pending sign-in finishes.
	o, c = e.options("", token)
	if si, err := e.Client.VerifySecondFactor(ctx, c, e.Get(e.factor, o, ceremony), "", token, "", false); err != nil || si.User.ID != e.u.ID {
		t.Fatalf("the good answer after refusals: %+v, %v", si, err)
	}
}

// A pending sign-in answered 20 ways at once, each through its own
// instance (no shared record of used challenges) and with its own
// options: one sign-in.
func TestSecondFactorRace(t *testing.T) {
	e := newSFEnv(t, auth.StrategyDatabase)
	ctx := context.Background()
	token := e.pending(e.other)
	const n = 20
	type answer struct {
		client passkeytest.Client
		c, d   string
	}
	answers := make([]answer, n)
	for i := range answers {
		cl := e.Instance()
		o, c, err := cl.SecondFactorOptions(ctx, "", token)
		if err != nil {
			t.Fatal(err)
		}
		// Counters increase from one assertion to the next; the store
		// takes each higher one, so the counter stops none of them.
		answers[i] = answer{cl, c, e.Get(e.factor, o, ceremony)}
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for _, a := range answers {
		wg.Go(func() {
			si, err := a.client.VerifySecondFactor(ctx, a.c, a.d, "", token, "", false)
			if err == nil && si.Session.SessionToken != "" {
				wins.Add(1)
			} else if err == nil || auth.CodeOf(err) == "" && !errors.Is(err, core.ErrCounterNotIncreased) {
				t.Errorf("a losing answer: %+v, %v", si, err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d sign-ins from one pending sign-in", wins.Load())
	}
}

// Re-authentication: any of the signed-in user's passkeys, with user
// verification; the new database session replaces the current one.
func TestSecondFactorReauthenticate(t *testing.T) {
	e := newSFEnv(t, auth.StrategyDatabase)
	ctx := context.Background()
	si, err := e.SignIn(e.factor, passkeytest.Ceremony{})
	if err != nil || si.Pending != nil || si.Authentication.Level != auth.LevelMultiFactor {
		t.Fatalf("a UV'd passkey sign-in is two factors: %+v, %v", si, err)
	}
	current := si.Session.SessionToken
	o, c := e.options(e.u.ID, "")
	want := []string{e.factor.RawCredentialID(), e.other.RawCredentialID()}
	slices.Sort(want)
	if got := allowed(o); !slices.Equal(got, want) || o.Options.UserVerification != "required" {
		t.Errorf("re-authentication options: allowed %v (want %v), userVerification %q", got, want, o.Options.UserVerification)
	}
	// Not for another user: the challenge is u's.
	if _, err := e.Client.VerifySecondFactor(ctx, c, e.Get(e.vKey, o, ceremony), e.v.ID, "", "", false); !refused(err, refusal.ErrChallengeMismatch) {
		t.Errorf("u's challenge for v: %v", err)
	}
	o, c = e.options(e.u.ID, "")
	fresh, err := e.Client.VerifySecondFactor(ctx, c, e.Get(e.other, o, ceremony), e.u.ID, "", current, false)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.User.ID != e.u.ID || fresh.Session.SessionToken == "" || fresh.Session.SessionToken == current || !slices.Contains(fresh.Authentication.Methods, auth.AMRHardwareKey) {
		t.Errorf("re-authentication %+v", fresh)
	}
	if got, err := e.Store.(*memory.Adapter).GetSessionAndUser(ctx, current); err != nil || got != nil {
		t.Errorf("the replaced session: %+v, %v", got, err)
	}
	// A user's passkey without UV does not re-authenticate.
	o, c = e.options(e.u.ID, "")
	if _, err := e.Client.VerifySecondFactor(ctx, c, e.Get(e.factor, o, passkeytest.Ceremony{Origin: passkeytest.Origin, NoUserVerification: true}), e.u.ID, "", fresh.Session.SessionToken, false); !refused(err, refusal.ErrUserNotVerified) {
		t.Errorf("re-authentication without UV: %v", err)
	}
}
