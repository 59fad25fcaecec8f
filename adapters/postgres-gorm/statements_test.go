package gormadapter

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

// stmtCount is what one operation is allowed to run: statements, and how
// many of them inside a transaction (0: autocommit, no BEGIN/COMMIT).
type stmtCount struct {
	statements int
	tx         int
}

func (c stmtCount) String() string {
	if c.tx == 0 {
		return fmt.Sprint(c.statements)
	}
	return fmt.Sprintf("%d in a transaction", c.statements)
}

// expectedCounts is the statements-per-operation table of the README, for
// a dialect with or without DELETE/UPDATE … RETURNING.
func expectedCounts(deleteReturning, updateReturning bool) map[string]stmtCount {
	one := stmtCount{1, 0}
	del, upd := one, one
	if !deleteReturning {
		del = stmtCount{2, 1} // SELECT … FOR UPDATE, DELETE
	}
	if !updateReturning {
		upd = stmtCount{2, 1} // UPDATE, SELECT
	}
	return map[string]stmtCount{
		"createUser": one, "getUser": one, "getUserByEmail": one, "getUserByAccount": one, "getUserByUsername": one,
		"updateUser": upd, "deleteUser": del, "swapPasswordHash": upd,
		"linkAccount": one, "unlinkAccount": del, "getAccount": one,
		"createSession": one, "getSessionAndUser": one, "updateSession": upd, "extendSession": upd, "deleteSession": del,
		"listSessionsByUserId": one, "deleteSessionsByUserId": del,
		"createVerificationToken": one, "useVerificationToken": del,
		"createAuthenticator": one, "getAuthenticator": one, "listAuthenticatorsByUserId": one,
		"updateAuthenticatorCounter": upd,
		"purgeExpired":               {2, 0},
	}
}

// TestStatementsPerOperation runs every operation on a counting connection
// and checks how many SQL statements it ran, and that the lookups that
// join (getSessionAndUser, getUserByAccount) are one JOIN.
func TestStatementsPerOperation(t *testing.T) {
	for _, v := range pathVariants() {
		t.Run(v.name, func(t *testing.T) {
			a, db := newAdapter(t, v.backend, true, v.opts...)
			want := expectedCounts(a.d.deleteReturning, a.d.updateReturning)
			switch v.name {
			case "postgres", "sqlite":
				if !a.d.deleteReturning || !a.d.updateReturning {
					t.Fatalf("%s %s: RETURNING not detected", v.backend, a.d.version)
				}
			case "mysql":
				if a.d.mariadb && versionAtLeast(a.d.version, 10, 5) != a.d.deleteReturning {
					t.Fatalf("MariaDB %s: DELETE … RETURNING detected as %v", a.d.version, a.d.deleteReturning)
				}
				if a.d.updateReturning {
					t.Fatal("MySQL has no UPDATE … RETURNING")
				}
			}
			runCounted(t, a, db.counter, want)
		})
	}
}

func runCounted(t *testing.T, a *Adapter, c *counter, want map[string]stmtCount) {
	ctx := context.Background()
	seen := map[string]bool{}
	check := func(op string, err error, extra func(stmts []string)) {
		t.Helper()
		stmts, begins := c.snapshot()
		seen[op] = true
		if err != nil {
			t.Errorf("%s: %v", op, err)
			return
		}
		w := want[op]
		if len(stmts) != w.statements || begins != w.tx {
			t.Errorf("%s ran %d statements in %d transactions, want %v:\n  %s", op, len(stmts), begins, w, strings.Join(stmts, "\n  "))
		}
		if extra != nil {
			extra(stmts)
		}
		c.reset()
	}
	oneJoin := func(op string) func([]string) {
		return func(stmts []string) {
			if len(stmts) != 1 || strings.Count(strings.ToUpper(stmts[0]), " JOIN ") != 1 {
				t.Errorf("%s is not one JOIN: %q", op, stmts)
			}
		}
	}
	name := "Ada"
	exp := time.Now().Add(time.Hour)
	user := core.User{ID: "u1", Email: "ada@example.com", Name: &name}
	// Usernames and hashes where the tables keep them (not on presets).
	q := a.qs()
	if q.keepsUsernames() {
		user.Username = "ada"
	}
	session := core.Session{SessionToken: "s1", UserID: "u1", Expires: exp}
	account := core.Account{UserID: "u1", Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "gh1"}
	token := core.VerificationToken{Identifier: "ada@example.com", Token: "t1", Expires: exp}
	auth := core.Authenticator{CredentialID: "c1", CredentialPublicKey: "k", UserID: "u1", ProviderAccountID: "gh1", CredentialDeviceType: "singleDevice"}

	c.reset()
	_, err := a.CreateUser(ctx, user)
	check("createUser", err, nil)
	got, err := a.GetUser(ctx, "u1")
	check("getUser", err, nil)
	if got == nil || got.Email != user.Email {
		t.Errorf("getUser = %+v", got)
	}
	_, err = a.GetUserByEmail(ctx, user.Email)
	check("getUserByEmail", err, nil)
	if q.keepsUsernames() {
		byName, err := a.GetUserByUsername(ctx, "ada")
		check("getUserByUsername", err, nil)
		if byName == nil || byName.ID != "u1" {
			t.Errorf("getUserByUsername = %+v", byName)
		}
	}
	upd, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Name: core.Null[string]()})
	check("updateUser", err, nil)
	if upd == nil || upd.Name != nil {
		t.Errorf("updateUser = %+v, want name null", upd)
	}
	_, err = a.LinkAccount(ctx, account)
	check("linkAccount", err, nil)
	owner, err := a.GetUserByAccount(ctx, account.Key())
	check("getUserByAccount", err, oneJoin("getUserByAccount"))
	if owner == nil || owner.ID != "u1" {
		t.Errorf("getUserByAccount = %+v", owner)
	}
	_, err = a.GetAccount(ctx, "gh1", "github")
	check("getAccount", err, nil)
	// The account has no hash: one conditional UPDATE (… IS NULL) sets it.
	if q.keepsPasswords() {
		sw, err := a.SwapPasswordHash(ctx, account.Key(), "", "$h")
		check("swapPasswordHash", err, nil)
		if sw == nil || deref(sw.PasswordHash) != "$h" {
			t.Errorf("swapPasswordHash = %+v", sw)
		}
	}
	_, err = a.CreateSession(ctx, session)
	check("createSession", err, nil)
	su, err := a.GetSessionAndUser(ctx, "s1")
	check("getSessionAndUser", err, func(stmts []string) {
		oneJoin("getSessionAndUser")(stmts)
		// The read of every request selects no session metadata.
		for _, c := range DefaultNames().Session.metadata() {
			if len(stmts) == 1 && strings.Contains(stmts[0], c) {
				t.Errorf("getSessionAndUser selects the metadata column %s: %q", c, stmts[0])
			}
		}
	})
	if su == nil || su.User.ID != "u1" {
		t.Errorf("getSessionAndUser = %+v", su)
	}
	us, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s1", Expires: core.Set(exp.Add(time.Hour))})
	check("updateSession", err, nil)
	if us == nil || !us.Expires.Equal(core.NormalizeTime(exp.Add(time.Hour))) {
		t.Errorf("updateSession = %+v", us)
	}
	from, to := core.NormalizeTime(exp.Add(time.Hour)), core.NormalizeTime(exp.Add(2*time.Hour))
	es, wrote, err := a.ExtendSession(ctx, "s1", from, to, time.Now())
	check("extendSession", err, nil)
	if es == nil || !wrote || !es.Expires.Equal(to) {
		t.Errorf("extendSession = %+v, %v", es, wrote)
	}
	sessions, err := a.ListSessionsByUserID(ctx, "u1")
	check("listSessionsByUserId", err, func(stmts []string) {
		if len(stmts) != 1 || strings.Contains(strings.ToUpper(stmts[0]), " JOIN ") {
			t.Errorf("listSessionsByUserId is not one SELECT without a JOIN: %q", stmts)
		}
	})
	if len(sessions) != 1 || sessions[0].SessionToken != "s1" {
		t.Errorf("listSessionsByUserId = %+v", sessions)
	}
	_, err = a.CreateVerificationToken(ctx, token)
	check("createVerificationToken", err, nil)
	used, err := a.UseVerificationToken(ctx, token.Key())
	check("useVerificationToken", err, nil)
	if used == nil {
		t.Error("useVerificationToken = nil")
	}
	_, err = a.CreateAuthenticator(ctx, auth)
	check("createAuthenticator", err, nil)
	_, err = a.GetAuthenticator(ctx, "c1")
	check("getAuthenticator", err, nil)
	list, err := a.ListAuthenticatorsByUserID(ctx, "u1")
	check("listAuthenticatorsByUserId", err, nil)
	if len(list) != 1 {
		t.Errorf("listAuthenticatorsByUserId = %+v", list)
	}
	au, err := a.UpdateAuthenticatorCounter(ctx, "c1", 9)
	check("updateAuthenticatorCounter", err, nil)
	if au == nil || au.Counter != 9 {
		t.Errorf("updateAuthenticatorCounter = %+v", au)
	}
	_, err = a.PurgeExpired(ctx)
	check("purgeExpired", err, nil)
	del, err := a.DeleteSession(ctx, "s1")
	check("deleteSession", err, nil)
	if del == nil {
		t.Error("deleteSession = nil")
	}
	for _, tok := range []string{"s2", "s3"} {
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u1", Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	c.reset()
	n, err := a.DeleteSessionsByUserID(ctx, "u1", "s3")
	check("deleteSessionsByUserId", err, nil)
	if n != 1 {
		t.Errorf("deleteSessionsByUserId = %d, want 1", n)
	}
	unl, err := a.UnlinkAccount(ctx, account.Key())
	check("unlinkAccount", err, nil)
	if unl == nil {
		t.Error("unlinkAccount = nil")
	}
	if _, err := a.LinkAccount(ctx, account); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateSession(ctx, session); err != nil {
		t.Fatal(err)
	}
	c.reset()
	gone, err := a.DeleteUser(ctx, "u1")
	check("deleteUser", err, nil)
	if gone == nil {
		t.Error("deleteUser = nil")
	}
	// The one DELETE cascaded.
	if acc, _ := a.GetAccount(ctx, "gh1", "github"); acc != nil {
		t.Error("deleteUser left the account")
	}
	if au, _ := a.GetAuthenticator(ctx, "c1"); au != nil {
		t.Error("deleteUser left the authenticator")
	}
	if su, _ := a.GetSessionAndUser(ctx, "s1"); su != nil {
		t.Error("deleteUser left the session")
	}
	for op := range want {
		if !seen[op] && (op != "getUserByUsername" || q.keepsUsernames()) && (op != "swapPasswordHash" || q.keepsPasswords()) {
			t.Errorf("operation %s was not counted", op)
		}
	}
}

// TestConformanceWithoutReturning runs the suite on the transactional
// paths the adapter takes where a server has no RETURNING (MySQL, MariaDB
// < 10.5, SQLite < 3.35), on the servers at hand.
func TestConformanceWithoutReturning(t *testing.T) {
	t.Parallel()
	runVariant(t, "without_returning", []string{"mysql", "sqlite"}, withoutReturning())
}

// TestConformancePgxSimpleProtocol runs the suite on PostgreSQL through
// pgx's simple protocol (parameters interpolated client-side, no prepared
// statements), as behind PgBouncer in transaction mode.
func TestConformancePgxSimpleProtocol(t *testing.T) {
	t.Parallel()
	conformance.Run(t, conformance.Harness{
		Name:     "postgres_simple_protocol",
		Parallel: true, // each test has a schema of its own
		New: func(t testing.TB) conformance.Fixture {
			db := openPostgresWith(t, false, map[string]string{"default_query_exec_mode": "simple_protocol"})
			a := migrated(t, db)
			return fixture(t, a, db)
		},
	})
}
