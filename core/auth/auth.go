// Package auth is the library behaviour of authport on top of any adapter:
// sessions of both strategies (database sessions' lifetime, extension and
// removal on expiry; JWT sessions' claims, re-issued at most once per
// UpdateAge), e-mail sign-in with single-use hashed tokens, OAuth/OIDC
// sign-in with account linking, passkey (WebAuthn) registration and
// sign-in, and password accounts ([Auth.Passwords]: sign-up, sign-in,
// verification, reset, change) with 6-digit one-time codes beside e-mail
// links, with the application's callbacks and events (SPEC §3, §5, §7).
//
// It is the logic HTTP handlers call; it sends no redirects and serves no
// pages. Build an [Auth] with [New]: it validates the providers and checks,
// once, that the adapter implements every method the configuration needs,
// returning one error that names all the missing ones. A call that still
// reaches a missing method returns the same kind of error
// ([core.ErrMissingAdapterMethod]); every adapter failure comes back as an
// [*AdapterError] naming the method that failed.
//
// Errors are a few kinds, tested with [errors.Is] and [errors.As]. A
// sign-in refused for a reason the user, browser or provider caused is an
// [*Error] carrying its Auth.js [Code] (the handler's error page): read it
// with [CodeOf], or test errors.Is(err, &auth.Error{Code: auth.CodeVerification}).
// Every configuration error matches [core.ErrInvalidConfig]; the other
// kinds are core's: [core.ErrNotFound], [core.ErrInvalidInput],
// [core.ErrAlreadyExists], [core.ErrMissingAdapterMethod] and
// [core.ErrCounterNotIncreased]. Two refusals have a value of their own,
// [ErrUnprovenSignUp] and [ErrLastSignInMethod]. [New] parses what is configured once (the
// BaseURL, its origin and path, cookie options, secrets, clock, session
// lifetime, logger) into [Settings], read with [Auth.Settings]; [Auth.Edge]
// gives what authport's own handler, oauth and passkey modules need beyond
// the public methods (provider lookups, single-use records, reading and
// ending sessions), which an application does not.
package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
)

// Defaults of [SessionOptions].
const (
	DefaultMaxAge    = 30 * 24 * time.Hour
	DefaultUpdateAge = 24 * time.Hour
)

// Strategy is how sessions are kept.
type Strategy string

// The session strategies.
const (
	// StrategyDatabase keeps sessions in the adapter, found through the
	// session token in a cookie. It is the default.
	StrategyDatabase Strategy = "database"
	// StrategyJWT keeps sessions in an encrypted cookie; the adapter holds
	// no sessions, so the session methods are not required. Encoding the
	// token is the caller's (HTTP layer's) job.
	StrategyJWT Strategy = "jwt"
)

// SessionOptions sets the session lifetime.
type SessionOptions struct {
	// Strategy defaults to [StrategyDatabase].
	Strategy Strategy
	// MaxAge is how long a session lives after it was last extended;
	// zero means [DefaultMaxAge].
	MaxAge time.Duration
	// UpdateAge is the least time between two extensions of a session,
	// which limits writes; nil means [DefaultUpdateAge] (or MaxAge, if
	// shorter), and zero extends the session on every access. It must not
	// be longer than MaxAge.
	UpdateAge *time.Duration
}

// Config configures an [Auth].
type Config struct {
	// Adapter is the data store: any value implementing the core method
	// interfaces it supports.
	Adapter any
	// Providers are the ways to sign in; [New] validates them.
	Providers []provider.Provider
	// Secrets hash verification tokens. Secrets[0] is the newest and makes
	// new tokens; every secret is accepted when verifying, so a secret can
	// be rotated without breaking links already sent. At least one is
	// required, and each must be at least [MinSecretLength] bytes (make one
	// with `go run github.com/authport/authport/core/cmd/authport-secret`
	// or Auth.js's `npx auth secret`) unless AllowShortSecrets is set.
	Secrets []string
	// AuthJSJoinedSecrets hashes the tokens of new e-mail sign-in links
	// as Auth.js does when it is given several secrets (secret: [new,
	// old]): with the secrets joined by commas ("new,old") instead of with
	// the newest alone, so that an Auth.js app sharing the
	// verification-token table, configured with the same secrets in the
	// same order, accepts the links authport sends during a rotation. With
	// one secret it changes nothing. Either way authport accepts links
	// hashed with any one secret or with the joined secrets.
	AuthJSJoinedSecrets bool
	// AllowShortSecrets accepts secrets shorter than [MinSecretLength]
	// bytes. For development only: a short secret can be guessed, and with
	// it every e-mail link and session cookie forged. Auth.js accepts any
	// non-empty secret.
	AllowShortSecrets bool
	// Session sets the session strategy and lifetime.
	Session SessionOptions
	// BaseURL is the absolute URL of the auth routes, e.g.
	// "https://example.com/auth"; e-mail links point at
	// BaseURL/callback/<provider id>.
	BaseURL string
	// Cookies change the Domain, SameSite and Secure attributes of the
	// session, CSRF and callback-url cookies; the zero value keeps
	// Auth.js's defaults. New checks them against BaseURL. See
	// [CookieOptions].
	Cookies CookieOptions
	// RedirectProxyURL is the config-level redirect proxy; see
	// [provider.WithRedirectProxyURL].
	RedirectProxyURL string
	// Now is the clock; nil means [time.Now].
	Now func() time.Time
	// GenerateUserID makes the id of a new user; nil means a random UUID
	// (version 4, see [core.NewUUID]). Adapters that store ids in another form (MongoDB
	// ObjectIds, say) need a matching generator.
	GenerateUserID func() (string, error)
	// AllowDangerousUnverifiedEmail restores Auth.js's behaviour towards
	// e-mail addresses nobody has proven (see core's README, "Unproven
	// e-mail addresses"): a passkey
	// registered by someone not signed in creates a user holding the
	// address typed; an OAuth profile whose provider says email_verified
	// false creates the user of that address (and, with the provider's
	// allowDangerousEmailAccountLinking, is linked to the user holding it);
	// and an e-mail sign-in for an address held by a user who never proved
	// it lands in that user, whose passkeys and accounts keep working. Each
	// lets someone who does not own an address prepare an account that the
	// owner later signs in to while the attacker keeps access. False (the
	// default) refuses the first two, and gives the proven owner a user of
	// their own when the holder has passkeys (the holder is given
	// [DisplacedEmail] instead of the address).
	AllowDangerousUnverifiedEmail bool
	// Callbacks let the application decide on sign-ins, redirects and the
	// shape of sessions; see [Callbacks].
	Callbacks Callbacks
	// Events tell the application what happened; see [Events].
	Events Events
	// Logger receives the errors of [Events]; nil discards them. It never
	// receives tokens or secrets.
	Logger *slog.Logger
	// RateLimiter counts the attempts of one-time codes (the attempt cap
	// of [provider.PasswordConfig.CodeAttempts] and
	// [provider.EmailConfig.CodeAttempts]); nil means an in-process
	// [ratelimit.Memory]. Several instances must share one (e.g.
	// github.com/authport/authport/adapters/redis/ratelimit), or each
	// admits the whole cap.
	RateLimiter ratelimit.Store
	// RequireEmail refuses to create a user without an e-mail address
	// from an OAuth/OIDC profile that gives none. By default such a user
	// is created without an address, as Auth.js creates it.
	RequireEmail bool
	// SecondFactors turns on second factors and step-up; see
	// [SecondFactorOptions]. The zero value leaves them off.
	SecondFactors SecondFactorOptions
}

// Auth is the configured library. It is safe for concurrent use.
type Auth struct {
	store     *core.Store // the adapter, behind core's checked layer
	providers map[string]provider.Provider
	list      []provider.Provider // in configuration order
	secrets   []string
	strategy  Strategy
	maxAge    time.Duration
	updateAge time.Duration
	settings  Settings // the parsed values of Config (Session and Logger filled by Settings)
	now       func() time.Time
	newUserID func() (string, error)
	// allowUnverified is Config.AllowDangerousUnverifiedEmail.
	allowUnverified bool
	// linkSecret is what new e-mail sign-in tokens are hashed with:
	// Secrets[0], or with Config.AuthJSJoinedSecrets the secrets joined by
	// commas. linkSecrets are what a link's token is tried with, in order:
	// each secret, and the joined secrets when there are several.
	linkSecret  string
	linkSecrets []string
	// allowShortSecrets is Config.AllowShortSecrets.
	allowShortSecrets bool
	callbacks         Callbacks
	events            Events
	log               *slog.Logger // never nil
	logSet            bool         // Config.Logger was given
	extensions        extensions   // session extensions being written
	userLocks         keyedLocks   // serialises UnlinkAccount per user
	// pw is the password provider, or nil.
	pw *provider.PasswordConfig
	// dummyHash is a hash of a random password, made once by New with the
	// password provider's hasher: what a sign-in for an unknown user is
	// checked against, so that it costs what a wrong password costs.
	dummyHash string
	// limiter is Config.RateLimiter, or an in-process one.
	limiter ratelimit.Store
	// requireEmail is Config.RequireEmail.
	requireEmail bool
	// background tracks work done off the request path ([Auth.Wait]).
	background sync.WaitGroup
	// sf is Config.SecondFactors, defaults applied; seal its sealers
	// (nil when second factors are off).
	sf   SecondFactorOptions
	seal *sealers
}

// MinSecretLength is the fewest bytes a secret may have unless
// [Config.AllowShortSecrets] is set: 32, what Auth.js's `npx auth secret`
// and authport's `authport-secret` command generate.
const MinSecretLength = 32

// errShortSecret is matched by the error [New] and [Edge.CheckSecrets]
// return for a secret shorter than [MinSecretLength] bytes (and by
// [core.ErrInvalidConfig]).
var errShortSecret = errors.New("secret too short")

// CheckSecrets reports whether secrets (newest first) may seal or sign
// anything: at least one, none empty, and each at least [MinSecretLength]
// bytes unless allowShort. Code that takes secrets of its own (a
// handler.Reader without an Auth) checks them with it, or with
// [Edge.CheckSecrets] to share the Auth's setting.
func CheckSecrets(secrets []string, allowShort bool) error {
	if len(secrets) == 0 {
		return fmt.Errorf("%w: Secrets needs at least one secret (newest first); set AUTH_SECRET (read by SetEnvDefaults) to one made by `go run github.com/authport/authport/core/cmd/authport-secret` (or `npx auth secret`)", core.ErrInvalidConfig)
	}
	for i, s := range secrets {
		switch {
		case s == "":
			return fmt.Errorf("%w: Secrets[%d] is empty", core.ErrInvalidConfig, i)
		case len(s) < MinSecretLength && !allowShort:
			return fmt.Errorf("%w: %w: Secrets[%d] has %d bytes, fewer than %d; make one with `go run github.com/authport/authport/core/cmd/authport-secret` (or `npx auth secret`), or set AllowShortSecrets for development",
				core.ErrInvalidConfig, errShortSecret, i, len(s), MinSecretLength)
		}
	}
	return nil
}

// What needs which adapter methods: everything the flow calls, whatever
// the session strategy (database sessions add their own list).
var (
	emailNeeds = []core.Method{
		core.MethodCreateVerificationToken, core.MethodUseVerificationToken, core.MethodGetUserByEmail,
		core.MethodCreateUser, core.MethodUpdateUser, core.MethodGetUserByAccount, core.MethodLinkAccount,
	}
	oauthNeeds = []core.Method{
		core.MethodGetUserByAccount, core.MethodGetUserByEmail, core.MethodCreateUser, core.MethodLinkAccount,
	}
	databaseNeeds = []core.Method{
		core.MethodCreateUser, core.MethodGetUser, core.MethodGetUserByEmail, core.MethodGetUserByAccount,
		core.MethodUpdateUser, core.MethodLinkAccount, core.MethodCreateSession, core.MethodGetSessionAndUser,
		core.MethodUpdateSession, core.MethodDeleteSession,
	}
	passwordNeeds = []core.Method{
		core.MethodCreateUser, core.MethodGetUser, core.MethodGetUserByEmail, core.MethodUpdateUser,
		core.MethodGetAccount, core.MethodLinkAccount, core.MethodSwapPasswordHash,
		core.MethodCreateVerificationToken, core.MethodUseVerificationToken,
	}
	webAuthnNeeds = []core.Method{
		core.MethodCreateUser, core.MethodGetUser, core.MethodLinkAccount, core.MethodGetAccount,
		core.MethodGetAuthenticator, core.MethodCreateAuthenticator, core.MethodListAuthenticatorsByUserID,
		core.MethodUpdateAuthenticatorCounter,
	}
)

// New validates cfg and returns the library. A configuration problem gives
// an error matching [core.ErrInvalidConfig] (provider problems too)
// provider problems); an adapter that lacks methods the configuration needs
// gives one [*core.MissingMethodsError] naming every missing method.
func New(cfg Config) (*Auth, error) {
	if cfg.Adapter == nil {
		return nil, fmt.Errorf("%w: Adapter is nil", core.ErrInvalidConfig)
	}
	if err := CheckSecrets(cfg.Secrets, cfg.AllowShortSecrets); err != nil {
		return nil, err
	}
	providers, err := provider.Validate(cfg.Providers, provider.WithRedirectProxyURL(cfg.RedirectProxyURL))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalidConfig, err)
	}
	a := &Auth{
		store:     core.NewStore(cfg.Adapter),
		providers: make(map[string]provider.Provider, len(providers)),
		secrets:   append([]string(nil), cfg.Secrets...),
		strategy:  cfg.Session.Strategy,
		maxAge:    cfg.Session.MaxAge,
		updateAge: DefaultUpdateAge,
		now:       cfg.Now,
		newUserID: cfg.GenerateUserID,

		allowUnverified:   cfg.AllowDangerousUnverifiedEmail,
		allowShortSecrets: cfg.AllowShortSecrets,
		callbacks:         cfg.Callbacks,
		events:            cfg.Events,
		log:               cfg.Logger,
		logSet:            cfg.Logger != nil,
		limiter:           cfg.RateLimiter,
		requireEmail:      cfg.RequireEmail,
	}
	a.linkSecret, a.linkSecrets = a.secrets[0], a.secrets
	if len(a.secrets) > 1 {
		joined := strings.Join(a.secrets, ",")
		a.linkSecrets = append(slices.Clone(a.secrets), joined)
		if cfg.AuthJSJoinedSecrets {
			a.linkSecret = joined
		}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case a.strategy == "":
		a.strategy = StrategyDatabase
	case a.strategy != StrategyDatabase && a.strategy != StrategyJWT:
		return nil, fmt.Errorf("%w: Session.Strategy %q is neither database nor jwt", core.ErrInvalidConfig, a.strategy)
	}
	if a.maxAge == 0 {
		a.maxAge = DefaultMaxAge
	}
	if cfg.Session.UpdateAge != nil {
		a.updateAge = *cfg.Session.UpdateAge
	} else {
		// A default longer than the session would mean it is never
		// extended.
		a.updateAge = min(DefaultUpdateAge, a.maxAge)
	}
	if a.maxAge < 0 || a.updateAge < 0 {
		return nil, fmt.Errorf("%w: Session.MaxAge and Session.UpdateAge must not be negative", core.ErrInvalidConfig)
	}
	if a.updateAge > a.maxAge {
		return nil, fmt.Errorf("%w: Session.UpdateAge (%v) is longer than Session.MaxAge (%v), so sessions would never be extended", core.ErrInvalidConfig, a.updateAge, a.maxAge)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.limiter == nil {
		// On the Auth's clock, so that Config.Now moves code attempts'
		// windows as it moves everything else.
		a.limiter = ratelimit.NewMemory(ratelimit.WithClock(a.now))
	}
	a.settings = Settings{
		Secrets: a.secrets, AllowShortSecrets: cfg.AllowShortSecrets, Now: a.now,
		AllowDangerousUnverifiedEmail: cfg.AllowDangerousUnverifiedEmail,
	}
	if err := a.settings.parseBaseURL(cfg.BaseURL, cfg.Cookies); err != nil {
		return nil, err
	}
	if a.newUserID == nil {
		a.newUserID = func() (string, error) { return core.NewUUID(), nil }
	}
	for _, p := range providers {
		a.providers[p.Common().ID] = p
	}
	a.list = providers
	if err := a.setUpPasswords(); err != nil {
		return nil, err
	}
	if err := a.setUpSecondFactors(cfg.SecondFactors); err != nil {
		return nil, err
	}
	if err := a.checkAdapter(providers); err != nil {
		return nil, err
	}
	return a, nil
}

// checkAdapter returns one error naming every adapter method that the
// providers and the session strategy need but the adapter lacks.
func (a *Auth) checkAdapter(providers []provider.Provider) error {
	caps := a.store.Capabilities()
	var missing []core.MissingMethod
	seen := map[core.Method]bool{}
	need := func(neededBy string, methods []core.Method) {
		for _, m := range caps.Missing(methods...) {
			// Extensions (swapPasswordHash, getUserByUsername,
			// deleteSessionsByUserId) are probed as such.
			if !seen[m] && !caps.HasExtension(core.Extension(m)) {
				seen[m] = true
				missing = append(missing, core.MissingMethod{Method: m, NeededBy: neededBy})
			}
		}
	}
	if a.strategy == StrategyDatabase {
		need("database sessions", databaseNeeds)
	}
	for _, p := range providers {
		switch p.Common().Type {
		case provider.TypeEmail:
			need("e-mail sign-in", emailNeeds)
		case provider.TypeWebAuthn:
			need("WebAuthn sign-in", webAuthnNeeds)
		case provider.TypeOAuth, provider.TypeOIDC:
			need("OAuth sign-in", oauthNeeds)
		case provider.TypePassword:
			need("password sign-in", passwordNeeds)
			if a.strategy == StrategyDatabase {
				need("password sign-in (a reset or change ends the user's other sessions)", []core.Method{core.MethodDeleteSessionsByUserID})
			}
			if p.(*provider.PasswordConfig).Usernames {
				need("password sign-in with usernames (provider.PasswordConfig.Usernames)", []core.Method{core.MethodGetUserByUsername})
			}
		}
	}
	if a.sf.Enabled {
		need("second factors", secondFactorNeeds)
	}
	if len(missing) == 0 {
		return nil
	}
	return &core.MissingMethodsError{Adapter: caps.Adapter(), Missing: missing}
}

// Capabilities reports which adapter methods the configured adapter has.
func (a *Auth) Capabilities() core.Capabilities { return a.store.Capabilities() }

// AdapterError is an adapter method's failure, wrapped with the method's
// spec name. errors.Is sees through it to the adapter's error.
type AdapterError struct {
	Method core.Method
	Err    error
}

// Error names the method and gives the adapter's error.
func (e *AdapterError) Error() string { return fmt.Sprintf("adapter %s failed: %v", e.Method, e.Err) }

// Unwrap returns the adapter's error.
func (e *AdapterError) Unwrap() error { return e.Err }

// has returns the adapter method I (through the checked layer) and whether
// the adapter implements it.
func has[I any](a *Auth) (I, bool) {
	m, err := core.Require[I](a.store, "")
	return m, err == nil
}

// call finds the adapter method I and calls it, or returns the missing
// method error; a failure of the call comes back as an *AdapterError.
func call[I, R any](a *Auth, neededBy string, f func(I) (R, error)) (R, error) {
	var zero R
	m, err := core.Require[I](a.store, neededBy)
	if err != nil {
		return zero, err
	}
	r, err := f(m)
	if err != nil {
		return zero, &AdapterError{Method: core.MethodOf[I](), Err: err}
	}
	return r, nil
}

// randomHex returns n random bytes from crypto/rand, hex-encoded.
// Lowercase hex keeps tokens intact in stores that compare text without
// regard to case.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// SignIn is the result of a successful sign-in, whichever the way: what
// the HTTP layer needs to give the browser its session and to run the JWT
// callback.
type SignIn struct {
	// ProviderID is the provider signed in with.
	ProviderID string
	// User is the signed-in user.
	User core.User
	// Account is the account signed in with: for OAuth/OIDC with the
	// provider's tokens (access, refresh and id token, expiry) as the
	// provider's account callback kept them, for e-mail and passkeys the
	// e-mail or webauthn account; nil for credentials.
	Account *core.Account
	// Profile is the OAuth/OIDC provider's profile; nil otherwise.
	Profile *provider.User
	// Session is the new database session; with [StrategyJWT], or when
	// KeepSession is set, it is the zero Session (see Claims).
	Session core.Session
	// IsNewUser reports whether the sign-in created the user.
	IsNewUser bool
	// Claims are the new JWT session's claims, through [Callbacks.JWT]
	// (trigger signIn or signUp), with [StrategyJWT]: the caller encodes
	// them into the session cookie. nil with database sessions or
	// KeepSession.
	Claims map[string]any
	// KeepSession reports that the caller was signed in already (an
	// account or passkey was added to their user) and keeps the session
	// they have: none was created.
	KeepSession bool
	// UsernameTaken reports that the username chosen at sign-up (carried
	// by the verification e-mail) was taken by another user before the
	// address was verified: the user is verified and signed in without
	// it, and may choose another ([Passwords.VerifyEmail]).
	UsernameTaken bool
	// Pending, when set, is a sign-in whose first factor passed and that
	// waits for a second ([SecondFactorOptions]): no session was made,
	// Session and Claims are zero, and no SignIn event ran. The caller
	// keeps Pending.Token for the browser and shows the challenge.
	Pending *PendingSignIn
	// RecoveryCodes are the recovery codes made when this sign-in enrolled
	// the user's first factor ([PendingSignIn.Enroll]): show them once.
	RecoveryCodes []string
	// TrustedDevice, when set, is the value of the trusted-device cookie
	// to keep in this browser ([Answer.TrustDevice]); give it back
	// through [Client.TrustedDevice].
	TrustedDevice string

	// Authentication is how the user proved who they are in this
	// sign-in: now, the RFC 8176 methods and the level, as the new
	// session (database token or JWT claims) carries them. Zero with
	// Pending and KeepSession.
	Authentication Authentication

	// confirm, when set, runs once the database session exists and
	// before the SignIn event: an error deletes that session and refuses
	// the sign-in (a password sign-in checks that its hash was not
	// swapped by a reset while it was hashing).
	confirm func(context.Context) error
	// requireSecond is [SignInDecision.RequireSecondFactor] of the
	// sign-in's [Callbacks.SignIn].
	requireSecond bool
	// amr are the methods the first factor proved; nil means those of
	// the provider's type ([firstFactorMethods]).
	amr []string
	// verifiedHash is the password hash a password sign-in verified
	// against: a pending sign-in carries a keyed hash of it, so that a
	// reset while it waits refuses it as confirm refuses a session.
	verifiedHash string
}

// provider returns the provider with the id, of type T.
func providerOf[T provider.Provider](a *Auth, id string) (T, error) {
	p, ok := a.providers[id]
	if !ok {
		var zero T
		return zero, fmt.Errorf("%w: %q", errUnknownProvider, id)
	}
	t, ok := p.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("%w: %q is a %s provider", errWrongProviderType, id, p.Common().Type)
	}
	return t, nil
}

// The provider lookup's refusals: an unknown id is a not-found, a
// provider of another type an input error.
var (
	errUnknownProvider   = fmt.Errorf("no such provider: %w", core.ErrNotFound)
	errWrongProviderType = fmt.Errorf("provider cannot be used for this sign-in: %w", core.ErrInvalidInput)
)
