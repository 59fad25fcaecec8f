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

// mustDisplace is asked when an e-mail link proves an address and holder,
// whose address was never verified, holds it. Unless
// AllowDangerousUnverifiedEmail is set, a holder with passkeys (registered
// while nobody had proven the address: a signed-out passkey sign-up, made
// before those were refused or while the option was on) must lose the
// address ([Auth.displace]), so that the owner gets a user of their own and
// nothing the passkeys' holder can reach. A holder without passkeys (an
// OAuth sign-up, whose provider vouched for the address) is not displaced:
// the owner signs in to it, as in Auth.js.
func (a *Auth) mustDisplace(ctx context.Context, holder core.User) (bool, error) {
	if a.allowUnverified || holder.EmailVerified != nil {
		return false, nil
	}
	lister, ok := has[core.AuthenticatorsByUserLister](a)
	if !ok {
		return false, nil
	}
	list, err := lister.ListAuthenticatorsByUserID(ctx, holder.ID)
	if err != nil {
		return false, &AdapterError{Method: core.MethodListAuthenticatorsByUserID, Err: err}
	}
	return len(list) > 0, nil
}

// displace gives the holder [DisplacedEmail] instead of the address.
func (a *Auth) displace(ctx context.Context, holder core.User) error {
	updated, err := call(a, "e-mail sign-in", func(u core.UserUpdater) (*core.User, error) {
		return u.UpdateUser(ctx, core.UserUpdate{ID: holder.ID, Email: core.Set(DisplacedEmail(holder.ID))})
	})
	if err == nil && updated != nil {
		emit(a, ctx, "updateUser", a.events.UpdateUser, *updated)
	}
	return err
}
