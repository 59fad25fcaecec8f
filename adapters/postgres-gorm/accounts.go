package gormadapter

import (
	"context"
	"database/sql"
	"errors"
	"reflect"

	"github.com/authport/authport/core"
)

// LinkAccount implements [core.AccountLinker] with one INSERT. An unknown
// user is reported by the foreign key, as [core.ErrNotFound] (with
// [WithoutForeignKeys]: checked first, in the INSERT's transaction).
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	return created(a, a.enter, account.Normalize(), func(acc *core.Account) error {
		tokens, err := tokenArgs(core.MethodLinkAccount, acc)
		if err != nil {
			return err
		}
		args := make([]any, 0, 13)
		args = append(args, acc.UserID, string(acc.Type), acc.Provider, acc.ProviderAccountID)
		for i, v := range tokens {
			if a.qs().accountCols[i] {
				args = append(args, v)
			}
		}
		args = append(args, a.stampArgs(TableAccounts, true)...)
		if err := a.insertForUser(ctx, acc.UserID, a.qs().linkAccount, args...); err != nil {
			return err
		}
		a.dropOmitted(acc)
		return nil
	})
}

// dropOmitted clears the fields whose columns are omitted (see [Omit]), so
// that what LinkAccount returns is what is stored.
func (a *Adapter) dropOmitted(acc *core.Account) {
	for i, p := range tokenFields(acc) {
		if !a.qs().accountCols[i] {
			reflect.ValueOf(p).Elem().SetZero()
		}
	}
}

// tokenFields returns pointers to the nine token fields of acc, in the
// order of the optional account columns (queries.accountCols).
func tokenFields(acc *core.Account) [9]any {
	return [9]any{&acc.AccessToken, &acc.AuthorizationDetails, &acc.ExpiresAt, &acc.ExpiresIn,
		&acc.IDToken, &acc.RefreshToken, &acc.Scope, &acc.TokenType, &acc.SessionState}
}

// tokenArgs returns the bind values of acc's nine token fields, in the
// order of tokenFields.
func tokenArgs(m core.Method, acc *core.Account) ([9]any, error) {
	details, err := encodeDetails(acc.AuthorizationDetails)
	if err != nil {
		return [9]any{}, &core.InputError{Method: string(m), Field: "authorization_details", Reason: "cannot be encoded as JSON: " + err.Error()}
	}
	return [9]any{nullStr(acc.AccessToken), details, nullInt(acc.ExpiresAt), nullInt(acc.ExpiresIn),
		nullStr(acc.IDToken), nullStr(acc.RefreshToken), nullStr(acc.Scope), nullStr(acc.TokenType),
		nullStr(acc.SessionState)}, nil
}

// GetAccount implements [core.AccountGetter] with one SELECT.
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	return guard(a, a.enter, func() (*core.Account, error) {
		var r accountRow
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
	var r accountRow
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
			var r accountRow
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
		tokens, err := tokenArgs(m, &probe)
		if err != nil {
			return nil, err
		}
		given := [9]bool{up.AccessToken.Set, up.AuthorizationDetails.Set, up.ExpiresAt.Set, up.ExpiresIn.Set,
			up.IDToken.Set, up.RefreshToken.Set, up.Scope.Set, up.TokenType.Set, up.SessionState.Set}
		var set []string
		var args []any
		for i, col := range q.accountColumns[4:] {
			if given[i] && col != Omit {
				set, args = append(set, col), append(args, tokens[i])
			}
		}
		key := []any{up.Provider, up.ProviderAccountID}
		var r accountRow
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
