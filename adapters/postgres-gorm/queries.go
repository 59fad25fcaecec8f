package gormadapter

import (
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"
)

// statement is one SQL statement, built once at New. When the dialect asks
// for it, it is prepared on first use and the *sql.Stmt kept (database/sql
// then prepares it once per pooled connection).
type statement struct {
	sql      string
	mu       sync.Mutex
	prepared atomic.Pointer[sql.Stmt]
}

// queries holds every statement the adapter runs.
type queries struct {
	createUser, getUser, getUserByEmail, getUserByAccount        *statement
	updateUser, selectUserForUpdate, deleteUser, deleteUserPlain *statement

	linkAccount, getAccount, unlinkAccount, selectAccountForUpdate, unlinkAccountPlain *statement
	// accountCols reports which of the 9 optional account columns exist.
	accountCols [9]bool

	createSession, getSessionAndUser, updateSession, selectSession *statement
	deleteSession, selectSessionForUpdate, deleteSessionPlain      *statement

	createToken, useToken, selectTokenForUpdate, deleteTokenPlain *statement

	createAuthenticator, getAuthenticator, listAuthenticators, updateCounter *statement

	purgeSessions, purgeTokens *statement
}

func buildQueries(d *dialect, n Names) *queries {
	q := &queries{}
	st := func(s string) *statement { return &statement{sql: s} }
	id := d.ident
	cols := func(prefix string, names ...string) string {
		out := make([]string, len(names))
		for i, c := range names {
			if c == Omit {
				out[i] = "NULL"
				continue
			}
			out[i] = prefix + id(c)
		}
		return strings.Join(out, ", ")
	}
	forUpdate := ""
	if d.mysql() || d.postgres() {
		forUpdate = " FOR UPDATE"
	}

	// Users.
	users, uc := d.table(n.Users), n.User
	userCols := []string{uc.ID, uc.Email, uc.EmailVerified, uc.Name, uc.Image}
	p := &placeholders{d: d}
	q.createUser = st("INSERT INTO " + users + " (" + cols("", userCols...) + ") VALUES (" + p.list(5) + ")")
	p = &placeholders{d: d}
	q.getUser = st("SELECT " + cols("", userCols...) + " FROM " + users + " WHERE " + id(uc.ID) + " = " + p.next())
	p = &placeholders{d: d}
	q.getUserByEmail = st("SELECT " + cols("", userCols...) + " FROM " + users + " WHERE " + id(uc.Email) + " = " + p.next())
	q.selectUserForUpdate = st(q.getUser.sql + forUpdate)

	accounts, ac := d.table(n.Accounts), n.Account
	p = &placeholders{d: d}
	q.getUserByAccount = st("SELECT " + cols("u.", userCols...) + " FROM " + users + " u JOIN " + accounts +
		" a ON a." + id(ac.UserID) + " = u." + id(uc.ID) +
		" WHERE a." + id(ac.Provider) + " = " + p.next() + " AND a." + id(ac.ProviderAccountID) + " = " + p.next())

	// UPDATE with one flag per field: CASE WHEN <set> THEN <value> ELSE
	// <column> END keeps one statement text for every combination of set
	// fields.
	p = &placeholders{d: d}
	setCase := func(c string) string {
		return id(c) + " = CASE WHEN " + p.next() + " THEN " + p.next() + " ELSE " + id(c) + " END"
	}
	upd := "UPDATE " + users + " SET " + setCase(uc.Email) + ", " + setCase(uc.EmailVerified) + ", " +
		setCase(uc.Name) + ", " + setCase(uc.Image) + " WHERE " + id(uc.ID) + " = " + p.next()
	if d.updateReturning {
		upd += " RETURNING " + cols("", userCols...)
	}
	q.updateUser = st(upd)

	p = &placeholders{d: d}
	del := "DELETE FROM " + users + " WHERE " + id(uc.ID) + " = " + p.next()
	q.deleteUserPlain = st(del)
	q.deleteUser = st(del + " RETURNING " + cols("", userCols...))

	// Accounts.
	optional := []string{ac.AccessToken, ac.AuthorizationDetails, ac.ExpiresAt, ac.ExpiresIn,
		ac.IDToken, ac.RefreshToken, ac.Scope, ac.TokenType, ac.SessionState}
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
	p = &placeholders{d: d}
	q.linkAccount = st("INSERT INTO " + accounts + " (" + cols("", insertCols...) + ") VALUES (" + p.list(len(insertCols)) + ")")
	p = &placeholders{d: d}
	accountKey := " WHERE " + id(ac.Provider) + " = " + p.next() + " AND " + id(ac.ProviderAccountID) + " = " + p.next()
	q.getAccount = st("SELECT " + cols("", accountCols...) + " FROM " + accounts + accountKey)
	q.selectAccountForUpdate = st(q.getAccount.sql + forUpdate)
	q.unlinkAccountPlain = st("DELETE FROM " + accounts + accountKey)
	q.unlinkAccount = st(q.unlinkAccountPlain.sql + " RETURNING " + cols("", accountCols...))

	// Sessions.
	sessions, sc := d.table(n.Sessions), n.Session
	sessionCols := []string{sc.SessionToken, sc.UserID, sc.Expires}
	p = &placeholders{d: d}
	q.createSession = st("INSERT INTO " + sessions + " (" + cols("", sessionCols...) + ") VALUES (" + p.list(3) + ")")
	p = &placeholders{d: d}
	q.getSessionAndUser = st("SELECT " + cols("s.", sessionCols...) + ", " + cols("u.", userCols...) +
		" FROM " + sessions + " s JOIN " + users + " u ON u." + id(uc.ID) + " = s." + id(sc.UserID) +
		" WHERE s." + id(sc.SessionToken) + " = " + p.next())
	p = &placeholders{d: d}
	upd = "UPDATE " + sessions + " SET " + setCase(sc.UserID) + ", " + setCase(sc.Expires) +
		" WHERE " + id(sc.SessionToken) + " = " + p.next()
	if d.updateReturning {
		upd += " RETURNING " + cols("", sessionCols...)
	}
	q.updateSession = st(upd)
	p = &placeholders{d: d}
	sessionKey := " WHERE " + id(sc.SessionToken) + " = " + p.next()
	q.selectSession = st("SELECT " + cols("", sessionCols...) + " FROM " + sessions + sessionKey)
	q.selectSessionForUpdate = st(q.selectSession.sql + forUpdate)
	q.deleteSessionPlain = st("DELETE FROM " + sessions + sessionKey)
	q.deleteSession = st(q.deleteSessionPlain.sql + " RETURNING " + cols("", sessionCols...))

	// Verification tokens.
	tokens, tc := d.table(n.VerificationTokens), n.VerificationToken
	tokenCols := []string{tc.Identifier, tc.Token, tc.Expires}
	p = &placeholders{d: d}
	q.createToken = st("INSERT INTO " + tokens + " (" + cols("", tokenCols...) + ") VALUES (" + p.list(3) + ")")
	p = &placeholders{d: d}
	tokenKey := " WHERE " + id(tc.Identifier) + " = " + p.next() + " AND " + id(tc.Token) + " = " + p.next()
	q.deleteTokenPlain = st("DELETE FROM " + tokens + tokenKey)
	q.useToken = st(q.deleteTokenPlain.sql + " RETURNING " + cols("", tokenCols...))
	q.selectTokenForUpdate = st("SELECT " + cols("", tokenCols...) + " FROM " + tokens + tokenKey + forUpdate)

	// Authenticators.
	auths, auc := d.table(n.Authenticators), n.Authenticator
	authCols := []string{auc.CredentialID, auc.CredentialPublicKey, auc.Counter, auc.CredentialBackedUp,
		auc.CredentialDeviceType, auc.ProviderAccountID, auc.UserID, auc.Transports}
	p = &placeholders{d: d}
	q.createAuthenticator = st("INSERT INTO " + auths + " (" + cols("", authCols...) + ") VALUES (" + p.list(8) + ")")
	p = &placeholders{d: d}
	q.getAuthenticator = st("SELECT " + cols("", authCols...) + " FROM " + auths + " WHERE " + id(auc.CredentialID) + " = " + p.next())
	p = &placeholders{d: d}
	q.listAuthenticators = st("SELECT " + cols("", authCols...) + " FROM " + auths + " WHERE " + id(auc.UserID) + " = " + p.next() +
		" ORDER BY " + id(auc.CredentialID))
	p = &placeholders{d: d}
	upd = "UPDATE " + auths + " SET " + id(auc.Counter) + " = " + p.next() + " WHERE " + id(auc.CredentialID) + " = " + p.next()
	if d.updateReturning {
		upd += " RETURNING " + cols("", authCols...)
	}
	q.updateCounter = st(upd)

	// Purge.
	p = &placeholders{d: d}
	q.purgeSessions = st("DELETE FROM " + sessions + " WHERE " + id(sc.Expires) + " <= " + p.next())
	p = &placeholders{d: d}
	q.purgeTokens = st("DELETE FROM " + tokens + " WHERE " + id(tc.Expires) + " <= " + p.next())
	return q
}
