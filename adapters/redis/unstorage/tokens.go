package unstorage

import (
	"context"
	"fmt"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one SET NX PXAT: the key expires at the token's expiry.
func (a *Adapter) CreateVerificationToken(ctx context.Context, t core.VerificationToken) (*core.VerificationToken, error) {
	const m = core.MethodCreateVerificationToken
	if err := checkKey(m, "token", uToken, uToken+t.Identifier+":"+t.Token); err != nil {
		return nil, err
	}
	if err := shared.CheckTime(m, "expires", &t.Expires); err != nil {
		return nil, err
	}
	if err := checkISOTime(m, "expires", &t.Expires); err != nil {
		return nil, err
	}
	doc, err := encodeUToken(&t)
	if err != nil {
		return nil, err
	}
	err = a.c.Do(ctx, "set", a.k.token(t.Identifier, t.Token), doc, "nx", "pxat", shared.ExpiryMillis(t.Expires)).Err()
	if shared.IsNil(err) {
		return nil, fmt.Errorf("token for %q: %w", t.Identifier, core.ErrAlreadyExists)
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// script: of concurrent calls exactly one gets the token, and a retry of
// a call whose reply was lost gets the same answer (from a receipt of the
// call's own, which holds only the token's expiry).
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	attempt, err := shared.AttemptID()
	if err != nil {
		return nil, err
	}
	v, err := a.s.useToken.Run(ctx, a.c, []string{a.k.token(key.Identifier, key.Token), a.k.receipt(attempt)},
		key.Identifier, key.Token, shared.ReceiptTTL.Milliseconds()).Text()
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	exp, err := parseISOTime(v)
	if err != nil {
		return nil, err
	}
	t := &core.VerificationToken{Identifier: key.Identifier, Token: key.Token, Expires: exp}
	if t.Expired(a.now()) {
		return nil, nil
	}
	return t, nil
}
