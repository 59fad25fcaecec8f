package redisadapter

import (
	"context"
	"fmt"
	"github.com/authport/authport/adapters/redis/internal/shared"
	"strconv"

	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one SET NX PXAT: the key expires at the token's expiry.
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	const m = core.MethodCreateVerificationToken
	t := token.Normalize()
	if err := shared.CheckTime(m, "expires", &t.Expires); err != nil {
		return nil, err
	}
	k := a.k.verification(t.Identifier, t.Token)
	err := a.c.Do(ctx, "set", k, strconv.FormatInt(t.Expires.UnixMilli(), 10), "nx", "pxat", shared.ExpiryMillis(t.Expires)).Err()
	if shared.IsNil(err) {
		return nil, fmt.Errorf("token for %q: %w", t.Identifier, core.ErrAlreadyExists)
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// script around GETDEL, so of concurrent calls exactly one gets the token.
// The script also leaves the value under a receipt key of this call's own
// for a minute ([shared.ReceiptTTL]), so that when the client retries the script
// because its reply was lost (go-redis does, after a network error), the
// retry gets the token too instead of "no token". A token past its expiry
// is never returned, even before Redis evicts it.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	const m = core.MethodUseVerificationToken
	if key.Identifier == "" || key.Token == "" {
		return nil, nil
	}
	attempt, err := shared.AttemptID()
	if err != nil {
		return nil, err
	}
	slotTag := "r"
	if a.cluster {
		slotTag = a.slots.tag(crc16(shared.Escape(key.Identifier)+":"+shared.Escape(key.Token)) % 16384)
	}
	v, err := a.s.consume.Run(ctx, a.c, []string{a.k.verification(key.Identifier, key.Token), a.k.receipt(slotTag, attempt)},
		shared.ReceiptTTL.Milliseconds()).Text()
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, shared.ErrCorrupt
	}
	t := &core.VerificationToken{Identifier: key.Identifier, Token: key.Token, Expires: shared.MsTime(ms)}
	if t.Expired(a.now()) {
		return nil, nil
	}
	return t, nil
}
