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
// [Callbacks.SignIn] runs before the user is created.
//
// As in Auth.js, an e-mail address that already belongs to a user is
// refused with an error matching [CodeOAuthAccountNotLinked]: adding a passkey to
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
		return nil, nil, fmt.Errorf("WebAuthn registration: %w: the e-mail address belongs to a user; sign in to add a passkey", errAccountNotLinked)
	}
	candidate := core.User{Email: email, Name: newUser.Name, Image: newUser.Image}
	if err := a.authorize(ctx, SignInParams{ProviderID: providerID, Type: provider.TypeWebAuthn, User: candidate, IsNewUser: true,
		Account: &core.Account{Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}}); err != nil {
		return nil, nil, err
	}
	id, err := a.newUserID()
	if err != nil {
		return nil, nil, fmt.Errorf("WebAuthn registration: user id: %w", err)
	}
	candidate.ID = id
	user, err := a.createUser(ctx, "WebAuthn registration", candidate)
	if errors.Is(err, core.ErrAlreadyExists) {
		// A concurrent registration or sign-in created a user with the
		// address first.
		return nil, nil, fmt.Errorf("WebAuthn registration: %w: the e-mail address belongs to a user; sign in to add a passkey (%w)", errAccountNotLinked, err)
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

// SignInWithWebAuthn completes a passkey sign-in whose assertion the caller
// (module github.com/authport/authport/passkey) has verified: it records
// the assertion ([Auth.AuthenticateWebAuthn]: the counter check and update,
// which are part of verifying it), runs [Callbacks.SignIn], and creates
// the session. current is the signed-in caller, or nil; a caller signed in
// keeps their session.
func (a *Auth) SignInWithWebAuthn(ctx context.Context, providerID, credentialID string, counter int64, current *core.User) (*SignIn, error) {
	if _, err := providerOf[*provider.WebAuthnConfig](a, providerID); err != nil {
		return nil, err
	}
	user, au, err := a.AuthenticateWebAuthn(ctx, credentialID, counter)
	if err != nil {
		return nil, err
	}
	if current != nil && current.ID != user.ID {
		return nil, fmt.Errorf("WebAuthn authentication: %w: the passkey belongs to another user than the one signed in", errAccountNotLinked)
	}
	acc := &core.Account{UserID: user.ID, Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}
	if err := a.authorize(ctx, SignInParams{ProviderID: providerID, Type: provider.TypeWebAuthn, User: *user, Account: acc}); err != nil {
		return nil, err
	}
	return a.finish(ctx, &SignIn{ProviderID: providerID, User: *user, Account: acc, KeepSession: current != nil})
}

// RegisterWebAuthn completes a passkey registration whose attestation the
// caller has verified, and signs in: for the signed-in caller current (who
// keeps their session) it runs [Callbacks.SignIn] and then
// [Auth.RegisterAuthenticator]; for someone not signed in (current nil) it
// is [Auth.RegisterWebAuthnUser] with newUser, then a new session.
func (a *Auth) RegisterWebAuthn(ctx context.Context, providerID string, current *core.User, newUser core.User, au core.Authenticator) (*SignIn, error) {
	if _, err := providerOf[*provider.WebAuthnConfig](a, providerID); err != nil {
		return nil, err
	}
	if current == nil {
		user, _, err := a.RegisterWebAuthnUser(ctx, providerID, newUser, au)
		if err != nil {
			return nil, err
		}
		acc := &core.Account{UserID: user.ID, Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}
		return a.finish(ctx, &SignIn{ProviderID: providerID, User: *user, Account: acc, IsNewUser: true})
	}
	au.UserID = current.ID
	acc := &core.Account{UserID: current.ID, Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}
	if err := a.authorize(ctx, SignInParams{ProviderID: providerID, Type: provider.TypeWebAuthn, User: *current, Account: acc}); err != nil {
		return nil, err
	}
	if _, err := a.RegisterAuthenticator(ctx, providerID, au); err != nil {
		return nil, err
	}
	return a.finish(ctx, &SignIn{ProviderID: providerID, User: *current, Account: acc, KeepSession: true})
}
