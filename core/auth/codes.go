package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/ratelimit"
)

// This file holds what e-mail sign-in and password e-mails share: the
// single-use verification tokens of links, and one-time codes.
//
// A one-time code is stored as a verification token whose token is the
// HMAC-SHA-256, keyed with the secret, of (purpose, identifier, browser
// binding, code): the store never holds the code, and a code works only
// with the binding of the browser that asked for it (the handler keeps it
// in a cookie), so a code read from a mail by someone else, or a link a mail
// scanner opened, signs nobody in. Attempts are capped per purpose and
// identifier through the rate limiter ([Config.RateLimiter]).

// errCodeRefused is the refusal of a code that does not work: of the wrong
// shape, unknown, expired, used, without its browser binding, or over the
// attempt cap. It says no more on purpose; its code is [CodeVerification].
var errCodeRefused = coded(CodeVerification, "one-time code is invalid, expired, already used or over its attempt cap")

// codeToken is what the store keeps for a code: hex HMAC-SHA-256 with the
// secret of the purpose, identifier, binding and code.
func codeToken(secret, purpose, identifier, binding, code string) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, s := range []string{"authport one-time code", purpose, identifier, binding, code} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// codeSpec is one kind of code: its purpose, lifetime and attempt cap.
type codeSpec struct {
	purpose  string
	maxAge   time.Duration
	attempts int
}

// issue stores a link token (hashed as e-mail sign-in's) for identifier
// with the link lifetime, and, when binding is set and codes are on
// (spec non-nil), a code; it returns the link token and the code ("" when
// none), and the link token's expiry. The tokens are removed again by
// forget when the mail cannot be sent.
func (a *Auth) issue(ctx context.Context, neededBy, identifier, token string, linkAge time.Duration, spec *codeSpec, binding string) (issued, error) {
	now := a.now()
	out := issued{token: token, expires: now.Add(linkAge)}
	create := func(v core.VerificationToken) (*core.VerificationToken, error) {
		return call(a, neededBy, func(c core.VerificationTokenCreator) (*core.VerificationToken, error) {
			return c.CreateVerificationToken(ctx, v)
		})
	}
	link := core.VerificationToken{Identifier: identifier, Token: HashToken(token, a.secrets[0]), Expires: out.expires}
	stored, err := create(link)
	if err != nil {
		return out, err
	}
	if stored != nil {
		out.expires = stored.Expires
	}
	out.keys = append(out.keys, core.VerificationTokenKey{Identifier: identifier, Token: link.Token})
	if spec == nil || binding == "" {
		return out, nil
	}
	code, err := password.NewCode()
	if err != nil {
		return out, a.forget(ctx, neededBy, out, fmt.Errorf("%s: making a one-time code: %w", neededBy, err))
	}
	v := core.VerificationToken{Identifier: identifier, Token: codeToken(a.secrets[0], spec.purpose, identifier, binding, code), Expires: now.Add(spec.maxAge)}
	if _, err := create(v); err != nil {
		return out, a.forget(ctx, neededBy, out, err)
	}
	out.code = code
	out.keys = append(out.keys, core.VerificationTokenKey{Identifier: identifier, Token: v.Token})
	return out, nil
}

// issued is what [Auth.issue] stored: the link token, the code, the
// link's expiry, and the stored keys (for forget).
type issued struct {
	token, code string
	expires     time.Time
	keys        []core.VerificationTokenKey
}

// forget removes the tokens of a mail that could not be sent and returns
// cause, joined with the removal's errors.
func (a *Auth) forget(ctx context.Context, neededBy string, is issued, cause error) error {
	for _, k := range is.keys {
		cause = a.removeUnsentToken(ctx, neededBy, k, cause)
	}
	return cause
}

// useCode uses the code (with its binding) for identifier: a code of the
// wrong shape, or without a binding, is refused before any lookup; then
// one attempt is counted against the cap, and the code's token, made with
// each secret, is used. It returns errCodeRefused when the code does not
// work.
func (a *Auth) useCode(ctx context.Context, neededBy, identifier, binding, code string, spec codeSpec) error {
	if !password.ValidCode(code) || binding == "" || identifier == "" {
		return errCodeRefused
	}
	// The cap: attempts per code lifetime, spaced so that the counter
	// admits no new attempt before the codes it guards have expired.
	limit := ratelimit.Limit{Events: spec.attempts, Period: time.Duration(spec.attempts) * spec.maxAge}
	sum := sha256.Sum256([]byte(identifier))
	res, err := a.limiter.Allow(ctx, "authport:code:"+spec.purpose+":"+hex.EncodeToString(sum[:16]), limit)
	if err != nil {
		return fmt.Errorf("%s: counting the code attempt: %w", neededBy, err)
	}
	if !res.Allowed {
		return fmt.Errorf("%w (the attempt cap for this address is reached)", errCodeRefused)
	}
	for _, secret := range a.secrets {
		hashed := codeToken(secret, spec.purpose, identifier, binding, code)
		v, err := a.useKey(ctx, neededBy, core.VerificationTokenKey{Identifier: identifier, Token: hashed})
		if err != nil {
			return err
		}
		if v != nil {
			if v.Expired(a.now()) {
				return errCodeRefused
			}
			return nil
		}
	}
	return errCodeRefused
}

// useLink uses a link's token for identifier; it returns
// errVerificationFailed when it does not work.
func (a *Auth) useLink(ctx context.Context, neededBy, identifier, token string) error {
	if token == "" || identifier == "" {
		return errVerificationFailed
	}
	v, err := a.useToken(ctx, neededBy, identifier, token)
	if err != nil {
		return err
	}
	if v == nil || v.Expired(a.now()) {
		return errVerificationFailed
	}
	return nil
}

// useKey uses (deletes) the verification token with the key and returns
// it when it was there and matches the key exactly.
func (a *Auth) useKey(ctx context.Context, neededBy string, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	v, err := call(a, neededBy, func(u core.VerificationTokenUser) (*core.VerificationToken, error) {
		return u.UseVerificationToken(ctx, key)
	})
	if err != nil || v == nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(v.Token), []byte(key.Token)) != 1 ||
		subtle.ConstantTimeCompare([]byte(v.Identifier), []byte(key.Identifier)) != 1 {
		return nil, nil
	}
	return v, nil
}

// Proof is how a request proves it holds an e-mail the library sent: the
// link's token, or the one-time code with the binding of the browser that
// asked for it.
type Proof struct {
	// Token is the token of the link ("token" query parameter).
	Token string
	// Code is the 6-digit code of the e-mail, and Binding the browser
	// binding it was asked for with (the handler's code cookie).
	Code, Binding string
}

// use uses the proof for identifier: the code when one is given, else the
// link's token.
func (a *Auth) use(ctx context.Context, neededBy, identifier string, p Proof, spec codeSpec) error {
	if p.Code != "" {
		return a.useCode(ctx, neededBy, identifier, p.Binding, p.Code, spec)
	}
	return a.useLink(ctx, neededBy, identifier, p.Token)
}
