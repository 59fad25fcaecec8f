package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// errAlreadyUsed reports a single-use value presented a second time, e.g.
// a replayed OAuth callback. It matches [core.ErrAlreadyExists].
var errAlreadyUsed = fmt.Errorf("single-use value already used: %w", core.ErrAlreadyExists)

// UseOnceIdentifierPrefix begins the verification-token identifier of the
// records [Edge.UseOnce] keeps. No e-mail address has this form, so the
// records never meet an e-mail sign-in's tokens.
const UseOnceIdentifierPrefix = "authport:once:"

// useOnce records, through the adapter, that the single-use value key of
// the kind scope (e.g. "oauth-callback") has been used, and returns
// an error matching [core.ErrAlreadyExists] when it was recorded before and the record has not
// expired. The record is a verification token (identifier
// [UseOnceIdentifierPrefix]+scope, token the hex SHA-256 of scope and key,
// expiring at expires): every instance sharing the store sees it, the
// store's uniqueness of (identifier, token) makes two concurrent uses give
// one success, and PurgeExpired or a TTL removes it afterwards. key itself
// is never stored.
//
// An adapter without createVerificationToken gives an error matching
// [core.ErrMissingAdapterMethod]; the caller then keeps the record itself
// (in process). Any other adapter failure comes back as an [*AdapterError].
func (a *Auth) useOnce(ctx context.Context, scope, key string, expires time.Time) error {
	if scope == "" || key == "" {
		return fmt.Errorf("%w: UseOnce needs a scope and a key", core.ErrInvalidConfig)
	}
	sum := sha256.Sum256([]byte(scope + "\x00" + key))
	v := core.VerificationToken{Identifier: UseOnceIdentifierPrefix + scope, Token: hex.EncodeToString(sum[:]), Expires: expires}
	_, err := call(a, "single-use records", func(c core.VerificationTokenCreator) (*core.VerificationToken, error) {
		return c.CreateVerificationToken(ctx, v)
	})
	if errors.Is(err, core.ErrAlreadyExists) {
		return fmt.Errorf("%w (%s)", errAlreadyUsed, scope)
	}
	return err
}
