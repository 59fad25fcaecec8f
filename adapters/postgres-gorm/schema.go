package gormadapter

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"
)

//go:embed schema/*.sql
var schemaFiles embed.FS

// SchemaSQL returns the shipped DDL for a database, with the default
// names: "postgres" (schema/postgres.sql), "mariadb" (schema/mariadb.sql)
// or "mysql" (MySQL ≥ 8.0: schema/mariadb.sql with MySQL 8's no-pad binary
// collation, utf8mb4_0900_bin, in place of MariaDB's utf8mb4_nopad_bin;
// the two dialects agree on everything else). The text holds
// ";"-terminated statements and "--" comments (with no ";" in them), and
// creates the same schema as [Adapter.Migrate]; apply it with psql, the
// mysql client or your own migration tool.
func SchemaSQL(database string) (string, error) {
	file := database
	switch database {
	case "postgres", "mariadb":
	case "mysql":
		file = "mariadb"
	default:
		return "", fmt.Errorf("gormadapter: no shipped schema for %q (want postgres, mariadb or mysql)", database)
	}
	b, err := schemaFiles.ReadFile("schema/" + file + ".sql")
	if err != nil {
		return "", fmt.Errorf("gormadapter: %w", err)
	}
	if database == "mysql" {
		mysql := &dialect{name: "mysql", version: "8.0"}
		return strings.ReplaceAll(string(b), (&dialect{name: "mysql", mariadb: true}).mysqlCollation(), mysql.mysqlCollation()), nil
	}
	return string(b), nil
}

// column is one column of the generated DDL.
type column struct {
	name string
	typ  colType
	null bool
}

type colType int

const (
	tKey   colType = iota // a short string that is part of a key or index
	tLong                 // a long key string (WebAuthn credential id)
	tText                 // an unindexed string
	tTime                 // a timestamp
	tInt                  // a 64-bit integer
	tBool                 // a boolean
	tBytes                // bytes (a factor's secret)
)

func (d *dialect) colType(t colType) string {
	switch d.name {
	case "postgres":
		return [...]string{"TEXT", "TEXT", "TEXT", "TIMESTAMPTZ(3)", "BIGINT", "BOOLEAN", "BYTEA"}[t]
	case "mysql":
		return [...]string{"VARCHAR(255)", "VARCHAR(768)", "TEXT", "DATETIME(3)", "BIGINT", "BOOLEAN", "BLOB"}[t]
	}
	if t == tTime && d.sqliteTimes == SQLiteTimeUnixMilli {
		return "INTEGER"
	}
	if d.shape.baTypes {
		// As Better Auth's migrate makes them on SQLite.
		switch t {
		case tTime:
			return "DATE"
		case tBool:
			return "INTEGER"
		}
	}
	return [...]string{"TEXT", "TEXT", "TEXT", "DATETIME", "INTEGER", "BOOLEAN", "BLOB"}[t]
}

// mysqlCollation is the binary, no-pad collation the MySQL tables use, so
// that strings compare exactly, byte for byte, with trailing spaces
// significant: MariaDB's utf8mb4_nopad_bin, MySQL 8's utf8mb4_0900_bin, and
// utf8mb4_bin (which pads) on older servers.
func (d *dialect) mysqlCollation() string {
	switch {
	case d.mariadb:
		return "utf8mb4_nopad_bin"
	case versionAtLeast(d.version, 8, 0):
		return "utf8mb4_0900_bin"
	}
	return "utf8mb4_bin"
}

// table is one table of the generated DDL.
type tableDef struct {
	name   string
	cols   []column
	pk     []string
	unique []string // a single-column unique constraint, or none
	// uniqueKey is a unique constraint on these columns together, or none
	// (the natural key of a table keyed by a row id column).
	uniqueKey []string
	fk        string // the userId column referencing users, or none
	// fkType, when not "", is the fk column's type in place of its
	// column type's (see factorUserIDType).
	fkType  string
	indexes []string // single-column indexes
}

// tableDefs are the tables of the DDL; userIDType, when not "", is the type
// of the factors table's userId column (see factorUserIDType).
func (a *Adapter) tableDefs(userIDType string) []tableDef {
	n := a.names
	sh := a.d.shape
	expiryType := tInt
	if sh.expiryTime {
		expiryType = tTime
	}
	var accountCols []column
	for _, c := range []column{
		{n.Account.UserID, tKey, false}, {n.Account.Type, tKey, false},
		{n.Account.Provider, tKey, false}, {n.Account.ProviderAccountID, tKey, false},
		{n.Account.AccessToken, tText, true}, {n.Account.AuthorizationDetails, tText, true},
		{n.Account.ExpiresAt, expiryType, true}, {n.Account.ExpiresIn, tInt, true},
		{n.Account.IDToken, tText, true}, {n.Account.RefreshToken, tText, true},
		{n.Account.Scope, tText, true}, {n.Account.TokenType, tText, true},
		{n.Account.SessionState, tText, true}, {n.Account.Password, tText, true},
	} {
		if c.name != Omit {
			accountCols = append(accountCols, c)
		}
	}
	// The e-mail address and the username are nullable (a user may have
	// neither) and unique: a unique index holds any number of NULLs on
	// PostgreSQL, MySQL/MariaDB and SQLite.
	users := tableDef{
		name: n.Users,
		cols: []column{{n.User.ID, tKey, false}, {n.User.Email, tKey, !sh.requireEmail},
			verifiedColumn(n.User.EmailVerified, sh), {n.User.Name, tText, !sh.requireEmail}, {n.User.Image, tText, true}},
		pk:     []string{n.User.ID},
		unique: []string{n.User.Email},
	}
	if n.User.Username != Omit {
		users.cols = append(users.cols, column{n.User.Username, tKey, true})
		users.unique = append(users.unique, n.User.Username)
	}
	defs := []tableDef{
		users,
		{
			name:    n.Accounts,
			cols:    accountCols,
			pk:      []string{n.Account.Provider, n.Account.ProviderAccountID},
			fk:      n.Account.UserID,
			indexes: []string{n.Account.UserID},
		},
		{
			name: n.Sessions,
			cols: append([]column{{n.Session.SessionToken, tKey, false}, {n.Session.UserID, tKey, false},
				{n.Session.Expires, tTime, false}}, a.metadataColumns()...),
			pk:      []string{n.Session.SessionToken},
			fk:      n.Session.UserID,
			indexes: []string{n.Session.UserID, n.Session.Expires},
		},
		{
			name: n.VerificationTokens,
			cols: []column{{n.VerificationToken.Identifier, tKey, false}, {n.VerificationToken.Token, tKey, false},
				{n.VerificationToken.Expires, tTime, false}},
			pk:      []string{n.VerificationToken.Identifier, n.VerificationToken.Token},
			indexes: []string{n.VerificationToken.Expires},
		},
		{
			name: n.Authenticators,
			cols: []column{{n.Authenticator.CredentialID, tLong, false}, {n.Authenticator.UserID, tKey, false},
				{n.Authenticator.ProviderAccountID, tKey, false}, {n.Authenticator.CredentialPublicKey, tText, false},
				{n.Authenticator.Counter, tInt, false}, {n.Authenticator.CredentialDeviceType, tKey, false},
				{n.Authenticator.CredentialBackedUp, tBool, false}, {n.Authenticator.Transports, tText, true}},
			pk:      []string{n.Authenticator.CredentialID},
			fk:      n.Authenticator.UserID,
			indexes: []string{n.Authenticator.UserID},
		},
		{
			// The secret is bytes, NOT NULL: none is zero bytes, so that
			// swapFactor's "secret = ?" compares it too.
			name: n.Factors,
			cols: []column{{n.Factor.ID, tKey, false}, {n.Factor.UserID, tKey, false},
				{n.Factor.Type, tKey, false}, {n.Factor.Name, tText, false}, {n.Factor.Secret, tBytes, false},
				{n.Factor.Step, tInt, false}, {n.Factor.CreatedAt, tTime, false}, {n.Factor.LastUsedAt, tTime, true}},
			pk:      []string{n.Factor.ID},
			fk:      n.Factor.UserID,
			fkType:  userIDType,
			indexes: []string{n.Factor.UserID},
		},
	}
	// defs[i] is Table(i+1).
	var out []tableDef
	for i := range defs {
		st := a.stamps[i+1]
		for _, c := range []string{st.created, st.updated} {
			if c != "" {
				defs[i].cols = append(defs[i].cols, column{c, tTime, false})
			}
		}
		for _, c := range sh.extraTimes[i+1] {
			defs[i].cols = append(defs[i].cols, column{c, tTime, true})
		}
		if st.id != "" {
			// Keyed by the row id; the natural key stays unique, but for
			// verification values, which Better Auth keys by identifier
			// alone (an index) and whose value may be long text.
			defs[i].cols = append([]column{{st.id, tKey, false}}, defs[i].cols...)
			if Table(i+1) == TableVerificationTokens {
				defs[i].indexes = append([]string{n.VerificationToken.Identifier}, defs[i].indexes...)
				for j := range defs[i].cols {
					if defs[i].cols[j].name == n.VerificationToken.Token {
						defs[i].cols[j].typ = tText
					}
				}
			} else {
				defs[i].uniqueKey = defs[i].pk
			}
			defs[i].pk = []string{st.id}
		}
		if a.noFK {
			defs[i].fk = ""
		}
		if defs[i].name != Omit { // the authenticators or factors table
			out = append(out, defs[i])
		}
	}
	return out
}

// verifiedColumn is the users table's emailVerified column: a nullable
// time, or Better Auth's NOT NULL boolean.
func verifiedColumn(name string, sh shape) column {
	if sh.boolVerified {
		return column{name, tBool, false}
	}
	return column{name, tTime, true}
}

// metadataColumns are the session metadata columns the adapter is
// configured with (those not [Omit]): nullable, but for the timestamp
// columns of WithTimestampColumns that they are (NOT NULL).
func (a *Adapter) metadataColumns() []column {
	var out []column
	for i, c := range a.meta.cols {
		if c == Omit {
			continue
		}
		typ, null := tText, true
		if i < 2 {
			typ, null = tTime, !a.meta.stamped[i]
		}
		out = append(out, column{c, typ, null})
	}
	return out
}

// baseName is a table name without its schema qualifier, used in the
// names of constraints and indexes.
func baseName(table string) string {
	return table[strings.LastIndexByte(table, '.')+1:]
}

// DDL returns the statements [Adapter.Migrate] runs, for the adapter's
// dialect and names. Every statement is idempotent (IF NOT EXISTS). (On a
// database whose users table exists with an id column of another type,
// Migrate gives the factors table's userId column that type; see
// [WithFactorsTable].)
func (a *Adapter) DDL() []string { return a.ddl("") }

// ddl is DDL with the factors table's userId column of type userIDType
// (when not "").
func (a *Adapter) ddl(userIDType string) []string {
	d := &a.d
	id := d.ident
	list := func(cols []string) string {
		q := make([]string, len(cols))
		for i, c := range cols {
			q[i] = id(c)
		}
		return strings.Join(q, ", ")
	}
	var stmts, after []string
	for _, t := range a.tableDefs(userIDType) {
		base := baseName(t.name)
		var lines []string
		for _, c := range t.cols {
			typ := d.colType(c.typ)
			if t.fkType != "" && c.name == t.fk {
				typ = t.fkType
			}
			l := id(c.name) + " " + typ
			if !c.null {
				l += " NOT NULL"
			}
			lines = append(lines, l)
		}
		lines = append(lines, "CONSTRAINT "+id(base+"_pkey")+" PRIMARY KEY ("+list(t.pk)+")")
		for _, u := range t.unique {
			lines = append(lines, "CONSTRAINT "+id(base+"_"+u+"_key")+" UNIQUE ("+id(u)+")")
		}
		if len(t.uniqueKey) > 0 {
			lines = append(lines, "CONSTRAINT "+id(base+"_"+strings.Join(t.uniqueKey, "_")+"_key")+" UNIQUE ("+list(t.uniqueKey)+")")
		}
		if t.fk != "" {
			lines = append(lines, "CONSTRAINT "+id(base+"_"+t.fk+"_fkey")+" FOREIGN KEY ("+id(t.fk)+") REFERENCES "+
				d.table(a.names.Users)+" ("+id(a.names.User.ID)+") ON DELETE CASCADE")
		}
		for _, ix := range t.indexes {
			if d.mysql() {
				// MySQL has no CREATE INDEX IF NOT EXISTS: index inline.
				lines = append(lines, "INDEX "+id(base+"_"+ix+"_idx")+" ("+id(ix)+")")
				continue
			}
			after = append(after, "CREATE INDEX IF NOT EXISTS "+id(base+"_"+ix+"_idx")+" ON "+d.table(t.name)+" ("+id(ix)+")")
		}
		s := "CREATE TABLE IF NOT EXISTS " + d.table(t.name) + " (\n  " + strings.Join(lines, ",\n  ") + "\n)"
		if d.mysql() {
			s += " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=" + d.mysqlCollation()
		}
		stmts = append(stmts, s)
	}
	return append(stmts, after...)
}

// Migrate creates the tables, constraints and indexes the adapter needs,
// with the configured names, where they do not exist yet; it leaves
// existing ones alone (it does not alter a table that differs), with these
// exceptions, which bring a table made by an earlier version (or by
// Auth.js) up to what the adapter keeps:
//
//   - to an existing sessions table that lacks the session metadata
//     columns ([SessionColumns]: createdAt, updatedAt, ipAddress,
//     userAgent by default) it adds them, nullable (ALTER TABLE … ADD
//     COLUMN);
//   - to an existing users table that lacks the username column
//     ([UserColumns.Username], "username" by default) it adds it,
//     nullable, with a unique index; to an existing accounts table that
//     lacks the password hash column ([AccountColumns.Password],
//     "password") it adds it, nullable;
//   - an e-mail column that is NOT NULL (the schema before users without
//     an address were allowed, Auth.js's Kysely tables) is made nullable:
//     ALTER COLUMN … DROP NOT NULL on PostgreSQL, MODIFY with the same
//     type and collation on MySQL/MariaDB, and on SQLite, which cannot
//     alter a column, the table is rebuilt: in one transaction, on one
//     connection with foreign keys off, a copy with the column nullable
//     replaces it, its rows, indexes and triggers kept; the rows of other
//     tables that reference it are untouched.
//
// A database made before second factors gets the factors table (with the
// configured names; none when [Names.Factors] is [Omit], as in the Auth.js
// presets unless [WithFactorsTable] names one). Its userId column has the
// type of the users table's id column where that table exists with
// another type (Auth.js's Kysely schema has uuid ids on PostgreSQL, and on
// MySQL/MariaDB its own collation), so that the foreign key can be made.
//
// On PostgreSQL and SQLite the creation runs in one transaction; MySQL
// commits each statement itself. The timestamp columns of
// [WithTimestampColumns] are created too; with [WithoutForeignKeys] no
// foreign keys are.
func (a *Adapter) Migrate(ctx context.Context) error {
	if err := a.enter(); err != nil {
		return err
	}
	defer a.leave()
	userIDType, err := a.factorUserIDType(ctx)
	if err != nil {
		return fmt.Errorf("gormadapter: migrate: %w", err)
	}
	stmts := a.ddl(userIDType)
	run := func(ex func(context.Context, string, ...any) (sql.Result, error)) error {
		for _, s := range stmts {
			if _, err := ex(ctx, s); err != nil {
				return fmt.Errorf("gormadapter: migrate: %w", err)
			}
		}
		return nil
	}
	if a.d.mysql() {
		if err := run(a.db.ExecContext); err != nil {
			return err
		}
	} else {
		tx, err := a.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("gormadapter: migrate: %w", err)
		}
		if err := run(tx.ExecContext); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("gormadapter: migrate: %w", err)
		}
	}
	if err := a.addMetadataColumns(ctx); err != nil {
		return fmt.Errorf("gormadapter: migrate: %w", err)
	}
	if err := a.addCredentialColumns(ctx); err != nil {
		return fmt.Errorf("gormadapter: migrate: %w", err)
	}
	if !a.d.shape.requireEmail { // Better Auth's e-mail column stays NOT NULL
		if err := a.allowNoEmail(ctx); err != nil {
			return fmt.Errorf("gormadapter: migrate: %w", err)
		}
	}
	if _, err := a.refreshUserColumns(ctx); err != nil {
		return fmt.Errorf("gormadapter: migrate: %w", err)
	}
	return nil
}

// factorUserIDType returns the type the factors table's userId column
// needs for its foreign key to the users table's id, when that is not the
// type Migrate would give it: the id column's type on PostgreSQL (uuid in
// Auth.js's Kysely schema), its type, character set and collation on
// MySQL/MariaDB (which want all three to match). "" when the factors table
// exists or is omitted, the schema has no foreign keys, the users table
// does not exist yet, or on SQLite, whose foreign keys ignore types.
func (a *Adapter) factorUserIDType(ctx context.Context) (string, error) {
	if a.names.Factors == Omit || a.noFK || a.d.sqlite() {
		return "", nil
	}
	if have, err := a.tableColumns(ctx, a.names.Factors); err != nil || len(have) > 0 {
		return "", err
	}
	table, col := a.names.Users, a.names.User.ID
	if a.d.postgres() {
		all, err := a.tableColumns(ctx, table)
		if err != nil {
			return "", fmt.Errorf("reading the columns of table %s: %w", table, err)
		}
		for _, c := range all {
			if c[0] == col && c[1] != "text" {
				return c[1], nil
			}
		}
		return "", nil
	}
	var typ, charset, coll string
	err := a.db.QueryRowContext(ctx, `SELECT COLUMN_TYPE, COALESCE(CHARACTER_SET_NAME, ''), COALESCE(COLLATION_NAME, '')
		FROM information_schema.COLUMNS WHERE `+mysqlColumnOf(table, col)).Scan(&typ, &charset, &coll)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the type of %s.%s: %w", table, col, err)
	}
	if strings.EqualFold(typ, a.d.colType(tKey)) && (coll == "" || coll == a.d.mysqlCollation()) {
		return "", nil
	}
	if charset != "" && coll != "" {
		typ += " CHARACTER SET " + charset + " COLLATE " + coll
	}
	return typ, nil
}

// addMetadataColumns adds to the sessions table the configured metadata
// columns it lacks, nullable (a table that has rows cannot take a NOT NULL
// column without a default).
func (a *Adapter) addMetadataColumns(ctx context.Context) error {
	have, err := a.discoverSessionMeta(ctx)
	if err != nil {
		return err
	}
	for i, c := range a.meta.cols {
		if c == Omit || have.cols[i] != Omit {
			continue
		}
		typ := tText
		if i < 2 {
			typ = tTime
		}
		if err := a.addColumn(ctx, a.names.Sessions, column{c, typ, true}, false); err != nil {
			return err
		}
	}
	return nil
}

// addCredentialColumns adds the configured username column (unique) to
// the users table and password hash column to the accounts table where
// they lack them, nullable.
func (a *Adapter) addCredentialColumns(ctx context.Context) error {
	if c := a.names.User.Username; c != Omit {
		if err := a.addColumn(ctx, a.names.Users, column{c, tKey, true}, true); err != nil {
			return err
		}
	}
	if c := a.names.Account.Password; c != Omit {
		return a.addColumn(ctx, a.names.Accounts, column{c, tText, true}, false)
	}
	return nil
}

// addColumn adds the nullable column c to table unless it has it; unique
// gives it a unique index, named as Migrate names the one of a table it
// creates (<table>_<column>_key). Another Migrate adding the same column
// at once is no error: PostgreSQL and MariaDB add it IF NOT EXISTS, and
// on MySQL and SQLite a column found afterwards is taken as added.
func (a *Adapter) addColumn(ctx context.Context, table string, c column, unique bool) error {
	all, err := a.tableColumns(ctx, table)
	if err != nil {
		return fmt.Errorf("reading the columns of table %s: %w", table, err)
	}
	if a.hasColumn(all, c.name) {
		return nil
	}
	for i, ddl := range a.addColumnStmts(table, c, unique) {
		if _, err := a.db.ExecContext(ctx, ddl); err != nil {
			if again, rerr := a.tableColumns(ctx, table); i == 0 && rerr == nil && a.hasColumn(again, c.name) {
				return nil
			}
			return fmt.Errorf("%s: %w", ddl, err)
		}
	}
	return nil
}

// addColumnStmts are the statements that add the nullable column c to
// table, with a unique index when unique: one ALTER TABLE, and on SQLite
// (whose ADD COLUMN takes no UNIQUE) a CREATE UNIQUE INDEX after it.
func (a *Adapter) addColumnStmts(table string, c column, unique bool) []string {
	d := &a.d
	key := d.ident(baseName(table) + "_" + c.name + "_key")
	ifNot := ""
	if d.postgres() || d.mariadb {
		ifNot = "IF NOT EXISTS "
	}
	add := "ALTER TABLE " + d.table(table) + " ADD COLUMN " + ifNot + d.ident(c.name) + " " + d.colType(c.typ)
	switch {
	case !unique:
		return []string{add}
	case d.postgres():
		return []string{add + " CONSTRAINT " + key + " UNIQUE"}
	case d.mysql():
		return []string{add + ", ADD CONSTRAINT " + key + " UNIQUE (" + d.ident(c.name) + ")"}
	}
	return []string{add, "CREATE UNIQUE INDEX IF NOT EXISTS " + key + " ON " + d.table(table) + " (" + d.ident(c.name) + ")"}
}

// addColumnDDL is addColumnStmts as one text, for error messages.
func (a *Adapter) addColumnDDL(table string, c column, unique bool) string {
	return strings.Join(a.addColumnStmts(table, c, unique), "; ")
}
