package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
)

// This file holds the rule for e-mail addresses nobody has proven (issue
// 23, items 1 and 2): a user created without a verified address does not
// become the account of whoever later proves that address, unless
// Config.AllowDangerousUnverifiedEmail says so. See core's README,
// "Unproven e-mail addresses".

// errEmailNotVerified reports an OAuth/OIDC sign-in that would create a
// user from an address the provider says it has not verified
// (email_verified false). It matches errProfileInvalid too.
var errEmailNotVerified = fmt.Errorf("%w: the provider has not verified the e-mail address", errProfileInvalid)

// ErrUnprovenSignUp reports a passkey sign-up by someone not signed in:
// it would create a user holding an address nobody has proven. Sign in
// first (with an e-mail link, say), then add a passkey; or set
// [Config.AllowDangerousUnverifiedEmail].
var ErrUnprovenSignUp = errors.New("signing up with a passkey needs a proven e-mail address: sign in first, then add a passkey")

// displacedDomain is the reserved domain (RFC 2606: .invalid never
// resolves) of the address a displaced user is given.
const displacedDomain = "displaced.authport.invalid"

// DisplacedEmail is the address an unproven holder is given when the owner
// proves the address it held (see [Auth.VerifyEmailSignIn]): unique per
// user id, under a reserved domain that never receives mail.
func DisplacedEmail(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return "unproven-" + hex.EncodeToString(sum[:16]) + "@" + displacedDomain
}

// mustDisplace is asked when an e-mail link or code (or an OAuth sign-in
// with AllowDangerousEmailAccountLinking) proves an address and holder,
// whose address was never verified, holds it. Unless
// AllowDangerousUnverifiedEmail is set, a holder with a credential of its
// own, registered while nobody had proven the address, must lose the
// address ([Auth.displace]), so that the owner gets a user of their own and
// nothing the credential's holder can reach:
//
//   - passkeys (a signed-out passkey sign-up, made before those were
//     refused or while the option was on);
//   - a password (a password sign-up that never verified its address: a
//     pre-hijack, where someone signs up with the victim's address and
//     waits for the victim to sign in by e-mail). Removing the password
//     alone would not do: with AllowUnverifiedSignIn the holder may have
//     signed in and linked accounts of its own to the user.
//
// A holder without such a credential (an OAuth sign-up, whose provider
// vouched for the address) is not displaced: the owner signs in to it, as
// in Auth.js.
func (a *Auth) mustDisplace(ctx context.Context, holder core.User) (bool, error) {
	if a.allowUnverified || holder.EmailVerified != nil {
		return false, nil
	}
	if lister, ok := has[core.AuthenticatorsByUserLister](a); ok {
		list, err := lister.ListAuthenticatorsByUserID(ctx, holder.ID)
		if err != nil {
			return false, &AdapterError{Method: core.MethodListAuthenticatorsByUserID, Err: err}
		}
		if len(list) > 0 {
			return true, nil
		}
	}
	return a.hasPassword(ctx, holder.ID)
}

// hasPassword reports whether the user has a password account, on an
// adapter that keeps password hashes (swapPasswordHash); false on one that
// does not.
func (a *Auth) hasPassword(ctx context.Context, userID string) (bool, error) {
	if _, ok := has[core.PasswordHashSwapper](a); !ok {
		return false, nil
	}
	getter, ok := has[core.AccountGetter](a)
	if !ok {
		return false, nil
	}
	acc, err := getter.GetAccount(ctx, userID, core.PasswordProvider)
	if err != nil {
		return false, &AdapterError{Method: core.MethodGetAccount, Err: err}
	}
	return acc != nil && acc.PasswordHash != nil, nil
}

// displace gives the holder [DisplacedEmail] instead of the address.
func (a *Auth) displace(ctx context.Context, neededBy string, holder core.User) error {
	updated, err := call(a, neededBy, func(u core.UserUpdater) (*core.User, error) {
		return u.UpdateUser(ctx, core.UserUpdate{ID: holder.ID, Email: core.Set(DisplacedEmail(holder.ID))})
	})
	if err == nil && updated != nil {
		emit(a, ctx, "updateUser", a.events.UpdateUser, *updated)
	}
	return err
}
