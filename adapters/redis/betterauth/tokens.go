package betterauth

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateVerificationToken implements [core.VerificationTokenCreator] as
// Better Auth's createVerificationValue: the JSON value at
// verification:<identifier>, the token as its value, expiring with it.
// Better Auth keeps one value per identifier, so a token replaces another
// token of the same identifier (the newer link works, the older no
// longer); the same token again is refused with [core.ErrAlreadyExists].
func (a *Adapter) CreateVerificationToken(ctx context.Context, v core.VerificationToken) (*core.VerificationToken, error) {
	const m = core.MethodCreateVerificationToken
	if err := v.Validate(); err != nil {
		return nil, err
	}
	if err := checkISO(m, "expires", v.Expires); err != nil {
		return nil, err
	}
	if !utf8.ValidString(v.Identifier) || !utf8.ValidString(v.Token) {
		return nil, shared.Invalid(m, "identifier", "or the token is not valid UTF-8, which Better Auth's JSON values cannot hold")
	}
	now := isoTime(a.now())
	doc, err := json.Marshal(verificationJSON{ID: newID(), Identifier: v.Identifier, Value: v.Token,
		ExpiresAt: isoTime(v.Expires), CreatedAt: now, UpdatedAt: now})
	if err != nil {
		return nil, err
	}
	res, err := a.s.createVerification.Run(ctx, a.c, []string{a.k.verification(v.Identifier)}, string(doc), v.Token, shared.ExpiryMillis(v.Expires)).Text()
	if err != nil {
		return nil, err
	}
	if res == "exists" {
		return nil, fmt.Errorf("token for %q: %w", v.Identifier, core.ErrAlreadyExists)
	}
	return &v, nil
}

// UseVerificationToken implements [core.VerificationTokenUser]: one script
// deletes and returns the value at verification:<identifier> if it holds
// the token, so that of concurrent callers (either side's) at most one
// gets it. An expired token is deleted and never returned.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	if key.Identifier == "" || key.Token == "" {
		return nil, nil
	}
	raw, err := a.s.useVerification.Run(ctx, a.c, []string{a.k.verification(key.Identifier)}, key.Token).Text()
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := decodeVerification(raw)
	if err != nil {
		return nil, err
	}
	v.Identifier, v.Token = key.Identifier, key.Token
	if v.Expired(a.now()) {
		return nil, nil
	}
	return v, nil
}
