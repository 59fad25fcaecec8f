package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"

	"github.com/authport/authport/core"
)

// LinkAccount implements [core.AccountLinker] with one INSERT. An unknown
// user is reported by the foreign key, as [core.ErrNotFound] (with
// [WithoutForeignKeys]: checked first, in the INSERT's transaction). An
// account with a password hash is refused ([core.InputError]) when the
// accounts table keeps none (see [WithPasswordHashColumn]).
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	const m = core.MethodLinkAccount
	return created(a, a.enter, account.Normalize(), func(acc *core.Account) error {
		q := a.qs()
		if acc.PasswordHash != nil && !q.keepsPasswords() {
			return a.noPasswordColumn(m)
		}
		tokens, err := a.tokenArgs(m, acc)
		if err != nil {
			return err
		}
		args := make([]any, 0, 4+numOptionalAccountColumns)
		args = append(args, acc.UserID)
		if q.names.Account.Type != Omit {
			args = append(args, string(acc.Type))
		}
		args = append(args, acc.Provider, acc.ProviderAccountID)
		for i, v := range tokens {
			if q.accountCols[i] {
				args = append(args, v)
			}
		}
		args = append(args, a.stampArgs(TableAccounts, true)...)
		if err := a.insertForUser(ctx, acc.UserID, q.linkAccount, args...); err != nil {
			return err
		}
		dropOmitted(q, acc)
		return nil
	})
}

// noPasswordColumn is the [*core.InputError] of a password hash the
// accounts table has no column for: the adapter is configured without one,
// or an existing table lacks it.
func (a *Adapter) noPasswordColumn(m core.Method) error {
	reason := "this adapter keeps no password hashes (name the accounts table's column with WithPasswordHashColumn)"
	if c := a.names.Account.Password; c != Omit {
		reason = fmt.Sprintf("table %s has no column %q yet: run Migrate, or %s", a.names.Accounts, c,
			a.addColumnDDL(a.names.Accounts, column{c, tText, true}, false))
	}
	return &core.InputError{Method: string(m), Field: "passwordHash", Reason: reason}
}

// dropOmitted clears the fields whose columns q's tables lack (see
// [Omit]), and derives the type where there is no type column, so that
// what LinkAccount returns is what is read back.
func dropOmitted(q *queries, acc *core.Account) {
	if q.names.Account.Type == Omit {
		acc.Type = derivedAccountType(acc.Provider)
	}
	for i, p := range tokenFields(acc) {
		if !q.accountCols[i] {
			reflect.ValueOf(p).Elem().SetZero()
		}
	}
}

// tokenFields returns pointers to the optional fields of acc (the nine
// token fields and the password hash), in the order of the optional
// account columns (queries.accountCols).
func tokenFields(acc *core.Account) [numOptionalAccountColumns]any {
	return [...]any{&acc.AccessToken, &acc.AuthorizationDetails, &acc.ExpiresAt, &acc.ExpiresIn,
		&acc.IDToken, &acc.RefreshToken, &acc.Scope, &acc.TokenType, &acc.SessionState, &acc.PasswordHash}
}

// tokenArgs is the package's tokenArgs with the expiry as the accounts
// table stores it (see expiryArg).
func (a *Adapter) tokenArgs(m core.Method, acc *core.Account) ([numOptionalAccountColumns]any, error) {
	out, err := tokenArgs(m, acc)
	if err != nil {
		return out, err
	}
	out[2], err = a.expiryArg(m, acc.ExpiresAt)
	return out, err
}

// tokenArgs returns the bind values of acc's optional fields, in the
// order of tokenFields.
func tokenArgs(m core.Method, acc *core.Account) ([numOptionalAccountColumns]any, error) {
	details, err := encodeDetails(acc.AuthorizationDetails)
	if err != nil {
		return [numOptionalAccountColumns]any{}, &core.InputError{Method: string(m), Field: "authorization_details", Reason: "cannot be encoded as JSON: " + err.Error()}
	}
	return [...]any{nullStr(acc.AccessToken), details, nullInt(acc.ExpiresAt), nullInt(acc.ExpiresIn),
		nullStr(acc.IDToken), nullStr(acc.RefreshToken), nullStr(acc.Scope), nullStr(acc.TokenType),
		nullStr(acc.SessionState), nullStr(acc.PasswordHash)}, nil
}

// GetAccount implements [core.AccountGetter] with one SELECT.
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	return guard(a, a.enter, func() (*core.Account, error) {
		r := accountRow{timeExpiry: a.d.shape.expiryTime}
		return a.scannedAccount(&r, a.queryRow(ctx, nil, a.qs().getAccount, provider, providerAccountID).Scan(r.dest()...))
	})
}

// scannedAccount turns the scan of one account row into a method's
// result: no row (or a key the database cannot convert to its column's
// type) is nil, nil.
func (a *Adapter) scannedAccount(r *accountRow, err error) (*core.Account, error) {
	if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(err)
	}
	acc, err := r.account()
	if err != nil {
		return nil, a.wrap(err)
	}
	return acc, nil
}

// UnlinkAccount implements [core.AccountUnlinker] with one DELETE …
// RETURNING (a transaction where the dialect lacks it).
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	r := accountRow{timeExpiry: a.d.shape.expiryTime}
	return deleteOne(ctx, a, func(q *queries) deletion { return q.unlinkAccount }, r.dest(),
		func() (*core.Account, error) { return a.scannedAccount(&r, nil) }, key.Provider, key.ProviderAccountID)
}

// ListAccountsByUserID implements [core.AccountsByUserLister] with one
// SELECT. The result is ordered by provider, then provider account id,
// byte for byte whatever the columns' collation; an unknown user gives an
// empty list.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	return guard(a, a.enter, func() ([]core.Account, error) {
		return list(ctx, a, a.qs().listAccounts, []any{userID}, func(rows *sql.Rows) (core.Account, error) {
			r := accountRow{timeExpiry: a.d.shape.expiryTime}
			if err := rows.Scan(r.dest()...); err != nil {
				return core.Account{}, err
			}
			acc, err := r.account()
			if err != nil {
				return core.Account{}, err
			}
			return *acc, nil
		}, core.CompareAccounts)
	})
}

// UpdateAccount implements [core.AccountUpdater] with one UPDATE of only
// the columns the update sets (… RETURNING on PostgreSQL and SQLite; an
// UPDATE and a SELECT in one transaction on MySQL and MariaDB). Fields
// whose columns are omitted ([Omit]) are not stored and read back nil.
func (a *Adapter) UpdateAccount(ctx context.Context, up core.AccountUpdate) (*core.Account, error) {
	const m = core.MethodUpdateAccount
	return guard(a, a.enter, func() (*core.Account, error) {
		q := a.qs()
		probe := up.Apply(core.Account{})
		tokens, err := a.tokenArgs(m, &probe)
		if err != nil {
			return nil, err
		}
		// The password hash changes only through SwapPasswordHash.
		given := [numOptionalAccountColumns]bool{up.AccessToken.Set, up.AuthorizationDetails.Set, up.ExpiresAt.Set, up.ExpiresIn.Set,
			up.IDToken.Set, up.RefreshToken.Set, up.Scope.Set, up.TokenType.Set, up.SessionState.Set}
		var set []string
		var args []any
		for i, col := range q.accountColumns[4:] {
			if given[i] && col != Omit {
				set, args = append(set, col), append(args, tokens[i])
			}
		}
		key := []any{up.Provider, up.ProviderAccountID}
		r := accountRow{timeExpiry: a.d.shape.expiryTime}
		switch {
		case len(set) == 0:
			err = a.queryRow(ctx, nil, q.getAccount, key...).Scan(r.dest()...)
		case a.d.updateReturning:
			s := &statement{sql: builder{d: &a.d, stamps: a.stamps}.updateAccount(a.names, set, q.accountColumns)}
			args = append(append(args, a.stampArgs(TableAccounts, false)...), key...)
			err = a.queryRow(ctx, nil, s, args...).Scan(r.dest()...)
		default:
			s := &statement{sql: builder{d: &a.d, stamps: a.stamps}.updateAccount(a.names, set, nil)}
			args = append(append(args, a.stampArgs(TableAccounts, false)...), key...)
			err = a.inTx(ctx, []*statement{q.getAccount}, func(tx *sql.Tx) error {
				if _, err := a.exec(ctx, tx, s, args...); err != nil {
					return err
				}
				return a.queryRow(ctx, tx, q.getAccount, key...).Scan(r.dest()...)
			})
		}
		return a.scannedAccount(&r, err)
	})
}

// swapAttempts bounds SwapPasswordHash's rounds (see there).
const swapAttempts = 5

// SwapPasswordHash implements [core.PasswordHashSwapper] with one
// conditional UPDATE: UPDATE accounts SET password = $1 WHERE provider = $2
// AND providerAccountId = $3 AND password = $4 (password IS NULL when
// oldHash is ""), … RETURNING on PostgreSQL and SQLite; on MySQL and
// MariaDB the UPDATE and a SELECT run in one transaction. The hash is
// replaced only where it is still the one the caller read, so a change, a
// reset and a sign-in's re-hash never undo each other.
//
// When the UPDATE changes no row, the account is read: no account is nil,
// nil; a stored hash other than oldHash is that account and an error
// matching [core.ErrPasswordHashChanged]. A stored hash equal to oldHash
// means the account was created, or its hash set back, between the two
// statements: the UPDATE runs again (a few times at most), so that neither
// answer reports a state the account was not in.
func (a *Adapter) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	const m = core.MethodSwapPasswordHash
	return guard(a, a.enter, func() (*core.Account, error) {
		q := a.qs()
		if !q.keepsPasswords() {
			return nil, a.noPasswordColumn(m)
		}
		if newHash == "" {
			return nil, &core.InputError{Method: string(m), Field: "newHash", Reason: "must not be empty"}
		}
		s, args := q.swapPassword, []any{newHash}
		args = append(append(args, a.stampArgs(TableAccounts, false)...), key.Provider, key.ProviderAccountID)
		if oldHash == "" {
			s = q.setPassword
		} else {
			args = append(args, oldHash)
		}
		k := []any{key.Provider, key.ProviderAccountID}
		for range swapAttempts {
			r := accountRow{timeExpiry: a.d.shape.expiryTime}
			updated, found, err := a.updateIf(ctx, s, q.getAccount, args, k, r.dest())
			if keyUnusable(err) {
				return nil, nil
			}
			if err != nil {
				return nil, a.wrap(err)
			}
			if !found {
				return nil, nil
			}
			acc, err := r.account()
			if err != nil {
				return nil, a.wrap(err)
			}
			if updated {
				return acc, nil
			}
			if !holdsHash(acc.PasswordHash, oldHash) {
				return acc, fmt.Errorf("account %s/%s: %w", key.Provider, key.ProviderAccountID, core.ErrPasswordHashChanged)
			}
		}
		return nil, fmt.Errorf("account %s/%s: its password hash kept changing back to the one expected while it was swapped; try again", key.Provider, key.ProviderAccountID)
	})
}

// holdsHash reports whether a stored password hash is the one expected:
// NULL for "", else the same string.
func holdsHash(stored *string, want string) bool {
	if stored == nil {
		return want == ""
	}
	return want != "" && *stored == want
}
