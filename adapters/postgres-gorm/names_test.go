package gormadapter

import (
	"context"
	"testing"

	"github.com/authport/authport/core"
)

// prismaNames are Auth.js's Prisma schema names (model names as tables),
// with the two account columns that schema lacks omitted.
func prismaNames(schema string) Names {
	q := func(t string) string {
		if schema == "" {
			return t
		}
		return schema + "." + t
	}
	return Names{
		Users: q("User"), Accounts: q("Account"), Sessions: q("Session"),
		VerificationTokens: q("VerificationToken"), Authenticators: q("Authenticator"), Factors: Omit,
		User:    UserColumns{Username: Omit},
		Account: AccountColumns{ExpiresIn: Omit, AuthorizationDetails: Omit, Password: Omit},
		Session: sessionColumnsOmitted(),
	}
}

// TestCustomNames runs every operation against tables and columns with
// other names (schema-qualified on PostgreSQL), and checks that Migrate
// created them under those names and that omitted columns read back nil.
func TestCustomNames(t *testing.T) {
	ctx := context.Background()
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			db := openDB(t, backend, true)
			schema := ""
			if backend == "postgres" {
				schema = db.name
			}
			a := migrated(t, db, WithNames(prismaNames(schema)))
			runCounted(t, a, db.counter, expectedCounts(a.d.deleteReturning, a.d.updateReturning))

			var tables []string
			var q string
			switch backend {
			case "postgres":
				q = "SELECT table_name FROM information_schema.tables WHERE table_schema = '" + db.name + "' ORDER BY 1"
			case "mysql":
				q = "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '" + db.name + "' ORDER BY 1"
			case "sqlite":
				q = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1"
			}
			rows, err := db.sqlDB.QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					t.Fatal(err)
				}
				tables = append(tables, n)
			}
			rows.Close()
			want := []string{"Account", "Authenticator", "Session", "User", "VerificationToken"}
			if len(tables) != len(want) {
				t.Fatalf("tables = %q, want %q", tables, want)
			}
			for i := range want {
				if tables[i] != want[i] {
					t.Errorf("tables = %q, want %q", tables, want)
				}
			}

			if _, err := a.CreateUser(ctx, core.User{ID: "u9", Email: "u9@example.com"}); err != nil {
				t.Fatal(err)
			}
			in := int64(60)
			acc := core.Account{UserID: "u9", Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "x",
				ExpiresIn: &in, AuthorizationDetails: []core.AuthorizationDetail{}, Scope: ptr("s")}
			linked, err := a.LinkAccount(ctx, acc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.GetAccount(ctx, "x", "p")
			if err != nil || got == nil {
				t.Fatalf("getAccount: %v, %v", got, err)
			}
			for _, g := range []*core.Account{linked, got} {
				if g.ExpiresIn != nil || g.AuthorizationDetails != nil || g.Scope == nil || *g.Scope != "s" {
					t.Errorf("account with omitted columns = %+v, want ExpiresIn and AuthorizationDetails nil, Scope kept", g)
				}
			}
		})
	}
}
