package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
)

// CreateUser implements [core.UserCreator] with one INSERT, of the
// standard columns and the columns of the application fields in
// user.Data. An e-mail address or username of "" is stored as NULL (the
// unique indexes hold any number of NULLs); a username or e-mail address
// another user has is [core.ErrAlreadyExists], and nothing is written.
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	const m = core.MethodCreateUser
	return created(a, a.enter, user.Clone(), func(u *core.User) error {
		if err := checkTime(m, "emailVerified", u.EmailVerified); err != nil {
			return err
		}
		if err := a.checkEmail(m, u.Email); err != nil {
			return err
		}
		q, data, err := a.dataColumns(ctx, m, u.Data)
		if err != nil {
			return err
		}
		if err := a.checkUsername(q, m, u.Username); err != nil {
			return err
		}
		args := []any{u.ID, nullIfEmpty(u.Email), a.verifiedArg(u.EmailVerified), a.nameArg(u.Name), nullStr(u.Image)}
		if q.keepsUsernames() {
			args = append(args, nullIfEmpty(u.Username))
		}
		s := q.createUser
		if len(data) > 0 {
			cols := append([]string(nil), q.userInsertCols...)
			for _, c := range data {
				v, err := a.dataArg(m, c, u.Data[c.name])
				if err != nil {
					return err
				}
				cols, args = append(cols, c.name), append(args, v)
			}
			s = &statement{sql: builder{d: &a.d, stamps: a.stamps}.insert(a.d.table(a.names.Users), TableUsers, cols)}
		}
		_, err = a.exec(ctx, nil, s, append(args, a.stampArgs(TableUsers, true)...)...)
		if err == nil {
			a.asStored(u)
		}
		return a.emailNotNull(m, u.Email == "", err)
	})
}

// checkUsername returns an [*core.InputError] when a username is given
// and the statements in use (q) keep none: the adapter is configured
// without the column, or an existing users table lacks it.
func (a *Adapter) checkUsername(q *queries, m core.Method, username string) error {
	if username == "" || q.keepsUsernames() {
		return nil
	}
	reason := "this adapter keeps no usernames (name the users table's column with WithUsernameColumn)"
	if c := a.names.User.Username; c != Omit {
		reason = fmt.Sprintf("table %s has no column %q yet: run Migrate, or %s", a.names.Users, c,
			a.addColumnDDL(a.names.Users, column{c, tKey, true}, true))
	}
	return &core.InputError{Method: string(m), Field: "username", Reason: reason}
}

// emailNotNull turns err, the error of a user write, into an
// [*core.InputError] saying what to do when the write stored no e-mail
// address (noEmail: NULL) and the database refused NULL: the users table's
// e-mail column is still NOT NULL (a schema made before users without one
// were allowed, or Auth.js's Kysely tables). Other errors are wrapped as
// usual.
func (a *Adapter) emailNotNull(m core.Method, noEmail bool, err error) error {
	if !noEmail || !notNullViolation(err) {
		return a.wrap(err)
	}
	return &core.InputError{Method: string(m), Field: "email", Reason: fmt.Sprintf(
		"column %q of table %s is NOT NULL, so it keeps no user without an e-mail address: run Migrate, which makes it nullable (%v)",
		a.names.User.Email, a.names.Users, err)}
}

// GetUser implements [core.UserGetter] with one SELECT.
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	return a.getUserBy(ctx, func(q *queries) *statement { return q.getUser }, id)
}

// GetUserByEmail implements [core.UserByEmailGetter] with one SELECT. The
// e-mail address is compared exactly (byte for byte); "" finds no one
// (users without an address have NULL).
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	if email == "" {
		return guard(a, a.enter, func() (*core.User, error) { return nil, nil })
	}
	return a.getUserBy(ctx, func(q *queries) *statement { return q.getUserByEmail }, email)
}

// GetUserByUsername implements [core.UserByUsernameGetter] with one
// SELECT. The username is compared exactly (core.Store normalises it
// first); "" finds no one. Without a username column (see
// [WithUsernameColumn]; [Adapter.OmittedMethods] then lists the method) it
// finds no one either.
func (a *Adapter) GetUserByUsername(ctx context.Context, username string) (*core.User, error) {
	if username == "" || !a.qs().keepsUsernames() {
		return guard(a, a.enter, func() (*core.User, error) { return nil, nil })
	}
	return a.getUserBy(ctx, func(q *queries) *statement { return q.getUserByUsername }, username)
}

// GetUserByAccount implements [core.UserByAccountGetter] with one SELECT
// joining accounts to users.
func (a *Adapter) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	return a.getUserBy(ctx, func(q *queries) *statement { return q.getUserByAccount }, key.Provider, key.ProviderAccountID)
}

func (a *Adapter) getUserBy(ctx context.Context, s func(*queries) *statement, args ...any) (*core.User, error) {
	return guard(a, a.enter, func() (*core.User, error) {
		q := a.qs()
		st := s(q)
		if st == nil { // the statements were rebuilt without the column
			return nil, nil
		}
		r := newUserRow(q)
		err := a.queryRow(ctx, nil, st, args...).Scan(r.dest()...)
		if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
			return nil, nil
		}
		if err != nil {
			return nil, a.wrap(err)
		}
		return r.user(), nil
	})
}

// UpdateUser implements [core.UserUpdater]: one UPDATE … RETURNING on
// PostgreSQL and SQLite; on MySQL and MariaDB, which lack UPDATE …
// RETURNING, an UPDATE and a SELECT in one transaction. Of the application
// columns, it writes only those of the fields named in up.Data, so that
// fields changed concurrently by another writer are kept.
func (a *Adapter) UpdateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	const m = core.MethodUpdateUser
	return guard(a, a.enter, func() (*core.User, error) {
		if err := checkTime(m, "emailVerified", up.EmailVerified.Value); err != nil {
			return nil, err
		}
		if up.Email.Set {
			if err := a.checkEmail(m, up.Email.Value); err != nil {
				return nil, err
			}
		}
		q, data, err := a.dataColumns(ctx, m, up.Data)
		if err != nil {
			return nil, err
		}
		if err := a.checkUsername(q, m, up.Username.Value); err != nil {
			return nil, err
		}
		args := []any{
			up.Email.Set, nullIfEmpty(up.Email.Value),
			up.EmailVerified.Set, a.verifiedArg(up.EmailVerified.Value),
			up.Name.Set, a.nameArg(up.Name.Value),
			up.Image.Set, nullStr(up.Image.Value),
		}
		if q.keepsUsernames() {
			args = append(args, up.Username.Set, nullIfEmpty(up.Username.Value))
		}
		s := q.updateUser
		if len(data) > 0 {
			for _, c := range data {
				v, err := a.dataArg(m, c, up.Data[c.name])
				if err != nil {
					return nil, err
				}
				args = append(args, v)
			}
			s = &statement{sql: builder{d: &a.d, stamps: a.stamps}.updateUser(q.names, q.userCols, data)}
		}
		args = append(append(args, a.stampArgs(TableUsers, false)...), up.ID)
		r := newUserRow(q)
		if a.d.updateReturning {
			err = a.queryRow(ctx, nil, s, args...).Scan(r.dest()...)
		} else {
			err = a.inTx(ctx, []*statement{s, q.getUser}, func(tx *sql.Tx) error {
				if _, err := a.exec(ctx, tx, s, args...); err != nil {
					return err
				}
				return a.queryRow(ctx, tx, q.getUser, up.ID).Scan(r.dest()...)
			})
		}
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("user %q: %w", up.ID, core.ErrNotFound)
		}
		if err != nil {
			return nil, a.emailNotNull(m, up.Email.Set && up.Email.Value == "", err)
		}
		return r.user(), nil
	})
}

// DeleteUser implements [core.UserDeleter] with one DELETE … RETURNING; the
// schema's ON DELETE CASCADE foreign keys delete the user's accounts,
// sessions, authenticators and factors in the same statement. Where DELETE
// … RETURNING is missing (MySQL, MariaDB < 10.5) it runs SELECT … FOR
// UPDATE and DELETE in one transaction. With [WithoutForeignKeys] it
// deletes the user and then its sessions, accounts, authenticators and
// factors, in one transaction.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	return guard(a, a.enter, func() (*core.User, error) {
		q := a.qs()
		r := newUserRow(q)
		var found bool
		var err error
		if a.noFK {
			found, err = a.deleteUserAndDependents(ctx, q, r.dest(), id)
		} else {
			found, err = a.deleteReturning(ctx, q.deleteUser, r.dest(), id)
		}
		if found, err = a.deleted(found, err); !found {
			return nil, err
		}
		return r.user(), nil
	})
}

// deleteUserAndDependents is deleteUser without foreign keys: in one
// transaction, the user's row first (which locks it, so that no
// linkAccount, createSession, createAuthenticator or createFactor can add
// a record for the user from then on: they lock the row to check it), then
// its sessions, accounts, authenticators and factors.
func (a *Adapter) deleteUserAndDependents(ctx context.Context, q *queries, dest []any, id string) (bool, error) {
	found := false
	uses := []*statement{q.deleteUser.returning, q.deleteUserSessions, q.deleteUserAccounts, q.deleteUserAuthenticators, q.deleteUserFactors}
	if !a.d.deleteReturning {
		uses[0] = q.deleteUser.lock
		uses = append(uses, q.deleteUser.plain)
	}
	err := a.inTx(ctx, uses, func(tx *sql.Tx) error {
		var err error
		if a.d.deleteReturning {
			err = a.queryRow(ctx, tx, q.deleteUser.returning, id).Scan(dest...)
		} else if err = a.queryRow(ctx, tx, q.deleteUser.lock, id).Scan(dest...); err == nil {
			_, err = a.exec(ctx, tx, q.deleteUser.plain, id)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		for _, s := range []*statement{q.deleteUserSessions, q.deleteUserAccounts, q.deleteUserAuthenticators, q.deleteUserFactors} {
			if s == nil {
				continue
			}
			if _, err := a.exec(ctx, tx, s, id); err != nil {
				return err
			}
		}
		return nil
	})
	return found && err == nil, err
}

// deleted turns what deleteReturning (or deleteUserAndDependents)
// returned into a method's result: whether a row was deleted, and the
// error wrapped. A key the database cannot convert to its column's type
// (keyUnusable) named no row.
func (a *Adapter) deleted(found bool, err error) (bool, error) {
	if keyUnusable(err) {
		return false, nil
	}
	return found && err == nil, a.wrap(err)
}

// deleteReturning deletes the row the args name with d and scans it into
// dest: with DELETE … RETURNING where the dialect has it, else with a
// SELECT … FOR UPDATE and a DELETE in one transaction. It reports whether
// this call deleted a row.
func (a *Adapter) deleteReturning(ctx context.Context, d deletion, dest []any, args ...any) (bool, error) {
	if a.d.deleteReturning {
		err := a.queryRow(ctx, nil, d.returning, args...).Scan(dest...)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	found := false
	err := a.inTx(ctx, []*statement{d.lock, d.plain}, func(tx *sql.Tx) error {
		err := a.queryRow(ctx, tx, d.lock, args...).Scan(dest...)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		n, err := a.affected(ctx, tx, d.plain, args...)
		found = n == 1
		return err
	})
	return found, err
}

// deleteOne is the body of a method that deletes the row key names with
// the deletion del picks from the statements in use, and returns it: the
// row scanned into dest, made the result by result; nil when no row was
// deleted.
func deleteOne[T any](ctx context.Context, a *Adapter, del func(*queries) deletion, dest []any, result func() (*T, error), key ...any) (*T, error) {
	return guard(a, a.enter, func() (*T, error) {
		if found, err := a.deleted(a.deleteReturning(ctx, del(a.qs()), dest, key...)); !found {
			return nil, err
		}
		return result()
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
