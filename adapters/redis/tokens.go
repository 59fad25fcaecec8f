package redisadapter

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one SET NX PXAT: the key expires at the token's expiry.
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	if a.u != nil {
		return a.u.createVerificationToken(ctx, token)
	}
	const m = core.MethodCreateVerificationToken
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := token.Validate(); err != nil {
		return nil, err
	}
	t := token.Normalize()
	if err := checkTime(m, "expires", &t.Expires); err != nil {
		return nil, err
	}
	k := a.k.verification(t.Identifier, t.Token)
	err := a.c.Do(ctx, "set", k, strconv.FormatInt(t.Expires.UnixMilli(), 10), "nx", "pxat", expiryMillis(t.Expires)).Err()
	if isNil(err) {
		return nil, fmt.Errorf("%s: token for %q: %w", m, t.Identifier, core.ErrAlreadyExists)
	}
	if err != nil {
		return nil, wrap(m, err)
	}
	return &t, nil
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// GETDEL, so of concurrent calls exactly one gets the token. A token past
// its expiry is never returned, even before Redis evicts it.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	if a.u != nil {
		return a.u.useVerificationToken(ctx, key)
	}
	const m = core.MethodUseVerificationToken
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if key.Identifier == "" || key.Token == "" {
		return nil, nil
	}
	v, err := a.c.GetDel(ctx, a.k.verification(key.Identifier, key.Token)).Result()
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(m, err)
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, wrap(m, errCorrupt)
	}
	t := &core.VerificationToken{Identifier: key.Identifier, Token: key.Token, Expires: msTime(ms)}
	if t.Expired(time.Now()) {
		return nil, nil
	}
	return t, nil
}
