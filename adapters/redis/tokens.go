package redisadapter

import (
	"context"
	"strconv"
	"time"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] with
// one SET NX PXAT: the key expires at the token's expiry.
func (a *Adapter) CreateVerificationToken(ctx context.Context, t core.VerificationToken) (*core.VerificationToken, error) {
	if err := shared.CheckTime(core.MethodCreateVerificationToken, "expires", &t.Expires); err != nil {
		return nil, err
	}
	return shared.CreateToken(ctx, a.c, a.k.verification(t.Identifier, t.Token), strconv.FormatInt(t.Expires.UnixMilli(), 10), t)
}

// UseVerificationToken implements [core.VerificationTokenUser] with one
// script around GETDEL, so of concurrent calls exactly one gets the token.
// The script also leaves the value under a receipt key of this call's own
// for a minute ([shared.ReceiptTTL]), so that when the client retries the
// script because its reply was lost (go-redis does, after a network
// error), the retry gets the token too instead of "no token". A token past
// its expiry is never returned, even before Redis evicts it.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	slotTag := "r"
	if a.cluster {
		slotTag = a.slots.tag(crc16(shared.Escape(key.Identifier)+":"+shared.Escape(key.Token)) % 16384)
	}
	return shared.UseToken(ctx, key, a.now(), func(attempt string) (string, error) {
		return a.s.consume.Run(ctx, a.c, []string{a.k.verification(key.Identifier, key.Token), a.k.receipt(slotTag, attempt)},
			shared.ReceiptTTL.Milliseconds()).Text()
	}, func(v string) (time.Time, error) {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return time.Time{}, shared.ErrCorrupt
		}
		return shared.MsTime(ms), nil
	})
}
