package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// Errors of WebAuthn authentication; match them with errors.Is.
var (
	// ErrUnknownAuthenticator: no authenticator has the credential id.
	ErrUnknownAuthenticator = errors.New("unknown WebAuthn credential")
	// ErrCounterNotIncreased: the authenticator reported a signature
	// counter that is not above the stored one: a replayed or raced
	// assertion, or a sign that the credential may have been cloned. The
	// stored counter is left as it was. It is [core.ErrCounterNotIncreased].
	ErrCounterNotIncreased = core.ErrCounterNotIncreased
)

// RegisterAuthenticator records a verified WebAuthn registration for an
// existing user, with the WebAuthn provider providerID: the user's webauthn
// account (providerAccountId is the authenticator's, linked once) and the
// authenticator itself. It is all or nothing: when storing the
// authenticator fails, the account it linked is unlinked again (when the
// adapter has unlinkAccount). Verifying the attestation is the caller's job.
func (a *Auth) RegisterAuthenticator(ctx context.Context, providerID string, au core.Authenticator) (*core.Authenticator, error) {
	if _, err := providerOf[*provider.WebAuthnConfig](a, providerID); err != nil {
		return nil, err
	}
	user, err := call(a, "WebAuthn registration", func(g core.UserGetter) (*core.User, error) {
		return g.GetUser(ctx, au.UserID)
	})
	if err != nil {
		return nil, err
	}
	if user == nil {
		return nil, fmt.Errorf("WebAuthn registration: user %q: %w", au.UserID, core.ErrNotFound)
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
		return nil, fmt.Errorf("WebAuthn registration: %w: account %q belongs to another user", errAccountNotLinked, au.ProviderAccountID)
	}
	// The account first, then the authenticator: the contract can unlink
	// an account but has no way to delete an authenticator, so the write
	// that can be undone comes first, and is undone when the second fails.
	stored, err := call(a, "WebAuthn registration", func(c core.AuthenticatorCreator) (*core.Authenticator, error) {
		return c.CreateAuthenticator(ctx, au)
	})
	if err != nil {
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

// Authenticators lists the user's authenticators (to offer them as allowed
// credentials); an unknown user has none.
func (a *Auth) Authenticators(ctx context.Context, userID string) ([]core.Authenticator, error) {
	return call(a, "WebAuthn authentication", func(l core.AuthenticatorsByUserLister) ([]core.Authenticator, error) {
		return l.ListAuthenticatorsByUserID(ctx, userID)
	})
}

// AuthenticateWebAuthn records a verified WebAuthn assertion for the
// credential: the signature counter the authenticator reported must be
// above the stored one (unless both are 0, for authenticators without a
// counter), else it fails with [ErrCounterNotIncreased]. The stored
// counter is then updated and the credential's user returned. Verifying
// the signature is the caller's job; creating a session, too
// ([Auth.CreateSession]).
//
// When the adapter offers [core.AuthenticatorCounterAdvancer], the check
// and the update are one atomic step: of several assertions racing with the
// same counter, or a replay of one, exactly one passes. Otherwise they are
// two adapter calls (getAuthenticator, then updateAuthenticatorCounter) and
// two racing assertions can both pass; the later write wins.
func (a *Auth) AuthenticateWebAuthn(ctx context.Context, credentialID string, newCounter int64) (*core.User, *core.Authenticator, error) {
	var au *core.Authenticator
	var err error
	if adv, ok := has[core.AuthenticatorCounterAdvancer](a); ok {
		au, err = adv.AdvanceAuthenticatorCounter(ctx, credentialID, newCounter)
		switch {
		case errors.Is(err, core.ErrNotFound):
			return nil, nil, fmt.Errorf("%w: %w", ErrUnknownAuthenticator, err)
		case errors.Is(err, core.ErrCounterNotIncreased):
			return nil, nil, fmt.Errorf("WebAuthn authentication: %w", err)
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
		return nil, nil, ErrUnknownAuthenticator
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
		return nil, ErrUnknownAuthenticator
	}
	if !core.CounterAdvances(au.Counter, newCounter) {
		return nil, fmt.Errorf("%w: stored %d, reported %d", ErrCounterNotIncreased, au.Counter, newCounter)
	}
	if newCounter == au.Counter {
		return au, nil
	}
	return call(a, "WebAuthn authentication", func(u core.AuthenticatorCounterUpdater) (*core.Authenticator, error) {
		return u.UpdateAuthenticatorCounter(ctx, credentialID, newCounter)
	})
}
