package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// errAccountNotLinked reports an OAuth sign-in that would join an account
// to a user it is not linked to: the account belongs to another user than
// the one signed in, or its e-mail address belongs to an existing user and
// the provider does not allow automatic linking
// (allowDangerousEmailAccountLinking, SPEC §5.5). Auth.js calls this
// OAuthAccountNotLinked.
var errAccountNotLinked = coded(CodeOAuthAccountNotLinked, "OAuth account is not linked to this user")

// errProfileInvalid reports a profile the sign-in cannot use: no provider
// account id, or no e-mail address for a new user.
var errProfileInvalid = coded(CodeOAuthCallback, "OAuth profile cannot be used to sign in")

// OAuthCallback is what the OAuth/OIDC callback learned from the provider.
type OAuthCallback struct {
	// ProviderID is the id of the configured OAuth or OIDC provider.
	ProviderID string
	// Profile is the user as the provider's profile callback mapped it;
	// Profile.ID becomes the account's providerAccountId.
	Profile provider.User
	// Tokens is the token endpoint's response.
	Tokens provider.TokenSet
	// User is the signed-in caller, or nil when the caller is not signed
	// in: a new account is then linked to this user, and an account linked
	// to another user fails with [CodeOAuthAccountNotLinked]. The HTTP layer
	// reads it from the session (the module oauth's Flow.Callback takes it
	// as a parameter). With [StrategyJWT] the user is looked up by its id
	// (the adapter's getUser): a user id that names no user counts as not
	// signed in.
	User *core.User
}

// SignInWithOAuth completes an OAuth or OIDC sign-in (Auth.js's
// handleLoginOrRegister):
//
//   - an OIDC callback without an id_token is rejected;
//   - an account already linked signs its user in, or changes nothing when
//     that user is the one signed in, or fails with [CodeOAuthAccountNotLinked]
//     when another user is signed in;
//   - a new account is linked to the signed-in user, if any;
//   - else, when its e-mail address ([NormalizeEmail]) belongs to a user,
//     it is linked to that user only if the provider allows dangerous
//     e-mail account linking and does not say the address is unverified,
//     and otherwise fails with [CodeOAuthAccountNotLinked]; but a user that
//     holds the address without having proven it and has a password or
//     passkeys (see [Auth.VerifyEmailSignIn]) is given [DisplacedEmail]
//     instead, and the profile gets a new user;
//   - else, when the provider says the address is unverified
//     (email_verified false), it fails with an error whose code is [CodeOAuthAccountNotLinked], unless
//     [Config.AllowDangerousUnverifiedEmail] is set;
//   - else a user is created (emailVerified null) and the account linked;
//     if the link fails, the new user is deleted again (when the adapter has
//     deleteUser), so that no user is left without an account.
//
// Once the user is known, and before anything is written, it runs
// [Callbacks.SignIn] (a refusal is a [*DeniedError]). The account stores
// what the provider's account callback keeps of the tokens, and the result
// carries it and the profile. Unless the caller was signed in already
// (KeepSession), a database session is created. [Events] CreateUser,
// LinkAccount and SignIn run, in that order.
func (a *Auth) SignInWithOAuth(ctx context.Context, cb OAuthCallback) (*SignIn, error) {
	p, err := providerOf[provider.OAuthProvider](a, cb.ProviderID)
	if err != nil {
		return nil, err
	}
	if err := p.CheckCallbackTokens(cb.Tokens); err != nil {
		return nil, err
	}
	if cb.Profile.ID == "" {
		return nil, fmt.Errorf("%w: the profile has no id", errProfileInvalid)
	}
	opts := p.Options()
	current, err := a.oauthCaller(ctx, cb)
	if err != nil {
		return nil, err
	}
	key := core.AccountKey{Provider: cb.ProviderID, ProviderAccountID: cb.Profile.ID}
	owner, err := call(a, "OAuth sign-in", func(g core.UserByAccountGetter) (*core.User, error) {
		return g.GetUserByAccount(ctx, key)
	})
	if err != nil {
		return nil, err
	}

	profile := cb.Profile
	acc := p.AccountTokens(cb.Tokens, a.now()).Account("", cb.ProviderID, accountType(opts.Type), cb.Profile.ID)
	params := SignInParams{ProviderID: cb.ProviderID, Type: opts.Type, Account: &acc, Profile: &profile}
	result := &SignIn{ProviderID: cb.ProviderID, Account: &acc, Profile: &profile}
	link := func(user core.User) error {
		acc.UserID = user.ID
		linked, err := a.linkAccount(ctx, "OAuth sign-in", user, acc, &profile)
		if err == nil {
			result.Account = linked
		}
		return err
	}

	if owner != nil { // a returning account
		acc.UserID = owner.ID
		if current != nil && current.ID != owner.ID {
			return nil, fmt.Errorf("%w: %s account %q belongs to another user", errAccountNotLinked, cb.ProviderID, cb.Profile.ID)
		}
		params.User = *owner
		if result.requireSecond, err = a.authorize(ctx, params); err != nil {
			return nil, err
		}
		result.User = *owner
		result.KeepSession = current != nil
		return a.finish(ctx, result)
	}

	if current != nil { // a new account for the signed-in user
		params.User = *current
		if result.requireSecond, err = a.authorize(ctx, params); err != nil {
			return nil, err
		}
		if err := link(*current); err != nil {
			return nil, err
		}
		result.User, result.KeepSession = *current, true
		return a.finish(ctx, result)
	}

	// The profile's address, in the one normal form, so that any spelling
	// of an address finds the user holding it.
	email := ""
	if cb.Profile.Email != "" {
		if email, err = NormalizeEmail(cb.Profile.Email); err != nil {
			return nil, fmt.Errorf("%w: the %s profile's e-mail address: %w", errProfileInvalid, cb.ProviderID, err)
		}
	}
	// An address the provider says it has not verified claims nothing.
	unverified := cb.Profile.EmailVerified != nil && !*cb.Profile.EmailVerified && !a.allowUnverified
	var byEmail *core.User
	if email != "" {
		byEmail, err = call(a, "OAuth sign-in", func(g core.UserByEmailGetter) (*core.User, error) {
			return g.GetUserByEmail(ctx, email)
		})
		if err != nil {
			return nil, err
		}
	}
	if byEmail != nil {
		if !opts.AllowDangerousEmailAccountLinking {
			return nil, fmt.Errorf("%w: a user with the e-mail address of this %s account exists; sign in as that user and link the account, or allow dangerous e-mail account linking for a provider that verifies addresses", errAccountNotLinked, cb.ProviderID)
		}
		if unverified {
			return nil, fmt.Errorf("%w: a user with the e-mail address of this %s account exists, and the provider says it has not verified the address; sign in as that user and link the account", errAccountNotLinked, cb.ProviderID)
		}
		// A holder that never proved the address and registered a
		// credential of its own (a password, passkeys) is not linked to:
		// it loses the address, and the profile gets a user of its own.
		displace, err := a.mustDisplace(ctx, *byEmail)
		if err != nil {
			return nil, err
		}
		if !displace {
			params.User = *byEmail
			if result.requireSecond, err = a.authorize(ctx, params); err != nil {
				return nil, err
			}
			if err := link(*byEmail); err != nil {
				return nil, err
			}
			result.User = *byEmail
			return a.finish(ctx, result)
		}
	}

	if email == "" && a.requireEmail {
		return nil, fmt.Errorf("%w: a new user needs an e-mail address (Config.RequireEmail) and the %s profile has none; sign up another way, or turn RequireEmail off to create users without an address as Auth.js does", errProfileInvalid, cb.ProviderID)
	}
	if unverified {
		return nil, fmt.Errorf("%w: %s says it has not verified %s; verify the address with the provider, or sign in another way", errEmailNotVerified, cb.ProviderID, email)
	}
	newUser := core.User{Email: email, Name: cb.Profile.Name, Image: cb.Profile.Image}
	params.User, params.IsNewUser = newUser, true
	if result.requireSecond, err = a.authorize(ctx, params); err != nil {
		return nil, err
	}
	if byEmail != nil {
		if err := a.displace(ctx, "OAuth sign-in", *byEmail); err != nil {
			return nil, err
		}
	}
	if newUser.ID, err = a.newUserID(); err != nil {
		return nil, fmt.Errorf("OAuth sign-in: user id: %w", err)
	}
	user, err := a.createUser(ctx, "OAuth sign-in", newUser)
	var adapterErr *AdapterError
	if errors.As(err, &adapterErr) {
		// The store may have created the user although the call failed
		// (its answer lost, or a client's retry of a create that had
		// succeeded reporting ErrAlreadyExists). The id is new and ours,
		// so removing it can only remove that user.
		return nil, a.removeUnlinkedUser(ctx, newUser.ID, err)
	}
	if err != nil {
		return nil, err
	}
	if err := link(*user); err != nil {
		return nil, a.removeUnlinkedUser(ctx, user.ID, err)
	}
	result.User, result.IsNewUser = *user, true
	return a.finish(ctx, result)
}

// removeUnlinkedUser deletes the user a sign-in has just created when
// linking its account failed (linkErr), so that no user is left without a
// way to sign in, and returns linkErr, joined with the deletion's error if
// that failed too. The deletion runs even when ctx was cancelled (the likely
// cause of the failure), bounded by its own short timeout. An adapter
// without deleteUser keeps the user; the error says so.
func (a *Auth) removeUnlinkedUser(ctx context.Context, userID string, linkErr error) error {
	d, ok := has[core.UserDeleter](a)
	if !ok {
		return fmt.Errorf("%w (the new user %q is left without an account: the adapter has no deleteUser)", linkErr, userID)
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	_, err := d.DeleteUser(dctx, userID)
	cancel()
	if err != nil {
		go a.removeUnlinkedUserLater(context.WithoutCancel(ctx), d, userID)
		return errors.Join(linkErr, &AdapterError{Method: core.MethodDeleteUser, Err: fmt.Errorf("removing the new user %q whose account could not be linked (retrying in the background for %v): %w", userID, cleanupRetryWindow, err)})
	}
	return linkErr
}

// cleanupRetryWindow is how long retryLater goes on trying.
const cleanupRetryWindow = time.Minute

// removeUnlinkedUserLater retries the removal of a half-created user whose
// first removal failed (the store was failing: the likely reason the
// sign-in failed). Without it, the user would stay once the store is
// back, with no account, and the same person's next OAuth sign-in would
// find its e-mail address taken and be refused (OAuthAccountNotLinked).
func (a *Auth) removeUnlinkedUserLater(ctx context.Context, d core.UserDeleter, userID string) {
	retryLater(ctx, func(ctx context.Context) error {
		_, err := d.DeleteUser(ctx, userID)
		return err
	})
}

// retryLater retries op, whose first try failed (the store was failing),
// every 50 ms at first, then at most every second, each try bounded by
// cleanupTimeout, until it succeeds or cleanupRetryWindow has passed. It
// runs in the caller's goroutine (start it with go) on a context without
// the caller's cancellation. It is in process: a crash of the process in
// that window leaves op undone.
func retryLater(ctx context.Context, op func(context.Context) error) {
	wait := 50 * time.Millisecond
	for end := time.Now().Add(cleanupRetryWindow); time.Now().Before(end); {
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
		tctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
		err := op(tctx)
		cancel()
		if err == nil {
			return
		}
	}
}

// oauthCaller returns who is signed in while the OAuth callback runs:
// cb.User, looked up again by id with JWT sessions (whose token may name a
// user that is gone), or nil.
func (a *Auth) oauthCaller(ctx context.Context, cb OAuthCallback) (*core.User, error) {
	if cb.User == nil || cb.User.ID == "" {
		return nil, nil
	}
	if a.strategy != StrategyJWT {
		return cb.User, nil
	}
	return call(a, "OAuth sign-in", func(g core.UserGetter) (*core.User, error) {
		return g.GetUser(ctx, cb.User.ID)
	})
}

// cleanupTimeout bounds the removal of a half-created sign-in.
const cleanupTimeout = 10 * time.Second

func accountType(t provider.Type) core.AccountType {
	if t == provider.TypeOIDC {
		return core.AccountTypeOIDC
	}
	return core.AccountTypeOAuth
}
