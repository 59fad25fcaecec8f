package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// errVerificationFailed reports an e-mail sign-in link that does not sign
// anyone in: an unknown, wrong, expired or already used token, or a token
// for another address. It tells the caller no more than that on purpose.
var errVerificationFailed = coded(CodeVerification, "e-mail sign-in link is invalid, expired or already used")

// emailTokenBytes is the size of the token in an e-mail link: 256 bits.
const emailTokenBytes = 32

// HashToken returns what the store keeps for an e-mail token: the hex
// SHA-256 of the token followed by the secret (SPEC §5.6). It is the same
// hash Auth.js stores, so either can verify the other's links.
func HashToken(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

// StartEmailSignIn starts an e-mail sign-in with the e-mail provider
// providerID: it normalises and checks the address (a bad one stores
// nothing), makes a random token, stores its hash (with the newest secret)
// with the provider's lifetime, and hands the link to the provider's
// SendVerificationRequest, if it has one. When sending fails (the mailer
// refuses the address, say), the stored token is removed again. It returns
// the request it sent, whose Token is the unhashed token in the link.
// [Callbacks.SignIn] runs first, with VerificationRequest set: a refusal
// stores and sends nothing.
func (a *Auth) StartEmailSignIn(ctx context.Context, providerID, email string) (*provider.VerificationRequest, error) {
	return a.startEmailSignIn(ctx, providerID, email, "")
}

// StartEmailSignInWithCode is [Auth.StartEmailSignIn] for a browser that
// will type the e-mail's one-time code: with [provider.EmailConfig.Codes]
// on, the e-mail carries a 6-digit code beside the link, which works only
// with binding (a random value the browser keeps, the handler's code
// cookie). Complete it with [Auth.VerifyEmailSignInCode].
func (a *Auth) StartEmailSignInWithCode(ctx context.Context, providerID, email, binding string) (*provider.VerificationRequest, error) {
	if binding == "" {
		return nil, fmt.Errorf("%w: a code needs the browser's binding", core.ErrInvalidInput)
	}
	return a.startEmailSignIn(ctx, providerID, email, binding)
}

// emailCodeSpec is the e-mail provider's code settings, or nil when its
// codes are off.
func emailCodeSpec(p *provider.EmailConfig) *codeSpec {
	if !p.Codes {
		return nil
	}
	return &codeSpec{purpose: "email-signin", maxAge: p.CodeMaxAge, attempts: p.CodeAttempts}
}

func (a *Auth) startEmailSignIn(ctx context.Context, providerID, email, binding string) (*provider.VerificationRequest, error) {
	p, err := providerOf[*provider.EmailConfig](a, providerID)
	if err != nil {
		return nil, err
	}
	identifier, err := p.Normalize(email)
	if err != nil {
		return nil, emailRefusal(fmt.Errorf("e-mail sign-in: %w", err))
	}
	if identifier == "" {
		return nil, emailRefusal(fmt.Errorf("e-mail sign-in: %w: NormalizeIdentifier returned an empty identifier", provider.ErrInvalidEmail))
	}
	if a.callbacks.SignIn != nil {
		// Before anything is stored or sent (Auth.js's signIn callback
		// with verificationRequest: true).
		params := SignInParams{ProviderID: providerID, Type: provider.TypeEmail, VerificationRequest: true,
			Account: &core.Account{Provider: providerID, Type: core.AccountTypeEmail, ProviderAccountID: identifier}}
		holder, err := call(a, "e-mail sign-in", func(g core.UserByEmailGetter) (*core.User, error) {
			return g.GetUserByEmail(ctx, identifier)
		})
		if err != nil {
			return nil, err
		}
		if holder != nil {
			params.User = *holder
		} else {
			params.User, params.IsNewUser = core.User{Email: identifier}, true
		}
		params.Account.UserID = params.User.ID
		if _, err := a.authorize(ctx, params); err != nil {
			return nil, err
		}
	}
	token, err := a.emailToken(p)
	if err != nil {
		return nil, err
	}
	is, err := a.issue(ctx, "e-mail sign-in", identifier, token, "", p.TokenMaxAge(), emailCodeSpec(p), binding)
	if err != nil {
		return nil, err
	}
	req := &provider.VerificationRequest{
		Identifier: identifier,
		URL:        a.callbackURL(providerID, url.Values{"token": {token}, "email": {identifier}}),
		Token:      token,
		Code:       is.code,
		Expires:    is.expires,
		From:       p.From,
		ProviderID: providerID,
	}
	if p.SendVerificationRequest != nil {
		if err := p.SendVerificationRequest(ctx, *req); err != nil {
			err = emailRefusal(fmt.Errorf("e-mail sign-in: sending the link: %w", err))
			return nil, a.forget(ctx, "e-mail sign-in", is, err)
		}
	}
	return req, nil
}

// emailRefusal gives an address that is not one, or a delivery the mail
// service refused, the code [CodeEmailSignin]; any other failure of the
// sender keeps none (Configuration).
func emailRefusal(err error) error {
	if errors.Is(err, provider.ErrInvalidEmail) || errors.Is(err, provider.ErrEmailDelivery) {
		return Fail(CodeEmailSignin, err)
	}
	return err
}

// removeUnsentToken deletes the stored token of a link that could not be
// sent (the mailer refused the address, say), so that no usable token is
// left behind, and returns sendErr, joined with the deletion's error if
// that failed too. Like removeUnlinkedUser it runs even when ctx was
// cancelled, bounded by its own timeout.
func (a *Auth) removeUnsentToken(ctx context.Context, neededBy string, key core.VerificationTokenKey, sendErr error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, err := call(a, neededBy, func(u core.VerificationTokenUser) (*core.VerificationToken, error) {
		return u.UseVerificationToken(ctx, key)
	})
	if err != nil {
		return errors.Join(sendErr, fmt.Errorf("removing the token of the unsent link: %w", err))
	}
	return sendErr
}

func (a *Auth) emailToken(p *provider.EmailConfig) (string, error) {
	if p.GenerateVerificationToken == nil {
		return randomHex(emailTokenBytes)
	}
	token, err := p.GenerateVerificationToken()
	if err != nil {
		return "", fmt.Errorf("e-mail sign-in: generating the token: %w", err)
	}
	if token == "" {
		return "", errors.New("e-mail sign-in: GenerateVerificationToken returned an empty token")
	}
	return token, nil
}

func (a *Auth) callbackURL(providerID string, q url.Values) string {
	if a.settings.BaseURL == "" {
		return ""
	}
	return a.settings.BaseURL + "/callback/" + url.PathEscape(providerID) + "?" + q.Encode()
}

// VerifyEmailSignIn completes an e-mail sign-in from the link's token and
// address. The token is hashed and used (deleted) in the store, so a link
// works once; its address and expiry are checked. Then:
//
//   - an unknown address gets a new user, with emailVerified now;
//   - a known user gets emailVerified set on its first e-mail sign-in, and
//     only then; but a user that holds the address without having proven
//     it and has passkeys (a passkey sign-up by someone not signed in) or
//     a password (a password sign-up never verified: someone may have
//     signed up with the owner's address, waiting for the owner to sign in
//     to the user whose password they know) is not signed in to, unless
//     [Config.AllowDangerousUnverifiedEmail] is set: it is given
//     [DisplacedEmail] instead, and the prover gets a new user;
//   - the user gets an e-mail account for the provider, once;
//   - a database session is created.
//
// [Callbacks.SignIn] runs once the token is used and the user known, before
// anything else is written. [Events] CreateUser or UpdateUser, LinkAccount
// and SignIn run, in that order.
//
// A wrong, expired or reused token, or a token for another address, gives an
// error matching [CodeVerification] and signs no one in.
func (a *Auth) VerifyEmailSignIn(ctx context.Context, providerID, email, token string) (*SignIn, error) {
	p, err := providerOf[*provider.EmailConfig](a, providerID)
	if err != nil {
		return nil, err
	}
	identifier, err := p.Normalize(email)
	if err != nil || token == "" {
		return nil, errVerificationFailed
	}
	v, err := a.useToken(ctx, "e-mail sign-in", identifier, "", token)
	if err != nil {
		return nil, err
	}
	if v == nil || v.Expired(a.now()) || subtle.ConstantTimeCompare([]byte(v.Identifier), []byte(identifier)) != 1 {
		return nil, errVerificationFailed
	}
	return a.emailSignIn(ctx, providerID, identifier)
}

// VerifyEmailSignInCode completes an e-mail sign-in from the e-mail's
// one-time code, typed in the browser that asked for it (binding, see
// [Auth.StartEmailSignInWithCode]); then as [Auth.VerifyEmailSignIn]. A
// code of the wrong shape is refused before any lookup, and after the
// provider's CodeAttempts tries for an address within CodeMaxAge its codes
// are dead. A refused code gives an error matching [CodeVerification].
func (a *Auth) VerifyEmailSignInCode(ctx context.Context, providerID, email, code, binding string) (*SignIn, error) {
	p, err := providerOf[*provider.EmailConfig](a, providerID)
	if err != nil {
		return nil, err
	}
	identifier, err := p.Normalize(email)
	if err != nil {
		return nil, errCodeRefused
	}
	spec := emailCodeSpec(p)
	if spec == nil {
		return nil, fmt.Errorf("%w (codes are off for provider %q)", errCodeRefused, providerID)
	}
	if _, err := a.useCode(ctx, "e-mail sign-in", identifier, binding, code, *spec); err != nil {
		return nil, err
	}
	return a.emailSignIn(ctx, providerID, identifier)
}

// emailSignIn signs in the holder of the proven address identifier.
func (a *Auth) emailSignIn(ctx context.Context, providerID, identifier string) (*SignIn, error) {
	now := a.now()

	user, err := call(a, "e-mail sign-in", func(g core.UserByEmailGetter) (*core.User, error) {
		return g.GetUserByEmail(ctx, identifier)
	})
	if err != nil {
		return nil, err
	}
	var second bool
	if user != nil {
		// An earlier holder that never proved the address does not become
		// the prover's account (Config.AllowDangerousUnverifiedEmail).
		displace, err := a.mustDisplace(ctx, *user)
		if err != nil {
			return nil, err
		}
		if displace {
			holder := *user
			user = nil
			if second, err = a.authorizeEmail(ctx, providerID, nil, identifier); err != nil {
				return nil, err
			}
			if err := a.displace(ctx, "e-mail sign-in", holder); err != nil {
				return nil, err
			}
		} else if second, err = a.authorizeEmail(ctx, providerID, user, identifier); err != nil {
			return nil, err
		}
	} else if second, err = a.authorizeEmail(ctx, providerID, nil, identifier); err != nil {
		return nil, err
	}
	isNew := user == nil
	switch {
	case isNew:
		id, err := a.newUserID()
		if err != nil {
			return nil, fmt.Errorf("e-mail sign-in: user id: %w", err)
		}
		user, err = a.createUser(ctx, "e-mail sign-in", core.User{ID: id, Email: identifier, EmailVerified: &now})
		if errors.Is(err, core.ErrAlreadyExists) {
			// A concurrent first sign-in for the address created the
			// user; sign in as that user.
			isNew = false
			user, err = call(a, "e-mail sign-in", func(g core.UserByEmailGetter) (*core.User, error) {
				return g.GetUserByEmail(ctx, identifier)
			})
			if err == nil && user == nil {
				err = fmt.Errorf("e-mail sign-in: user %q: %w", identifier, core.ErrNotFound)
			}
		}
		if err != nil {
			return nil, err
		}
	case user.EmailVerified == nil:
		user, err = call(a, "e-mail sign-in", func(u core.UserUpdater) (*core.User, error) {
			return u.UpdateUser(ctx, core.UserUpdate{ID: user.ID, EmailVerified: core.Set(&now)})
		})
		if err != nil {
			return nil, err
		}
		emit(a, ctx, "updateUser", a.events.UpdateUser, *user)
	}
	acc, err := a.linkEmailAccount(ctx, providerID, *user)
	if err != nil {
		return nil, err
	}
	return a.finish(ctx, &SignIn{ProviderID: providerID, User: *user, Account: acc, IsNewUser: isNew, requireSecond: second})
}

// authorizeEmail runs [Callbacks.SignIn] for a used e-mail link: user is
// the user signing in, or nil for a new user of the address.
func (a *Auth) authorizeEmail(ctx context.Context, providerID string, user *core.User, identifier string) (bool, error) {
	params := SignInParams{ProviderID: providerID, Type: provider.TypeEmail,
		Account: &core.Account{Provider: providerID, Type: core.AccountTypeEmail, ProviderAccountID: identifier}}
	if user != nil {
		params.User = *user
		params.Account.UserID = user.ID
	} else {
		params.User, params.IsNewUser = core.User{Email: identifier}, true
	}
	return a.authorize(ctx, params)
}

// useToken uses the link token of the purpose ("" for e-mail sign-in)
// hashed with each secret (linkToken), newest first, and returns the
// stored token the first hash finds. An e-mail sign-in token is also
// tried with the secrets joined by commas, as Auth.js hashes it when it is
// given several ([Config.AuthJSJoinedSecrets]).
func (a *Auth) useToken(ctx context.Context, neededBy, identifier, purpose, token string) (*core.VerificationToken, error) {
	secrets := a.secrets
	if purpose == "" {
		secrets = a.linkSecrets
	}
	for _, secret := range secrets {
		v, err := a.useKey(ctx, neededBy, core.VerificationTokenKey{Identifier: identifier, Token: linkToken(secret, purpose, token)})
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

// linkEmailAccount links the user's e-mail account (SPEC §2.8: for e-mail,
// providerAccountId is the address) unless it is linked already, and
// returns it.
func (a *Auth) linkEmailAccount(ctx context.Context, providerID string, user core.User) (*core.Account, error) {
	acc := core.Account{UserID: user.ID, Provider: providerID, Type: core.AccountTypeEmail, ProviderAccountID: user.Email}
	key := core.AccountKey{Provider: providerID, ProviderAccountID: user.Email}
	owner, err := call(a, "e-mail sign-in", func(g core.UserByAccountGetter) (*core.User, error) {
		return g.GetUserByAccount(ctx, key)
	})
	if err != nil {
		return nil, err
	}
	if owner != nil {
		return &acc, nil
	}
	linked, err := a.linkAccount(ctx, "e-mail sign-in", user, acc, nil)
	if errors.Is(err, core.ErrAlreadyExists) { // a concurrent sign-in linked it first
		return &acc, nil
	}
	return linked, err
}
