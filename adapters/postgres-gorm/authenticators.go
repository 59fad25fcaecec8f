package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
)

// CreateAuthenticator implements [core.AuthenticatorCreator] with one
// INSERT. An unknown user is reported by the foreign key, as
// [core.ErrNotFound] (with [WithoutForeignKeys]: checked first, in the
// INSERT's transaction).
func (a *Adapter) CreateAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	return created(a, a.enterAuthenticators, authenticator.Clone(), func(au *core.Authenticator) error {
		args := append([]any{au.CredentialID, au.CredentialPublicKey, au.Counter, au.CredentialBackedUp,
			au.CredentialDeviceType, au.ProviderAccountID, au.UserID, nullStr(au.Transports)},
			a.stampArgs(TableAuthenticators, true)...)
		return a.insertForUser(ctx, au.UserID, a.qs().createAuthenticator, args...)
	})
}

// GetAuthenticator implements [core.AuthenticatorGetter] with one SELECT.
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	return guard(a, a.enterAuthenticators, func() (*core.Authenticator, error) {
		var r authenticatorRow
		err := a.queryRow(ctx, nil, a.qs().getAuthenticator, credentialID).Scan(r.dest()...)
		if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
			return nil, nil
		}
		if err != nil {
			return nil, a.wrap(err)
		}
		au := r.authenticator()
		return &au, nil
	})
}

// ListAuthenticatorsByUserID implements [core.AuthenticatorsByUserLister]
// with one SELECT. The result is ordered by credential id byte for byte,
// whatever the column's collation; an unknown user gives an empty list.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	return guard(a, a.enterAuthenticators, func() ([]core.Authenticator, error) {
		return list(ctx, a, a.qs().listAuthenticators, []any{userID}, func(rows *sql.Rows) (core.Authenticator, error) {
			var r authenticatorRow
			err := rows.Scan(r.dest()...)
			return r.authenticator(), err
		}, core.CompareAuthenticators)
	})
}

// UpdateAuthenticatorCounter implements [core.AuthenticatorCounterUpdater]:
// one UPDATE … RETURNING on PostgreSQL and SQLite, an UPDATE and a SELECT in
// one transaction on MySQL and MariaDB.
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return guard(a, a.enterAuthenticators, func() (*core.Authenticator, error) {
		args := append(append([]any{newCounter}, a.stampArgs(TableAuthenticators, false)...), credentialID)
		var r authenticatorRow
		var err error
		if a.d.updateReturning {
			err = a.queryRow(ctx, nil, a.qs().updateCounter, args...).Scan(r.dest()...)
		} else {
			err = a.inTx(ctx, []*statement{a.qs().updateCounter, a.qs().getAuthenticator}, func(tx *sql.Tx) error {
				if _, err := a.exec(ctx, tx, a.qs().updateCounter, args...); err != nil {
					return err
				}
				return a.queryRow(ctx, tx, a.qs().getAuthenticator, credentialID).Scan(r.dest()...)
			})
		}
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("authenticator %q: %w", credentialID, core.ErrNotFound)
		}
		if err != nil {
			return nil, a.wrap(err)
		}
		au := r.authenticator()
		return &au, nil
	})
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
	return guard(a, a.enterAuthenticators, func() (*core.Authenticator, error) {
		var r authenticatorRow
		q := a.qs()
		var updated, found bool
		var err error
		if newCounter > 0 {
			args := append(append([]any{newCounter}, a.stampArgs(TableAuthenticators, false)...), credentialID, newCounter)
			updated, found, err = a.updateIf(ctx, q.advanceCounter, q.getAuthenticator, args, []any{credentialID}, r.dest())
		} else {
			found, err = a.read(ctx, nil, q.getAuthenticator, r.dest(), credentialID)
		}
		if err != nil {
			return nil, a.wrap(err)
		}
		if !found {
			return nil, fmt.Errorf("authenticator %q: %w", credentialID, core.ErrNotFound)
		}
		if !updated {
			if stored := r.authenticator().Counter; !core.CounterAdvances(stored, newCounter) {
				return nil, fmt.Errorf("authenticator %q: stored %d, reported %d: %w", credentialID, stored, newCounter, core.ErrCounterNotIncreased)
			}
			if newCounter != 0 {
				// The update found the counter not below newCounter; the read
				// saw it below: it was lowered in between, which this adapter
				// never does. Report the race rather than guess.
				return nil, fmt.Errorf("authenticator %q: the stored counter changed during the call: %w", credentialID, core.ErrCounterNotIncreased)
			}
		}
		au := r.authenticator()
		return &au, nil
	})
}

// enterAuthenticators is enter for the authenticator methods, which fail
// when the authenticators table is omitted.
func (a *Adapter) enterAuthenticators() error {
	if err := a.enter(); err != nil {
		return err
	}
	if a.names.Authenticators == Omit {
		a.leave()
		return errNoAuthenticators()
	}
	return nil
}

// OmittedMethods implements [core.MethodOmitter]: the methods this
// instance does not support, so that [core.Probe], [core.Require] and
// [core.Store] treat them as missing. With the authenticators table omitted
// ([Names].Authenticators is [Omit], as in the [AuthJSPg] and
// [AuthJSKysely] presets): the authenticator methods and the counter
// extension. Without a username column ([UserColumns.Username] [Omit], as
// in every Auth.js preset): getUserByUsername, so that core.Store refuses
// a username. Without a password hash column ([AccountColumns.Password]
// [Omit], as in every Auth.js preset): swapPasswordHash, so that
// core.Store refuses a password hash. Without a factors table
// ([Names].Factors [Omit], as in every Auth.js preset; see
// [WithFactorsTable]): the four factor methods.
func (a *Adapter) OmittedMethods() []core.Method {
	var out []core.Method
	if a.names.Authenticators == Omit {
		out = append(out, core.MethodCreateAuthenticator, core.MethodGetAuthenticator,
			core.MethodListAuthenticatorsByUserID, core.MethodUpdateAuthenticatorCounter,
			core.Method(core.ExtensionAdvanceAuthenticatorCounter))
	}
	if a.names.User.Username == Omit {
		out = append(out, core.MethodGetUserByUsername)
	}
	if a.names.Account.Password == Omit {
		out = append(out, core.MethodSwapPasswordHash)
	}
	if a.names.Factors == Omit {
		out = append(out, core.FactorMethods()...)
	}
	return out
}
