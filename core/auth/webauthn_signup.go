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
// lookup Auth.js's default getUserInfo makes, and the registration of
// someone not signed in.

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

// registerNewUser is [Auth.RegisterPasskey] for someone not signed in:
// it creates the user newUser and registers au to it (au.UserID is
// replaced by the new id), or refuses as RegisterPasskey says.
func (a *Auth) registerNewUser(ctx context.Context, providerID string, newUser core.User, au core.Authenticator) (*core.User, error) {
	if !a.allowUnverified {
		return nil, Fail(CodeWebAuthnVerification, fmt.Errorf("WebAuthn registration: %w", ErrUnprovenSignUp))
	}
	if newUser.Email == "" {
		return nil, Fail(CodeWebAuthnVerification, fmt.Errorf("WebAuthn registration: %w: a new user needs an e-mail address", core.ErrInvalidInput))
	}
	email, err := NormalizeEmail(newUser.Email)
	if err != nil {
		return nil, Fail(CodeWebAuthnVerification, fmt.Errorf("WebAuthn registration: %w: %w", core.ErrInvalidInput, err))
	}
	existing, err := a.UserByEmail(ctx, email)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return nil, Fail(CodeOAuthAccountNotLinked, fmt.Errorf("WebAuthn registration: %w: the e-mail address belongs to a user; sign in to add a passkey", errAccountNotLinked))
	}
	candidate := core.User{Email: email, Name: newUser.Name, Image: newUser.Image}
	if _, err := a.authorize(ctx, SignInParams{ProviderID: providerID, Type: provider.TypeWebAuthn, User: candidate, IsNewUser: true,
		Account: &core.Account{Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}}); err != nil {
		return nil, err
	}
	id, err := a.newUserID()
	if err != nil {
		return nil, fmt.Errorf("WebAuthn registration: user id: %w", err)
	}
	candidate.ID = id
	user, err := a.createUser(ctx, "WebAuthn registration", candidate)
	if errors.Is(err, core.ErrAlreadyExists) {
		// A concurrent registration or sign-in created a user with the
		// address first.
		return nil, Fail(CodeOAuthAccountNotLinked, fmt.Errorf("WebAuthn registration: %w: the e-mail address belongs to a user; sign in to add a passkey (%w)", errAccountNotLinked, err))
	}
	if err != nil {
		return nil, err
	}
	au.UserID = user.ID
	if _, err := a.registerAuthenticator(ctx, providerID, au); err != nil {
		return nil, a.removeUnlinkedUser(ctx, user.ID, err)
	}
	return user, nil
}
