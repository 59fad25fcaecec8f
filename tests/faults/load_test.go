package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/tokens"
)

const (
	// workers is the number of goroutines calling the adapter at once.
	workers = 8
	// callTimeout bounds every adapter call.
	callTimeout = 2 * time.Second
	// grace is how much later than its deadline a call may return before it
	// counts as hung (scheduling on a loaded 2-core machine under -race: a
	// MariaDB call cancelled at its deadline in a black hole was once seen
	// returning 504 ms late with the process not stalled). A call that waits
	// for the server instead of its context is late by far more: the black
	// hole lasts 2.5 s, and the MongoDB undo this test caught was 1.5 s late.
	grace = time.Second
	// warmup is how long the load runs before the fault, and settle how
	// long it goes on after the service is back; minRun is the shortest
	// scenario.
	warmup = 1500 * time.Millisecond
	settle = 2500 * time.Millisecond
	minRun = 6 * time.Second
	// recoveryLimit is the longest allowed time from the service being back
	// to the first successful call.
	recoveryLimit = 2 * time.Second
)

// userRec is what the load did to one user and the records it owns, and
// which of those writes were acknowledged (the call returned no error).
// Every user belongs to one worker, so no two calls on it ever race: what
// the checks find is the fault's doing, not a race's.
type userRec struct {
	id, email        string
	userAck          bool
	account          core.AccountKey
	accTried, accAck bool
	session          string
	sessTried        bool
	sessAck          bool
	// sessExpires are the expiry times the session may hold: the last
	// acknowledged one first, then any written by an updateSession that
	// failed after it (it may or may not have been applied).
	sessExpires        []time.Time
	cred               string
	credTried, credAck bool
	delTried, delAck   bool
	delAckAt           time.Time // when the acknowledged deleteUser returned
	// delCall is when the deleteUser call ran and delFound whether it
	// returned the user (else nil, nil: no such user), for the details of
	// a failed check.
	delCall  span
	delFound bool
	// revocations are the user's acknowledged deleteSessionsByUserId
	// calls, and family its token family: the failover runs' load only
	// (load.iss).
	revocations []revocation
	family      *familyRec
}

// revocation is an acknowledged deleteSessionsByUserId: the sessions it
// ended must never be readable again.
type revocation struct {
	ended []string // the session tokens it deleted
	call  span
}

// familyRec is a token family the load started through load.iss and
// rotated.
type familyRec struct {
	// refresh holds the family's refresh tokens, oldest first: the one
	// Issue returned, then the successor of each acknowledged rotation.
	// Every one but the last was rotated: none may be accepted again.
	refresh []string
	// rotations are when the acknowledged rotations ran: rotations[i]
	// turned refresh[i] into refresh[i+1].
	rotations []span
	// unsure: a refresh failed, so whether it rotated the last token is
	// unknown; the family is not refreshed again, and its last token is
	// not required to work.
	unsure bool
}

// span is when a call ran, from its start to its return.
type span struct{ start, end time.Time }

// String gives the span as wall-clock times with milliseconds, to be set
// beside the fault's own (runScenario's details), e.g. "ran
// 21:20:30.056–21:20:30.061".
func (s span) String() string {
	return "ran " + s.start.Format(clock) + "–" + s.end.Format(clock)
}

// clock is how the details print wall-clock times.
const clock = "15:04:05.000"

// tokenRec is one verification token of the load.
type tokenRec struct {
	key       core.VerificationTokenKey
	createAck bool
	useTried  bool
	// useAck: useVerificationToken returned the token, so it is gone.
	useAck bool
	// useCall is when the useVerificationToken call ran.
	useCall span
}

// callRec is one adapter call.
type callRec struct {
	start, end time.Time
	ok         bool
	err        string // the error of a failed call
}

// tally collects what the workers saw.
type tally struct {
	mu      sync.Mutex
	calls   []callRec
	panics  []string
	late    []lateCall // calls that returned later than their deadline + grace
	lost    []string   // losses seen by the load itself (a record the adapter no longer finds)
	users   []*userRec
	tokens  []*tokenRec
	samples []string // a few error messages, for the log
	errs    map[string]int
}

func (t *tally) note(list *[]string, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	*list = append(*list, fmt.Sprintf(format, args...))
}

// lateCall is a call that returned later than its deadline plus grace.
type lateCall struct {
	method     string
	start, end time.Time
	err        error
}

// stall is a span in which the test process could not run a goroutine
// that asked to wake up: the machine was busy elsewhere.
type stall struct{ from, to time.Time }

// watchScheduling records, until stop is closed, every span of more than
// 20 ms by which a goroutine sleeping 5 ms at a time woke late. A call that
// returned late because the process was not scheduled (this machine's two
// cores are shared) is told apart from one the adapter kept past its
// deadline by these spans.
func watchScheduling(stop <-chan struct{}) <-chan []stall {
	out := make(chan []stall, 1)
	go func() {
		var stalls []stall
		const nap = 5 * time.Millisecond
		for {
			select {
			case <-stop:
				out <- stalls
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(nap)
			if now := time.Now(); now.Sub(t0)-nap > 20*time.Millisecond {
				stalls = append(stalls, stall{from: t0.Add(nap), to: now})
			}
		}
	}()
	return out
}

// starved reports whether the stalls cover the part of a late call after
// its deadline, but for grace: the call would have returned in time had
// the process been scheduled.
func starved(c lateCall, stalls []stall) bool {
	deadline := c.start.Add(callTimeout)
	var covered time.Duration
	for _, st := range stalls {
		from, to := st.from, st.to
		if from.Before(deadline) {
			from = deadline
		}
		if to.After(c.end) {
			to = c.end
		}
		if to.After(from) {
			covered += to.Sub(from)
		}
	}
	return covered >= c.end.Sub(deadline)-grace
}

// load is one scenario's worth of calls on one adapter.
type load struct {
	a     core.Adapter
	scen  string // id prefix, unique per scenario
	stop  atomic.Bool
	t     tally
	start time.Time
	// iss, when set, adds two operations to the mix (sessionOps): a user
	// signed out of its other devices or everywhere
	// (deleteSessionsByUserId), and refresh-token families started and
	// rotated through iss, an Issuer on the same adapter. The failover
	// runs set it (fault.failover).
	iss *tokens.Issuer
}

// call runs one adapter method with its own 2 s context, recovering a
// panic, timing it, and recording whether it failed.
func (l *load) call(method string, f func(ctx context.Context) error) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			l.t.note(&l.t.panics, "%s panicked: %v\n%s", method, r, debug.Stack())
			err = fmt.Errorf("%s panicked: %v", method, r)
		}
		end := time.Now()
		if d := end.Sub(start); d > callTimeout+grace {
			l.t.mu.Lock()
			l.t.late = append(l.t.late, lateCall{method: method, start: start, end: end, err: err})
			l.t.mu.Unlock()
		}
		l.t.mu.Lock()
		rec := callRec{start: start, end: end, ok: err == nil}
		if err != nil {
			rec.err = method + ": " + err.Error()
		}
		l.t.calls = append(l.t.calls, rec)
		if err != nil {
			if l.t.errs == nil {
				l.t.errs = map[string]int{}
			}
			l.t.errs[method]++
			if len(l.t.samples) < 6 {
				l.t.samples = append(l.t.samples, err.Error())
			}
		}
		l.t.mu.Unlock()
	}()
	return f(ctx)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// worker runs the mix until the load is stopped: create user + link account
// + create session + create authenticator; getSessionAndUser;
// updateSession; create + use a verification token; deleteUser.
func (l *load) worker(w int) {
	rng := mrand.New(mrand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
	var live []*userRec
	var users []*userRec
	var tokens []*tokenRec
	defer func() {
		l.t.mu.Lock()
		l.t.users = append(l.t.users, users...)
		l.t.tokens = append(l.t.tokens, tokens...)
		l.t.mu.Unlock()
	}()
	withSession := func() *userRec { return pick(rng, live, func(u *userRec) bool { return u.sessAck }) }
	mix := 100
	if l.iss != nil {
		mix += sessionOps
	}
	for n := 0; !l.stop.Load(); n++ {
		r := rng.IntN(mix)
		switch {
		case r < 30 || len(live) == 0:
			u := &userRec{id: fmt.Sprintf("%s-w%d-%06d", l.scen, w, n)}
			u.email = u.id + "@example.com"
			users = append(users, u)
			l.createChain(u)
			if u.userAck {
				live = append(live, u)
			}
		case r >= 100+sessionOps/2:
			l.refresh(rng, live)
		case r >= 100:
			// A user with a session and no token family (which a
			// revocation would end): sign out its other devices, or
			// everywhere.
			if u := pick(rng, live, func(u *userRec) bool { return u.sessAck && u.family == nil }); u != nil {
				l.revoke(u, rng.IntN(2) == 0)
			}
		case r < 55:
			if u := withSession(); u != nil {
				l.getSession(u)
			}
		case r < 70:
			if u := withSession(); u != nil {
				l.updateSession(u, rng)
			}
		case r < 90:
			tok := &tokenRec{key: core.VerificationTokenKey{
				Identifier: fmt.Sprintf("%s-w%d-%06d@example.com", l.scen, w, n), Token: randomHex(16)}}
			tokens = append(tokens, tok)
			l.verification(tok)
		default:
			// Delete the oldest live user: its writes have had the longest
			// to be lost.
			u := live[0]
			live = live[1:]
			l.deleteUser(u)
		}
	}
}

// sessionOps is how many draws the failover runs' mix (load.iss) has
// beyond the 100 of the others: half of them revocations, half
// refresh-token families, a sixth of the calls in all. A scenario runs for
// a fixed time and these cost two round trips each, like most of the mix,
// so they make the run no longer; what a failover undoes is what was
// acknowledged just before it, so the share decides how many of them it
// can catch.
const sessionOps = 20

// pick returns a random user of users for which ok holds, or nil.
func pick(rng *mrand.Rand, users []*userRec, ok func(*userRec) bool) *userRec {
	var c []*userRec
	for _, u := range users {
		if ok(u) {
			c = append(c, u)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[rng.IntN(len(c))]
}

func (l *load) createChain(u *userRec) {
	name := "Fault Tester"
	err := l.call("createUser", func(ctx context.Context) error {
		_, err := l.a.CreateUser(ctx, core.User{ID: u.id, Email: u.email, Name: &name})
		return err
	})
	if err != nil {
		return
	}
	u.userAck = true
	u.account = core.AccountKey{Provider: "github", ProviderAccountID: "gh-" + u.id}
	tokenType, access := "bearer", "at-"+randomHex(8)
	u.accTried = true
	err = l.call("linkAccount", func(ctx context.Context) error {
		_, err := l.a.LinkAccount(ctx, core.Account{UserID: u.id, Provider: u.account.Provider, Type: core.AccountTypeOAuth,
			ProviderAccountID: u.account.ProviderAccountID, AccessToken: &access, TokenType: &tokenType})
		return err
	})
	if err != nil {
		return
	}
	u.accAck = true
	u.session = u.newSessionToken()
	exp := core.NormalizeTime(time.Now().Add(time.Hour))
	u.sessTried = true
	u.sessExpires = []time.Time{exp}
	if l.createSession(u.id, u.session, exp) != nil {
		return
	}
	u.sessAck = true
	u.cred = "cred-" + u.id
	u.credTried = true
	err = l.call("createAuthenticator", func(ctx context.Context) error {
		_, err := l.a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: u.cred, CredentialPublicKey: "pk-" + u.id,
			Counter: 0, CredentialDeviceType: "singleDevice", ProviderAccountID: u.account.ProviderAccountID, UserID: u.id})
		return err
	})
	if err == nil {
		u.credAck = true
	}
}

// createSession creates the session token of user userID, expiring at exp.
func (l *load) createSession(userID, token string, exp time.Time) error {
	return l.call("createSession", func(ctx context.Context) error {
		_, err := l.a.CreateSession(ctx, core.Session{SessionToken: token, UserID: userID, Expires: exp})
		return err
	})
}

// getSession reads an acknowledged session back: not finding it is a loss.
func (l *load) getSession(u *userRec) {
	var got *core.SessionAndUser
	err := l.call("getSessionAndUser", func(ctx context.Context) error {
		var err error
		got, err = l.a.GetSessionAndUser(ctx, u.session)
		return err
	})
	switch {
	case err != nil:
	case got == nil:
		l.t.note(&l.t.lost, "getSessionAndUser(%s) found nothing: the acknowledged session of user %s is gone", u.session, u.id)
	case got.User.ID != u.id || got.Session.UserID != u.id:
		l.t.note(&l.t.lost, "getSessionAndUser(%s) returned user %q, want %q", u.session, got.User.ID, u.id)
	}
}

func (l *load) updateSession(u *userRec, rng *mrand.Rand) {
	exp := core.NormalizeTime(time.Now().Add(time.Hour + time.Duration(rng.IntN(3_600_000))*time.Millisecond))
	var got *core.Session
	err := l.call("updateSession", func(ctx context.Context) error {
		var err error
		got, err = l.a.UpdateSession(ctx, core.SessionUpdate{SessionToken: u.session, Expires: core.Set(exp)})
		return err
	})
	switch {
	case err != nil:
		u.sessExpires = append(u.sessExpires, exp) // maybe applied
	case got == nil:
		l.t.note(&l.t.lost, "updateSession(%s) found no session: the acknowledged session of user %s is gone", u.session, u.id)
	default:
		u.sessExpires = []time.Time{exp}
	}
}

func (l *load) verification(tok *tokenRec) {
	exp := core.NormalizeTime(time.Now().Add(time.Hour))
	err := l.call("createVerificationToken", func(ctx context.Context) error {
		_, err := l.a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: tok.key.Identifier, Token: tok.key.Token, Expires: exp})
		return err
	})
	if err != nil {
		return
	}
	tok.createAck = true
	tok.useTried = true
	var got *core.VerificationToken
	tok.useCall.start = time.Now()
	err = l.call("useVerificationToken", func(ctx context.Context) error {
		var err error
		got, err = l.a.UseVerificationToken(ctx, tok.key)
		return err
	})
	tok.useCall.end = time.Now()
	switch {
	case err != nil:
	case got == nil:
		l.t.note(&l.t.lost, "useVerificationToken(%s) found nothing: the acknowledged token is gone", tok.key.Identifier)
	default:
		tok.useAck = true
	}
}

func (l *load) deleteUser(u *userRec) {
	u.delTried = true
	u.delCall.start = time.Now()
	err := l.call("deleteUser", func(ctx context.Context) error {
		got, err := l.a.DeleteUser(ctx, u.id)
		u.delFound = got != nil
		return err
	})
	u.delCall.end = time.Now()
	if err == nil {
		// nil, nil (no such user) is acknowledged too: a client that
		// retried the command after a lost reply finds the user gone by
		// its own first try. The raw check decides whether anything is
		// left.
		u.delAck, u.delAckAt = true, time.Now()
	}
}

// row is one line of the figures table.
type row struct {
	backend, fault string
	durable        bool
	ops            int
	errFault       int           // errors of calls that overlapped the fault
	errOther       int           // errors of calls outside it
	down           time.Duration // from the fault to the service being back
	recovery       time.Duration // from the service being back to the first success; -1: never
	slowRecovery   []string      // distinct errors of calls that ended between back and the first success
	visible        bool          // the fault had the effect it must have (fault.expect)
	crash          bool          // the fault stopped the server (fault.crash)
	acked          int           // acknowledged writes checked
	lost           int
	partial        int
	claims         int // provisional claims left by unacknowledged writes (Redis Cluster), expiring by themselves
	panics         int
	hung           int // calls the adapter kept past their deadline + grace
	starved        int // late calls explained by the process not being scheduled
	maxLate        time.Duration
	details        []string
	// By kind (see checked), and for the failover rows (failover_test.go).
	tokensBack, deletedBack, sessionsBack, sessionsLost int
	// The session operations of the failover runs (load.iss): revoked
	// sessions checked and readable again, rotations checked and rotated
	// refresh tokens accepted again.
	revoked, revokedBack, rotated, rotationsBack int
	failover                                     *failoverFigures
}

// fault breaks the service and repairs it. It returns when the fault began
// and when the service was back (the server answered the raw driver again,
// or the toxic was removed).
type fault struct {
	name   string
	inject func(ctx context.Context) (began, back time.Time, err error)
	// expect is the effect a fault that really hit the load must have had,
	// so that a proxy left out of the path cannot pass unnoticed: "errors"
	// (some call failed), "slow" (some call took at least slowCall), or ""
	// for a restart, which the test sees happen itself.
	expect string
	// crash: the fault kills or stops the server (as opposed to breaking
	// the network), so a server that is not durable may lose what it
	// acknowledged before it.
	crash bool
	// failover: the fault replaces the primary or master (the failover
	// rows), and the load revokes sessions and rotates refresh tokens too
	// (load.iss), which the failover tables count.
	failover bool
	// alive, when set, reports a server that died by itself (with its
	// log), for a failure that may be its death rather than the adapter's;
	// revive starts it again (see scenarios).
	alive  func() error
	revive func() error
}

// errServerDied is runScenario's answer when the server died by itself
// after the fault, before the scenario could read it back: the server's
// failure, not the adapter's, which scenarios runs once more.
var errServerDied = errors.New("the server died by itself")

// slowCall is how long a call takes, at least, under the latency toxic.
const slowCall = 300 * time.Millisecond

// overtime is how much longer than planned a scenario may run on a busy
// machine, waiting for a success after the fault and enough acknowledged
// calls to check.
const overtime = 10 * time.Second

// enough reports whether a call has succeeded since back and at least 150
// calls have succeeded in all.
func (l *load) enough(back time.Time) bool {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	ok, after := 0, false
	for _, c := range l.t.calls {
		if c.ok {
			ok++
			after = after || !c.end.Before(back)
		}
	}
	return after && ok >= 150
}

// runScenario runs the load on a, injects f after the warm-up, keeps the
// load going until settle after the service is back, then checks with rv
// what the server holds.
func runScenario(t *testing.T, backend string, durable bool, a core.Adapter, rv raw, f fault, scen string) (row, error) {
	t.Helper()
	l := &load{a: a, scen: scen, start: time.Now()}
	if f.failover {
		l.iss = newIssuer(t, a)
	}
	stopWatch := make(chan struct{})
	stallsc := watchScheduling(stopWatch)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { l.worker(w) })
	}
	time.Sleep(warmup)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	began, back, err := f.inject(ctx)
	cancel()
	if err != nil {
		l.stop.Store(true)
		wg.Wait()
		t.Fatalf("%s/%s: injecting the fault: %v", backend, f.name, err)
	}
	end := back.Add(settle)
	if e := l.start.Add(minRun); e.After(end) {
		end = e
	}
	time.Sleep(time.Until(end))
	// On a machine busy elsewhere the load may not have got far: go on
	// until a call has succeeded since the service was back and there are
	// enough acknowledged calls to check, for at most overtime more.
	for limit := time.Now().Add(overtime); time.Now().Before(limit) && !l.enough(back); {
		time.Sleep(100 * time.Millisecond)
	}
	l.stop.Store(true)
	wg.Wait()
	close(stopWatch)
	stalls := <-stallsc

	r := row{backend: backend, fault: f.name, durable: durable, crash: f.crash, down: back.Sub(began), recovery: -1}
	calls := l.t.calls
	slices.SortFunc(calls, func(x, y callRec) int { return x.end.Compare(y.end) })
	var recovered time.Time
	for _, c := range calls {
		if c.ok && !c.end.Before(back) && !c.start.Before(began) {
			recovered = c.end
			r.recovery = c.end.Sub(back)
			break
		}
	}
	faultEnd := recovered
	if faultEnd.IsZero() {
		faultEnd = time.Now()
	}
	r.ops = len(calls)
	r.visible = f.expect == ""
	for _, c := range calls {
		if f.expect == "slow" && c.end.Sub(c.start) >= slowCall && c.end.After(began) && c.start.Before(back) {
			r.visible = true
		}
		if c.ok {
			continue
		}
		if f.expect == "errors" && c.end.After(began) {
			r.visible = true
		}
		if !c.end.Before(back) && c.end.Before(faultEnd) && len(r.slowRecovery) < 8 && !slices.Contains(r.slowRecovery, c.err) {
			r.slowRecovery = append(r.slowRecovery, c.err)
		}
		if !c.end.Before(began) && !c.start.After(faultEnd) {
			r.errFault++
		} else {
			r.errOther++
		}
	}
	r.panics = len(l.t.panics)
	r.details = append(r.details, l.t.panics...)
	for _, c := range l.t.late {
		late := c.end.Sub(c.start.Add(callTimeout))
		r.maxLate = max(r.maxLate, late)
		if starved(c, stalls) {
			r.starved++
			continue
		}
		r.hung++
		r.details = append(r.details, fmt.Sprintf("%s returned %v after its %v deadline, the process not stalled: %v",
			c.method, late.Round(time.Millisecond), callTimeout, c.err))
	}
	r.lost = len(l.t.lost)
	r.details = append(r.details, l.t.lost...)
	if len(l.t.samples) > 0 {
		t.Logf("%s/%s: errors by method %v; first errors: %q", backend, f.name, l.t.errs, l.t.samples)
	}

	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer ccancel()
	var crash time.Time // a crash that may undo writes acknowledged before it
	if !durable && f.crash {
		crash = began
	}
	res, err := check(cctx, rv, l, crash)
	if err != nil {
		if f.alive != nil {
			if dead := f.alive(); dead != nil {
				t.Logf("%s/%s: reading the server back: %v; the server is gone: %v", backend, f.name, err, dead)
				return row{}, errServerDied
			}
		}
		t.Fatalf("%s/%s: reading the server back: %v", backend, f.name, err)
	}
	r.acked, r.lost, r.partial, r.claims = res.acked, r.lost+len(res.lost), len(res.partial), len(res.claims)
	r.tokensBack, r.deletedBack, r.sessionsBack, r.sessionsLost = res.tokensBack, res.deletedBack, res.sessionsBack, res.sessionsLost
	r.revoked, r.revokedBack, r.rotated, r.rotationsBack = res.revoked, res.revokedBack, res.rotated, res.rotationsBack
	r.details = append(r.details, res.lost...)
	r.details = append(r.details, res.partial...)
	if len(res.lost)+len(res.partial) > 0 {
		// The calls' spans in the details are wall-clock times: set them
		// beside the fault's.
		r.details = append(r.details, fmt.Sprintf("the fault began at %s, the service was back at %s",
			began.Format(clock), back.Format(clock)))
	}
	if len(res.claims) > 0 {
		t.Logf("%s/%s: %d provisional claim(s) left by unacknowledged writes of deleted users, expiring by themselves; first: %s",
			backend, f.name, len(res.claims), res.claims[0])
	}
	return r, nil
}
