package gormadapter

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// catalogQueries read a schema's columns, constraints and indexes from the
// server's catalog; $1/? is the schema (PostgreSQL) or database (MySQL).
var catalogQueries = map[string][]string{
	"postgres": {
		`SELECT 'column', table_name, ordinal_position::text, column_name, data_type, udt_name,
		        COALESCE(datetime_precision::text, ''), is_nullable, COALESCE(column_default, ''), COALESCE(collation_name, '')
		   FROM information_schema.columns WHERE table_schema = $1`,
		`SELECT 'constraint', cl.relname, c.conname, c.contype::text, pg_get_constraintdef(c.oid)
		   FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid JOIN pg_namespace n ON n.oid = c.connamespace
		  WHERE n.nspname = $1`,
		`SELECT 'index', tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1`,
	},
	"mysql": {
		`SELECT 'table', TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?`,
		`SELECT 'column', TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE,
		        COALESCE(COLUMN_DEFAULT, ''), COALESCE(CHARACTER_SET_NAME, ''), COALESCE(COLLATION_NAME, '')
		   FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?`,
		`SELECT 'constraint', TABLE_NAME, CONSTRAINT_NAME, CONSTRAINT_TYPE
		   FROM information_schema.TABLE_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?`,
		`SELECT 'fk', TABLE_NAME, CONSTRAINT_NAME, REFERENCED_TABLE_NAME, UPDATE_RULE, DELETE_RULE
		   FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?`,
		`SELECT 'keycolumn', TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION, COLUMN_NAME,
		        COALESCE(REFERENCED_TABLE_NAME, ''), COALESCE(REFERENCED_COLUMN_NAME, '')
		   FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = ?`,
		`SELECT 'index', TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, COALESCE(SUB_PART, ''), INDEX_TYPE
		   FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?`,
	},
}

// catalog returns the schema's catalog rows as sorted lines, with the
// schema's own name dropped where it qualifies a table (PostgreSQL prints
// it unless the schema is on the connection's search_path) and replaced by
// "$schema" elsewhere.
func catalog(ctx context.Context, db *sql.DB, dialect, schema string) ([]string, error) {
	var lines []string
	for _, q := range catalogQueries[dialect] {
		rows, err := db.QueryContext(ctx, q, schema)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = strings.ReplaceAll(strings.ReplaceAll(v.String, schema+".", ""), schema, "$schema")
			}
			lines = append(lines, strings.Join(parts, " | "))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	slices.Sort(lines)
	return lines, nil
}

// splitSQL splits a DDL file into statements: "--" comments dropped, then
// split at ";".
func splitSQL(file string) []string {
	var b strings.Builder
	for _, line := range strings.Split(file, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	var out []string
	for _, s := range strings.Split(b.String(), ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// diffLines returns the lines only in a ("-") and only in b ("+").
func diffLines(a, b []string) []string {
	var d []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			d = append(d, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			d = append(d, "+ "+l)
		}
	}
	return d
}

// TestShippedDDLMatchesMigrate applies the shipped SQL file to one fresh
// schema and Migrate to another, and compares the two in the server's
// catalog: columns (types, nullability, defaults, collations), constraints
// (primary keys, unique, foreign keys with their ON DELETE rule) and
// indexes. It also checks the schema has what the adapter relies on, and
// that the comparison does see a difference when there is one.
func TestShippedDDLMatchesMigrate(t *testing.T) {
	for _, tc := range []struct{ backend, file string }{{"postgres", "postgres"}, {"mysql", "mariadb"}} {
		t.Run(tc.backend, func(t *testing.T) {
			ctx := context.Background()
			migrated, mdb := newAdapter(t, tc.backend, false)
			if tc.backend == "mysql" && !migrated.d.mariadb {
				t.Skip("schema/mariadb.sql is for MariaDB; this server is MySQL " + migrated.d.version)
			}
			if err := migrated.Migrate(ctx); err != nil {
				t.Fatalf("a second Migrate: %v", err)
			}
			fdb := openDB(t, tc.backend, false)
			file, err := SchemaSQL(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			stmts := splitSQL(file)
			if len(stmts) < 5 {
				t.Fatalf("schema/%s.sql has %d statements", tc.file, len(stmts))
			}
			for _, s := range stmts {
				if _, err := fdb.sqlDB.ExecContext(ctx, s); err != nil {
					t.Fatalf("schema/%s.sql: %v\n%s", tc.file, err, s)
				}
			}
			want, err := catalog(ctx, mdb.sqlDB, tc.backend, mdb.name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := catalog(ctx, mdb.sqlDB, tc.backend, fdb.name)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffLines(want, got); len(d) > 0 {
				t.Errorf("schema/%s.sql (+) and Migrate (-) differ:\n%s", tc.file, strings.Join(d, "\n"))
			}
			t.Logf("%d catalog rows compared", len(want))

			// What the adapter relies on is there.
			all := strings.Join(want, "\n")
			cascades := strings.Count(all, "ON DELETE CASCADE")
			if tc.backend == "mysql" {
				cascades = strings.Count(all, "| CASCADE")
			}
			if cascades != 4 {
				t.Errorf("%d foreign keys cascade on delete, want 4 (accounts, sessions, authenticators, factors):\n%s", cascades, all)
			}
			for _, name := range []string{"users_email_key", "accounts_pkey", "sessions_pkey", "verification_token_pkey",
				"authenticators_pkey", "factors_pkey", "accounts_userId_idx", "sessions_userId_idx", "authenticators_userId_idx", "factors_userId_idx",
				"sessions_expires_idx", "verification_token_expires_idx"} {
				if !strings.Contains(all, name) && !(tc.backend == "mysql" && strings.HasSuffix(name, "_pkey")) {
					t.Errorf("no %s in the schema", name)
				}
			}

			// The comparison sees a change.
			alter := `ALTER TABLE "sessions" ALTER COLUMN "expires" DROP NOT NULL`
			if tc.backend == "mysql" {
				alter = "ALTER TABLE `sessions` MODIFY `expires` DATETIME(3) NULL"
			}
			if _, err := fdb.sqlDB.ExecContext(ctx, alter); err != nil {
				t.Fatal(err)
			}
			changed, err := catalog(ctx, mdb.sqlDB, tc.backend, fdb.name)
			if err != nil {
				t.Fatal(err)
			}
			if len(diffLines(want, changed)) == 0 {
				t.Error("the catalog comparison did not notice a column made nullable")
			}
		})
	}
}

// TestMySQLFileIsMariaDBFile checks that SchemaSQL("mysql") is
// schema/mariadb.sql with MySQL 8's no-pad binary collation on every table
// (there is no MySQL server here to run it on).
func TestMySQLFileIsMariaDBFile(t *testing.T) {
	maria, err := SchemaSQL("mariadb")
	if err != nil {
		t.Fatal(err)
	}
	my, err := SchemaSQL("mysql")
	if err != nil {
		t.Fatal(err)
	}
	a, b := splitSQL(maria), splitSQL(my)
	if len(a) != len(b) || len(b) == 0 {
		t.Fatalf("mysql: %d statements, mariadb: %d", len(b), len(a))
	}
	for i, s := range b {
		if strings.HasPrefix(s, "CREATE TABLE") && !strings.Contains(s, "COLLATE=utf8mb4_0900_bin") {
			t.Errorf("mysql statement %d lacks MySQL 8's collation: %s", i, s)
		}
	}
	if strings.Contains(my, "nopad") {
		t.Error("the MySQL schema names a MariaDB collation")
	}
	if _, err := SchemaSQL("oracle"); err == nil {
		t.Error("SchemaSQL(oracle) gave no error")
	}
}

// TestShippedDDLCommentsHaveNoSemicolon keeps the files safe for tools
// that split on ";" without reading comments.
func TestShippedDDLCommentsHaveNoSemicolon(t *testing.T) {
	for _, name := range []string{"postgres", "mariadb", "mysql"} {
		file, err := SchemaSQL(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(file, "\n") {
			if c := strings.Index(line, "--"); c >= 0 && strings.Contains(line[c:], ";") {
				t.Errorf("schema/%s.sql:%d: a comment holds a ';'", name, i+1)
			}
		}
	}
}
