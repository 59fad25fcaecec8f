package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
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

// keyedHash is the hex HMAC-SHA-256, keyed with the secret, of the parts,
// each followed by a NUL byte.
func keyedHash(secret string, parts ...string) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, s := range parts {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// codeToken is what the store keeps for a code: hex HMAC-SHA-256 with the
// secret of the purpose, identifier, binding and code.
func codeToken(secret, purpose, identifier, binding, code string) string {
	return keyedHash(secret, "authport one-time code", purpose, identifier, binding, code)
}

// HashLinkToken returns what the store keeps for the link token of a
// password e-mail of the purpose ([provider.PurposeVerifyEmail],
// [provider.PurposeResetPassword]): the hex HMAC-SHA-256, keyed with the
// secret, of the purpose and the token. Mixing in the purpose means no
// other flow's token can match it, not even an e-mail sign-in token issued
// for an "address" that reads like a password e-mail's identifier
// ("authport:verify-email:…" is itself a valid address). E-mail sign-in
// links keep [HashToken], which Auth.js shares.
func HashLinkToken(purpose provider.Purpose, token, secret string) string {
	return keyedHash(secret, "authport link token", string(purpose), token)
}

// linkToken is what the store keeps for a link's token: [HashToken] for
// e-mail sign-in (purpose ""), else [HashLinkToken].
func linkToken(secret, purpose, token string) string {
	if purpose == "" {
		return HashToken(token, secret)
	}
	return HashLinkToken(provider.Purpose(purpose), token, secret)
}

// codeSpec is one kind of code: its purpose, lifetime and attempt cap.
type codeSpec struct {
	purpose  string
	maxAge   time.Duration
	attempts int
}

// issue stores a link token (hashed by linkToken for linkPurpose: "" for
// e-mail sign-in) for identifier with the link lifetime, and, when binding
// is set and codes are on (spec non-nil), a code; it returns the link token and the code ("" when
// none), and the link token's expiry. The tokens are removed again by
// forget when the mail cannot be sent.
func (a *Auth) issue(ctx context.Context, neededBy, identifier, token, linkPurpose string, linkAge time.Duration, spec *codeSpec, binding string) (issued, error) {
	now := a.now()
	out := issued{token: token, expires: now.Add(linkAge)}
	create := func(v core.VerificationToken) (*core.VerificationToken, error) {
		return call(a, neededBy, func(c core.VerificationTokenCreator) (*core.VerificationToken, error) {
			return c.CreateVerificationToken(ctx, v)
		})
	}
	secret := a.secrets[0]
	if linkPurpose == "" { // e-mail sign-in: the hash Auth.js shares
		secret = a.linkSecret
	}
	link := core.VerificationToken{Identifier: identifier, Token: linkToken(secret, linkPurpose, token), Expires: out.expires}
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
// each secret, is used. It returns the used token, or errCodeRefused when
// the code does not work.
func (a *Auth) useCode(ctx context.Context, neededBy, identifier, binding, code string, spec codeSpec) (*core.VerificationToken, error) {
	if !password.ValidCode(code) || binding == "" || identifier == "" {
		return nil, errCodeRefused
	}
	// The cap: attempts per code lifetime, spaced so that the counter
	// admits no new attempt before the codes it guards have expired.
	limit := ratelimit.Limit{Events: spec.attempts, Period: time.Duration(spec.attempts) * spec.maxAge}
	sum := sha256.Sum256([]byte(identifier))
	res, err := a.limiter.Allow(ctx, "authport:code:"+spec.purpose+":"+hex.EncodeToString(sum[:16]), limit)
	if err != nil {
		return nil, fmt.Errorf("%s: counting the code attempt: %w", neededBy, err)
	}
	if !res.Allowed {
		return nil, fmt.Errorf("%w (the attempt cap for this address is reached)", errCodeRefused)
	}
	for _, secret := range a.secrets {
		hashed := codeToken(secret, spec.purpose, identifier, binding, code)
		v, err := a.useKey(ctx, neededBy, core.VerificationTokenKey{Identifier: identifier, Token: hashed})
		if err != nil {
			return nil, err
		}
		if v != nil {
			if v.Expired(a.now()) {
				return nil, errCodeRefused
			}
			return v, nil
		}
	}
	return nil, errCodeRefused
}

// useLink uses a link's token of the purpose for identifier; it returns
// the used token, or errVerificationFailed when it does not work.
func (a *Auth) useLink(ctx context.Context, neededBy, identifier, purpose, token string) (*core.VerificationToken, error) {
	if token == "" || identifier == "" {
		return nil, errVerificationFailed
	}
	v, err := a.useToken(ctx, neededBy, identifier, purpose, token)
	if err != nil {
		return nil, err
	}
	if v == nil || v.Expired(a.now()) {
		return nil, errVerificationFailed
	}
	return v, nil
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
	// binding it was asked for with (the handler's code cookie). A
	// verification link's Token also works with the Binding of the
	// browser that signed up ([Passwords.VerifyEmail]).
	Code, Binding string
	// Password is the account's password, typed to confirm a
	// verification link's Token in a browser without the sign-up's
	// Binding ([Passwords.VerifyEmail]); other proofs ignore it.
	Password string
	// Username is the username a verification e-mail carries (its
	// link's username parameter; the code form's hidden username field):
	// the one chosen at sign-up beside the address, which the e-mail's
	// token and code were issued for ([Passwords.VerifyEmail]); "" for
	// none. Other proofs ignore it.
	Username string
}

// use uses the proof for identifier: the code when one is given, else the
// link's token (hashed for spec's purpose). It returns the used token (as stored: hashed), which
// [Auth.restoreToken] can put back.
func (a *Auth) use(ctx context.Context, neededBy, identifier string, p Proof, spec codeSpec) (*core.VerificationToken, error) {
	if p.Code != "" {
		return a.useCode(ctx, neededBy, identifier, p.Binding, p.Code, spec)
	}
	return a.useLink(ctx, neededBy, identifier, spec.purpose, p.Token)
}

// restoreToken puts back a token that a request used and then could not
// act on (the store failed after the use), so that the same link or code
// works again once the store does, and returns cause, joined with the
// restoring's error if that failed too (it is then retried in the
// background, see retryLater). A token that is there again (a use whose
// answer was lost and that did not happen) counts as restored. Restoring
// is safe only for a token whose effect is bound to a state the failed
// request did not change, as a reset token is bound to the hash it resets.
func (a *Auth) restoreToken(ctx context.Context, neededBy string, v *core.VerificationToken, cause error) error {
	put := func(ctx context.Context) error {
		_, err := call(a, neededBy, func(c core.VerificationTokenCreator) (*core.VerificationToken, error) {
			return c.CreateVerificationToken(ctx, *v)
		})
		if errors.Is(err, core.ErrAlreadyExists) {
			return nil
		}
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	err := put(rctx)
	cancel()
	if err != nil {
		go retryLater(context.WithoutCancel(ctx), put)
		return errors.Join(cause, fmt.Errorf("%s: putting back the used token so that it can be used again (retrying in the background for %v): %w", neededBy, cleanupRetryWindow, err))
	}
	return cause
}
