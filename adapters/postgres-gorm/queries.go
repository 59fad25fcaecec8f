package gormadapter

import (
	"database/sql"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// statement is one SQL statement, built once at New. When the dialect asks
// for it, it is prepared on first use and the *sql.Stmt kept (database/sql
// then prepares it once per pooled connection).
type statement struct {
	sql      string
	prepared atomic.Pointer[sql.Stmt]
	// mu guards preparing, which is closed when the prepare in progress
	// ends (nil when none is). mu is never held across I/O.
	mu        sync.Mutex
	preparing chan struct{}
}

// queries holds every statement the adapter runs.
type queries struct {
	// names are the adapter's names as the tables have them: a username
	// or password hash column configured but missing from an existing
	// table (one made before it existed, not migrated since) is [Omit]
	// here, neither written nor read.
	names Names

	createUser, getUser, getUserByEmail, getUserByAccount *statement
	// getUserByUsername is nil when the users table keeps no usernames.
	getUserByUsername               *statement
	updateUser, selectUserForUpdate *statement
	deleteUser                      deletion

	linkAccount, getAccount *statement
	unlinkAccount           deletion
	// listAccounts selects a user's accounts; accountColumns are the
	// account columns every account statement returns (NULL for omitted
	// ones).
	listAccounts   *statement
	accountColumns []string
	// accountCols reports which of the optional account columns exist.
	accountCols [numOptionalAccountColumns]bool
	// swapPassword sets an account's password hash where it is the one
	// given last; setPassword where it has none (NULL). Both are nil when
	// the accounts table keeps no password hashes.
	swapPassword, setPassword *statement

	createSession, getSessionAndUser, updateSession, selectSession *statement
	deleteSession                                                  deletion
	// deleteExpiredSession deletes the session with the token if it has
	// expired at the time given second.
	deleteExpiredSession *statement
	// extendSession sets a session's expiry (and updated-at column) where
	// its stored expiry is before the time given last (see ExtendSession).
	extendSession *statement
	// meta is where the sessions table keeps the metadata, as found in
	// the table (see discoverSessionMeta): createSession writes, and
	// listSessions reads, its columns.
	meta sessionMeta
	// listSessions selects a user's sessions that expire after the time
	// given second, with their metadata (NULL for columns not kept).
	listSessions *statement
	// deleteUserSessionsExcept deletes a user's sessions but the one
	// whose token is given second, returning (or locking) their expiries.
	deleteUserSessionsExcept deletion

	createToken *statement
	useToken    deletion

	createAuthenticator, getAuthenticator, listAuthenticators, updateCounter *statement
	// advanceCounter is updateCounter only where the stored counter is
	// below the new one (its last argument, the new counter again).
	advanceCounter *statement

	// The factors table's (all nil when it is omitted): getFactor reads
	// one factor by user and id, swapFactor sets one where its secret and
	// step are the ones given last.
	createFactor, listFactors, getFactor, swapFactor *statement
	deleteFactor                                     deletion

	purgeSessions, purgeTokens *statement

	// Without foreign keys (WithoutForeignKeys): lockUser finds the user
	// and locks its row against a concurrent delete; deleteUser* delete
	// the user's dependents (deleteUserAuthenticators is nil when the
	// authenticators table is omitted, deleteUserFactors when the factors
	// table is).
	lockUser, deleteUserSessions, deleteUserAccounts, deleteUserAuthenticators, deleteUserFactors *statement

	// extras are the users table's application columns, read after the
	// standard ones by every statement that returns users; usersKnown
	// says whether the table existed when they were discovered.
	extras     []dataColumn
	usersKnown bool
	// userCols are the columns every user statement returns: the
	// standard ones (numUserColumns, then the username where the table
	// has it), then extras.
	userCols []string
	// shape is the dialect's (see [shape]): how users and accounts are
	// scanned.
	shape shape
	// userInsertCols are the standard columns createUser writes: those of
	// userCols before extras that the table has.
	userInsertCols []string
}

// numOptionalAccountColumns is how many of [AccountColumns] may be [Omit]:
// the token columns and the password hash.
const numOptionalAccountColumns = 10

// keepsUsernames reports whether the users table has the username column.
func (q *queries) keepsUsernames() bool { return q.names.User.Username != Omit }

// keepsPasswords reports whether the accounts table has the password hash
// column.
func (q *queries) keepsPasswords() bool { return q.names.Account.Password != Omit }

func buildQueries(d *dialect, n Names, stamps [numTables]stampCols, noFK bool, extras []dataColumn, meta sessionMeta) *queries {
	q := &queries{names: n, extras: extras, meta: meta, shape: d.shape}
	st := func(s string) *statement { return &statement{sql: s} }
	b := builder{d: d, stamps: stamps}
	id, cols, insert, touch := d.ident, b.cols, b.insert, b.touch
	forUpdate := ""
	if d.mysql() || d.postgres() {
		forUpdate = " FOR UPDATE"
	}

	// Users.
	users, uc := d.table(n.Users), n.User
	// The username only where the table has it: a column read as NULL on
	// every row would cost the session read of every request (issue 42's
	// allocation budget) for nothing.
	userCols := []string{uc.ID, uc.Email, uc.EmailVerified, uc.Name, uc.Image}
	if uc.Username != Omit {
		userCols = append(userCols, uc.Username)
	}
	q.userInsertCols = slices.Clone(userCols)
	for _, c := range extras {
		userCols = append(userCols, c.name)
	}
	q.userCols = userCols
	q.createUser = st(insert(users, TableUsers, q.userInsertCols))
	p := &placeholders{d: d}
	q.getUser = st("SELECT " + cols("", userCols...) + " FROM " + users + " WHERE " + id(uc.ID) + " = " + p.next())
	p = &placeholders{d: d}
	q.getUserByEmail = st("SELECT " + cols("", userCols...) + " FROM " + users + " WHERE " + id(uc.Email) + " = " + p.next())
	q.selectUserForUpdate = st(q.getUser.sql + forUpdate)
	if uc.Username != Omit {
		p = &placeholders{d: d}
		q.getUserByUsername = st("SELECT " + cols("", userCols...) + " FROM " + users + " WHERE " + id(uc.Username) + " = " + p.next())
	}

	accounts, ac := d.table(n.Accounts), n.Account
	p = &placeholders{d: d}
	q.getUserByAccount = st("SELECT " + cols("u.", userCols...) + " FROM " + users + " u JOIN " + accounts +
		" a ON a." + id(ac.UserID) + " = u." + id(uc.ID) +
		" WHERE a." + id(ac.Provider) + " = " + p.next() + " AND a." + id(ac.ProviderAccountID) + " = " + p.next())

	q.updateUser = st(b.updateUser(n, userCols, nil))
	var upd string
	setCase := func(c string) string {
		return id(c) + " = CASE WHEN " + p.next() + " THEN " + p.next() + " ELSE " + id(c) + " END"
	}

	p = &placeholders{d: d}
	del := "DELETE FROM " + users + " WHERE " + id(uc.ID) + " = " + p.next()
	q.deleteUser = deletion{returning: st(del + " RETURNING " + cols("", userCols...)), lock: q.selectUserForUpdate, plain: st(del)}

	// Accounts.
	optional := []string{ac.AccessToken, ac.AuthorizationDetails, ac.ExpiresAt, ac.ExpiresIn,
		ac.IDToken, ac.RefreshToken, ac.Scope, ac.TokenType, ac.SessionState, ac.Password}
	accountCols := append([]string{ac.UserID, ac.Type, ac.Provider, ac.ProviderAccountID}, optional...)
	var insertCols []string
	for i, c := range accountCols {
		if c != Omit {
			insertCols = append(insertCols, c)
		}
		if i >= 4 {
			q.accountCols[i-4] = c != Omit
		}
	}
	q.linkAccount = st(insert(accounts, TableAccounts, insertCols))
	p = &placeholders{d: d}
	accountKey := " WHERE " + id(ac.Provider) + " = " + p.next() + " AND " + id(ac.ProviderAccountID) + " = " + p.next()
	q.getAccount = st("SELECT " + cols("", accountCols...) + " FROM " + accounts + accountKey)
	q.accountColumns = accountCols
	p = &placeholders{d: d}
	q.listAccounts = st("SELECT " + cols("", accountCols...) + " FROM " + accounts + " WHERE " + id(ac.UserID) + " = " + p.next())
	q.unlinkAccount = b.deletion(accounts+accountKey, accountCols, q.getAccount.sql+forUpdate)
	if ac.Password != Omit {
		// One conditional UPDATE each: the hash is replaced only where it
		// is still the one the caller read (SwapPasswordHash).
		p = &placeholders{d: d}
		set := "UPDATE " + accounts + " SET " + id(ac.Password) + " = " + p.next() + touch(TableAccounts, p) +
			" WHERE " + id(ac.Provider) + " = " + p.next() + " AND " + id(ac.ProviderAccountID) + " = " + p.next() +
			" AND " + id(ac.Password)
		ret := ""
		if d.updateReturning {
			ret = " RETURNING " + cols("", accountCols...)
		}
		q.setPassword = st(set + " IS NULL" + ret)
		q.swapPassword = st(set + " = " + p.next() + ret)
	}

	// Sessions.
	// The metadata columns are written by createSession (those kept),
	// the updated one by updateSession and extendSession, and read by
	// listSessions only: getSessionAndUser, the read of every request,
	// selects the three key columns alone.
	sessions, sc := d.table(n.Sessions), n.Session
	sessionCols := []string{sc.SessionToken, sc.UserID, sc.Expires}
	q.createSession = st(insert(sessions, TableSessions, append(sessionCols[:3:3], meta.kept()...)))
	p = &placeholders{d: d}
	q.getSessionAndUser = st("SELECT " + cols("s.", sessionCols...) + ", " + cols("u.", userCols...) +
		" FROM " + sessions + " s JOIN " + users + " u ON u." + id(uc.ID) + " = s." + id(sc.UserID) +
		" WHERE s." + id(sc.SessionToken) + " = " + p.next())
	p = &placeholders{d: d}
	upd = "UPDATE " + sessions + " SET " + setCase(sc.UserID) + ", " + setCase(sc.Expires)
	if meta.keepsUpdated() {
		upd += ", " + setCase(meta.cols[1])
	}
	upd += touch(TableSessions, p) + " WHERE " + id(sc.SessionToken) + " = " + p.next()
	if d.updateReturning {
		upd += " RETURNING " + cols("", sessionCols...)
	}
	q.updateSession = st(upd)
	p = &placeholders{d: d}
	sessionKey := " WHERE " + id(sc.SessionToken) + " = " + p.next()
	q.selectSession = st("SELECT " + cols("", sessionCols...) + " FROM " + sessions + sessionKey)
	q.deleteSession = b.deletion(sessions+sessionKey, sessionCols, q.selectSession.sql+forUpdate)
	p = &placeholders{d: d}
	q.deleteExpiredSession = st("DELETE FROM " + sessions + " WHERE " + id(sc.SessionToken) + " = " + p.next() +
		" AND " + id(sc.Expires) + " <= " + p.next())
	p = &placeholders{d: d}
	upd = "UPDATE " + sessions + " SET " + id(sc.Expires) + " = " + p.next()
	if meta.keepsUpdated() {
		upd += ", " + id(meta.cols[1]) + " = " + p.next()
	}
	upd += touch(TableSessions, p) + " WHERE " + id(sc.SessionToken) + " = " + p.next() + " AND " + b.timeBefore(sc.Expires, p)
	if d.updateReturning {
		upd += " RETURNING " + cols("", sessionCols...)
	}
	q.extendSession = st(upd)
	// A user's sessions: one SELECT on the userId index (sessions_userId_idx),
	// WHERE userId = $1 AND expires > $2 ORDER BY sessionToken (the order
	// is made byte for byte again in Go, whatever the collation).
	p = &placeholders{d: d}
	q.listSessions = st("SELECT " + cols("", append(sessionCols[:3:3], meta.cols[:]...)...) + " FROM " + sessions +
		" WHERE " + id(sc.UserID) + " = " + p.next() + " AND " + id(sc.Expires) + " > " + p.next() +
		" ORDER BY " + id(sc.SessionToken))
	// All of a user's sessions but one: WHERE userId = $1 AND sessionToken
	// <> $2 (no session has the token "", so "" keeps none).
	p = &placeholders{d: d}
	but := " WHERE " + id(sc.UserID) + " = " + p.next() + " AND " + id(sc.SessionToken) + " <> " + p.next()
	q.deleteUserSessionsExcept = b.deletion(sessions+but, []string{sc.Expires},
		"SELECT "+cols("", sc.Expires)+" FROM "+sessions+but+forUpdate)

	// Verification tokens.
	tokens, tc := d.table(n.VerificationTokens), n.VerificationToken
	tokenCols := []string{tc.Identifier, tc.Token, tc.Expires}
	q.createToken = st(insert(tokens, TableVerificationTokens, tokenCols))
	p = &placeholders{d: d}
	tokenKey := " WHERE " + id(tc.Identifier) + " = " + p.next() + " AND " + id(tc.Token) + " = " + p.next()
	q.useToken = b.deletion(tokens+tokenKey, tokenCols, "SELECT "+cols("", tokenCols...)+" FROM "+tokens+tokenKey+forUpdate)

	// Authenticators.
	auths, auc := d.table(n.Authenticators), n.Authenticator
	authCols := []string{auc.CredentialID, auc.CredentialPublicKey, auc.Counter, auc.CredentialBackedUp,
		auc.CredentialDeviceType, auc.ProviderAccountID, auc.UserID, auc.Transports}
	q.createAuthenticator = st(insert(auths, TableAuthenticators, authCols))
	p = &placeholders{d: d}
	q.getAuthenticator = st("SELECT " + cols("", authCols...) + " FROM " + auths + " WHERE " + id(auc.CredentialID) + " = " + p.next())
	p = &placeholders{d: d}
	q.listAuthenticators = st("SELECT " + cols("", authCols...) + " FROM " + auths + " WHERE " + id(auc.UserID) + " = " + p.next() +
		" ORDER BY " + id(auc.CredentialID))
	p = &placeholders{d: d}
	upd = "UPDATE " + auths + " SET " + id(auc.Counter) + " = " + p.next() + touch(TableAuthenticators, p) + " WHERE " + id(auc.CredentialID) + " = " + p.next()
	if d.updateReturning {
		upd += " RETURNING " + cols("", authCols...)
	}
	q.updateCounter = st(upd)
	p = &placeholders{d: d}
	upd = "UPDATE " + auths + " SET " + id(auc.Counter) + " = " + p.next() + touch(TableAuthenticators, p) +
		" WHERE " + id(auc.CredentialID) + " = " + p.next() + " AND " + id(auc.Counter) + " < " + p.next()
	if d.updateReturning {
		upd += " RETURNING " + cols("", authCols...)
	}
	q.advanceCounter = st(upd)

	// Factors: every statement keyed by the user and the id, so that
	// another user's factor is never found, changed or deleted.
	factors, fc := d.table(n.Factors), n.Factor
	if n.Factors != Omit {
		fcols := factorColumns(fc)
		q.createFactor = st(insert(factors, TableFactors, fcols))
		p = &placeholders{d: d}
		q.listFactors = st("SELECT " + cols("", fcols...) + " FROM " + factors + " WHERE " + id(fc.UserID) + " = " + p.next() +
			" ORDER BY " + id(fc.ID))
		p = &placeholders{d: d}
		factorKey := " WHERE " + id(fc.UserID) + " = " + p.next() + " AND " + id(fc.ID) + " = " + p.next()
		q.getFactor = st("SELECT " + cols("", fcols...) + " FROM " + factors + factorKey)
		q.deleteFactor = b.deletion(factors+factorKey, fcols, q.getFactor.sql+forUpdate)
		// One conditional UPDATE: the factor changes only where its
		// secret and step are still the ones the caller read (SwapFactor).
		p = &placeholders{d: d}
		upd = "UPDATE " + factors + " SET " + id(fc.Name) + " = " + p.next() + ", " + id(fc.Secret) + " = " + p.next() +
			", " + id(fc.Step) + " = " + p.next() + ", " + id(fc.LastUsedAt) + " = " + p.next() + touch(TableFactors, p) +
			" WHERE " + id(fc.UserID) + " = " + p.next() + " AND " + id(fc.ID) + " = " + p.next() +
			" AND " + id(fc.Secret) + " = " + p.next() + " AND " + id(fc.Step) + " = " + p.next()
		if d.updateReturning {
			upd += " RETURNING " + cols("", fcols...)
		}
		q.swapFactor = st(upd)
	}

	// Purge, in bounded batches: each statement deletes at most its
	// second argument's number of expired rows. The rows are named by their
	// physical address (PostgreSQL's ctid, SQLite's rowid), which needs no
	// primary key (Auth.js's Kysely schema has none on its tokens);
	// MySQL and MariaDB take DELETE … LIMIT.
	purge := func(table, expires string) *statement {
		p := &placeholders{d: d}
		cond := id(expires) + " <= " + p.next()
		switch {
		case d.postgres():
			return st("DELETE FROM " + table + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM " + table + " WHERE " + cond + " LIMIT " + p.next() + "))")
		case d.sqlite():
			return st("DELETE FROM " + table + " WHERE rowid IN (SELECT rowid FROM " + table + " WHERE " + cond + " LIMIT " + p.next() + ")")
		default:
			return st("DELETE FROM " + table + " WHERE " + cond + " LIMIT " + p.next())
		}
	}
	q.purgeSessions = purge(sessions, sc.Expires)
	q.purgeTokens = purge(tokens, tc.Expires)

	if noFK {
		// FOR KEY SHARE (PostgreSQL) and LOCK IN SHARE MODE (MySQL,
		// MariaDB) conflict with the DELETE of the row, not with other
		// readers; SQLite serialises write transactions instead.
		lock := ""
		switch {
		case d.postgres():
			lock = " FOR KEY SHARE"
		case d.mysql():
			lock = " LOCK IN SHARE MODE"
		}
		p = &placeholders{d: d}
		q.lockUser = st("SELECT 1 FROM " + users + " WHERE " + id(uc.ID) + " = " + p.next() + lock)
		byUser := func(table, col string) *statement {
			p := &placeholders{d: d}
			return st("DELETE FROM " + table + " WHERE " + id(col) + " = " + p.next())
		}
		q.deleteUserSessions = byUser(sessions, sc.UserID)
		q.deleteUserAccounts = byUser(accounts, ac.UserID)
		if n.Authenticators != Omit {
			q.deleteUserAuthenticators = byUser(auths, auc.UserID)
		}
		if n.Factors != Omit {
			q.deleteUserFactors = byUser(factors, fc.UserID)
		}
	}
	return q
}

// factorColumns are the factors table's columns in the order every factor
// statement writes and returns them (see factorRow).
func factorColumns(fc FactorColumns) []string {
	return []string{fc.ID, fc.UserID, fc.Type, fc.Name, fc.Secret, fc.Step, fc.CreatedAt, fc.LastUsedAt}
}

// deletion is how one row is deleted and returned (see deleteReturning):
// returning is a DELETE … RETURNING; where the dialect lacks it, lock
// (SELECT … FOR UPDATE) reads the row and plain (the DELETE) deletes it,
// in one transaction.
type deletion struct{ returning, lock, plain *statement }

// builder holds what the SQL of every statement depends on.
type builder struct {
	d      *dialect
	stamps [numTables]stampCols
}

// cols joins quoted column names, each after prefix; an omitted column
// ([Omit]) reads as NULL.
func (b builder) cols(prefix string, names ...string) string {
	out := make([]string, len(names))
	for i, c := range names {
		if c == Omit {
			out[i] = "NULL"
			continue
		}
		out[i] = prefix + b.d.ident(c)
	}
	return strings.Join(out, ", ")
}

// deletion returns the deletion of the row of from (a table and a WHERE
// clause naming one row), returning columns, locked by the SELECT lock.
func (b builder) deletion(from string, columns []string, lock string) deletion {
	del := "DELETE FROM " + from
	return deletion{
		returning: &statement{sql: del + " RETURNING " + b.cols("", columns...)},
		lock:      &statement{sql: lock},
		plain:     &statement{sql: del},
	}
}

// insert returns an INSERT of the columns into table t, followed by the
// table's timestamp columns and its row id column (bound after the row's
// values, see stampArgs).
func (b builder) insert(table string, t Table, columns []string) string {
	columns = append([]string(nil), columns...)
	if c := b.stamps[t].created; c != "" {
		columns = append(columns, c)
	}
	if c := b.stamps[t].updated; c != "" {
		columns = append(columns, c)
	}
	if c := b.stamps[t].id; c != "" {
		columns = append(columns, c)
	}
	p := &placeholders{d: b.d}
	return "INSERT INTO " + table + " (" + b.cols("", columns...) + ") VALUES (" + p.list(len(columns)) + ")"
}

// touch is the SET clause of an UPDATE's updated-at column, bound before
// the WHERE clause's parameters (see stampArgs), or "".
func (b builder) touch(t Table, p *placeholders) string {
	if c := b.stamps[t].updated; c != "" {
		return ", " + b.d.ident(c) + " = " + p.next()
	}
	return ""
}

// timeBefore is the condition that the time column c is before the next
// bind parameter, compared as times: SQLite's text forms through
// julianday(), which reads any of them (with "T" or " ", with or without
// "Z" or an offset) as the same instant; integers, and the time types of
// the other databases, directly.
func (b builder) timeBefore(c string, p *placeholders) string {
	if b.d.sqlite() && b.d.sqliteTimes != SQLiteTimeUnixMilli {
		return "julianday(" + b.d.ident(c) + ") < julianday(" + p.next() + ")"
	}
	return b.d.ident(c) + " < " + p.next()
}

// updateUser returns the UPDATE of a user: one flag and one value per
// standard field (the username last, when n keeps it) (CASE WHEN <set> THEN <value> ELSE <column> END keeps one
// statement text for every combination of set fields), then one value per
// application column in data, the updated-at column and the id, returning
// userCols where the dialect can.
func (b builder) updateUser(n Names, userCols []string, data []dataColumn) string {
	id, uc := b.d.ident, n.User
	p := &placeholders{d: b.d}
	setCase := func(c string) string {
		return id(c) + " = CASE WHEN " + p.next() + " THEN " + p.next() + " ELSE " + id(c) + " END"
	}
	upd := "UPDATE " + b.d.table(n.Users) + " SET " + setCase(uc.Email) + ", " + setCase(uc.EmailVerified) + ", " +
		setCase(uc.Name) + ", " + setCase(uc.Image)
	if uc.Username != Omit {
		upd += ", " + setCase(uc.Username)
	}
	for _, c := range data {
		upd += ", " + id(c.name) + " = " + p.next()
	}
	upd += b.touch(TableUsers, p) + " WHERE " + id(uc.ID) + " = " + p.next()
	if b.d.updateReturning {
		upd += " RETURNING " + b.cols("", userCols...)
	}
	return upd
}

// updateAccount returns the UPDATE of the account columns set (names, in
// the order their values are bound), then the updated-at column, keyed by
// provider and provider account id, returning every account column where
// the dialect can.
func (b builder) updateAccount(n Names, set []string, returning []string) string {
	id, ac := b.d.ident, n.Account
	p := &placeholders{d: b.d}
	sets := make([]string, len(set))
	for i, c := range set {
		sets[i] = id(c) + " = " + p.next()
	}
	upd := "UPDATE " + b.d.table(n.Accounts) + " SET " + strings.Join(sets, ", ") + b.touch(TableAccounts, p) +
		" WHERE " + id(ac.Provider) + " = " + p.next() + " AND " + id(ac.ProviderAccountID) + " = " + p.next()
	if b.d.updateReturning {
		upd += " RETURNING " + b.cols("", returning...)
	}
	return upd
}

// all returns every statement, for Close.
func (q *queries) all() []*statement {
	return []*statement{
		q.createUser, q.getUser, q.getUserByEmail, q.getUserByAccount, q.getUserByUsername,
		q.updateUser, q.selectUserForUpdate, q.deleteUser.returning, q.deleteUser.plain,
		q.linkAccount, q.getAccount, q.swapPassword, q.setPassword, q.unlinkAccount.returning, q.unlinkAccount.lock, q.unlinkAccount.plain, q.listAccounts,
		q.createSession, q.getSessionAndUser, q.updateSession, q.selectSession, q.deleteExpiredSession, q.extendSession,
		q.listSessions, q.deleteUserSessionsExcept.returning, q.deleteUserSessionsExcept.lock, q.deleteUserSessionsExcept.plain,
		q.deleteSession.returning, q.deleteSession.lock, q.deleteSession.plain,
		q.createToken, q.useToken.returning, q.useToken.lock, q.useToken.plain,
		q.createAuthenticator, q.getAuthenticator, q.listAuthenticators, q.updateCounter, q.advanceCounter,
		q.createFactor, q.listFactors, q.getFactor, q.swapFactor,
		q.deleteFactor.returning, q.deleteFactor.lock, q.deleteFactor.plain,
		q.purgeSessions, q.purgeTokens,
		q.lockUser, q.deleteUserSessions, q.deleteUserAccounts, q.deleteUserAuthenticators, q.deleteUserFactors,
	}
}
