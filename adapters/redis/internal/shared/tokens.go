package shared

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
)

// CreateToken stores a verification token's value at key with one SET NX
// PXAT: the key expires at the token's expiry, and a second token with the
// same key is refused with core.ErrAlreadyExists.
func CreateToken(ctx context.Context, c redis.UniversalClient, key, value string, t core.VerificationToken) (*core.VerificationToken, error) {
	err := c.Do(ctx, "set", key, value, "nx", "pxat", ExpiryMillis(t.Expires)).Err()
	if IsNil(err) {
		return nil, fmt.Errorf("token for %q: %w", t.Identifier, core.ErrAlreadyExists)
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// UseToken is useVerificationToken around the layout's single-use script:
// consume runs it under a fresh attempt id (the name of the call's
// receipt, so that a retry of the same call after a lost reply gets the
// same answer) and returns the stored expiry, which parse reads. A token
// past its expiry by now is never returned, even before Redis evicts it.
func UseToken(ctx context.Context, key core.VerificationTokenKey, now time.Time,
	consume func(attempt string) (string, error), parse func(string) (time.Time, error)) (*core.VerificationToken, error) {
	attempt, err := AttemptID()
	if err != nil {
		return nil, err
	}
	v, err := consume(attempt)
	if IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	exp, err := parse(v)
	if err != nil {
		return nil, err
	}
	t := &core.VerificationToken{Identifier: key.Identifier, Token: key.Token, Expires: exp}
	if t.Expired(now) {
		return nil, nil
	}
	return t, nil
}
