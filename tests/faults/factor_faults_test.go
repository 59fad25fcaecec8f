package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/totp"
	pquerna "github.com/pquerna/otp/totp"
)

// TestFactorFaults kills the database server (PostgreSQL with pg_ctl stop
// -m immediate, MariaDB with SIGKILL, as TestPasswordFaults does) in the
// middle of core/auth's second-factor writes, just before one of them, on
// the SQL adapter connected straight to the server:
//
//   - ConfirmTOTP of a user's first factor: before the factor's
//     createFactor, and before the recovery codes' createFactor;
//   - a TOTP enrolment that finishes a pending sign-in (every user must
//     have a factor): before the recovery codes, before the pending
//     sign-in's useVerificationToken, before createSession;
//   - Verify with a TOTP code: before the step's swapFactor, before
//     useVerificationToken, before createSession; with "trust this
//     browser", before the trusted device's createFactor;
//   - Verify with a recovery code: before the swapFactor that removes its
//     hash, before useVerificationToken, before createSession;
//   - NewRecoveryCodes: before the swapFactor that replaces the set;
//   - Remove of the last factor: before its deleteFactor, and before the
//     recovery codes' deleteFactor;
//   - Reauthenticate with a TOTP code: before the new session's
//     createSession, and before the old one's deleteSession.
//
// Once the server is back, read with its own driver, the store must hold
// nothing half-made (halfFactors says what that is: a code a session was
// made with that would be accepted again, a pending sign-in usable after
// it made a session, a TOTP factor without its recovery codes or one the
// user was not told of, recovery codes left of a removed last factor, a
// replaced session beside its replacement) within cleanLimit; the call
// must have failed, except where the write killed is one whose failure the
// call only logs (the trusted device: the sign-in stands); and the user's
// retry must succeed, a used code or pending sign-in being refused.
func TestFactorFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own database servers; not in -short")
	}
	t.Parallel() // beside the module's other tests: see TestFaults
	started := time.Now()
	var (
		mu   sync.Mutex
		rows []fRow
	)
	t.Run("backends", func(t *testing.T) {
		for _, b := range []struct {
			name string
			mk   func(*testing.T) *pwBackend
		}{{provision.BackendPostgres, pwPostgres}, {provision.BackendMySQL, pwMariaDB}} {
			t.Run(b.name, func(t *testing.T) {
				t.Parallel()
				got := factorFaults(t, b.mk(t))
				mu.Lock()
				rows = append(rows, got...)
				mu.Unlock()
			})
		}
	})
	slices.SortStableFunc(rows, func(a, b fRow) int { return strings.Compare(a.backend, b.backend) })
	host, _ := os.Hostname()
	fmt.Printf("\nSecond factors under a killed server (tests/faults, TestFactorFaults): %d CPUs (%s/%s, %s), %v in all\n%s\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, host, time.Since(started).Round(time.Second), formatFRow(rows))
}

// factorTrigger is the kill trigger with the factor methods and
// deleteSession (a re-authentication's end of the old session) passed
// through, the writes among them watched.
type factorTrigger struct{ *killTrigger }

func (k factorTrigger) CreateFactor(ctx context.Context, f core.Factor) (*core.Factor, error) {
	k.write(string(core.MethodCreateFactor))
	return k.Adapter.(core.FactorCreator).CreateFactor(ctx, f)
}

func (k factorTrigger) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	return k.Adapter.(core.FactorsByUserLister).ListFactorsByUserID(ctx, userID)
}

func (k factorTrigger) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	k.write(string(core.MethodSwapFactor))
	return k.Adapter.(core.FactorSwapper).SwapFactor(ctx, old, next)
}

func (k factorTrigger) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	k.write(string(core.MethodDeleteFactor))
	return k.Adapter.(core.FactorDeleter).DeleteFactor(ctx, userID, id)
}

func (k factorTrigger) DeleteSession(ctx context.Context, token string) (*core.Session, error) {
	k.write(string(core.MethodDeleteSession))
	return k.Adapter.DeleteSession(ctx, token)
}

var (
	_ core.FactorCreator       = factorTrigger{}
	_ core.FactorsByUserLister = factorTrigger{}
	_ core.FactorSwapper       = factorTrigger{}
	_ core.FactorDeleter       = factorTrigger{}
)

// fApp is the application: core/auth with a password provider (sign-in
// at once, a cheap Argon2id), database sessions, second factors with
// module totp and trusted devices, a clock the test moves to the next
// time step; opt lets users choose a factor, req requires one of everyone.
// Its attempt cap is high: the caps are not under test.
type fApp struct {
	opt, req *auth.Auth
	kt       *killTrigger
	clock    *coretest.Clock
}

func newFApp(t *testing.T, store core.Adapter) *fApp {
	t.Helper()
	h, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	pc := provider.Password("Faults <no-reply@example.com>", func(context.Context, provider.VerificationRequest) error { return nil })
	pc.Hasher, pc.AllowUnverifiedSignIn = h, true
	codes, err := totp.New(totp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := &fApp{kt: &killTrigger{Adapter: store}, clock: coretest.NewClock(time.Now().UTC().Truncate(time.Second))}
	cfg := auth.Config{Adapter: factorTrigger{app.kt}, Providers: []provider.Provider{pc}, Secrets: []string{signInSecret},
		BaseURL: "https://app.example/auth", Session: auth.SessionOptions{Strategy: auth.StrategyDatabase}, Now: app.clock.Now,
		SecondFactors: auth.SecondFactorOptions{Enabled: true, TOTP: codes, Attempts: 1000, TrustDevice: 24 * time.Hour}}
	if app.opt, err = auth.New(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.SecondFactors.Required = true
	if app.req, err = auth.New(cfg); err != nil {
		t.Fatal(err)
	}
	return app
}

// fUser is a user of TestFactorFaults.
type fUser struct {
	id, email string
	key       string   // the TOTP key as typed (base32); "" before enrolment
	totpID    string   // the TOTP factor's id
	codes     []string // the recovery codes shown
}

const fPassword = "correct horse battery"

// step is the time step of a code typed now.
func (app *fApp) step() int64 { return app.clock.Now().Unix() / 30 }

// code is the TOTP code of the key now, as the user's app shows it
// (computed with pquerna/otp).
func (app *fApp) code(t *testing.T, key string) string {
	t.Helper()
	c, err := pquerna.GenerateCode(key, app.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nextStep moves the clock to the next time step (the code changes).
func (app *fApp) nextStep() { app.clock.Add(30 * time.Second) }

// newUser signs a user up with a password (a session, no factor).
func (app *fApp) newUser(t *testing.T, ctx context.Context, flow string) *fUser {
	t.Helper()
	u := &fUser{email: flow + "-" + randomID() + "@example.com"}
	res, err := app.opt.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: u.email}, Password: fPassword})
	if err != nil || res.SignIn == nil {
		t.Fatalf("sign-up: %+v, %v", res, err)
	}
	u.id = res.SignIn.User.ID
	return u
}

// enrolled is newUser with a confirmed TOTP factor and its recovery codes;
// the clock is then at the next step, so that the confirming code is
// behind.
func (app *fApp) enrolled(t *testing.T, ctx context.Context, flow string) *fUser {
	t.Helper()
	u := app.newUser(t, ctx, flow)
	e, err := app.opt.Factors().StartTOTP(ctx, u.id, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := app.opt.Factors().ConfirmTOTP(ctx, u.id, e.Token, app.code(t, e.Key.Text))
	if err != nil || len(got.RecoveryCodes) != 10 {
		t.Fatalf("ConfirmTOTP: %+v, %v; want ten recovery codes", got, err)
	}
	u.key, u.totpID, u.codes = e.Key.Text, got.Factor.ID, got.RecoveryCodes
	app.nextStep()
	return u
}

// pending signs the user in with the password through a; the sign-in must
// wait for a second factor.
func (app *fApp) pending(t *testing.T, ctx context.Context, a *auth.Auth, u *fUser) *auth.PendingSignIn {
	t.Helper()
	si, err := a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: u.email, Password: fPassword})
	if err != nil || si.Pending == nil {
		t.Fatalf("password sign-in of %s: %+v, %v; want a pending sign-in", u.email, si, err)
	}
	return si.Pending
}

// fState is what the store holds of a user's second factors, read with
// the server's own driver.
type fState struct {
	totp, codeSets, codes, devices int
	totpStep                       int64  // the TOTP factor's last step
	codesSecret                    []byte // the recovery codes' hashes
	sessions                       []string
	pendings                       int // pending sign-ins stored (every user's)
}

// pendingIdentifier is the verification-token identifier of pending
// sign-ins (core/auth's; checkSeesHalfFactors proves the inspection finds
// them).
const pendingIdentifier = "authport:pending-sign-in"

func (be *pwBackend) readFactors(ctx context.Context, userID string) (fState, error) {
	var s fState
	rows, err := be.raw.db.QueryContext(ctx, be.raw.q(`SELECT "type", "secret", "step" FROM "factors" WHERE "userId" = ?`), userID)
	if err != nil {
		return s, err
	}
	for rows.Next() {
		var typ string
		var secret []byte
		var step int64
		if err := rows.Scan(&typ, &secret, &step); err != nil {
			rows.Close()
			return s, err
		}
		switch core.FactorType(typ) {
		case core.FactorTOTP:
			s.totp++
			s.totpStep = step
		case core.FactorRecoveryCodes:
			s.codeSets++
			s.codes += len(secret) / 32
			s.codesSecret = secret
		case core.FactorTrustedDevice:
			s.devices++
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return s, err
	}
	rows, err = be.raw.db.QueryContext(ctx, be.raw.q(`SELECT "sessionToken" FROM "sessions" WHERE "userId" = ?`), userID)
	if err != nil {
		return s, err
	}
	for rows.Next() {
		var tok string
		if err := rows.Scan(&tok); err != nil {
			rows.Close()
			return s, err
		}
		s.sessions = append(s.sessions, tok)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return s, err
	}
	s.pendings, err = be.raw.count(ctx, `SELECT count(*) FROM "verification_token" WHERE "identifier" = ?`, pendingIdentifier)
	return s, err
}

// newSessions are the sessions of now that start did not hold.
func newSessions(start, now fState) []string {
	var out []string
	for _, s := range now.sessions {
		if !slices.Contains(start.sessions, s) {
			out = append(out, s)
		}
	}
	return out
}

// fCall is what a faulted call was and answered, for halfFactors.
type fCall struct {
	failed   bool
	pending  bool   // it answered a pending sign-in
	step     int64  // the TOTP code's step it answered with (0: none)
	recovery bool   // it answered with a recovery code
	replaced string // the session a re-authentication replaces
}

// halfFactors lists what a second-factor write cut short must never
// leave, start being the store before the call:
//   - a session made and the pending sign-in it answered still stored (it
//     would make another), or more than one session made;
//   - a session made with a TOTP code whose step is not recorded, or a
//     recovery code whose hash is still stored (the code would be accepted
//     again);
//   - a TOTP factor without recovery codes (its first enrolment promises
//     them), or a new one though the call failed (the user was not told of
//     it, nor shown its codes);
//   - recovery codes with no usable factor (left of a removed last
//     factor: they answer again once one is added, and a passkey factor
//     comes with no codes of its own);
//   - a re-authentication's new session beside the one it replaces, or a
//     re-authentication reported done with the replaced session there.
func halfFactors(start, now fState, c fCall) []string {
	var out []string
	made := len(newSessions(start, now))
	if c.pending && made > 0 && now.pendings >= start.pendings {
		out = append(out, "a session made and its pending sign-in still stored")
	}
	if c.pending && made > 1 {
		out = append(out, fmt.Sprintf("%d sessions made of one pending sign-in", made))
	}
	if c.step > 0 && made > 0 && now.totpStep < c.step {
		out = append(out, "a session made with a TOTP code whose step is not recorded")
	}
	if c.recovery && made > 0 && now.codes >= start.codes {
		out = append(out, "a session made with a recovery code still stored")
	}
	if now.totp > 0 && now.codes == 0 {
		out = append(out, "a TOTP factor without recovery codes")
	}
	if c.failed && now.totp > start.totp {
		out = append(out, "a TOTP factor made by a call that failed (the user was not told of it)")
	}
	if now.totp == 0 && now.codeSets > 0 {
		out = append(out, "recovery codes with no usable factor")
	}
	if c.replaced != "" && slices.Contains(now.sessions, c.replaced) {
		if made > 0 {
			out = append(out, "a re-authentication's new session beside the one it replaces")
		}
		if !c.failed {
			out = append(out, "a re-authentication reported done with the session it replaces there")
		}
	}
	return out
}

// describe says what the store holds, for the table.
func (s fState) describe(start fState, c fCall) string {
	parts := []string{fmt.Sprintf("%d TOTP", s.totp)}
	if c.step > 0 && s.totp > 0 {
		if s.totpStep >= c.step {
			parts[0] += " (the code's step recorded)"
		} else {
			parts[0] += " (the code's step not recorded)"
		}
	}
	parts = append(parts, fmt.Sprintf("%d recovery codes", s.codes))
	if s.devices > 0 {
		parts = append(parts, fmt.Sprintf("%d trusted device", s.devices))
	}
	parts = append(parts, fmt.Sprintf("%d new session(s)", len(newSessions(start, s))))
	if c.pending {
		if s.pendings < start.pendings {
			parts = append(parts, "the pending sign-in used")
		} else {
			parts = append(parts, "the pending sign-in stored")
		}
	}
	if c.replaced != "" {
		if slices.Contains(s.sessions, c.replaced) {
			parts = append(parts, "the old session stands")
		} else {
			parts = append(parts, "the old session gone")
		}
	}
	return strings.Join(parts, ", ")
}

// fRow is one fault of TestFactorFaults, for the table.
type fRow struct {
	backend, flow, fault, before string
	committed                    []string      // the writes made before the kill
	answer                       string        // what the call answered
	clean                        time.Duration // server answering → nothing half-made; -1: not within cleanLimit
	state                        string        // what the store held once clean
	retry                        string        // how the retry went
}

func formatFRow(rows []fRow) string {
	var b strings.Builder
	b.WriteString("| backend | flow | server killed | before | written before | answer | nothing half-made after the server answered | state then | retry |\n")
	b.WriteString("|---|---|---|---|---|---|---:|---|---|\n")
	for _, r := range rows {
		clean := "never"
		if r.clean >= 0 {
			clean = ms(r.clean)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.backend, r.flow, r.fault, r.before, strings.Join(r.committed, ", "), r.answer, clean, r.state, r.retry)
	}
	return b.String()
}

// fFault is one row: the call of flow, faulted before the nth call of
// before.
type fFault struct {
	flow   string
	before core.Method
	nth    int
	mayOK  bool // the write killed is one whose failure the call only logs
	run    func(t *testing.T, ctx context.Context, be *pwBackend, app *fApp, f fFault) fRow
}

// name is the row's name: the method, with the call's rank when it is not
// the first.
func (f fFault) name() string {
	if f.nth > 1 {
		return fmt.Sprintf("%s (#%d)", f.before, f.nth)
	}
	return string(f.before)
}

// factorFaults runs the rows on one backend, after proving that the
// inspection can fail.
func factorFaults(t *testing.T, be *pwBackend) []fRow {
	app := newFApp(t, be.adapter)
	checkSeesHalfFactors(t, be, app)
	var rows []fRow
	for _, f := range []fFault{
		{flow: "confirm TOTP", before: core.MethodCreateFactor, nth: 1, run: confirmFault},
		{flow: "confirm TOTP", before: core.MethodCreateFactor, nth: 2, run: confirmFault},
		{flow: "enrol at sign-in", before: core.MethodCreateFactor, nth: 2, run: enrolFault},
		{flow: "enrol at sign-in", before: core.MethodUseVerificationToken, nth: 1, run: enrolFault},
		{flow: "enrol at sign-in", before: core.MethodCreateSession, nth: 1, run: enrolFault},
		{flow: "verify TOTP", before: core.MethodSwapFactor, nth: 1, run: answerFault},
		{flow: "verify TOTP", before: core.MethodUseVerificationToken, nth: 1, run: answerFault},
		{flow: "verify TOTP", before: core.MethodCreateSession, nth: 1, run: answerFault},
		{flow: "verify TOTP, trust browser", before: core.MethodCreateFactor, nth: 1, mayOK: true, run: answerFault},
		{flow: "verify recovery code", before: core.MethodSwapFactor, nth: 1, run: answerFault},
		{flow: "verify recovery code", before: core.MethodUseVerificationToken, nth: 1, run: answerFault},
		{flow: "verify recovery code", before: core.MethodCreateSession, nth: 1, run: answerFault},
		{flow: "new recovery codes", before: core.MethodSwapFactor, nth: 1, run: newCodesFault},
		{flow: "remove last factor", before: core.MethodDeleteFactor, nth: 1, run: removeFault},
		{flow: "remove last factor", before: core.MethodDeleteFactor, nth: 2, run: removeFault},
		{flow: "re-authenticate", before: core.MethodCreateSession, nth: 1, run: reauthFault},
		{flow: "re-authenticate", before: core.MethodDeleteSession, nth: 1, run: reauthFault},
	} {
		t.Run(strings.ReplaceAll(f.flow, " ", "-")+"/before-"+string(f.before)+fmt.Sprint(f.nth), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rows = append(rows, f.run(t, ctx, be, app, f))
		})
	}
	return rows
}

// cut runs act with the server killed before the row's write, starts
// the server again, and waits until halfFactors finds nothing (within
// cleanLimit); it fills the row and returns the call's error and the state
// once clean.
func (be *pwBackend) cut(t *testing.T, ctx context.Context, app *fApp, f fFault, u *fUser, c fCall, act func() error) (fRow, fState, fState, error) {
	t.Helper()
	row := fRow{backend: be.name, flow: f.flow, fault: be.fault, before: f.name()}
	start, err := be.readFactors(ctx, u.id)
	if err != nil {
		t.Fatal(err)
	}
	app.kt.armNth(string(f.before), f.nth, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := be.stop(ctx); err != nil {
			t.Errorf("killing the server (%s): %v", be.fault, err)
		}
	})
	callErr := act()
	fired, writes := app.kt.disarm()
	if !fired {
		t.Fatalf("the flow made no call %d of %s (its writes: %v, its answer: %v)", f.nth, f.before, writes, callErr)
	}
	for i, n := 0, 0; i < len(writes); i++ {
		if writes[i] == string(f.before) {
			if n++; n == f.nth {
				row.committed = writes[:i]
				break
			}
		}
	}
	row.answer = answer(callErr)
	if callErr == nil && !f.mayOK {
		t.Errorf("the call answered success with the server killed before %s", f.name())
	}
	c.failed = callErr != nil
	back := be.restart(t, ctx)
	var now fState
	var bad []string
	row.clean, bad = waitClean(t, ctx, back, func(ctx context.Context) ([]string, error) {
		s, err := be.readFactors(ctx, u.id)
		now = s
		return halfFactors(start, s, c), err
	})
	if len(bad) > 0 {
		t.Errorf("%v after the server answered again the store still holds a half-made state: %v", cleanLimit, bad)
	}
	row.state = now.describe(start, c)
	return row, start, now, callErr
}

// confirmFault: a signed-in user confirms their first TOTP factor.
// The retry is the same confirmation (same enrolment, same code): it
// must give the factor and ten recovery codes.
func confirmFault(t *testing.T, ctx context.Context, be *pwBackend, app *fApp, f fFault) fRow {
	u := app.newUser(t, ctx, "confirm")
	e, err := app.opt.Factors().StartTOTP(ctx, u.id, "", "")
	if err != nil {
		t.Fatal(err)
	}
	code := app.code(t, e.Key.Text)
	row, _, now, _ := be.cut(t, ctx, app, f, u, fCall{}, func() error {
		_, err := app.opt.Factors().ConfirmTOTP(ctx, u.id, e.Token, code)
		return err
	})
	row.retry = "failed"
	if now.totp > 0 {
		t.Fatalf("a factor stands after a failed confirmation (%s)", row.state)
	}
	got, err := app.opt.Factors().ConfirmTOTP(ctx, u.id, e.Token, code)
	if err != nil || len(got.RecoveryCodes) != 10 {
		t.Fatalf("the same confirmation again: %+v, %v; want the factor and ten recovery codes", got, err)
	}
	if s, err := be.readFactors(ctx, u.id); err != nil || s.totp != 1 || s.codeSets != 1 || s.codes != 10 {
		t.Errorf("after the retry: %+v, %v; want one TOTP factor and ten recovery codes", s, err)
	}
	row.retry = "the same enrolment confirmed, ten codes shown"
	return row
}

// enrolFault: a user without a factor signs in where every user must have
// one, and enrols TOTP to finish. The retry is the same answer when the
// pending sign-in is still stored, else a new sign-in and enrolment (the
// used one refused); it must make a session, the factor and ten codes.
func enrolFault(t *testing.T, ctx context.Context, be *pwBackend, app *fApp, f fFault) fRow {
	u := app.newUser(t, ctx, "enrol")
	p := app.pending(t, ctx, app.req, u)
	if !p.Enroll {
		t.Fatalf("the pending sign-in of a user without a factor: %+v; want Enroll", p)
	}
	e, err := app.req.Factors().StartTOTP(ctx, "", p.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	ans := auth.Answer{Type: core.FactorTOTP, Code: app.code(t, e.Key.Text), Enrollment: e.Token}
	row, start, now, _ := be.cut(t, ctx, app, f, u, fCall{pending: true}, func() error {
		_, err := app.req.Factors().Verify(ctx, p.Token, ans)
		return err
	})
	row.retry = "failed"
	how := "the same answer"
	if now.pendings < start.pendings {
		if _, err := app.req.Factors().Verify(ctx, p.Token, ans); auth.CodeOf(err) != auth.CodeSecondFactor {
			t.Errorf("the used pending sign-in answered again: %v; want it refused", err)
		}
		p = app.pending(t, ctx, app.req, u)
		if e, err = app.req.Factors().StartTOTP(ctx, "", p.Token, ""); err != nil {
			t.Fatal(err)
		}
		ans = auth.Answer{Type: core.FactorTOTP, Code: app.code(t, e.Key.Text), Enrollment: e.Token}
		how = "the pending sign-in refused (used); a new sign-in"
	}
	si, err := app.req.Factors().Verify(ctx, p.Token, ans)
	if err != nil || si.Session.SessionToken == "" || len(si.RecoveryCodes) != 10 {
		t.Fatalf("%s after the server recovered: %+v, %v; want a session and ten recovery codes", how, si, err)
	}
	end, err := be.readFactors(ctx, u.id)
	if err != nil || end.totp != 1 || end.codes != 10 || len(newSessions(start, end)) != 1 {
		t.Errorf("after the retry: %+v, %v; want one TOTP factor, ten codes, one new session", end, err)
	}
	row.retry = how + " enrolled and signed in, ten codes shown"
	return row
}

// answerFault: an enrolled user answers a pending sign-in with a TOTP or
// a recovery code. The retry answers again: the same pending sign-in when
// it is still stored (else it is refused and a new sign-in is answered),
// with the same code when no session used it up (else it is refused and
// the next code answers).
func answerFault(t *testing.T, ctx context.Context, be *pwBackend, app *fApp, f fFault) fRow {
	u := app.enrolled(t, ctx, "answer")
	recovery := strings.Contains(f.flow, "recovery")
	trust := strings.Contains(f.flow, "trust")
	p := app.pending(t, ctx, app.opt, u)
	c := fCall{pending: true, recovery: recovery}
	ans := auth.Answer{Type: core.FactorRecoveryCodes, Code: u.codes[0], TrustDevice: trust}
	next := 0
	fresh := func() auth.Answer { // another code each time: each answer uses one up
		next++
		return auth.Answer{Type: core.FactorRecoveryCodes, Code: u.codes[next], TrustDevice: trust}
	}
	if !recovery {
		ans = auth.Answer{Type: core.FactorTOTP, Code: app.code(t, u.key), TrustDevice: trust}
		c.step = app.step()
		fresh = func() auth.Answer {
			app.nextStep()
			return auth.Answer{Type: core.FactorTOTP, Code: app.code(t, u.key), TrustDevice: trust}
		}
	}
	var si *auth.SignIn
	row, start, now, err := be.cut(t, ctx, app, f, u, c, func() error {
		var err error
		si, err = app.opt.Factors().Verify(ctx, p.Token, ans)
		return err
	})
	if trust {
		// The sign-in stands without the trust (a createFactor that
		// failed is only logged): the next sign-in asks again, and
		// trusting the browser then works.
		if err != nil || si.Session.SessionToken == "" || si.TrustedDevice != "" || now.devices != 0 {
			t.Fatalf("the sign-in with the trust not stored: %+v, %v (%s); want a session and no trusted device", si, err, row.state)
		}
		row.retry = "failed"
		p2 := app.pending(t, ctx, app.opt, u)
		si2, err := app.opt.Factors().Verify(ctx, p2.Token, fresh())
		if err != nil || si2.TrustedDevice == "" {
			t.Fatalf("trusting the browser again: %+v, %v", si2, err)
		}
		in, err := app.opt.Passwords().SignIn(auth.WithClient(ctx, auth.Client{TrustedDevice: si2.TrustedDevice}), auth.SignInRequest{Identifier: u.email, Password: fPassword})
		if err != nil || in.Pending != nil || in.Session.SessionToken == "" {
			t.Fatalf("a sign-in from the trusted browser: %+v, %v; want a session at once", in, err)
		}
		row.answer += " (signed in, no trusted device)"
		row.retry = "the next sign-in asked again; trusting the browser then worked"
		return row
	}
	row.retry = "failed"
	used := now.codes < start.codes
	if !recovery {
		used = now.totpStep >= c.step
	}
	var how []string
	tok := p.Token
	if now.pendings < start.pendings {
		if _, err := app.opt.Factors().Verify(ctx, tok, fresh()); auth.CodeOf(err) != auth.CodeSecondFactor {
			t.Errorf("the used pending sign-in answered again: %v; want it refused", err)
		}
		tok = app.pending(t, ctx, app.opt, u).Token
		how = append(how, "the pending sign-in refused (used)", "a new sign-in")
	}
	if used {
		if _, err := app.opt.Factors().Verify(ctx, tok, ans); auth.CodeOf(err) != auth.CodeSecondFactor {
			t.Errorf("the used code again: %v; want it refused", err)
		}
		ans = fresh()
		how = append(how, "the code refused (used)", "the next one")
	} else {
		how = append(how, "the same code")
	}
	done, err := app.opt.Factors().Verify(ctx, tok, ans)
	if err != nil || done.Session.SessionToken == "" {
		t.Fatalf("%s after the server recovered: %+v, %v; want a session", strings.Join(how, "; "), done, err)
	}
	if _, err := app.opt.Factors().Verify(ctx, tok, fresh()); auth.CodeOf(err) != auth.CodeSecondFactor {
		t.Errorf("the pending sign-in answered after its session: %v; want it refused", err)
	}
	if end, err := be.readFactors(ctx, u.id); err != nil || len(newSessions(start, end)) != 1 {
		t.Errorf("after the retry: %+v, %v; want one new session", end, err)
	}
	row.retry = strings.Join(how, "; ") + " signed in"
	return row
}

// newCodesFault: an enrolled user asks for new recovery codes. The retry
// asks again: it must give ten codes that work, the old ones refused.
func newCodesFault(t *testing.T, ctx context.Context, be *pwBackend, app *fApp, f fFault) fRow {
	u := app.enrolled(t, ctx, "codes")
	row, start, now, _ := be.cut(t, ctx, app, f, u, fCall{}, func() error {
		_, err := app.opt.Factors().NewRecoveryCodes(ctx, u.id)
		return err
	})
	if !bytes.Equal(now.codesSecret, start.codesSecret) {
		row.state += " (replaced)"
	} else {
		row.state += " (the old ones)"
	}
	row.retry = "failed"
	codes, err := app.opt.Factors().NewRecoveryCodes(ctx, u.id)
	if err != nil || len(codes) != 10 {
		t.Fatalf("new recovery codes again: %d, %v; want ten", len(codes), err)
	}
	p := app.pending(t, ctx, app.opt, u)
	if _, err := app.opt.Factors().Verify(ctx, p.Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: u.codes[0]}); auth.CodeOf(err) != auth.CodeSecondFactor {
		t.Errorf("an old recovery code after new ones: %v; want it refused", err)
	}
	if _, err := app.opt.Factors().Verify(ctx, p.Token, auth.Answer{Type: core.FactorRecoveryCodes, Code: codes[0]}); err != nil {
		t.Errorf("a new recovery code: %v", err)
	}
	row.retry = "ten new codes; an old one refused, a new one signed in"
	return row
}

// removeFault: an enrolled user removes their TOTP factor, the last one
// (every user need not have one). The retry removes it again if it is
// there (else it is not found); then the user has no factor and no codes,
// and signs in without a second factor.
func removeFault(t *testing.T, ctx context.Context, be *pwBackend, app *fApp, f fFault) fRow {
	u := app.enrolled(t, ctx, "remove")
	row, _, now, _ := be.cut(t, ctx, app, f, u, fCall{}, func() error {
		return app.opt.Factors().Remove(ctx, u.id, u.totpID)
	})
	row.retry = "failed"
	err := app.opt.Factors().Remove(ctx, u.id, u.totpID)
	switch {
	case now.totp > 0 && err != nil:
		t.Fatalf("removing the factor again: %v", err)
	case now.totp > 0:
		row.retry = "removed"
	case !errors.Is(err, core.ErrNotFound):
		t.Fatalf("removing the removed factor again: %v; want not found", err)
	default:
		row.retry = "not found (removed)"
	}
	if s, err := be.readFactors(ctx, u.id); err != nil || s.totp != 0 || s.codeSets != 0 {
		t.Errorf("after the retry: %+v, %v; want no factor and no recovery codes", s, err)
	}
	si, err := app.opt.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: u.email, Password: fPassword})
	if err != nil || si.Pending != nil {
		t.Fatalf("a sign-in with no factor left: %+v, %v; want a session at once", si, err)
	}
	row.retry += "; signed in without a second factor"
	return row
}

// reauthFault: an enrolled user signed in with their second factor
// re-authenticates with the next TOTP code. The retry re-authenticates
// with the next code when the old session stands: then the old session is
// gone and the new one is the user's only one.
func reauthFault(t *testing.T, ctx context.Context, be *pwBackend, app *fApp, f fFault) fRow {
	u := app.enrolled(t, ctx, "reauth")
	p := app.pending(t, ctx, app.opt, u)
	in, err := app.opt.Factors().Verify(ctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: app.code(t, u.key)})
	if err != nil {
		t.Fatal(err)
	}
	old := in.Session.SessionToken
	app.nextStep()
	c := fCall{replaced: old}
	row, start, now, _ := be.cut(t, ctx, app, f, u, c, func() error {
		_, err := app.opt.Factors().Reauthenticate(ctx, u.id, old, "", auth.Answer{Type: core.FactorTOTP, Code: app.code(t, u.key)})
		return err
	})
	row.retry = "failed"
	if !slices.Contains(now.sessions, old) {
		t.Fatalf("the session a failed re-authentication was to replace is gone (%s)", row.state)
	}
	app.nextStep()
	re, err := app.opt.Factors().Reauthenticate(ctx, u.id, old, "", auth.Answer{Type: core.FactorTOTP, Code: app.code(t, u.key)})
	if err != nil {
		t.Fatalf("re-authenticating again: %v", err)
	}
	if s, err := be.readFactors(ctx, u.id); err != nil || slices.Contains(s.sessions, old) ||
		!slices.Contains(s.sessions, re.Session.SessionToken) || len(s.sessions) != len(start.sessions) {
		t.Errorf("after the retry: %d sessions (the old one there: %v), %v; want the old one replaced by the new one",
			len(s.sessions), slices.Contains(s.sessions, old), err)
	}
	row.retry = "re-authenticated with the next code; the old session gone"
	return row
}

// checkSeesHalfFactors proves the inspection can fail: read from the
// store, an enrolled user is clean, the same user with the recovery codes
// deleted is a TOTP factor without codes, and with the TOTP factor deleted
// instead, codes with no usable factor; a pending sign-in is seen stored,
// and then used; and each other state halfFactors names is reported.
func checkSeesHalfFactors(t *testing.T, be *pwBackend, app *fApp) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	expect := func(what string, bad []string, want string) {
		t.Helper()
		if got := strings.Join(bad, "; "); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("the inspection of %s: %q; want %q", what, got, want)
		}
	}
	read := func(u *fUser) fState {
		t.Helper()
		s, err := be.readFactors(ctx, u.id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	u := app.enrolled(t, ctx, "selfcheck")
	start := read(u)
	if start.totp != 1 || start.codes != 10 || len(start.sessions) != 1 {
		t.Fatalf("an enrolled user read from the store: %+v; want a TOTP factor, ten codes, one session", start)
	}
	expect("an enrolled user", halfFactors(start, start, fCall{}), "")
	p := app.pending(t, ctx, app.opt, u)
	pending := read(u)
	if pending.pendings != start.pendings+1 {
		t.Errorf("pending sign-ins stored: %d, then %d after a sign-in; want one more", start.pendings, pending.pendings)
	}
	step := app.step()
	if _, err := app.opt.Factors().Verify(ctx, p.Token, auth.Answer{Type: core.FactorTOTP, Code: app.code(t, u.key)}); err != nil {
		t.Fatal(err)
	}
	done := read(u)
	c := fCall{pending: true, step: step}
	expect("a second factor answered", halfFactors(pending, done, c), "")
	if done.pendings != pending.pendings-1 || done.totpStep != step {
		t.Errorf("after an answer: %d pending sign-ins (from %d), step %d; want one fewer, step %d", done.pendings, pending.pendings, done.totpStep, step)
	}
	kept := done
	kept.pendings = pending.pendings
	expect("a session with its pending sign-in stored", halfFactors(pending, kept, c), "its pending sign-in still stored")
	kept = done
	kept.totpStep = step - 1
	expect("a session with the code's step not recorded", halfFactors(pending, kept, c), "step is not recorded")
	kept = done
	kept.sessions = append(slices.Clone(done.sessions), "another")
	expect("two sessions of one pending sign-in", halfFactors(pending, kept, c), "2 sessions made")
	expect("a session with its recovery code stored", halfFactors(pending, done, fCall{pending: true, recovery: true}), "recovery code still stored")
	expect("a factor made by a failed call", halfFactors(fState{}, done, fCall{failed: true}), "a call that failed")
	old := start.sessions[0]
	expect("a re-authentication's two sessions", halfFactors(start, done, fCall{failed: true, replaced: old}), "beside the one it replaces")
	expect("a re-authentication reported done with the old session", halfFactors(start, start, fCall{replaced: old}), "reported done")
	if _, err := be.raw.db.ExecContext(ctx, be.raw.q(`DELETE FROM "factors" WHERE "userId" = ? AND "type" = ?`), u.id, string(core.FactorRecoveryCodes)); err != nil {
		t.Fatal(err)
	}
	expect("a TOTP factor whose codes were deleted", halfFactors(start, read(u), fCall{}), "without recovery codes")
	v := app.enrolled(t, ctx, "selfcheck")
	if _, err := be.raw.db.ExecContext(ctx, be.raw.q(`DELETE FROM "factors" WHERE "userId" = ? AND "type" = ?`), v.id, string(core.FactorTOTP)); err != nil {
		t.Fatal(err)
	}
	expect("codes whose TOTP factor was deleted", halfFactors(start, read(v), fCall{}), "no usable factor")
}
