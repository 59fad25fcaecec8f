package gormadapter

import (
	"context"

	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one INSERT.
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	const m = core.MethodCreateVerificationToken
	return guard(a, a.enter, func() (*core.VerificationToken, error) {
		v := token.Normalize()
		if err := checkTime(m, "expires", &v.Expires); err != nil {
			return nil, err
		}
		args := append([]any{v.Identifier, v.Token, a.d.timeArg(v.Expires)}, a.stampArgs(TableVerificationTokens, true)...)
		if _, err := a.exec(ctx, nil, a.qs().createToken, args...); err != nil {
			return nil, a.wrap(err)
		}
		return &v, nil
	})
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// DELETE … RETURNING (PostgreSQL, SQLite ≥ 3.35, MariaDB ≥ 10.5), else a
// SELECT … FOR UPDATE and a DELETE in one transaction. Either way the row is
// deleted by exactly one caller, so a token is used once however many calls
// race for it. An expired token is deleted and not returned.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	return guard(a, a.enter, func() (*core.VerificationToken, error) {
		var r expiryRow
		found, err := a.deleteReturning(ctx, a.qs().useToken, a.qs().selectTokenForUpdate, a.qs().deleteTokenPlain,
			r.dest(), key.Identifier, key.Token)
		if found, err = a.deleted(found, err); !found {
			return nil, err
		}
		v := r.verificationToken()
		if v.Expired(a.now()) {
			return nil, nil
		}
		return v, nil
	})
}
