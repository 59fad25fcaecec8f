package gormadapter

import (
	"context"

	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one INSERT.
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	return created(a, a.enter, token.Normalize(), func(v *core.VerificationToken) error {
		return a.insertExpiring(ctx, a.qs(), core.MethodCreateVerificationToken, TableVerificationTokens, v.Identifier, v.Token, &v.Expires)
	})
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// DELETE … RETURNING (PostgreSQL, SQLite ≥ 3.35, MariaDB ≥ 10.5), else a
// SELECT … FOR UPDATE and a DELETE in one transaction. Either way the row is
// deleted by exactly one caller, so a token is used once however many calls
// race for it. An expired token is deleted and not returned.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	var r expiryRow
	return deleteOne(ctx, a, func(q *queries) deletion { return q.useToken }, r.dest(), func() (*core.VerificationToken, error) {
		if v := r.verificationToken(); !v.Expired(a.now()) {
			return v, nil
		}
		return nil, nil
	}, key.Identifier, key.Token)
}
