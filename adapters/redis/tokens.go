package redisadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
// script around GETDEL, so of concurrent calls exactly one gets the token.
// The script also leaves the value under a receipt key of this call's own
// for a minute ([receiptTTL]), so that when the client retries the script
// because its reply was lost (go-redis does, after a network error), the
// retry gets the token too instead of "no token". A token past its expiry
// is never returned, even before Redis evicts it.
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
	attempt, err := attemptID()
	if err != nil {
		return nil, wrap(m, err)
	}
	slotTag := "r"
	if a.cluster {
		slotTag = a.slots.tag(crc16(escape(key.Identifier)+":"+escape(key.Token)) % 16384)
	}
	v, err := a.s.consume.Run(ctx, a.c, []string{a.k.verification(key.Identifier, key.Token), a.k.receipt(slotTag, attempt)},
		receiptTTL.Milliseconds()).Text()
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

// receiptTTL is how long a useVerificationToken receipt outlives the call:
// far longer than go-redis's retries of one command take.
const receiptTTL = time.Minute

// attemptID returns a random id for one useVerificationToken call.
func attemptID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
