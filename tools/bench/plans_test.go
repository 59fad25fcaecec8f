package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// TestIndexPlans runs the eight operations and PurgeExpired through the
// adapter on each SQL backend, records every statement it sent, and EXPLAINs each read, update
// and delete with the arguments it ran with: each must find its rows
// through an index (with sequential scans disabled on PostgreSQL, so that
// a missing index shows as a Seq Scan even on a small table), never by
// scanning a table, so that a million users cost what ten thousand do.
func TestIndexPlans(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres", "mysql"} {
		t.Run(name, func(t *testing.T) {
			reachable(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c := &capture{}
			wrap := func(conn driver.Connector) driver.Connector { c.Connector = conn; return c }
			var s *sqlStore
			var err error
			switch name {
			case "sqlite":
				s, err = openSQLite(t.TempDir(), wrap)
			case "postgres":
				s, err = openPostgres(ctx, os.Getenv("AUTHPORT_POSTGRES_URL"), wrap)
			case "mysql":
				s, err = openMySQL(ctx, os.Getenv("AUTHPORT_MYSQL_URL"), wrap)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			const users = 300
			if err := seed(ctx, s.adapter, users); err != nil {
				t.Fatal(err)
			}
			if err := seedListed(ctx, s.adapter, users); err != nil {
				t.Fatal(err)
			}
			if s.dialect == "mysql" {
				for _, tbl := range []string{"users", "accounts", "sessions", "verification_token"} {
					if _, err := s.db.ExecContext(ctx, "ANALYZE TABLE `"+tbl+"`"); err != nil {
						t.Fatal(err)
					}
				}
			}
			before := len(c.taken())
			for _, op := range operations(s.adapter, nil, users) {
				if op.prepare != nil {
					if err := op.prepare(ctx, "adapter", 0, 2); err != nil {
						t.Fatal(err)
					}
				}
				if err := op.adapter(ctx, 1); err != nil {
					t.Fatalf("%s: %v", op.name, err)
				}
			}
			// PurgeExpired's batched DELETEs must find expired rows
			// through the expires indexes, not by reading the table.
			purger, ok := any(s.adapter).(core.ExpiredPurger)
			if !ok {
				t.Fatal("the SQL adapter is no core.ExpiredPurger")
			}
			if _, err := purger.PurgeExpired(ctx); err != nil {
				t.Fatalf("PurgeExpired: %v", err)
			}
			purges := 0
			explained := map[string]bool{}
			for _, st := range c.taken()[before:] {
				verb := strings.ToUpper(strings.Fields(st.query)[0])
				if verb != "SELECT" && verb != "UPDATE" && verb != "DELETE" || explained[st.query] {
					continue
				}
				explained[st.query] = true
				if strings.Contains(st.query, "expires") && verb == "DELETE" && strings.Contains(st.query, "LIMIT") {
					purges++
				}
				args := make([]any, len(st.args))
				for i, a := range st.args {
					args[i] = a.Value
				}
				plan, bad := explain(ctx, t, s, st.query, args)
				if bad != "" {
					t.Errorf("%s does not use an index: %s\nplan:\n%s", st.query, bad, plan)
				} else {
					t.Logf("%s\n%s", st.query, plan)
				}
			}
			// getSessionAndUser, getUserByAccount, updateSession,
			// useVerificationToken and deleteUser at least, and the two
			// purges.
			if len(explained) < 7 || purges != 2 {
				t.Errorf("only %d statements explained, %d of them purges (want 2): %v", len(explained), purges, explained)
			}
		})
	}
}

var mysqlReturning = regexp.MustCompile(`(?s) RETURNING .*$`)

// explain returns the plan of query and, when it scans a table, why.
func explain(ctx context.Context, t *testing.T, s *sqlStore, query string, args []any) (string, string) {
	t.Helper()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rowsOf := func(q string, args []any) [][]string {
		rows, err := conn.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = cols[i] + "=" + v.String
				if !v.Valid {
					row[i] = cols[i] + "=NULL"
				}
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	var plan []string
	switch s.dialect {
	case "postgres":
		if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		defer func() { _, _ = conn.ExecContext(context.Background(), "RESET enable_seqscan") }()
		for _, r := range rowsOf("EXPLAIN "+query, args) {
			plan = append(plan, strings.TrimPrefix(r[0], "QUERY PLAN="))
		}
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "Seq Scan") {
			return text, "a Seq Scan"
		}
		if !strings.Contains(text, "Index") {
			return text, "no index in the plan"
		}
		return text, ""
	case "mysql":
		// MariaDB explains DELETE but not its RETURNING clause.
		q := mysqlReturning.ReplaceAllString(query, "")
		bad := ""
		for _, r := range rowsOf("EXPLAIN "+q, args) {
			plan = append(plan, strings.Join(r, " "))
			line := " " + strings.Join(r, " ") + " "
			if strings.Contains(line, " type=ALL ") || strings.Contains(line, " key=NULL ") {
				bad = "a full scan (type ALL or no key)"
			}
		}
		return strings.Join(plan, "\n"), bad
	default: // sqlite
		bad := ""
		for _, r := range rowsOf("EXPLAIN QUERY PLAN "+query, args) {
			d := strings.TrimPrefix(r[len(r)-1], "detail=")
			plan = append(plan, d)
			if strings.HasPrefix(d, "SCAN ") {
				bad = fmt.Sprintf("%q", d)
			}
		}
		return strings.Join(plan, "\n"), bad
	}
}
