package gormadapter

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// WithCaseInsensitiveCollation makes [New] accept, on MySQL and MariaDB, an
// existing schema whose key columns have a collation that does not compare
// exactly (a case- or accent-insensitive one such as utf8mb4_unicode_ci or
// utf8mb4_general_ci, the server defaults). By default New refuses such a
// schema, because then session tokens, verification tokens, e-mail
// addresses, provider account ids and credential ids that differ only in
// case match each other: a session token or a provider's account id of one
// user can find another's. Auth.js's own MySQL adapters run so on such a
// schema; this option is that behaviour, knowingly.
func WithCaseInsensitiveCollation() Option {
	return func(c *config) { c.allowCICollation = true }
}

// exactColumns lists the columns that the adapter compares for equality with
// input and that must therefore compare exactly: table, column.
func (a *Adapter) exactColumns() [][2]string {
	n := a.names
	cols := [][2]string{
		{n.Users, n.User.Email},
		{n.Accounts, n.Account.Provider},
		{n.Accounts, n.Account.ProviderAccountID},
		{n.Sessions, n.Session.SessionToken},
		{n.VerificationTokens, n.VerificationToken.Identifier},
		{n.VerificationTokens, n.VerificationToken.Token},
	}
	if n.Authenticators != Omit {
		cols = append(cols, [2]string{n.Authenticators, n.Authenticator.CredentialID})
	}
	if n.User.Username != Omit {
		cols = append(cols, [2]string{n.Users, n.User.Username})
	}
	return cols
}

// exactCollation reports whether a MySQL collation compares strings
// exactly: a binary one (utf8mb4_bin, utf8mb4_nopad_bin, utf8mb4_0900_bin,
// binary). A column without a collation (a binary string type) has "".
func exactCollation(c string) bool {
	c = strings.ToLower(c)
	return c == "" || c == "binary" || strings.HasSuffix(c, "_bin")
}

// checkCollations refuses, on MySQL and MariaDB, existing key columns whose
// collation does not compare exactly (see [WithCaseInsensitiveCollation]).
// Tables not created yet are not checked ([Adapter.Migrate] creates them
// with a binary collation).
func (a *Adapter) checkCollations(ctx context.Context) error {
	var bad []string
	for _, tc := range a.exactColumns() {
		var typ, nullable, charset, coll string
		err := a.db.QueryRowContext(ctx, `SELECT COLUMN_TYPE, IS_NULLABLE, COALESCE(CHARACTER_SET_NAME, ''), COALESCE(COLLATION_NAME, '')
			FROM information_schema.COLUMNS WHERE `+mysqlColumnOf(tc[0], tc[1])).Scan(&typ, &nullable, &charset, &coll)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the collation of %s.%s: %w", tc[0], tc[1], err)
		}
		if exactCollation(coll) {
			continue
		}
		if charset == "" {
			charset = "utf8mb4"
		}
		fix := fmt.Sprintf("ALTER TABLE %s MODIFY %s %s CHARACTER SET %s COLLATE %s_bin",
			a.d.table(tc[0]), a.d.ident(tc[1]), typ, charset, charset)
		if nullable == "NO" {
			fix += " NOT NULL"
		}
		bad = append(bad, fmt.Sprintf("column %s of table %s has collation %s, which does not compare exactly (values differing in case match); fix: %s;",
			tc[1], tc[0], coll, fix))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("the schema's key columns must compare exactly:\n  %s\n"+
		"(the tables Migrate creates, and a database created with COLLATE utf8mb4_bin, are fine; "+
		"WithCaseInsensitiveCollation accepts the schema as it is, with Auth.js's case-insensitive matching)",
		strings.Join(bad, "\n  "))
}

// mysqlColumnOf returns the condition on information_schema.COLUMNS that
// selects the columns of table ("schema.table", or a table of the current
// database), or only the column named column when it is not "". The names
// are written into the statement as hex literals, which need no escaping
// under any sql_mode, and the statement is sent without arguments: as text,
// not as a prepared statement. MariaDB 10.11 was seen to crash (signal 11,
// freeing the temporary table of an information_schema query) while
// executing these queries as prepared statements under concurrent DDL.
func mysqlColumnOf(table, column string) string {
	schema := "DATABASE()"
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		schema, table = mysqlText(table[:i]), table[i+1:]
	}
	cond := "TABLE_SCHEMA = " + schema + " AND TABLE_NAME = " + mysqlText(table)
	if column != "" {
		cond += " AND COLUMN_NAME = " + mysqlText(column)
	}
	return cond
}

// mysqlText returns s as a MySQL utf8mb4 hex string literal.
func mysqlText(s string) string { return "_utf8mb4 X'" + hex.EncodeToString([]byte(s)) + "'" }
