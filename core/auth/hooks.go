package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// Callbacks are the decisions an application takes part in, Auth.js's
// callbacks option in Go. Every one of them runs in core/auth, which owns
// the sign-in (SignIn runs before it writes anything) and the sessions of
// both strategies; the HTTP layer (module
// github.com/authport/authport/handler) reaches them through [Edge].
// Every field is optional. A callback that panics fails what it ran for as
// its error would (the panic is logged; the error matches
// [core.ErrInvalidConfig]); a panicking Redirect refuses the URL.
type Callbacks struct {
	// SignIn decides whether a sign-in may go on: the zero
	// [SignInDecision] allows it, Deny refuses it ([CodeAccessDenied]; the
	// handler shows Auth.js's AccessDenied error page) and Redirect
	// refuses it and sends the browser to that URL instead. It runs for
	// every way to sign in, before the sign-in writes anything (no user
	// created, no account linked, no session): OAuth/OIDC after the
	// provider's profile is known, credentials after Authorize, passkeys
	// after the authenticator is verified, and e-mail twice, before the
	// link is stored and sent ([SignInParams.VerificationRequest]) and
	// when it is used. An error fails the sign-in as a configuration
	// error (the handler's Configuration page), not as a denial.
	SignIn func(ctx context.Context, p SignInParams) (SignInDecision, error)
	// Redirect is the policy for every callbackUrl: it returns the URL to
	// go to and true, or false to refuse it (the handler then goes to the
	// site's root). nil keeps the default, the handler's SafeRedirect:
	// same origin only. Widening it (subdomains, an app's deep-link
	// scheme) is the application's explicit choice here; whatever it
	// returns is used as is.
	Redirect func(ctx context.Context, p RedirectParams) (string, bool)
	// Session shapes the JSON of GET /session: it receives the default
	// object ({"user":{…},"expires":…}), and the user (database sessions)
	// or the decoded token (JWT sessions), and returns the object to send.
	// An error answers 500.
	Session func(ctx context.Context, p SessionParams) (map[string]any, error)
	// JWT shapes the claims of a JWT session (StrategyJWT) whenever the
	// token is issued or read: at sign-in ([JWTSignIn], or [JWTSignUp] for
	// a new user) with the user, the account with the provider's tokens
	// and the provider's profile; on POST /session ([JWTUpdate], Auth.js's
	// update()) with the client's data; on every GET /session
	// ([JWTRefresh]). It returns the claims to encode; nil claims end the
	// session. An error fails the request.
	JWT func(ctx context.Context, p JWTParams) (map[string]any, error)
}

// SignInDecision is what [Callbacks.SignIn] decides. The zero value allows
// the sign-in.
type SignInDecision struct {
	// Deny refuses the sign-in with [CodeAccessDenied].
	Deny bool
	// Redirect, when set, refuses the sign-in and sends the browser here
	// instead (Auth.js's signIn callback returning a URL).
	Redirect string
	// RequireSecondFactor asks this sign-in for a second factor before
	// the session, whatever [SecondFactorOptions.Required] and
	// RequiredFor say (it needs [SecondFactorOptions.Enabled]): a
	// decision on the sign-in (its provider, account, profile,
	// credentials), taken afresh each time. Nothing of it is stored, so
	// [Factors.Remove], which has no sign-in to decide on, does not know
	// it and removes such a user's last factor; the next sign-in the
	// callback requires one of still waits for one, or is refused. A
	// requirement on the user alone (a role, a plan) belongs in
	// [SecondFactorOptions.RequiredFor], which Remove keeps.
	RequireSecondFactor bool
}

// SignInParams is what [Callbacks.SignIn] decides on.
type SignInParams struct {
	// ProviderID and Type name the provider signed in with.
	ProviderID string
	Type       provider.Type
	// User is who signs in: the stored user, or for a new user the fields
	// it would be created with (ID empty). For credentials it is what
	// Authorize returned.
	User core.User
	// IsNewUser reports that the sign-in would create the user.
	IsNewUser bool
	// Account is the account signed in with (OAuth: with the provider's
	// tokens; e-mail and passkeys: the e-mail or webauthn account), nil for
	// credentials.
	Account *core.Account
	// Profile is the OAuth/OIDC provider's profile; nil otherwise.
	Profile *provider.User
	// Credentials are the fields a credentials sign-in posted.
	Credentials map[string]string
	// VerificationRequest is true when an e-mail sign-in is asked for,
	// before the link is stored and sent; false when the link is used.
	VerificationRequest bool
}

// RedirectParams is what [Callbacks.Redirect] decides on.
type RedirectParams struct {
	// URL is the callbackUrl as the client gave it (or as the callback-url
	// cookie kept it).
	URL string
	// BaseURL is the absolute URL of the auth routes; Origin its scheme
	// and host.
	BaseURL, Origin string
}

// SessionParams is what [Callbacks.Session] shapes.
type SessionParams struct {
	// Session is the default JSON object of GET /session; the callback may
	// change and return it.
	Session map[string]any
	// User is the session's user with database sessions; nil with JWT.
	User *core.User
	// Token is the JWT's claims (after [Callbacks.JWT]) with JWT sessions;
	// nil with database sessions.
	Token map[string]any
}

// JWTTrigger says why [Callbacks.JWT] runs.
type JWTTrigger string

// The triggers of [Callbacks.JWT].
const (
	JWTSignIn  JWTTrigger = "signIn"
	JWTSignUp  JWTTrigger = "signUp"
	JWTUpdate  JWTTrigger = "update"
	JWTRefresh JWTTrigger = "refresh"
)

// JWTParams is what [Callbacks.JWT] shapes.
type JWTParams struct {
	// Token is the current claims: at sign-in the defaults (sub, name,
	// email, picture), later the decoded session token.
	Token   map[string]any
	Trigger JWTTrigger
	// User, Account and Profile are set at sign-in and sign-up only:
	// the user, the account with the provider's tokens (nil for
	// credentials) and the OAuth/OIDC provider's profile (nil otherwise).
	User    *core.User
	Account *core.Account
	Profile *provider.User
	// IsNewUser is true with JWTSignUp.
	IsNewUser bool
	// Update is the data the client sent with POST /session (Auth.js's
	// update(data)), decoded from JSON; nil otherwise.
	Update any
}

// errAccessDenied is in the chain of every [*DeniedError]: its code is
// [CodeAccessDenied].
var errAccessDenied = coded(CodeAccessDenied, "sign-in denied")

// DeniedError is the error of a sign-in [Callbacks.SignIn] refused; it
// carries [CodeAccessDenied]. Redirect is where the callback sent the
// browser instead, or "".
type DeniedError struct {
	ProviderID string
	Redirect   string
}

// Error says which sign-in was refused.
func (e *DeniedError) Error() string {
	return fmt.Sprintf("%v: the SignIn callback refused the %s sign-in", errAccessDenied, e.ProviderID)
}

// Unwrap returns the refusal, whose code is [CodeAccessDenied].
func (e *DeniedError) Unwrap() error { return errAccessDenied }

// Events are told what happened, after the fact (Auth.js's events option).
// They run synchronously in the request, after the write they report; an
// event's error (or panic) is logged to [Config.Logger] and never fails the
// sign-in. In one sign-in they run in this order: CreateUser (a new user),
// UpdateUser (an e-mail sign-in that proved the user's address),
// LinkAccount (an account linked), SignIn. SignIn runs when core/auth has
// completed the sign-in (the database session created), before the HTTP
// layer writes the cookie (with JWT sessions, before the JWT callback,
// unlike Auth.js, whose signIn event follows its jwt callback). SignOut runs
// after the session is deleted (or the JWT cookie cleared), Session on every
// GET /session that returns a session.
//
// No event carries a secret: no session token (a database session is
// named by its public id, [SessionID]), no provider token (access, refresh
// or ID token), no password hash, no code. [Callbacks.SignIn] and
// [Callbacks.JWT] are where the provider's tokens are seen, and the
// adapter keeps them with the account.
type Events struct {
	SignIn      func(ctx context.Context, e SignInEvent) error
	SignOut     func(ctx context.Context, e SignOutEvent) error
	CreateUser  func(ctx context.Context, user core.User) error
	UpdateUser  func(ctx context.Context, user core.User) error
	LinkAccount func(ctx context.Context, e LinkAccountEvent) error
	Session     func(ctx context.Context, e SessionEvent) error
	// SessionsRevoked runs after a user ended sessions through
	// [Auth.Sessions] (one, the others, or all).
	SessionsRevoked func(ctx context.Context, e SessionsRevokedEvent) error
	// RefreshTokenReused runs after a token family of module
	// github.com/authport/authport/tokens was ended because one of its
	// refresh tokens was presented again after rotation (a sign that it
	// leaked).
	RefreshTokenReused func(ctx context.Context, e RefreshTokenReusedEvent) error
}

// SignInEvent reports a completed sign-in.
type SignInEvent struct {
	ProviderID string
	User       core.User
	// Account is the account signed in with, without its secrets (no
	// access, refresh or ID token, no password hash); nil for
	// credentials.
	Account   *core.Account
	Profile   *provider.User
	IsNewUser bool
}

// SignOutEvent reports a sign-out: which database session ended, or the
// JWT's claims. It holds no session token.
type SignOutEvent struct {
	// SessionID is the ended database session's public id ([SessionID]):
	// the id [Sessions.List] showed for it and [SessionsRevokedEvent]
	// carries. "" with JWT sessions.
	SessionID string
	// Session is the deleted database session (its user, expiry and
	// metadata) with SessionToken cleared; nil with JWT sessions.
	Session *core.Session
	// Token is the JWT session's claims; nil with database sessions.
	Token map[string]any
}

// LinkAccountEvent reports an account linked to a user. Account is the
// account as linked, without its secrets (no provider tokens, no password
// hash).
type LinkAccountEvent struct {
	User    core.User
	Account core.Account
	Profile *provider.User
}

// publicAccount returns a copy of acc without its secrets, for an event:
// no access, refresh or ID token and no password hash. What remains names
// the account and describes its grant (type, scope, expiry, token type).
// nil stays nil.
func publicAccount(acc *core.Account) *core.Account {
	if acc == nil {
		return nil
	}
	c := *acc
	c.AccessToken, c.RefreshToken, c.IDToken, c.PasswordHash = nil, nil, nil, nil
	c.AuthorizationDetails = slices.Clone(acc.AuthorizationDetails)
	return &c
}

// SessionEvent reports a session read by GET /session: the JSON sent, and
// the JWT's claims with JWT sessions.
type SessionEvent struct {
	Session map[string]any
	Token   map[string]any
}

// emit runs one event; its error or panic goes to the logger.
func emit[E any](a *Auth, ctx context.Context, name string, f func(context.Context, E) error, e E) {
	if f == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			a.log.ErrorContext(ctx, "authport: event panicked", "event", name, "panic", fmt.Sprint(p))
		}
	}()
	if err := f(ctx, e); err != nil {
		a.log.ErrorContext(ctx, "authport: event failed", "event", name, "error", err)
	}
}

// runCallback calls f, one of the application's [Callbacks], and turns
// its panic into an error matching [core.ErrInvalidConfig], which the
// caller handles as the callback's failure: a bug in a callback fails the
// sign-in or the request it ran for (logged, with the panic's value),
// as an event's panic does (emit), rather than the program, which
// net/http would have spared but a caller of core/auth outside a handler
// would not.
func runCallback[T any](a *Auth, ctx context.Context, name string, f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			a.log.ErrorContext(ctx, "authport: callback panicked", "callback", name, "panic", fmt.Sprint(p))
			var zero T
			v, err = zero, fmt.Errorf("%w: the %s callback panicked (its value is logged)", core.ErrInvalidConfig, name)
		}
	}()
	return f()
}

// authorize runs [Callbacks.SignIn], before the sign-in writes anything.
// second reports that the callback asked this sign-in for a second
// factor ([SignInDecision.RequireSecondFactor]): the caller carries it to
// finish in [SignIn]'s requireSecond.
func (a *Auth) authorize(ctx context.Context, p SignInParams) (second bool, err error) {
	if a.callbacks.SignIn == nil {
		return false, nil
	}
	d, err := runCallback(a, ctx, "SignIn", func() (SignInDecision, error) { return a.callbacks.SignIn(ctx, p) })
	if err != nil {
		return false, fmt.Errorf("the SignIn callback failed: %w", err)
	}
	if d.Deny || d.Redirect != "" {
		return false, &DeniedError{ProviderID: p.ProviderID, Redirect: d.Redirect}
	}
	return d.RequireSecondFactor, nil
}

// SignInWithCredentials runs [Callbacks.SignIn] for a credentials sign-in
// and returns the sign-in (credentials sessions are JWTs, which the HTTP
// layer issues): user is what the provider's Authorize returned, creds the
// posted fields. A refusal carries [CodeAccessDenied].
func (a *Auth) SignInWithCredentials(ctx context.Context, providerID string, user core.User, creds map[string]string) (*SignIn, error) {
	if _, err := providerOf[*provider.CredentialsConfig](a, providerID); err != nil {
		return nil, err
	}
	second, err := a.authorize(ctx, SignInParams{ProviderID: providerID, Type: provider.TypeCredentials, User: user, Credentials: creds})
	if err != nil {
		return nil, err
	}
	return a.finish(ctx, &SignIn{ProviderID: providerID, User: user, requireSecond: second})
}

// finish completes every sign-in: it creates the database session (the one
// place a sign-in session is made; a caller who was signed in keeps their
// session), runs [Events.SignIn], and with JWT sessions makes the new
// token's claims through [Callbacks.JWT] (the caller encodes them).
//
// With second factors on, it first decides whether the sign-in waits for
// one (secondFactorStage): it then returns the sign-in with Pending set,
// and no session, no SignIn event and no claims, which [Factors.Verify]
// makes once the second factor is answered.
func (a *Auth) finish(ctx context.Context, si *SignIn) (*SignIn, error) {
	// A password account's hash never reaches the result, the event or the
	// JWT callback, whichever path made the sign-in.
	si.Account = withoutHash(si.Account)
	if si.amr == nil {
		si.amr = a.methodsOf(si.ProviderID)
	}
	if a.sf.Enabled && !si.KeepSession {
		pending, err := a.secondFactorStage(ctx, si)
		if err != nil {
			return nil, err
		}
		if pending != nil {
			si.Pending, si.confirm = pending, nil
			return si, nil
		}
	}
	au := Authentication{}
	if !si.KeepSession {
		au = authenticationAt(a.now(), si.amr)
	}
	return a.completeSignIn(ctx, si, au)
}

// completeSignIn makes the session of a sign-in whose user proved au (the
// part of finish after the second-factor stage).
func (a *Auth) completeSignIn(ctx context.Context, si *SignIn, au Authentication) (*SignIn, error) {
	si.Authentication = au
	if a.strategy == StrategyDatabase && !si.KeepSession {
		s, err := a.createSession(ctx, si.User.ID, au)
		if err != nil {
			return nil, err
		}
		if si.confirm != nil {
			if err := si.confirm(ctx); err != nil {
				return nil, a.dropSession(ctx, s.SessionToken, err)
			}
		}
		si.Session = *s
	}
	emit(a, ctx, "signIn", a.events.SignIn, SignInEvent{ProviderID: si.ProviderID, User: si.User, Account: publicAccount(si.Account), Profile: si.Profile, IsNewUser: si.IsNewUser})
	if a.strategy == StrategyJWT && !si.KeepSession {
		claims, err := a.signInClaims(ctx, si)
		if err != nil {
			return nil, err
		}
		si.Claims = claims
	}
	return si, nil
}

// dropSession deletes the session a refused sign-in has just created and
// returns cause, joined with the deletion's error if that failed too (the
// deletion is then retried in the background, see retryLater). Like
// removeUnlinkedUser it runs even when ctx was cancelled.
func (a *Auth) dropSession(ctx context.Context, sessionToken string, cause error) error {
	drop := func(ctx context.Context) error {
		_, err := a.SignOut(ctx, sessionToken)
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	err := drop(dctx)
	cancel()
	if err != nil {
		go retryLater(context.WithoutCancel(ctx), drop)
		return errors.Join(cause, fmt.Errorf("deleting the session of the refused sign-in (retrying in the background for %v): %w", cleanupRetryWindow, err))
	}
	return cause
}

// signInClaims are a new JWT session's claims: the user's sub, name,
// email and picture, and the sign-in's auth_time, amr and acr, through
// [Callbacks.JWT] (trigger signIn, or signUp for a new user). As in
// Auth.js, a stored user's missing name, e-mail address or picture is a
// null claim (GET /session then answers null for it), while a credentials
// user (what Authorize returned, not a stored record) has no claim for
// what it lacks.
func (a *Auth) signInClaims(ctx context.Context, si *SignIn) (map[string]any, error) {
	claims := map[string]any{"sub": si.User.ID}
	setAuthClaims(claims, si.Authentication)
	stored := true
	if p, ok := a.providers[si.ProviderID]; ok && p.Common().Type == provider.TypeCredentials {
		stored = false
	}
	if si.User.Name != nil {
		claims["name"] = *si.User.Name
	} else if stored {
		claims["name"] = nil
	}
	if si.User.Email != "" {
		claims["email"] = si.User.Email
	} else if stored {
		claims["email"] = nil
	}
	if si.User.Image != nil {
		claims["picture"] = *si.User.Image
	} else if stored {
		claims["picture"] = nil
	}
	if a.callbacks.JWT == nil {
		return claims, nil
	}
	user := si.User
	p := JWTParams{Token: claims, Trigger: JWTSignIn, User: &user, Account: si.Account, Profile: si.Profile, IsNewUser: si.IsNewUser}
	if si.IsNewUser {
		p.Trigger = JWTSignUp
	}
	c, err := runCallback(a, ctx, "JWT", func() (map[string]any, error) { return a.callbacks.JWT(ctx, p) })
	if err != nil {
		return nil, fmt.Errorf("the JWT callback failed: %w", err)
	}
	if c == nil {
		return nil, errors.New("the JWT callback returned no claims at sign-in")
	}
	return c, nil
}

// createUser creates the user and runs [Events.CreateUser].
func (a *Auth) createUser(ctx context.Context, neededBy string, u core.User) (*core.User, error) {
	created, err := call(a, neededBy, func(c core.UserCreator) (*core.User, error) {
		return c.CreateUser(ctx, u)
	})
	if err != nil {
		return nil, err
	}
	emit(a, ctx, "createUser", a.events.CreateUser, *created)
	return created, nil
}

// linkAccount links the account and runs [Events.LinkAccount]; the
// account it returns has no password hash.
func (a *Auth) linkAccount(ctx context.Context, neededBy string, user core.User, acc core.Account, profile *provider.User) (*core.Account, error) {
	linked, err := call(a, neededBy, func(l core.AccountLinker) (*core.Account, error) {
		return l.LinkAccount(ctx, acc)
	})
	if err != nil {
		return nil, err
	}
	if linked == nil {
		linked = &acc
	}
	// A password account's hash never reaches the caller, nor an event
	// the provider's tokens.
	linked = withoutHash(linked)
	emit(a, ctx, "linkAccount", a.events.LinkAccount, LinkAccountEvent{User: user, Account: *publicAccount(linked), Profile: profile})
	return linked, nil
}
