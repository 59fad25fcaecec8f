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

// useOnce is [Edge.UseOnce].
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
