package auth

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
)

// E-mail codes as a second factor reuse the one-time codes of codes.go: a
// verification token holding the keyed hash of (purpose, identifier,
// binding, code), where the identifier names the user and the binding is
// the pending sign-in's id (so that a code answers the sign-in it was sent
// for and no other) or reauthBinding; attempts are capped per user through
// the rate limiter, as every code's are.

// The purposes of e-mail codes ([provider.PurposeSecondFactor]).
const (
	purposeSecondFactor = string(provider.PurposeSecondFactor)
	purposeReauth       = string(provider.PurposeSecondFactor) + ":reauth"
	reauthBinding       = "authport:reauthenticate"
)

// emailCodeIdentifier is the verification-token identifier of the user's
// e-mail codes.
func emailCodeIdentifier(userID string) string { return "authport:2fa-email:" + userID }

// emailCodeSpec is the lifetime and attempt cap of e-mail codes.
func (a *Auth) emailCodeSpec(purpose string) codeSpec {
	return codeSpec{purpose: purpose, maxAge: a.sf.PendingMaxAge, attempts: a.sf.Attempts}
}

// sendFactorCode stores a new code for the user bound to binding and
// mails it; the stored code is removed again when the mail cannot be
// sent.
func (a *Auth) sendFactorCode(ctx context.Context, user core.User, purpose, binding string) error {
	send, req, err := a.factorSender()
	if err != nil {
		return err
	}
	code, err := password.NewCode()
	if err != nil {
		return err
	}
	identifier := emailCodeIdentifier(user.ID)
	v := core.VerificationToken{Identifier: identifier, Token: codeToken(a.secrets[0], purpose, identifier, binding, code),
		Expires: a.now().Add(a.sf.PendingMaxAge)}
	if _, err := call(a, "second factors (e-mail codes)", func(c core.VerificationTokenCreator) (*core.VerificationToken, error) {
		return c.CreateVerificationToken(ctx, v)
	}); err != nil {
		return err
	}
	req.Identifier, req.Purpose, req.Code, req.Expires = user.Email, provider.PurposeSecondFactor, code, v.Expires
	req.URL = a.mailURL("signin", nil)
	if err := send(ctx, req); err != nil {
		return a.forget(ctx, "second factors (e-mail codes)", issued{keys: []core.VerificationTokenKey{{Identifier: identifier, Token: v.Token}}},
			emailRefusal(fmt.Errorf("second factors: sending the code: %w", err)))
	}
	return nil
}
