package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// CreateSession implements [core.SessionCreator] with one INSERT. An
// unknown user is reported by the foreign key, as [core.ErrNotFound] (with
// [WithoutForeignKeys]: checked first, in the INSERT's transaction).
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	return created(a, a.enter, session.Normalize(), func(s *core.Session) error {
		return a.insertExpiring(ctx, core.MethodCreateSession, TableSessions, s.SessionToken, s.UserID, &s.Expires)
	})
}

// insertExpiring inserts a session (t is TableSessions: second is its
// user, checked as insertForUser does) or a verification token: the two
// key columns and expires, then t's timestamp columns.
func (a *Adapter) insertExpiring(ctx context.Context, m core.Method, t Table, first, second string, expires *time.Time) error {
	if err := checkTime(m, "expires", expires); err != nil {
		return err
	}
	args := append([]any{first, second, a.d.timeArg(*expires)}, a.stampArgs(t, true)...)
	if t == TableSessions {
		return a.insertForUser(ctx, second, a.qs().createSession, args...)
	}
	_, err := a.exec(ctx, nil, a.qs().createToken, args...)
	return a.wrap(err)
}

// GetSessionAndUser implements [core.SessionAndUserGetter] with one SELECT
// joining sessions to users. An expired session is not returned; it is
// deleted then (SPEC §3: removed when accessed), by a DELETE that matches
// it only while it is still expired, so that a concurrent extension wins.
func (a *Adapter) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	return guard(a, a.enter, func() (*core.SessionAndUser, error) {
		var s expiryRow
		q := a.qs()
		u := newUserRow(q)
		err := a.queryRow(ctx, nil, q.getSessionAndUser, sessionToken).Scan(append(s.dest(), u.dest()...)...)
		if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
			return nil, nil
		}
		if err != nil {
			return nil, a.wrap(err)
		}
		session := s.session()
		if now := a.now(); session.Expired(now) {
			if _, err := a.exec(ctx, nil, a.qs().deleteExpiredSession, sessionToken, a.d.timeArg(core.NormalizeTime(now))); err != nil {
				return nil, a.wrap(err)
			}
			return nil, nil
		}
		return &core.SessionAndUser{Session: *session, User: *u.user()}, nil
	})
}

// UpdateSession implements [core.SessionUpdater]: one UPDATE … RETURNING on
// PostgreSQL and SQLite, an UPDATE and a SELECT in one transaction on MySQL
// and MariaDB. With [WithoutForeignKeys], moving the session to another
// user first checks, in the same transaction, that the user exists.
func (a *Adapter) UpdateSession(ctx context.Context, up core.SessionUpdate) (*core.Session, error) {
	const m = core.MethodUpdateSession
	return guard(a, a.enter, func() (*core.Session, error) {
		var expires any
		if up.Expires.Set {
			if up.Expires.Value.IsZero() {
				return nil, &core.InputError{Method: string(m), Field: "expires", Reason: "must be set"}
			}
			exp := core.NormalizeTime(up.Expires.Value)
			if err := checkTime(m, "expires", &exp); err != nil {
				return nil, err
			}
			expires = a.d.timeArg(exp)
		}
		// An unset user id is passed as NULL, not "": the CASE does not use it,
		// but the database still parses it as the column's type (an integer or
		// uuid "userId" in Auth.js's pg and Kysely schemas).
		var userID any
		if up.UserID.Set {
			userID = up.UserID.Value
		}
		args := append([]any{up.UserID.Set, userID, up.Expires.Set, expires}, a.stampArgs(TableSessions, false)...)
		args = append(args, up.SessionToken)
		var r expiryRow
		update := func(tx *sql.Tx) error {
			if a.d.updateReturning {
				return a.queryRow(ctx, tx, a.qs().updateSession, args...).Scan(r.dest()...)
			}
			if _, err := a.exec(ctx, tx, a.qs().updateSession, args...); err != nil {
				return err
			}
			return a.queryRow(ctx, tx, a.qs().selectSession, up.SessionToken).Scan(r.dest()...)
		}
		var err error
		switch {
		case a.noFK && up.UserID.Set:
			err = a.inTx(ctx, []*statement{a.qs().lockUser, a.qs().updateSession, a.qs().selectSession}, func(tx *sql.Tx) error {
				if err := a.requireUser(ctx, tx, up.UserID.Value); !errors.Is(err, errNoUser) {
					if err != nil {
						return err
					}
					return update(tx)
				}
				// No such user: an error if the session exists (as the
				// foreign key would report it), else nothing to update.
				var s expiryRow
				if err := a.queryRow(ctx, tx, a.qs().selectSession, up.SessionToken).Scan(s.dest()...); err != nil {
					return err
				}
				return errNoUser
			})
		case a.d.updateReturning:
			err = update(nil)
		default:
			err = a.inTx(ctx, []*statement{a.qs().updateSession, a.qs().selectSession}, update)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if errors.Is(err, errNoUser) {
			return nil, fmt.Errorf("user %q: %w", up.UserID.Value, core.ErrNotFound)
		}
		if err != nil {
			return nil, a.wrap(err)
		}
		return r.session(), nil
	})
}

// ExtendSession implements [core.SessionExtender] with one conditional
// UPDATE, which the database applies atomically: of concurrent calls with
// the same from, one changes the row and the others find the condition
// false. The condition is that the stored expiry, at the milliseconds
// authport keeps, is not after from: expires < from + 1ms, so that a
// column more precise than milliseconds (PostgreSQL's TIMESTAMPTZ, as in
// Auth.js's pg schema) holding a time another writer stored with
// microseconds still matches the from read from it. The session is
// returned by the UPDATE … RETURNING on PostgreSQL and SQLite, and read in
// the UPDATE's transaction on MySQL and MariaDB; when nothing changed, a
// SELECT reads it as stored.
func (a *Adapter) ExtendSession(ctx context.Context, sessionToken string, from, expires time.Time) (*core.Session, bool, error) {
	const m = core.MethodExtendSession
	type extended struct {
		session *core.Session
		wrote   bool
	}
	r, err := guard(a, a.enter, func() (extended, error) {
		exp := core.NormalizeTime(expires)
		if err := checkTime(m, "expires", &exp); err != nil {
			return extended{}, err
		}
		// No stored expiry is before minTime: a from before it matches
		// none, as minTime itself does.
		before := core.NormalizeTime(from).Add(core.TimePrecision)
		if before.Before(minTime) {
			before = minTime
		}
		args := append([]any{a.d.timeArg(exp)}, a.stampArgs(TableSessions, false)...)
		args = append(args, sessionToken, a.d.timeArg(before))
		var row expiryRow
		wrote, found, err := a.updateIf(ctx, a.qs().extendSession, a.qs().selectSession, args, []any{sessionToken}, row.dest())
		if err != nil || !found {
			return extended{}, a.wrap(err)
		}
		return extended{row.session(), wrote}, nil
	})
	return r.session, r.wrote, err
}

// DeleteSession implements [core.SessionDeleter] with one DELETE …
// RETURNING (a transaction where the dialect lacks it).
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	var r expiryRow
	return deleteOne(ctx, a, func(q *queries) deletion { return q.deleteSession }, r.dest(),
		func() (*core.Session, error) { return r.session(), nil }, sessionToken)
}

// purgeBatch is how many rows one statement of [Adapter.PurgeExpired]
// deletes at most.
const purgeBatch = 5000

// PurgeExpired implements [core.ExpiredPurger]: it deletes every session and
// verification token whose expiry is not after now, in bounded batches of
// at most 5,000 rows per statement, each its own short transaction, until a
// batch finds fewer; so a purge of millions of rows never holds its locks
// (or grows a transaction log) for long, and concurrent calls go on. It
// checks ctx between batches: when ctx is done it stops and returns what it
// deleted so far with ctx's error. Run it periodically (say hourly);
// expired records are never returned meanwhile. An index on each table's
// expires column (created by [Adapter.Migrate] and the shipped schema)
// lets every batch find its rows without reading the table.
func (a *Adapter) PurgeExpired(ctx context.Context) (core.PurgeResult, error) {
	return guard(a, a.enter, func() (core.PurgeResult, error) {
		now := a.d.timeArg(core.NormalizeTime(a.now()))
		var res core.PurgeResult
		var err error
		res.Sessions, err = a.purge(ctx, a.qs().purgeSessions, now)
		if err != nil {
			return res, a.wrap(err)
		}
		res.VerificationTokens, err = a.purge(ctx, a.qs().purgeTokens, now)
		if err != nil {
			return res, a.wrap(err)
		}
		return res, nil
	})
}

// purge runs the batched DELETE s until a batch deletes fewer rows than
// the batch size, and returns how many rows it deleted.
func (a *Adapter) purge(ctx context.Context, s *statement, now any) (int, error) {
	batch := a.purgeBatch
	if batch <= 0 {
		batch = purgeBatch
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := a.affected(ctx, nil, s, now, batch)
		if err != nil {
			return total, err
		}
		total += int(n)
		if a.afterPurgeBatch != nil {
			a.afterPurgeBatch(int(n))
		}
		if n < int64(batch) {
			return total, nil
		}
	}
}
