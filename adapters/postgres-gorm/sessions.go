package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/authport/authport/core"
)

// CreateSession implements [core.SessionCreator] with one INSERT, of the
// session and the metadata columns the table keeps (see [SessionColumns];
// a zero time or an empty string is stored as NULL). The session returned
// is the one stored: metadata without a column is cleared. An unknown user
// is reported by the foreign key, as [core.ErrNotFound] (with
// [WithoutForeignKeys]: checked first, in the INSERT's transaction).
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	return created(a, a.enter, session.Normalize(), func(s *core.Session) error {
		q := a.qs()
		meta, err := q.meta.insertArgs(a, s)
		if err != nil {
			return err
		}
		return a.insertExpiring(ctx, q, core.MethodCreateSession, TableSessions, s.SessionToken, s.UserID, &s.Expires, meta...)
	})
}

// insertExpiring inserts, with q's statements, a session (t is
// TableSessions: second is its user, checked as insertForUser does) or a
// verification token: the two key columns, expires, the values of more
// columns (a session's metadata), then t's timestamp columns.
func (a *Adapter) insertExpiring(ctx context.Context, q *queries, m core.Method, t Table, first, second string, expires *time.Time, more ...any) error {
	if err := checkTime(m, "expires", expires); err != nil {
		return err
	}
	args := append(append([]any{first, second, a.d.timeArg(*expires)}, more...), a.stampArgs(t, true)...)
	if t == TableSessions {
		return a.insertForUser(ctx, second, q.createSession, args...)
	}
	_, err := a.exec(ctx, nil, q.createToken, args...)
	return a.wrap(err)
}

// sessionMeta is where the sessions table keeps the session metadata: the
// columns of CreatedAt, UpdatedAt, IPAddress and UserAgent, in that order
// ([Omit]: not kept), and whether the first two are timestamp columns
// ([WithTimestampColumns]: NOT NULL, filled with the adapter's clock when
// the session gives no time).
type sessionMeta struct {
	cols    [4]string
	stamped [2]bool
}

// kept returns the columns kept, in order.
func (m sessionMeta) kept() []string {
	var out []string
	for _, c := range m.cols {
		if c != Omit {
			out = append(out, c)
		}
	}
	return out
}

// keepsAll reports whether all four are kept.
func (m sessionMeta) keepsAll() bool { return len(m.kept()) == len(m.cols) }

// keepsUpdated reports whether UpdatedAt is kept.
func (m sessionMeta) keepsUpdated() bool { return m.cols[1] != Omit }

// timeValue returns the bind value of metadata time i (0 created, 1
// updated) given as *t: NULL when zero, or the clock's time when the
// column is stamped, in which case *t is set to it.
func (m sessionMeta) timeValue(a *Adapter, method core.Method, i int, t *time.Time) (any, error) {
	if t.IsZero() {
		if !m.stamped[i] {
			return nil, nil
		}
		*t = core.NormalizeTime(a.now())
	}
	if err := checkTime(method, [2]string{"createdAt", "updatedAt"}[i], t); err != nil {
		return nil, err
	}
	return a.d.timeArg(*t), nil
}

// insertArgs returns the bind values of the kept metadata columns of s,
// in the order of kept(), and leaves in s what is stored: the fields
// without a column cleared, stamped times filled in.
func (m sessionMeta) insertArgs(a *Adapter, s *core.Session) ([]any, error) {
	out := make([]any, 0, len(m.cols))
	for i, t := range [2]*time.Time{&s.CreatedAt, &s.UpdatedAt} {
		if m.cols[i] == Omit {
			*t = time.Time{}
			continue
		}
		v, err := m.timeValue(a, core.MethodCreateSession, i, t)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	for i, p := range [2]*string{&s.IPAddress, &s.UserAgent} {
		switch {
		case m.cols[2+i] == Omit:
			*p = ""
		case *p == "":
			out = append(out, nil)
		default:
			out = append(out, *p)
		}
	}
	return out, nil
}

// updatedArgs returns the bind values of updateSession's CASE for the
// updated column (whether to set it, and its value), none when it is not
// kept: the update's UpdatedAt when set; a stamped column is set on every
// update, to the clock's time when the update gives none.
func (m sessionMeta) updatedArgs(a *Adapter, up core.Field[time.Time]) ([]any, error) {
	if !m.keepsUpdated() {
		return nil, nil
	}
	var t time.Time
	if up.Set {
		t = core.NormalizeTime(up.Value)
		if up.Value.IsZero() {
			t = time.Time{}
		}
	}
	v, err := m.timeValue(a, core.MethodUpdateSession, 1, &t)
	return []any{up.Set || m.stamped[1], v}, err
}

// KeepsSessionMetadata implements [core.SessionMetadataKeeper]: it reports
// whether the sessions table keeps all four metadata columns (see
// [SessionColumns]; the Auth.js presets keep none). With some kept and
// others omitted, those kept are still stored and listed. A column named
// but missing from an existing table is not kept (see [Adapter.Migrate],
// which adds it).
func (a *Adapter) KeepsSessionMetadata() bool { return a.qs().meta.keepsAll() }

// GetSessionAndUser implements [core.SessionAndUserGetter] with one SELECT
// joining sessions to users. An expired session is not returned; it is
// deleted then (SPEC §3: removed when accessed), by a DELETE that matches
// it only while it is still expired, so that a concurrent extension wins.
func (a *Adapter) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	return guard(a, a.enter, func() (*core.SessionAndUser, error) {
		q := a.qs()
		var su *core.SessionAndUser
		if a.reader != nil {
			var err error
			if su, err = a.getSessionAndUserRead(ctx, q, sessionToken); su == nil {
				return nil, err
			}
		} else {
			var s expiryRow
			u := newUserRow(q)
			err := a.queryRow(ctx, nil, q.getSessionAndUser, sessionToken).Scan(append(s.dest(), u.dest()...)...)
			if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
				return nil, nil
			}
			if err != nil {
				return nil, a.wrap(err)
			}
			su = &core.SessionAndUser{Session: *s.session(), User: *u.user()}
		}
		if now := a.now(); su.Session.Expired(now) {
			if _, err := a.exec(ctx, nil, q.deleteExpiredSession, sessionToken, a.d.timeArg(core.NormalizeTime(now))); err != nil {
				return nil, a.wrap(err)
			}
			return nil, nil
		}
		return su, nil
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
		q := a.qs()
		updated, err := q.meta.updatedArgs(a, up.UpdatedAt)
		if err != nil {
			return nil, err
		}
		args := append(append([]any{up.UserID.Set, userID, up.Expires.Set, expires}, updated...), a.stampArgs(TableSessions, false)...)
		args = append(args, up.SessionToken)
		var r expiryRow
		update := func(tx *sql.Tx) error {
			if a.d.updateReturning {
				return a.queryRow(ctx, tx, q.updateSession, args...).Scan(r.dest()...)
			}
			if _, err := a.exec(ctx, tx, q.updateSession, args...); err != nil {
				return err
			}
			return a.queryRow(ctx, tx, q.selectSession, up.SessionToken).Scan(r.dest()...)
		}
		switch {
		case a.noFK && up.UserID.Set:
			err = a.inTx(ctx, []*statement{q.lockUser, q.updateSession, q.selectSession}, func(tx *sql.Tx) error {
				if err := a.requireUser(ctx, tx, up.UserID.Value); !errors.Is(err, errNoUser) {
					if err != nil {
						return err
					}
					return update(tx)
				}
				// No such user: an error if the session exists (as the
				// foreign key would report it), else nothing to update.
				var s expiryRow
				if err := a.queryRow(ctx, tx, q.selectSession, up.SessionToken).Scan(s.dest()...); err != nil {
					return err
				}
				return errNoUser
			})
		case a.d.updateReturning:
			err = update(nil)
		default:
			err = a.inTx(ctx, []*statement{q.updateSession, q.selectSession}, update)
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
// SELECT reads it as stored. Where the table keeps UpdatedAt, the same
// UPDATE sets it to seen (the adapter's clock when seen is zero). The
// session returned has no metadata.
func (a *Adapter) ExtendSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*core.Session, bool, error) {
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
		q := a.qs()
		args := []any{a.d.timeArg(exp)}
		if q.meta.keepsUpdated() {
			if seen.IsZero() { // core.Store refuses it; a direct caller gets the clock
				seen = a.now()
			}
			seen = core.NormalizeTime(seen)
			v, err := q.meta.timeValue(a, m, 1, &seen)
			if err != nil {
				return extended{}, err
			}
			args = append(args, v)
		}
		args = append(append(args, a.stampArgs(TableSessions, false)...), sessionToken, a.d.timeArg(before))
		var row expiryRow
		wrote, found, err := a.updateIf(ctx, q.extendSession, q.selectSession, args, []any{sessionToken}, row.dest())
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

// ListSessionsByUserID implements [core.SessionsByUserLister] with one
// SELECT on the sessions table's userId index:
//
//	SELECT sessionToken, userId, expires, createdAt, updatedAt, ipAddress, userAgent
//	FROM sessions WHERE userId = $1 AND expires > $2 ORDER BY sessionToken
//
// (NULL in place of a metadata column the table does not keep). The list
// is ordered byte for byte by token ([core.CompareSessions]) whatever the
// column's collation, and a session the adapter's clock finds expired is
// left out however its expiry was stored. It writes nothing: the rows are
// the sessions themselves, with no index of the adapter's own to prune;
// expired rows stay until [Adapter.PurgeExpired] or a getSessionAndUser
// of them deletes them, and are never listed meanwhile.
func (a *Adapter) ListSessionsByUserID(ctx context.Context, userID string) ([]core.Session, error) {
	return guard(a, a.enter, func() ([]core.Session, error) {
		now := core.NormalizeTime(a.now())
		out, err := list(ctx, a, a.qs().listSessions, []any{userID, a.d.timeArg(now)}, func(rows *sql.Rows) (core.Session, error) {
			var r sessionRow
			err := rows.Scan(r.dest()...)
			return r.session(), err
		}, core.CompareSessions)
		return slices.DeleteFunc(out, func(s core.Session) bool { return s.Expired(now) }), err
	})
}

// DeleteSessionsByUserID implements [core.SessionsByUserDeleter] with one
// statement where the dialect has DELETE … RETURNING (PostgreSQL, SQLite ≥
// 3.35, MariaDB ≥ 10.5):
//
//	DELETE FROM sessions WHERE userId = $1 AND sessionToken <> $2 RETURNING expires
//
// and elsewhere one transaction: the same rows' expiries read with SELECT
// … FOR UPDATE (on InnoDB it locks the rows and the gaps between them, so
// no session of the user is inserted in between), then the DELETE. It
// returns how many of the deleted sessions had not expired by the
// adapter's clock. The DELETE is atomic: a concurrent createSession's row
// is deleted whole or not at all, and an extendSession or updateSession of
// a deleted session finds no row to change (an UPDATE never brings a row
// back). except names a session of another user, or none: the condition
// then keeps nothing of this user's, and touches nothing of the other
// user's. On MySQL and MariaDB, InnoDB may end the delete as the victim of
// a deadlock with concurrent createSessions of the user (each inserts its
// row, then waits for the range the delete has locked); it was rolled back
// whole, and runs again, up to deadlockRetries times.
func (a *Adapter) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	return guard(a, a.enter, func() (int, error) {
		d := a.qs().deleteUserSessionsExcept
		var expiries []time.Time
		collect := func(rows *sql.Rows, err error) error {
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var t nullTime
				if err := rows.Scan(&t); err != nil {
					return err
				}
				expiries = append(expiries, t.t)
			}
			return rows.Err()
		}
		var err error
		for attempt := 0; ; attempt++ {
			expiries = expiries[:0]
			if a.d.deleteReturning {
				err = collect(a.on(ctx, nil, d.returning).QueryContext(ctx, userID, except))
			} else {
				err = a.inTx(ctx, []*statement{d.lock, d.plain}, func(tx *sql.Tx) error {
					if err := collect(a.on(ctx, tx, d.lock).QueryContext(ctx, userID, except)); err != nil {
						return err
					}
					_, err := a.exec(ctx, tx, d.plain, userID, except)
					return err
				})
			}
			if attempt == deadlockRetries || ctx.Err() != nil || !isDeadlock(err) {
				break
			}
		}
		if keyUnusable(err) {
			return 0, nil
		}
		if err != nil {
			return 0, a.wrap(err)
		}
		now, n := a.now(), 0
		for _, t := range expiries {
			if now.Before(t) {
				n++
			}
		}
		return n, nil
	})
}

// deadlockRetries is how many times DeleteSessionsByUserID runs again
// after InnoDB rolled it back to break a deadlock.
const deadlockRetries = 5

// isDeadlock reports MySQL's and MariaDB's ER_LOCK_DEADLOCK (1213): the
// server rolled the transaction back to break a deadlock.
func isDeadlock(err error) bool {
	n, ok := mysqlNumber(err)
	return ok && n == 1213
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
