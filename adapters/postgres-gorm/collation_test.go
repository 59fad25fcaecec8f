package gormadapter

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// TestMySQLCaseInsensitiveCollation: on the real MariaDB, tables created
// with utf8mb4_unicode_ci (an existing schema of the common kind) are
// refused by New, with an error naming each key column, its collation and
// the ALTER TABLE that fixes it; WithCaseInsensitiveCollation accepts them
// (and then a session token matches across case, which is why it is not the
// default); after the ALTER statements of the error, New accepts the schema
// and the token matches exactly.
func TestMySQLCaseInsensitiveCollation(t *testing.T) {
	db := openMySQL(t, false)
	ctx := context.Background()
	probe := mustNew(t, db, WithCaseInsensitiveCollation())
	bin := regexp.MustCompile(`COLLATE=utf8mb4_[a-z0-9_]*bin`)
	for _, s := range probe.DDL() {
		if _, err := db.sqlDB.ExecContext(ctx, bin.ReplaceAllString(s, "COLLATE=utf8mb4_unicode_ci")); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	_, err := New(context.Background(), db.gdb)
	if err == nil {
		t.Fatal("New accepted key columns with collation utf8mb4_unicode_ci")
	}
	msg := err.Error()
	t.Logf("New: %v", err)
	var fixes []string
	for _, tc := range probe.exactColumns() {
		want := "column " + tc[1] + " of table " + tc[0] + " has collation utf8mb4_unicode_ci"
		if !strings.Contains(msg, want) {
			t.Errorf("error does not say %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`fix: (ALTER TABLE [^;]*);`).FindAllStringSubmatch(msg, -1) {
		fixes = append(fixes, m[1])
	}
	if len(fixes) != len(probe.exactColumns()) {
		t.Fatalf("error gives %d fixes, want one per key column (%d)", len(fixes), len(probe.exactColumns()))
	}

	// Accepted knowingly: Auth.js's behaviour on such a schema.
	ci, err := New(context.Background(), db.gdb, WithCaseInsensitiveCollation())
	if err != nil {
		t.Fatalf("New with WithCaseInsensitiveCollation: %v", err)
	}
	if _, err := ci.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ci.CreateSession(ctx, core.Session{SessionToken: "Token-AbC", UserID: "u1", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if su, err := ci.GetSessionAndUser(ctx, "token-abc"); err != nil || su == nil {
		t.Fatalf("with utf8mb4_unicode_ci the token in other case = %+v, %v; expected it to match (the reason for the check)", su, err)
	}

	// The fixes the error gives make the schema acceptable and exact.
	for _, f := range fixes {
		if _, err := db.sqlDB.ExecContext(ctx, f); err != nil {
			t.Fatalf("the fix %q: %v", f, err)
		}
	}
	a, err := New(context.Background(), db.gdb)
	if err != nil {
		t.Fatalf("New after the fixes: %v", err)
	}
	if su, err := a.GetSessionAndUser(ctx, "token-abc"); err != nil || su != nil {
		t.Fatalf("after the fixes the token in other case = %+v, %v; want no session", su, err)
	}
	if su, err := a.GetSessionAndUser(ctx, "Token-AbC"); err != nil || su == nil {
		t.Fatalf("after the fixes the token = %+v, %v; want the session", su, err)
	}
}
