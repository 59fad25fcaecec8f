package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// errUnknownAuthenticator: no stored authenticator has the credential id
// of an assertion (or its user is gone). The error a sign-in returns for
// it also matches [core.ErrNotFound] and has [CodeWebAuthnVerification].
var errUnknownAuthenticator = errors.New("unknown WebAuthn credential")

// The two WebAuthn ceremonies, each one method: RegisterPasskey and
// SignInWithPasskey complete a ceremony whose credential the caller
// (module github.com/authport/authport/passkey) has verified with
// go-webauthn. Their refusals are [*Error]s: [CodeWebAuthnVerification]
// (a counter that did not increase, an unknown credential, a signed-out
// sign-up that is not allowed, a credential registered twice), or
// [CodeOAuthAccountNotLinked] (a passkey or an address of another user),
// the code Auth.js's pages show; a store failure carries no code.

// RegisterPasskey completes a passkey registration whose attestation the
// caller has verified, and signs in: it stores the authenticator au and
// the user's webauthn account (providerAccountId is au's, linked once),
// all or nothing: when storing the authenticator fails, the account it
// linked is unlinked again (when the adapter has unlinkAccount).
//
// current is the signed-in user, or nil. Signed in, the passkey is added
// to current, who keeps their session (the result's KeepSession);
// [Callbacks.SignIn] runs before anything is stored. An account of the
// credential that belongs to another user is refused
// ([errAccountNotLinked]).
//
// Signed out (current nil), it creates the user newUser (its Email,
// normalised with [NormalizeEmail] as e-mail sign-in does, and Name;
// emailVerified null, a new id) with the passkey, and a new session.
// Nobody has proven the address, so by default this is refused with
// [ErrUnprovenSignUp]: the user would hold an address whose owner, signing
// in later with an e-mail link, would land in an account the passkey's
// holder keeps. It runs only with [Config.AllowDangerousUnverifiedEmail]
// (Auth.js's behaviour); [Callbacks.SignIn] runs before the user is
// created. As in Auth.js, an address that already belongs to a user is
// refused ([errAccountNotLinked]): adding a passkey to an existing user
// needs that user signed in. When storing the passkey fails, the new user
// is deleted again (when the adapter has deleteUser), so a failed
// registration leaves nothing behind.
//
// The result's IsNewUser says whether a user was created. With database
// sessions the session is created here; with JWT sessions the caller
// issues the token.
func (a *Auth) RegisterPasskey(ctx context.Context, providerID string, current *core.User, newUser core.User, au core.Authenticator) (*SignIn, error) {
	if _, err := providerOf[*provider.WebAuthnConfig](a, providerID); err != nil {
		return nil, err
	}
	if current == nil {
		user, err := a.registerNewUser(ctx, providerID, newUser, au)
		if err != nil {
			return nil, err
		}
		acc := &core.Account{UserID: user.ID, Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}
		return a.finish(ctx, &SignIn{ProviderID: providerID, User: *user, Account: acc, IsNewUser: true})
	}
	au.UserID = current.ID
	acc := &core.Account{UserID: current.ID, Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}
	if _, err := a.authorize(ctx, SignInParams{ProviderID: providerID, Type: provider.TypeWebAuthn, User: *current, Account: acc}); err != nil {
		return nil, err
	}
	if _, err := a.registerAuthenticator(ctx, providerID, au); err != nil {
		return nil, err
	}
	return a.finish(ctx, &SignIn{ProviderID: providerID, User: *current, Account: acc, KeepSession: true})
}

// SignInWithPasskey completes a passkey sign-in whose assertion the caller
// has verified with the stored public key of credentialID: it records the
// assertion, runs [Callbacks.SignIn], and signs in the credential's user.
//
// Recording the assertion is part of verifying it: counter is the
// signature counter the authenticator reported, which must be above the
// stored one (unless both are 0, for authenticators without a counter),
// else the sign-in is refused with an error matching
// [core.ErrCounterNotIncreased]; the stored counter is then advanced. When
// the adapter offers [core.AuthenticatorCounterAdvancer], the check and
// the update are one atomic step: of several assertions racing with the
// same counter, or a replay of one, exactly one passes. Otherwise they are
// two adapter calls (getAuthenticator, then updateAuthenticatorCounter)
// and two racing assertions can both pass; the later write wins. An
// unknown credential is refused with an error matching [core.ErrNotFound].
//
// current is the signed-in user, or nil; a signed-in user keeps their
// session (the result's KeepSession), and a passkey of another user is
// refused ([errAccountNotLinked]) after the counter was advanced. With
// database sessions the session is created here.
func (a *Auth) SignInWithPasskey(ctx context.Context, providerID, credentialID string, counter int64, current *core.User) (*SignIn, error) {
	return a.signInWithPasskey(ctx, providerID, credentialID, counter, false, current)
}

// signInWithPasskey is [Auth.SignInWithPasskey] told whether the
// authenticator verified its user ([Auth.SignInWithPasskeyAssertion]).
func (a *Auth) signInWithPasskey(ctx context.Context, providerID, credentialID string, counter int64, userVerified bool, current *core.User) (*SignIn, error) {
	if _, err := providerOf[*provider.WebAuthnConfig](a, providerID); err != nil {
		return nil, err
	}
	user, au, err := a.advanceCounter(ctx, credentialID, counter)
	if err != nil {
		return nil, err
	}
	if current != nil && current.ID != user.ID {
		return nil, Fail(CodeOAuthAccountNotLinked, fmt.Errorf("WebAuthn authentication: %w: the passkey belongs to another user than the one signed in", errAccountNotLinked))
	}
	acc := &core.Account{UserID: user.ID, Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}
	second, err := a.authorize(ctx, SignInParams{ProviderID: providerID, Type: provider.TypeWebAuthn, User: *user, Account: acc})
	if err != nil {
		return nil, err
	}
	si := &SignIn{ProviderID: providerID, User: *user, Account: acc, KeepSession: current != nil, requireSecond: second}
	if userVerified {
		si.amr = []string{AMRHardwareKey, AMRUser, AMRMultiFactor}
	}
	return a.finish(ctx, si)
}

// Authenticators lists the user's authenticators (to offer them as allowed
// credentials, or to show a user their passkeys); an unknown user has
// none.
func (a *Auth) Authenticators(ctx context.Context, userID string) ([]core.Authenticator, error) {
	return call(a, "WebAuthn authentication", func(l core.AuthenticatorsByUserLister) ([]core.Authenticator, error) {
		return l.ListAuthenticatorsByUserID(ctx, userID)
	})
}

// registerAuthenticator stores a verified registration for the existing
// user au.UserID, with the WebAuthn provider providerID: the user's
// webauthn account (linked once) and the authenticator, all or nothing.
func (a *Auth) registerAuthenticator(ctx context.Context, providerID string, au core.Authenticator) (*core.Authenticator, error) {
	user, err := call(a, "WebAuthn registration", func(g core.UserGetter) (*core.User, error) {
		return g.GetUser(ctx, au.UserID)
	})
	if err != nil {
		return nil, err
	}
	if user == nil {
		return nil, Fail(CodeWebAuthnVerification, fmt.Errorf("WebAuthn registration: user %q: %w", au.UserID, core.ErrNotFound))
	}
	acc, err := call(a, "WebAuthn registration", func(g core.AccountGetter) (*core.Account, error) {
		return g.GetAccount(ctx, au.ProviderAccountID, providerID)
	})
	if err != nil {
		return nil, err
	}
	linked := false
	switch {
	case acc == nil:
		_, err = a.linkAccount(ctx, "WebAuthn registration", *user, core.Account{UserID: user.ID, Provider: providerID, Type: core.AccountTypeWebAuthn, ProviderAccountID: au.ProviderAccountID}, nil)
		if err != nil {
			return nil, err
		}
		linked = true
	case acc.UserID != user.ID:
		return nil, Fail(CodeOAuthAccountNotLinked, fmt.Errorf("WebAuthn registration: %w: account %q belongs to another user", errAccountNotLinked, au.ProviderAccountID))
	}
	// The account first, then the authenticator: the contract can unlink
	// an account but has no way to delete an authenticator, so the write
	// that can be undone comes first, and is undone when the second fails.
	stored, err := call(a, "WebAuthn registration", func(c core.AuthenticatorCreator) (*core.Authenticator, error) {
		return c.CreateAuthenticator(ctx, au)
	})
	if err != nil {
		if errors.Is(err, core.ErrAlreadyExists) {
			// The credential is registered already (the browser was
			// not told to exclude it).
			err = Fail(CodeWebAuthnVerification, err)
		}
		if linked {
			return nil, a.unlinkAccount(ctx, core.AccountKey{Provider: providerID, ProviderAccountID: au.ProviderAccountID}, err)
		}
		return nil, err
	}
	return stored, nil
}

// unlinkAccount removes the account a registration has just linked when
// storing its authenticator failed (createErr), so that no webauthn account
// is left without its authenticator, and returns createErr, joined with the
// unlinking's error if that failed too. It runs even when ctx was
// cancelled, bounded by its own timeout. An adapter without unlinkAccount
// keeps the account; the error says so.
func (a *Auth) unlinkAccount(ctx context.Context, key core.AccountKey, createErr error) error {
	u, ok := has[core.AccountUnlinker](a)
	if !ok {
		return fmt.Errorf("%w (the %s account %q is left without its authenticator: the adapter has no unlinkAccount)", createErr, key.Provider, key.ProviderAccountID)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if _, err := u.UnlinkAccount(ctx, key); err != nil {
		return errors.Join(createErr, &AdapterError{Method: core.MethodUnlinkAccount, Err: fmt.Errorf("removing the %s account %q whose authenticator could not be stored: %w", key.Provider, key.ProviderAccountID, err)})
	}
	return createErr
}

// unknownAuthenticator is the refusal of an assertion whose credential (or
// its user) is not stored; cause is what said so, or nil.
func unknownAuthenticator(credentialID string, cause error) error {
	if cause == nil {
		cause = core.ErrNotFound
	}
	return Fail(CodeWebAuthnVerification, fmt.Errorf("WebAuthn authentication: %w %q: %w", errUnknownAuthenticator, credentialID, cause))
}

// counterNotIncreased is the refusal of an assertion whose counter is not
// above the stored one; err matches core.ErrCounterNotIncreased.
func counterNotIncreased(err error) error {
	return Fail(CodeWebAuthnVerification, fmt.Errorf("WebAuthn authentication: %w", err))
}

// advanceCounter records a verified assertion for the credential: the
// counter check and update of [Auth.SignInWithPasskey]. It returns the
// credential's user and its authenticator as updated.
func (a *Auth) advanceCounter(ctx context.Context, credentialID string, newCounter int64) (*core.User, *core.Authenticator, error) {
	var au *core.Authenticator
	var err error
	if adv, ok := has[core.AuthenticatorCounterAdvancer](a); ok {
		au, err = adv.AdvanceAuthenticatorCounter(ctx, credentialID, newCounter)
		switch {
		case errors.Is(err, core.ErrNotFound):
			return nil, nil, unknownAuthenticator(credentialID, err)
		case errors.Is(err, core.ErrCounterNotIncreased):
			return nil, nil, counterNotIncreased(err)
		case err != nil:
			return nil, nil, &AdapterError{Method: core.Method(core.ExtensionAdvanceAuthenticatorCounter), Err: err}
		case au == nil:
			return nil, nil, &AdapterError{Method: core.Method(core.ExtensionAdvanceAuthenticatorCounter), Err: errors.New("returned no authenticator and no error")}
		}
	} else if au, err = a.checkAndUpdateCounter(ctx, credentialID, newCounter); err != nil {
		return nil, nil, err
	}
	user, err := call(a, "WebAuthn authentication", func(g core.UserGetter) (*core.User, error) {
		return g.GetUser(ctx, au.UserID)
	})
	if err != nil {
		return nil, nil, err
	}
	if user == nil {
		return nil, nil, unknownAuthenticator(credentialID, fmt.Errorf("its user %q: %w", au.UserID, core.ErrNotFound))
	}
	return user, au, nil
}

// checkAndUpdateCounter is the counter check for adapters without
// [core.AuthenticatorCounterAdvancer]: two calls, not atomic.
func (a *Auth) checkAndUpdateCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	au, err := call(a, "WebAuthn authentication", func(g core.AuthenticatorGetter) (*core.Authenticator, error) {
		return g.GetAuthenticator(ctx, credentialID)
	})
	if err != nil {
		return nil, err
	}
	if au == nil {
		return nil, unknownAuthenticator(credentialID, nil)
	}
	if !core.CounterAdvances(au.Counter, newCounter) {
		return nil, counterNotIncreased(fmt.Errorf("%w: stored %d, reported %d", core.ErrCounterNotIncreased, au.Counter, newCounter))
	}
	if newCounter == au.Counter {
		return au, nil
	}
	return call(a, "WebAuthn authentication", func(u core.AuthenticatorCounterUpdater) (*core.Authenticator, error) {
		return u.UpdateAuthenticatorCounter(ctx, credentialID, newCounter)
	})
}
