package gormadapter

import (
	"context"
	"database/sql"
	"errors"

	"github.com/authport/authport/core"
)

// CreateSession implements [core.SessionCreator] with one INSERT. An
// unknown user is reported by the foreign key, as [core.ErrNotFound].
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	const m = "createSession"
	if err := session.Validate(); err != nil {
		return nil, err
	}
	s := session.Normalize()
	if err := checkUTF8(m, "sessionToken", s.SessionToken, "userId", s.UserID); err != nil {
		return nil, err
	}
	if _, err := a.exec(ctx, nil, a.q.createSession, s.SessionToken, s.UserID, a.d.timeArg(s.Expires)); err != nil {
		return nil, a.wrap(m, err)
	}
	return &s, nil
}

// GetSessionAndUser implements [core.SessionAndUserGetter] with one SELECT
// joining sessions to users. An expired session is not returned (and is
// left for [Adapter.PurgeExpired]).
func (a *Adapter) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	const m = "getSessionAndUser"
	if !a.d.storable(sessionToken) {
		return nil, none(ctx, m)
	}
	var s sessionRow
	var u userRow
	err := a.queryRow(ctx, nil, a.q.getSessionAndUser, sessionToken).Scan(
		&s.token, &s.userID, &s.expires, &u.id, &u.email, &u.verified, &u.name, &u.image)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	session := s.session()
	if session.Expired(a.now()) {
		return nil, nil
	}
	return &core.SessionAndUser{Session: *session, User: *u.user()}, nil
}

// UpdateSession implements [core.SessionUpdater]: one UPDATE … RETURNING on
// PostgreSQL and SQLite, an UPDATE and a SELECT in one transaction on MySQL
// and MariaDB.
func (a *Adapter) UpdateSession(ctx context.Context, up core.SessionUpdate) (*core.Session, error) {
	const m = "updateSession"
	if err := up.Validate(); err != nil {
		return nil, err
	}
	if !a.d.storable(up.SessionToken) {
		return nil, none(ctx, m)
	}
	if err := checkUTF8(m, "userId", up.UserID.Value); err != nil {
		return nil, err
	}
	var expires any
	if up.Expires.Set {
		if up.Expires.Value.IsZero() {
			return nil, &core.InputError{Method: m, Field: "expires", Reason: "must be set"}
		}
		expires = a.d.timeArg(core.NormalizeTime(up.Expires.Value))
	}
	args := []any{up.UserID.Set, up.UserID.Value, up.Expires.Set, expires, up.SessionToken}
	var r sessionRow
	var err error
	if a.d.updateReturning {
		err = a.queryRow(ctx, nil, a.q.updateSession, args...).Scan(r.dest()...)
	} else {
		err = a.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := a.exec(ctx, tx, a.q.updateSession, args...); err != nil {
				return err
			}
			return a.queryRow(ctx, tx, a.q.selectSession, up.SessionToken).Scan(r.dest()...)
		})
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	return r.session(), nil
}

// DeleteSession implements [core.SessionDeleter] with one DELETE …
// RETURNING (a transaction where the dialect lacks it).
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	const m = "deleteSession"
	if !a.d.storable(sessionToken) {
		return nil, none(ctx, m)
	}
	var r sessionRow
	found, err := a.deleteReturning(ctx, a.q.deleteSession, a.q.selectSessionForUpdate, a.q.deleteSessionPlain,
		r.dest(), sessionToken)
	if err != nil {
		return nil, a.wrap(m, err)
	}
	if !found {
		return nil, nil
	}
	return r.session(), nil
}

// PurgeExpired implements [core.ExpiredPurger]: it deletes every session and
// verification token whose expiry is not after now, with one DELETE per
// table. Run it periodically (say hourly); expired records are never
// returned meanwhile.
func (a *Adapter) PurgeExpired(ctx context.Context) (core.PurgeResult, error) {
	const m = "purgeExpired"
	now := a.d.timeArg(core.NormalizeTime(a.now()))
	var res core.PurgeResult
	r, err := a.exec(ctx, nil, a.q.purgeSessions, now)
	if err != nil {
		return res, a.wrap(m, err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return res, a.wrap(m, err)
	}
	res.Sessions = int(n)
	r, err = a.exec(ctx, nil, a.q.purgeTokens, now)
	if err != nil {
		return res, a.wrap(m, err)
	}
	n, err = r.RowsAffected()
	if err != nil {
		return res, a.wrap(m, err)
	}
	res.VerificationTokens = int(n)
	return res, nil
}
