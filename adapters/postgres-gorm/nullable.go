package gormadapter

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
)

// Making the users table's e-mail column nullable (Migrate), for tables
// made when every user had an address: the adapter's own schema before
// users without one were allowed, and Auth.js's Kysely tables.

// allowNoEmail makes the users table's e-mail column nullable where it is
// NOT NULL; a table without it, or where it is nullable, is left alone.
func (a *Adapter) allowNoEmail(ctx context.Context) error {
	table, col := a.names.Users, a.names.User.Email
	switch {
	case a.d.postgres():
		var notNull bool
		err := a.db.QueryRowContext(ctx, `SELECT attnotnull FROM pg_attribute
			WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped`, a.d.table(table), col).Scan(&notNull)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !notNull) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading whether %s.%s is NOT NULL: %w", table, col, err)
		}
		ddl := "ALTER TABLE " + a.d.table(table) + " ALTER COLUMN " + a.d.ident(col) + " DROP NOT NULL"
		if _, err := a.db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("%s: %w", ddl, err)
		}
		return nil
	case a.d.mysql():
		return a.mysqlAllowNull(ctx, table, col)
	}
	return a.sqliteAllowNull(ctx, table, col)
}

// mysqlAllowNull is allowNoEmail on MySQL and MariaDB: MODIFY the column
// with its type, character set, collation and comment as they are, and
// NULL. A column with a default is refused (its text differs between MySQL
// and MariaDB): the error gives the statement to complete by hand.
func (a *Adapter) mysqlAllowNull(ctx context.Context, table, col string) error {
	var typ, nullable, charset, coll, comment string
	var hasDefault bool
	err := a.db.QueryRowContext(ctx, `SELECT COLUMN_TYPE, IS_NULLABLE, COALESCE(CHARACTER_SET_NAME, ''), COALESCE(COLLATION_NAME, ''),
		COLUMN_DEFAULT IS NOT NULL, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE `+mysqlColumnOf(table, col)).
		Scan(&typ, &nullable, &charset, &coll, &hasDefault, &comment)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && nullable != "NO") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading whether %s.%s is NOT NULL: %w", table, col, err)
	}
	ddl := "ALTER TABLE " + a.d.table(table) + " MODIFY " + a.d.ident(col) + " " + typ
	if charset != "" {
		ddl += " CHARACTER SET " + charset
	}
	if coll != "" {
		ddl += " COLLATE " + coll
	}
	ddl += " NULL"
	if hasDefault {
		return fmt.Errorf("column %s of table %s is NOT NULL with a default: make it nullable yourself, keeping the default: %s DEFAULT …", col, table, ddl)
	}
	if comment != "" {
		ddl += " COMMENT '" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(comment) + "'"
	}
	if _, err := a.db.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("%s: %w", ddl, err)
	}
	return nil
}

// sqliteAllowNull is allowNoEmail on SQLite, which cannot change a
// column's constraints in place: the table is rebuilt, as SQLite's
// documentation describes it (ALTER TABLE, "making other kinds of table
// schema changes"), on one connection held for it:
//
//  1. PRAGMA foreign_keys = OFF on that connection (a no-op inside a
//     transaction, so before it): with them on, DROP TABLE would delete
//     the rows of every table that references this one ON DELETE CASCADE
//     (accounts, sessions, authenticators);
//  2. in one transaction: CREATE TABLE of a copy whose definition is the
//     stored one with the column's NOT NULL removed, INSERT … SELECT of
//     every row, DROP TABLE, ALTER TABLE … RENAME of the copy to the
//     table's name, and the table's indexes and triggers again (DROP
//     TABLE dropped them);
//  3. foreign keys back on (or the connection is discarded).
//
// gorm's own SQLite Migrator.AlterColumn is not used: it turns foreign
// keys off with a statement on whichever pooled connection runs it, not
// necessarily the one of its transaction (whose DROP TABLE then cascades),
// and it does not recreate the table's indexes.
func (a *Adapter) sqliteAllowNull(ctx context.Context, table, col string) error {
	schema, name := "main", table
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		schema, name = table[:i], table[i+1:]
	}
	master := a.d.ident(schema) + ".sqlite_master"
	var ddl string
	err := a.db.QueryRowContext(ctx, "SELECT sql FROM "+master+" WHERE type = 'table' AND name = ?", name).Scan(&ddl)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the definition of table %s: %w", table, err)
	}
	body, changed, err := dropNotNull(ddl, col)
	if err != nil || !changed {
		return err
	}
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var fk int
	if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return err
	}
	if fk == 1 {
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return err
		}
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON"); err != nil {
				// Never hand the pool a connection without foreign keys.
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	err = rebuildTable(ctx, tx, &a.d, master, schema, name, body)
	if err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("making %s.%s nullable (rebuilding the table): %w", table, col, err)
	}
	return tx.Commit()
}

// rebuildTable replaces table name of schema with a copy whose column
// definitions are body ("(…)"), in tx: see sqliteAllowNull.
func rebuildTable(ctx context.Context, tx *sql.Tx, d *dialect, master, schema, name, body string) error {
	// The table's own indexes and triggers, read before they are dropped;
	// the automatic indexes of its UNIQUE constraints (sql NULL) come back
	// with the copy's definition.
	rows, err := tx.QueryContext(ctx, "SELECT sql FROM "+master+" WHERE type IN ('index', 'trigger') AND tbl_name = ? AND sql IS NOT NULL", name)
	if err != nil {
		return err
	}
	var after []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		after = append(after, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	q := d.ident(schema) + "."
	tmp := name + "__authport_rebuild"
	stmts := append([]string{
		"CREATE TABLE " + q + d.ident(tmp) + " " + body,
		"INSERT INTO " + q + d.ident(tmp) + " SELECT * FROM " + q + d.ident(name),
		"DROP TABLE " + q + d.ident(name),
		"ALTER TABLE " + q + d.ident(tmp) + " RENAME TO " + d.ident(name),
	}, after...)
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// dropNotNull returns the column definitions of the CREATE TABLE
// statement ddl (the parenthesised list and what follows it, such as
// WITHOUT ROWID) with the NOT NULL constraint of column col removed, and
// whether there was one. Quoted names and strings, comments and nested
// parentheses are skipped as SQLite's tokenizer would.
func dropNotNull(ddl, col string) (string, bool, error) {
	toks := sqlTokens(ddl)
	open := -1
	for i, t := range toks {
		if t.text == "(" {
			open = i
			break
		}
	}
	if open < 0 {
		return "", false, fmt.Errorf("no column list in %q", ddl)
	}
	body := ddl[toks[open].start:]
	// The column definitions: the tokens between top-level commas.
	depth, defStart := 0, open+1
	for i := open + 1; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
			continue
		case ")":
			if depth > 0 {
				depth--
				continue
			}
		case ",":
			if depth > 0 {
				continue
			}
		default:
			continue
		}
		def := toks[defStart:i]
		if len(def) > 0 && strings.EqualFold(unquoteIdent(def[0].text), col) {
			nested := 0 // a CHECK's "IS NOT NULL" is not the column's constraint
			for j := 1; j+1 < len(def); j++ {
				switch def[j].text {
				case "(":
					nested++
				case ")":
					nested--
				}
				if nested == 0 && strings.EqualFold(def[j].text, "NOT") && strings.EqualFold(def[j+1].text, "NULL") {
					from, to := def[j].start, def[j+1].end
					base := toks[open].start
					return body[:from-base] + body[to-base:], true, nil
				}
			}
			return body, false, nil
		}
		if toks[i].text == ")" {
			break
		}
		defStart = i + 1
	}
	return "", false, fmt.Errorf("no column %q in %q", col, ddl)
}

// sqlToken is one token of a SQL statement and its byte span.
type sqlToken struct {
	text       string
	start, end int
}

// sqlTokens splits SQLite SQL into tokens: quoted names and strings
// ('…', "…", `…`, […]) whole, words, and single punctuation characters;
// whitespace and comments are dropped.
func sqlTokens(s string) []sqlToken {
	var out []sqlToken
	for i := 0; i < len(s); {
		c := s[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
			continue
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			i++
			for i < len(s) {
				if s[i] == end {
					if end != ']' && i+1 < len(s) && s[i+1] == end { // a doubled quote
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
		case isWordByte(c):
			for i < len(s) && isWordByte(s[i]) {
				i++
			}
		default:
			i++
		}
		out = append(out, sqlToken{s[start:i], start, i})
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// unquoteIdent returns a SQLite identifier token without its quotes.
func unquoteIdent(t string) string {
	if len(t) >= 2 {
		switch q := t[0]; q {
		case '"', '`':
			if t[len(t)-1] == q {
				return strings.ReplaceAll(t[1:len(t)-1], string([]byte{q, q}), string(q))
			}
		case '[':
			if t[len(t)-1] == ']' {
				return t[1 : len(t)-1]
			}
		}
	}
	return t
}
