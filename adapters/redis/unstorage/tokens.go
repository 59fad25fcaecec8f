package unstorage

import (
	"context"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one SET NX PXAT: the key expires at the token's expiry.
func (a *Adapter) CreateVerificationToken(ctx context.Context, t core.VerificationToken) (*core.VerificationToken, error) {
	const m = core.MethodCreateVerificationToken
	doc, err := checkedDoc(&t, encodeUToken, checkKey(m, "token", uToken, uToken+t.Identifier+":"+t.Token), checkISOTime(m, "expires", &t.Expires))
	if err != nil {
		return nil, err
	}
	return shared.CreateToken(ctx, a.c, a.k.token(t.Identifier, t.Token), doc, t)
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// script: of concurrent calls exactly one gets the token, and a retry of
// a call whose reply was lost gets the same answer (from a receipt of the
// call's own, which holds only the token's expiry).
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	return shared.UseToken(ctx, key, a.now(), func(attempt string) (string, error) {
		return a.s.useToken.Run(ctx, a.c, []string{a.k.token(key.Identifier, key.Token), a.k.receipt(attempt)},
			key.Identifier, key.Token, shared.ReceiptTTL.Milliseconds()).Text()
	}, parseISOTime)
}
