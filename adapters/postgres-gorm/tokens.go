package gormadapter

import (
	"context"

	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one INSERT.
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	const m = "createVerificationToken"
	if err := a.enter(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if err := token.Validate(); err != nil {
		return nil, err
	}
	v := token.Normalize()
	if err := checkUTF8(m, "identifier", v.Identifier, "token", v.Token); err != nil {
		return nil, err
	}
	if err := checkTime(m, "expires", &v.Expires); err != nil {
		return nil, err
	}
	args := append([]any{v.Identifier, v.Token, a.d.timeArg(v.Expires)}, a.stampArgs(TableVerificationTokens, true)...)
	if _, err := a.exec(ctx, nil, a.q.createToken, args...); err != nil {
		return nil, a.wrap(m, err)
	}
	return &v, nil
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// DELETE … RETURNING (PostgreSQL, SQLite ≥ 3.35, MariaDB ≥ 10.5), else a
// SELECT … FOR UPDATE and a DELETE in one transaction. Either way the row is
// deleted by exactly one caller, so a token is used once however many calls
// race for it. An expired token is deleted and not returned.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	const m = "useVerificationToken"
	if err := a.enter(m); err != nil {
		return nil, err
	}
	defer a.leave()
	if !a.d.storable(key.Identifier) || !a.d.storable(key.Token) {
		return nil, none(ctx, m)
	}
	var r tokenRow
	found, err := a.deleteReturning(ctx, a.q.useToken, a.q.selectTokenForUpdate, a.q.deleteTokenPlain,
		r.dest(), key.Identifier, key.Token)
	if keyUnusable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.wrap(m, err)
	}
	if !found {
		return nil, nil
	}
	v := r.verificationToken()
	if v.Expired(a.now()) {
		return nil, nil
	}
	return v, nil
}
