package faults

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/google/uuid"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
)

// TestPasswordFaults kills the database server (PostgreSQL with pg_ctl
// stop -m immediate, MariaDB with SIGKILL: servers of the test's own) in
// the middle of a password sign-up and of a password reset, between two of
// their writes, with core/auth on the SQL adapter connected straight to
// the server:
//
//   - sign-up, after createUser and before linkAccount (the user is
//     written, its password account is not), and after linkAccount and
//     before createVerificationToken (the user has its password but no
//     e-mail to verify the address with);
//   - reset, after useVerificationToken and before swapPasswordHash (the
//     link is used, the password unchanged), and after swapPasswordHash and
//     before deleteSessionsByUserId (the password is new, the sessions it
//     must end are there).
//
// The call must fail. Once the server is back, read with its own driver
// (never the adapter), the store must hold nothing half-made (halfSignUp,
// halfReset say precisely what that is) within cleanLimit, and the retry
// must succeed: the same sign-up again gets a verification e-mail whose
// link signs in, and the password signs in; the reset link works again
// if the password is unchanged, or, if it was reset, is refused and a new
// one resets it; then the new password signs in, the old one does not, and
// no session from before the reset is left.
func TestPasswordFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own database servers; not in -short")
	}
	t.Parallel() // beside TestFaults and TestSignInFaults: see there
	started := time.Now()
	var (
		mu   sync.Mutex
		rows []pwRow
	)
	t.Run("backends", func(t *testing.T) {
		for _, b := range []struct {
			name string
			mk   func(*testing.T) *pwBackend
		}{{provision.BackendPostgres, pwPostgres}, {provision.BackendMySQL, pwMariaDB}} {
			t.Run(b.name, func(t *testing.T) {
				t.Parallel()
				got := passwordFaults(t, b.mk(t))
				mu.Lock()
				rows = append(rows, got...)
				mu.Unlock()
			})
		}
	})
	slices.SortStableFunc(rows, func(a, b pwRow) int { return strings.Compare(a.backend, b.backend) })
	host, _ := os.Hostname()
	fmt.Printf("\nPassword sign-up and reset under a killed server (tests/faults, TestPasswordFaults): %d CPUs (%s/%s, %s), %v in all\n%s\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, host, time.Since(started).Round(time.Second), formatPwTable(rows))
}

// pwBackend is a server of TestPasswordFaults and how to kill it.
type pwBackend struct {
	name    string
	adapter core.Adapter // straight to the server
	raw     sqlRaw       // the server's own driver
	fault   string       // how the server is killed, for the table
	stop    func(context.Context) error
	start   func(context.Context) error
	ping    func(context.Context) error // a fresh connection of the server's own driver
}

func pwPostgres(t *testing.T) *pwBackend {
	s := newPostgres(t)
	a := newGorm(t, postgres.New(postgres.Config{Conn: openSQL(t, "pgx", s.url())}), true)
	return &pwBackend{name: provision.BackendPostgres, adapter: a, raw: sqlRaw{db: openSQL(t, "pgx", s.url())},
		fault: "pg_ctl stop -m immediate",
		stop:  func(ctx context.Context) error { return s.stop(ctx, "immediate") },
		start: s.start, ping: pgPing(s.url())}
}

func pwMariaDB(t *testing.T) *pwBackend {
	proc, port := newMariaDB(t, func(port int) func(context.Context) error { return myPing("127.0.0.1:" + strconv.Itoa(port)) })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if _, err := openSQL(t, "mysql", myDSN(addr, "")).Exec("CREATE DATABASE faults"); err != nil {
		t.Fatal(err)
	}
	a := newGorm(t, mysql.New(mysql.Config{Conn: openSQL(t, "mysql", myDSN(addr, "faults"))}), true)
	return &pwBackend{name: provision.BackendMySQL, adapter: a, raw: sqlRaw{db: openSQL(t, "mysql", myDSN(addr, "faults")), mysql: true},
		fault: "SIGKILL",
		stop:  func(context.Context) error { return proc.kill() },
		start: func(context.Context) error { return proc.start() },
		ping: func(ctx context.Context) error {
			if err := proc.exited(); err != nil {
				return err
			}
			return myPing(addr)(ctx)
		}}
}

// pwApp is the application: core/auth with a password provider (a cheap
// Argon2id: the hashing is not under test) and database sessions, on the
// kill trigger; its e-mails are kept.
type pwApp struct {
	a    *auth.Auth
	kt   *killTrigger
	mu   sync.Mutex
	sent []provider.VerificationRequest
}

func newPwApp(t *testing.T, store core.Adapter) *pwApp {
	t.Helper()
	app := &pwApp{kt: &killTrigger{Adapter: store}}
	h, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	pc := provider.Password("Faults <no-reply@example.com>", func(_ context.Context, r provider.VerificationRequest) error {
		app.mu.Lock()
		app.sent = append(app.sent, r)
		app.mu.Unlock()
		return nil
	})
	pc.Hasher = h
	app.a, err = auth.New(auth.Config{Adapter: app.kt, Providers: []provider.Provider{pc}, Secrets: []string{signInSecret},
		BaseURL: "https://app.example/auth", Session: auth.SessionOptions{Strategy: auth.StrategyDatabase}})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// mailCount is how many e-mails were sent.
func (app *pwApp) mailCount() int {
	app.mu.Lock()
	defer app.mu.Unlock()
	return len(app.sent)
}

// mailSince returns the first e-mail of the purpose to the address among
// those sent after the first n.
func (app *pwApp) mailSince(n int, to string, purpose provider.Purpose) (provider.VerificationRequest, bool) {
	app.mu.Lock()
	defer app.mu.Unlock()
	for _, r := range app.sent[n:] {
		if r.Identifier == to && r.Purpose == purpose {
			return r, true
		}
	}
	return provider.VerificationRequest{}, false
}

// The passwords of TestPasswordFaults.
const (
	pw1 = "correct horse battery"
	pw2 = "second staple of the horse"
	pw3 = "third battery in the stable"
)

// pwRow is one fault of TestPasswordFaults, for the table.
type pwRow struct {
	backend, flow, fault string
	before               core.Method
	committed            []string      // the writes made before the kill
	answer               string        // what the call answered
	clean                time.Duration // server answering → nothing half-made; -1: not within cleanLimit
	state                string        // what the store held once clean
	retry                string        // how the retry went
}

func formatPwTable(rows []pwRow) string {
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

// passwordFaults runs the four faults on one backend, after proving that
// its inspections can fail.
func passwordFaults(t *testing.T, be *pwBackend) []pwRow {
	app := newPwApp(t, be.adapter)
	checkSeesHalfMade(t, be, app)
	var rows []pwRow
	for _, before := range []core.Method{core.MethodLinkAccount, core.MethodCreateVerificationToken} {
		t.Run("sign-up/before-"+string(before), func(t *testing.T) { rows = append(rows, signUpFault(t, be, app, before)) })
	}
	for _, before := range []core.Method{core.MethodSwapPasswordHash, core.MethodDeleteSessionsByUserID} {
		t.Run("reset/before-"+string(before), func(t *testing.T) { rows = append(rows, resetFault(t, be, app, before)) })
	}
	return rows
}

// verifyIdentifier is the identifier of an address's verification tokens
// (core/auth's; checkSeesHalfMade proves the inspection finds them).
func verifyIdentifier(address string) string { return "authport:verify-email:" + address }

// halfSignUp lists what a sign-up of address must never leave: a user
// with the address without its password account (type credentials, a
// hash), a password account without its user, and a user with the address
// unverified with no live verification token for it (its owner could
// never verify: a new sign-up finds the address taken and only tells the
// owner so).
func (be *pwBackend) halfSignUp(ctx context.Context, address string) ([]string, error) {
	var out []string
	for _, q := range []struct {
		what, query string
		args        []any
	}{
		{"user " + address + " without its password account",
			`SELECT count(*) FROM "users" u WHERE u."email" = ? AND NOT EXISTS (SELECT 1 FROM "accounts" a WHERE a."userId" = u."id" AND a."provider" = ? AND a."type" = ? AND a."password" IS NOT NULL)`,
			[]any{address, core.PasswordProvider, string(core.AccountTypeCredentials)}},
		{"password account without its user",
			`SELECT count(*) FROM "accounts" a WHERE a."provider" = ? AND NOT EXISTS (SELECT 1 FROM "users" u WHERE u."id" = a."userId")`,
			[]any{core.PasswordProvider}},
		{"unverified user " + address + " without a verification token",
			`SELECT count(*) FROM "users" u WHERE u."email" = ? AND u."emailVerified" IS NULL AND NOT EXISTS (SELECT 1 FROM "verification_token" v WHERE v."identifier" = ? AND v."expires" > ?)`,
			[]any{address, verifyIdentifier(address), time.Now().UTC()}},
	} {
		n, err := be.raw.count(ctx, q.query, q.args...)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, q.what))
		}
	}
	return out, nil
}

// resetState is what the store holds of a reset, read with the server's
// own driver.
type resetState struct {
	hash        string // the password account's hash
	tokenThere  bool   // the reset link's token is stored
	oldSessions int    // sessions from before the reset
}

// describe says what the state is, for the table.
func (s resetState) describe(oldHash string) string {
	pw, link := "password unchanged", "the link usable again"
	if s.hash != oldHash {
		pw = "password reset"
	}
	if !s.tokenThere {
		link = "the link used"
	}
	return fmt.Sprintf("%s, %s, %d session(s) from before", pw, link, s.oldSessions)
}

func (be *pwBackend) readReset(ctx context.Context, userID, tokenHash string, sessions []string) (resetState, error) {
	var s resetState
	var hash sql.NullString
	if _, err := be.raw.one(ctx, `SELECT "password" FROM "accounts" WHERE "userId" = ? AND "provider" = ?`,
		[]any{userID, core.PasswordProvider}, &hash); err != nil {
		return s, err
	}
	s.hash = hash.String
	n, err := be.raw.count(ctx, `SELECT count(*) FROM "verification_token" WHERE "token" = ?`, tokenHash)
	if err != nil {
		return s, err
	}
	s.tokenThere = n > 0
	s.oldSessions, err = be.raw.count(ctx, `SELECT count(*) FROM "sessions" WHERE "sessionToken" IN (?, ?)`, sessions[0], sessions[1])
	return s, err
}

// halfReset lists what a reset must never leave: its link used with the
// password unchanged (the link cannot be used again, though nothing was
// reset), and the password reset with the sessions from before still
// there (a reset ends them: one may be an attacker's).
func halfReset(s resetState, oldHash string) []string {
	var out []string
	if s.hash == oldHash && !s.tokenThere {
		out = append(out, "the reset link's token is used and the password unchanged")
	}
	if s.hash != oldHash && s.oldSessions > 0 {
		out = append(out, fmt.Sprintf("the password is reset and %d session(s) from before the reset remain", s.oldSessions))
	}
	return out
}

// kill arms the trigger to kill the server before the next call of
// method, and returns a function that disarms it and reports the writes
// committed before the kill; it fails t when the call was not reached.
func (be *pwBackend) kill(t *testing.T, app *pwApp, method core.Method) func() []string {
	t.Helper()
	app.kt.arm(string(method), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := be.stop(ctx); err != nil {
			t.Errorf("killing the server (%s): %v", be.fault, err)
		}
	})
	return func() []string {
		fired, writes := app.kt.disarm()
		if !fired {
			t.Fatalf("the flow made no %s call (its writes: %v)", method, writes)
		}
		return writes[:slices.Index(writes, string(method))]
	}
}

// restart starts the killed server again and waits until its own driver
// and then the adapter (a read) answer; it returns when the server
// answered.
func (be *pwBackend) restart(t *testing.T, ctx context.Context) time.Time {
	t.Helper()
	if err := be.start(ctx); err != nil {
		t.Fatalf("starting the server again: %v", err)
	}
	if err := waitFor(ctx, be.ping); err != nil {
		t.Fatalf("the server did not answer again: %v", err)
	}
	back := time.Now()
	// The inspection's pooled connections died with the server: closed
	// here (no idle connection kept), so that its next reads open new ones.
	be.raw.db.SetMaxIdleConns(0)
	be.raw.db.SetMaxIdleConns(2)
	if err := waitFor(ctx, func(ctx context.Context) error {
		_, err := be.adapter.GetUser(ctx, uuid.NewString())
		return err
	}); err != nil {
		t.Fatalf("the adapter did not answer again: %v", err)
	}
	return back
}

// waitClean polls half until it lists nothing or cleanLimit has passed
// since back; it returns how long that took (-1: not clean) and what
// half listed last.
func waitClean(t *testing.T, ctx context.Context, back time.Time, half func(context.Context) ([]string, error)) (time.Duration, []string) {
	t.Helper()
	for {
		bad, err := half(ctx)
		if err != nil {
			t.Fatalf("reading the store: %v", err)
		}
		if len(bad) == 0 {
			return time.Since(back), nil
		}
		if time.Since(back) > cleanLimit {
			return -1, bad
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func answer(err error) string {
	if err == nil {
		return "success"
	}
	return "error (" + string(auth.CodeOf(err)) + ")"
}

// signUpFault kills the server before the sign-up's call of before.
func signUpFault(t *testing.T, be *pwBackend, app *pwApp, before core.Method) pwRow {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	address := "signup-" + randomID() + "@example.com"
	row := pwRow{backend: be.name, flow: "sign-up", fault: be.fault, before: before}
	disarm := be.kill(t, app, before)
	_, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: address}, Password: pw1})
	row.committed = disarm()
	row.answer = answer(err)
	if err == nil {
		t.Errorf("the sign-up answered success with the server killed before %s", before)
	}
	back := be.restart(t, ctx)
	var bad []string
	if row.clean, bad = waitClean(t, ctx, back, func(ctx context.Context) ([]string, error) { return be.halfSignUp(ctx, address) }); len(bad) > 0 {
		t.Errorf("%v after the server answered again the store still holds a half-made sign-up: %v", cleanLimit, bad)
	}
	n, err := be.raw.count(ctx, `SELECT count(*) FROM "users" WHERE "email" = ?`, address)
	if err != nil {
		t.Fatal(err)
	}
	row.state = "no user (removed)"
	if n > 0 {
		row.state = "the user, its password and a verification link"
	}

	// The retry: the same sign-up gets a verification e-mail whose link
	// signs in, and the password then signs in.
	row.retry = "failed"
	mails := app.mailCount()
	res, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: address}, Password: pw1})
	if err != nil || !res.VerificationSent {
		t.Fatalf("the sign-up again after the server recovered: %+v, %v; want a verification e-mail sent", res, err)
	}
	mail, ok := app.mailSince(mails, address, provider.PurposeVerifyEmail)
	if !ok {
		t.Fatalf("the sign-up again sent no verification e-mail (a user whose address is taken cannot finish signing up): %+v", app.sent[mails:])
	}
	in, err := app.a.Passwords().VerifyEmail(ctx, address, auth.Proof{Token: mail.Token, Password: pw1})
	if err != nil || in.Session.SessionToken == "" {
		t.Fatalf("verifying with the retry's link: %+v, %v; want a session", in, err)
	}
	if _, err := app.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: address, Password: pw1}); err != nil {
		t.Fatalf("signing in with the password after the retry: %v", err)
	}
	if bad, err := be.halfSignUp(ctx, address); err != nil || len(bad) > 0 {
		t.Errorf("after the retry: %v, %v; want nothing half-made", bad, err)
	}
	if n, err := be.raw.count(ctx, `SELECT count(*) FROM "users" WHERE "email" = ?`, address); err != nil || n != 1 {
		t.Errorf("users with the address after the retry: %d, %v; want 1", n, err)
	}
	row.retry = "signed up, verified, signed in"
	return row
}

// passwordUser signs address up with pw1, verifies it and signs in once
// more: the user and its two sessions.
func passwordUser(t *testing.T, ctx context.Context, app *pwApp, address string) (core.User, []string) {
	t.Helper()
	mails := app.mailCount()
	if _, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: address}, Password: pw1}); err != nil {
		t.Fatal(err)
	}
	mail, ok := app.mailSince(mails, address, provider.PurposeVerifyEmail)
	if !ok {
		t.Fatal("no verification e-mail")
	}
	in1, err := app.a.Passwords().VerifyEmail(ctx, address, auth.Proof{Token: mail.Token, Password: pw1})
	if err != nil {
		t.Fatal(err)
	}
	in2, err := app.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: address, Password: pw1})
	if err != nil {
		t.Fatal(err)
	}
	return in1.User, []string{in1.Session.SessionToken, in2.Session.SessionToken}
}

// resetLink asks for a reset of address and returns the e-mail's token.
func resetLink(t *testing.T, ctx context.Context, app *pwApp, address string) string {
	t.Helper()
	mails := app.mailCount()
	if err := app.a.Passwords().RequestReset(ctx, address, ""); err != nil {
		t.Fatalf("asking for a reset: %v", err)
	}
	mail, ok := app.mailSince(mails, address, provider.PurposeResetPassword)
	if !ok {
		t.Fatal("no reset e-mail")
	}
	return mail.Token
}

// resetFault kills the server before the reset's call of before.
func resetFault(t *testing.T, be *pwBackend, app *pwApp, before core.Method) pwRow {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	address := "reset-" + randomID() + "@example.com"
	row := pwRow{backend: be.name, flow: "reset", fault: be.fault, before: before}
	user, sessions := passwordUser(t, ctx, app, address)
	token := resetLink(t, ctx, app, address)
	tokenHash := auth.HashLinkToken(provider.PurposeResetPassword, token, signInSecret)
	start, err := be.readReset(ctx, user.ID, tokenHash, sessions)
	if err != nil || start.hash == "" || !start.tokenThere || start.oldSessions != 2 {
		t.Fatalf("before the reset: %+v, %v; want a hash, the link's token and two sessions", start, err)
	}

	disarm := be.kill(t, app, before)
	err = app.a.Passwords().Reset(ctx, address, auth.Proof{Token: token}, pw2)
	row.committed = disarm()
	row.answer = answer(err)
	if err == nil {
		t.Errorf("the reset answered success with the server killed before %s", before)
	}
	back := be.restart(t, ctx)
	var state resetState
	var bad []string
	row.clean, bad = waitClean(t, ctx, back, func(ctx context.Context) ([]string, error) {
		s, err := be.readReset(ctx, user.ID, tokenHash, sessions)
		state = s
		return halfReset(s, start.hash), err
	})
	if len(bad) > 0 {
		t.Errorf("%v after the server answered again the store still holds a half-made reset: %v", cleanLimit, bad)
	}

	// The retry: the same link when the password is unchanged (it must
	// work again), else the link is dead (it died with the hash it was to
	// reset) and a new one resets.
	row.retry = "failed"
	final := pw2
	row.state = state.describe(start.hash)
	if state.hash == start.hash {
		if err := app.a.Passwords().Reset(ctx, address, auth.Proof{Token: token}, pw2); err != nil {
			t.Fatalf("the same reset link again after the server recovered: %v", err)
		}
		row.retry = "the same link reset it"
	} else {
		err := app.a.Passwords().Reset(ctx, address, auth.Proof{Token: token}, pw3)
		if auth.CodeOf(err) != auth.CodeVerification {
			t.Errorf("the used link of a reset that happened, again: %v; want it refused (Verification)", err)
		}
		if err := app.a.Passwords().Reset(ctx, address, auth.Proof{Token: resetLink(t, ctx, app, address)}, pw3); err != nil {
			t.Fatalf("a new reset link after the server recovered: %v", err)
		}
		final = pw3
		row.retry = "the link refused (password already reset); a new link reset it"
	}
	if _, err := app.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: address, Password: final}); err != nil {
		t.Errorf("signing in with the new password: %v", err)
	}
	if _, err := app.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: address, Password: pw1}); auth.CodeOf(err) != auth.CodeCredentialsSignin {
		t.Errorf("signing in with the old password after the reset: %v; want it refused", err)
	}
	end, err := be.readReset(ctx, user.ID, tokenHash, sessions)
	if err != nil || end.hash == start.hash || end.oldSessions != 0 {
		t.Errorf("after the retry: %+v, %v; want a new hash and no session from before the reset", end, err)
	}
	return row
}

// checkSeesHalfMade proves the inspections can fail: a sign-up whose
// verification token is gone, a user planted without its password account,
// and a reset link used with the password unchanged are each reported;
// a sign-up as it should be is not.
func checkSeesHalfMade(t *testing.T, be *pwBackend, app *pwApp) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	address := "selfcheck-" + randomID() + "@example.com"
	if _, err := app.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: address}, Password: pw1}); err != nil {
		t.Fatal(err)
	}
	expect := func(what string, want string) {
		t.Helper()
		bad, err := be.halfSignUp(ctx, address)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(bad, "; "); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("the sign-up inspection of %s: %q; want %q", what, got, want)
		}
	}
	expect("a sign-up as it should be", "")
	if _, err := be.raw.db.ExecContext(ctx, be.raw.q(`DELETE FROM "verification_token" WHERE "identifier" = ?`), verifyIdentifier(address)); err != nil {
		t.Fatal(err)
	}
	expect("a sign-up whose verification token is gone", "without a verification token")
	planted, err := be.adapter.CreateUser(ctx, core.User{ID: uuid.NewString(), Email: "planted-" + address})
	if err != nil {
		t.Fatal(err)
	}
	address = planted.Email
	expect("a user planted without its password account", "without its password account")
	// A reset link used with the password unchanged, on the store.
	resetAddress := "selfcheck-reset-" + randomID() + "@example.com"
	user, sessions := passwordUser(t, ctx, app, resetAddress)
	tokenHash := auth.HashLinkToken(provider.PurposeResetPassword, resetLink(t, ctx, app, resetAddress), signInSecret)
	start, err := be.readReset(ctx, user.ID, tokenHash, sessions)
	if err != nil || start.hash == "" || !start.tokenThere || start.oldSessions != 2 {
		t.Fatalf("the reset inspection before a reset: %+v, %v; want a hash, the link's token and two sessions", start, err)
	}
	if s := halfReset(start, start.hash); len(s) != 0 {
		t.Errorf("the reset inspection before a reset: %v; want nothing", s)
	}
	if _, err := be.raw.db.ExecContext(ctx, be.raw.q(`DELETE FROM "verification_token" WHERE "token" = ?`), tokenHash); err != nil {
		t.Fatal(err)
	}
	used, err := be.readReset(ctx, user.ID, tokenHash, sessions)
	if err != nil {
		t.Fatal(err)
	}
	if s := halfReset(used, start.hash); len(s) != 1 {
		t.Errorf("the reset inspection of a link used with the password unchanged: %v; want it reported", s)
	}
	if s := halfReset(resetState{hash: "h2", oldSessions: 1}, "h"); len(s) != 1 {
		t.Errorf("the reset inspection of a reset that left a session: %v", s)
	}
	if s := halfReset(resetState{hash: "h2", tokenThere: true}, "h"); len(s) != 0 {
		t.Errorf("the reset inspection of a finished reset: %v", s)
	}
}
