package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// This file holds what the WebAuthn ceremonies (module
// github.com/authport/authport/passkey) need beyond webauthn.go: the
// provider's configuration, the lookups Auth.js's default getUserInfo and
// verifyAuthenticate make, and the registration of someone not signed in.

// WebAuthnProvider returns the configured WebAuthn provider with the id, as
// [New] validated it (defaults applied). The error matches
// [ErrUnknownProvider] when no provider has the id, and
// [ErrWrongProviderType] when it is not a WebAuthn provider.
func (a *Auth) WebAuthnProvider(id string) (*provider.WebAuthnConfig, error) {
	return providerOf[*provider.WebAuthnConfig](a, id)
}

// UserByEmail returns the user with the e-mail address, or nil when there is
// none (Auth.js's default WebAuthn getUserInfo). The address is normalised
// first ([NormalizeEmail]); one it refuses gives an error matching
// [provider.ErrInvalidEmail] and core.ErrInvalidInput.
func (a *Auth) UserByEmail(ctx context.Context, email string) (*core.User, error) {
	normal, err := NormalizeEmail(email)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalidInput, err)
	}
	return call(a, "WebAuthn options", func(g core.UserByEmailGetter) (*core.User, error) {
		return g.GetUserByEmail(ctx, normal)
	})
}

// WebAuthnAuthenticator returns the authenticator with the credential id
// (standard base64, as stored), or nil when there is none: the public key an
// assertion is verified with.
func (a *Auth) WebAuthnAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	return call(a, "WebAuthn authentication", func(g core.AuthenticatorGetter) (*core.Authenticator, error) {
		return g.GetAuthenticator(ctx, credentialID)
	})
}

// RegisterWebAuthnUser records a verified WebAuthn registration by someone
// who is not signed in: it creates the user (newUser's Email, normalised
// with [NormalizeEmail] as e-mail sign-in does, and Name;
// emailVerified null, a new id) and registers the authenticator to it as
// [Auth.RegisterAuthenticator] does (au.UserID is replaced by the new id).
//
// Nobody has proven the address, so by default this is refused with
// [ErrUnprovenSignUp]: the user would hold an address whose owner, signing
// in later with an e-mail link, would land in an account the passkey's
// holder keeps. It runs only with [Config.AllowDangerousUnverifiedEmail]
// (Auth.js's behaviour).
//
// As in Auth.js, an e-mail address that already belongs to a user is
// refused with an error matching [ErrAccountNotLinked]: adding a passkey to
// an existing user needs that user signed in. When registering the
// authenticator fails, the new user is deleted again (when the adapter has
// deleteUser), so a failed registration leaves nothing behind.
func (a *Auth) RegisterWebAuthnUser(ctx context.Context, providerID string, newUser core.User, au core.Authenticator) (*core.User, *core.Authenticator, error) {
	if _, err := providerOf[*provider.WebAuthnConfig](a, providerID); err != nil {
		return nil, nil, err
	}
	if !a.allowUnverified {
		return nil, nil, fmt.Errorf("WebAuthn registration: %w", ErrUnprovenSignUp)
	}
	if newUser.Email == "" {
		return nil, nil, fmt.Errorf("WebAuthn registration: %w: a new user needs an e-mail address", core.ErrInvalidInput)
	}
	email, err := NormalizeEmail(newUser.Email)
	if err != nil {
		return nil, nil, fmt.Errorf("WebAuthn registration: %w: %w", core.ErrInvalidInput, err)
	}
	existing, err := a.UserByEmail(ctx, email)
	if err != nil {
		return nil, nil, err
	}
	if existing != nil {
		return nil, nil, fmt.Errorf("WebAuthn registration: %w: the e-mail address belongs to a user; sign in to add a passkey", ErrAccountNotLinked)
	}
	id, err := a.newUserID()
	if err != nil {
		return nil, nil, fmt.Errorf("WebAuthn registration: user id: %w", err)
	}
	user, err := call(a, "WebAuthn registration", func(c core.UserCreator) (*core.User, error) {
		return c.CreateUser(ctx, core.User{ID: id, Email: email, Name: newUser.Name, Image: newUser.Image})
	})
	if errors.Is(err, core.ErrAlreadyExists) {
		// A concurrent registration or sign-in created a user with the
		// address first.
		return nil, nil, fmt.Errorf("WebAuthn registration: %w: the e-mail address belongs to a user; sign in to add a passkey (%w)", ErrAccountNotLinked, err)
	}
	if err != nil {
		return nil, nil, err
	}
	au.UserID = user.ID
	stored, err := a.RegisterAuthenticator(ctx, providerID, au)
	if err != nil {
		return nil, nil, a.removeUnlinkedUser(ctx, user.ID, err)
	}
	return user, stored, nil
}
