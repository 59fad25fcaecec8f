package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/authport/authport/core"
)

// CreateAuthenticator implements [core.AuthenticatorCreator] with one
// INSERT. An unknown user is reported by the foreign key, as
// [core.ErrNotFound] (with [WithoutForeignKeys]: checked first, in the
// INSERT's transaction).
func (a *Adapter) CreateAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	const m = "createAuthenticator"
	if err := a.enterAuthenticators(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if err := authenticator.Validate(); err != nil {
		return nil, err
	}
	au := authenticator.Clone()
	if err := checkUTF8(m, "credentialID", au.CredentialID, "credentialPublicKey", au.CredentialPublicKey,
		"credentialDeviceType", au.CredentialDeviceType, "providerAccountId", au.ProviderAccountID,
		"userId", au.UserID, "transports", deref(au.Transports)); err != nil {
		return nil, err
	}
	args := append([]any{au.CredentialID, au.CredentialPublicKey, au.Counter, au.CredentialBackedUp,
		au.CredentialDeviceType, au.ProviderAccountID, au.UserID, nullStr(au.Transports)},
		a.stampArgs(TableAuthenticators, true)...)
	if err := a.insertForUser(ctx, m, au.UserID, a.q.createAuthenticator, args...); err != nil {
		return nil, err
	}
	return &au, nil
}

// GetAuthenticator implements [core.AuthenticatorGetter] with one SELECT.
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	const m = "getAuthenticator"
	if err := a.enterAuthenticators(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if !a.d.storable(credentialID) {
		return nil, none(ctx, m)
	}
	var r authenticatorRow
	err := a.queryRow(ctx, nil, a.q.getAuthenticator, credentialID).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	au := r.authenticator()
	return &au, nil
}

// ListAuthenticatorsByUserID implements [core.AuthenticatorsByUserLister]
// with one SELECT. The result is ordered by credential id byte for byte,
// whatever the column's collation; an unknown user gives an empty list.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	const m = "listAuthenticatorsByUserId"
	if err := a.enterAuthenticators(m); err != nil {
		return nil, err
	}
	defer a.leave()
	out := []core.Authenticator{}
	if !a.d.storable(userID) {
		return out, none(ctx, m)
	}
	rows, err := a.query(ctx, a.q.listAuthenticators, userID)
	if keyUnusable(err) {
		return out, nil
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r authenticatorRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, a.wrap(m, err)
		}
		out = append(out, r.authenticator())
	}
	if err := rows.Err(); keyUnusable(err) {
		return []core.Authenticator{}, nil
	} else if err != nil {
		return nil, a.wrap(m, err)
	}
	slices.SortFunc(out, func(x, y core.Authenticator) int { return strings.Compare(x.CredentialID, y.CredentialID) })
	return out, nil
}

// UpdateAuthenticatorCounter implements [core.AuthenticatorCounterUpdater]:
// one UPDATE … RETURNING on PostgreSQL and SQLite, an UPDATE and a SELECT in
// one transaction on MySQL and MariaDB.
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	const m = "updateAuthenticatorCounter"
	if err := a.enterAuthenticators(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if newCounter < 0 {
		return nil, &core.InputError{Method: m, Field: "counter", Reason: "must not be negative"}
	}
	if credentialID == "" {
		return nil, &core.InputError{Method: m, Field: "credentialID", Reason: "must not be empty"}
	}
	if !a.d.storable(credentialID) {
		return nil, fmt.Errorf("%s: authenticator %q: %w", m, credentialID, core.ErrNotFound)
	}
	args := append(append([]any{newCounter}, a.stampArgs(TableAuthenticators, false)...), credentialID)
	var r authenticatorRow
	var err error
	if a.d.updateReturning {
		err = a.queryRow(ctx, nil, a.q.updateCounter, args...).Scan(r.dest()...)
	} else {
		err = a.inTx(ctx, []*statement{a.q.updateCounter, a.q.getAuthenticator}, func(tx *sql.Tx) error {
			if _, err := a.exec(ctx, tx, a.q.updateCounter, args...); err != nil {
				return err
			}
			return a.queryRow(ctx, tx, a.q.getAuthenticator, credentialID).Scan(r.dest()...)
		})
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: authenticator %q: %w", m, credentialID, core.ErrNotFound)
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	au := r.authenticator()
	return &au, nil
}

// AdvanceAuthenticatorCounter implements
// [core.AuthenticatorCounterAdvancer] with one conditional UPDATE (… WHERE
// counter < new), which the database applies atomically: of concurrent
// calls with the same counter, one updates the row and the others find the
// condition false. When no row was updated, a read tells an unknown
// credential ([core.ErrNotFound]) from a counter that did not increase
// ([core.ErrCounterNotIncreased]). A new counter of 0 is only read: it
// passes when the stored counter is 0 too.
func (a *Adapter) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	const m = string(core.ExtensionAdvanceAuthenticatorCounter)
	if err := a.enterAuthenticators(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if newCounter < 0 {
		return nil, &core.InputError{Method: m, Field: "counter", Reason: "must not be negative"}
	}
	if credentialID == "" || !a.d.storable(credentialID) {
		return nil, fmt.Errorf("%s: authenticator %q: %w", m, credentialID, core.ErrNotFound)
	}
	var r authenticatorRow
	updated := false
	var err error
	if newCounter > 0 {
		args := append(append([]any{newCounter}, a.stampArgs(TableAuthenticators, false)...), credentialID, newCounter)
		if a.d.updateReturning {
			err = a.queryRow(ctx, nil, a.q.advanceCounter, args...).Scan(r.dest()...)
			updated = err == nil
			if errors.Is(err, sql.ErrNoRows) {
				err = nil
			}
		} else {
			err = a.inTx(ctx, []*statement{a.q.advanceCounter, a.q.getAuthenticator}, func(tx *sql.Tx) error {
				res, err := a.exec(ctx, tx, a.q.advanceCounter, args...)
				if err != nil {
					return err
				}
				n, err := res.RowsAffected()
				if err != nil || n == 0 {
					return err
				}
				updated = true
				return a.queryRow(ctx, tx, a.q.getAuthenticator, credentialID).Scan(r.dest()...)
			})
		}
		if err != nil {
			return nil, a.wrap(m, err)
		}
	}
	if !updated {
		err = a.queryRow(ctx, nil, a.q.getAuthenticator, credentialID).Scan(r.dest()...)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%s: authenticator %q: %w", m, credentialID, core.ErrNotFound)
		}
		if err != nil {
			return nil, a.wrap(m, err)
		}
		if stored := r.authenticator().Counter; !core.CounterAdvances(stored, newCounter) {
			return nil, fmt.Errorf("%s: authenticator %q: stored %d, reported %d: %w", m, credentialID, stored, newCounter, core.ErrCounterNotIncreased)
		}
		if newCounter != 0 {
			// The update found the counter not below newCounter; the read
			// saw it below: it was lowered in between, which this adapter
			// never does. Report the race rather than guess.
			return nil, fmt.Errorf("%s: authenticator %q: the stored counter changed during the call: %w", m, credentialID, core.ErrCounterNotIncreased)
		}
	}
	au := r.authenticator()
	return &au, nil
}

// enterAuthenticators is enter for the authenticator methods, which fail
// when the authenticators table is omitted.
func (a *Adapter) enterAuthenticators(m string) error {
	if err := a.enter(m); err != nil {
		return err
	}
	if a.names.Authenticators == Omit {
		a.leave()
		return errNoAuthenticators(m)
	}
	return nil
}
