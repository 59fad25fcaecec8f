package passkey

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/passkey/internal/refusal"
)

// DefaultTimeout is the ceremony timeout when [Config.Timeout] is zero: the
// time the browser gives the user, and how long a challenge is to be
// remembered (Auth.js uses 5 minutes for the former).
const DefaultTimeout = 5 * time.Minute

// The actions of Auth.js's WebAuthn routes.
const (
	ActionRegister     = "register"
	ActionAuthenticate = "authenticate"
)

// Config configures [New].
type Config struct {
	// Auth is the configured library, with at least one WebAuthn provider
	// ([provider.Passkey]). Required.
	Auth *auth.Auth
	// RPID is the relying party id (a domain, e.g. "example.com") for
	// providers whose RPID is empty. Empty means the host of the Auth's
	// BaseURL ([auth.Settings]); New refuses a provider left without one.
	RPID string
	// RPName is the name authenticators show, for providers whose RPName is
	// empty. Empty means the RP id.
	RPName string
	// Origins are the origins the browser may report, e.g.
	// "https://example.com", for providers whose RPOrigin is empty. Empty
	// means the origin of the Auth's BaseURL ([auth.Settings]); New
	// refuses a provider left without one.
	Origins []string
	// Timeout is the ceremony timeout and the challenge's lifetime; zero
	// means [DefaultTimeout].
	Timeout time.Duration
	// ListCredentialsByEmail restores Auth.js's options route for someone
	// not signed in who gives an e-mail address: the user with the address
	// is looked up, its credential ids are sent as the allowed credentials
	// (needed only for authenticators that hold no discoverable passkey),
	// and an address without a user is offered registration (when
	// auth.Config.AllowDangerousUnverifiedEmail allows signing up). The
	// answer then tells anyone which addresses have accounts, and their
	// credential ids. False (the default): the address is not looked up;
	// signed out, the answer is always a discoverable authentication, the
	// same for every address.
	ListCredentialsByEmail bool
}

// Passkeys runs WebAuthn registration and authentication ceremonies
// (Auth.js's webauthn-options route and WebAuthn callback) with
// go-webauthn, storing authenticators through the adapter of [Config.Auth].
// It implements the Passkeys interface of the handler module, which
// remembers each ceremony's challenge in Auth.js's challenge cookie. It is
// safe for concurrent use.
type Passkeys struct {
	auth    *auth.Auth
	rpID    string
	rpName  string
	origins []string
	timeout time.Duration
	now     func() time.Time
	used    usedChallenges
	// byEmail is Config.ListCredentialsByEmail.
	byEmail bool
	// baseHost and baseOrigin are the Auth's BaseURL's host and origin
	// ("" without one), the relying party's fallbacks; allowSignUp is
	// auth.Config.AllowDangerousUnverifiedEmail. Read once, from the
	// Auth's settings, which never change.
	baseHost, baseOrigin string
	allowSignUp          bool
}

// New checks cfg and returns the ceremonies. Errors match
// [core.ErrInvalidConfig].
func New(cfg Config) (*Passkeys, error) {
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: passkey: Auth is nil", core.ErrInvalidConfig)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: passkey: Timeout %v is negative", core.ErrInvalidConfig, cfg.Timeout)
	}
	if cfg.RPID != "" {
		if err := protocol.ValidateRPID(cfg.RPID); err != nil {
			return nil, fmt.Errorf("%w: passkey: RPID %q: %w", core.ErrInvalidConfig, cfg.RPID, err)
		}
	}
	for _, o := range cfg.Origins {
		if _, err := origin(o); err != nil {
			return nil, fmt.Errorf("%w: passkey: Origins: %w", core.ErrInvalidConfig, err)
		}
	}
	// The relying party must come from the configuration: the request's
	// Host header is the client's to choose, and r.TLS is absent behind a
	// TLS-terminating proxy.
	settings := cfg.Auth.Settings()
	base := settings.Origin
	for _, pr := range cfg.Auth.Providers() {
		c, ok := pr.(*provider.WebAuthnConfig)
		if !ok {
			continue
		}
		if base == "" && ((c.RPID == "" && cfg.RPID == "") || (c.RPOrigin == "" && len(cfg.Origins) == 0)) {
			return nil, fmt.Errorf("%w: passkey: provider %q: no relying party id or origin configured; set auth.Config.BaseURL, or Config.RPID and Config.Origins (or the provider's RPID and RPOrigin)", core.ErrInvalidConfig, c.ID)
		}
	}
	p := &Passkeys{
		auth:    cfg.Auth,
		rpID:    cfg.RPID,
		rpName:  cfg.RPName,
		origins: append([]string(nil), cfg.Origins...),
		timeout: cfg.Timeout,
		now:     settings.Now,
		byEmail: cfg.ListCredentialsByEmail,

		baseHost:    settings.Hostname,
		baseOrigin:  settings.Origin,
		allowSignUp: settings.AllowDangerousUnverifiedEmail,
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.timeout == 0 {
		p.timeout = DefaultTimeout
	}
	return p, nil
}

// origin returns s as an origin (scheme://host[:port]) or an error.
func origin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an http(s) origin", s)
	}
	return u.Scheme + "://" + u.Host, nil
}

// Timeout is the ceremony timeout ([Config.Timeout]): how long the
// challenge [Passkeys.Options] returns is to be remembered.
func (p *Passkeys) Timeout() time.Duration { return p.timeout }

// Callback verifies POST {base}/callback/{provider}: form holds the
// posted fields "action" ("register" or "authenticate") and "data" (the
// credential JSON, as Auth.js's client posts them), and challenge is what
// [Passkeys.Options] returned for the ceremony, as remembered ("" when
// nothing was). The caller (the handler) forgets the challenge whatever
// the outcome; a challenge serves one verified ceremony of this Passkeys.
//
// It registers or authenticates through core/auth
// ([auth.Auth.RegisterPasskey], [auth.Auth.SignInWithPasskey]), which
// runs the SignIn callback and creates the database session, and returns
// that sign-in; the caller gives the browser the session of the result,
// or issues the JWT. user is the signed-in user, or nil; a signed-in user
// keeps their session (the result's KeepSession).
//
// Registration stores the authenticator (and the webauthn account) for the
// signed-in user, or, only with auth.Config.AllowDangerousUnverifiedEmail,
// creates the user with the e-mail address the options were made for
// (refused, with an error whose code is auth.CodeOAuthAccountNotLinked, when a user has it by now).
// Authentication verifies the assertion with the stored public key, then
// advances the stored counter, which must increase (unless both are 0): a
// replay fails with an error matching [core.ErrCounterNotIncreased]. It
// signs in through [auth.Auth.SignInWithPasskeyAssertion] with the
// assertion's user verified flag: a passkey that verified its user (UV) is
// two factors in one and is not asked for a second factor. A
// passkey of another user than the signed-in one gives
// an error whose code is auth.CodeOAuthAccountNotLinked.
//
// A refusal is an [*auth.Error] with code [auth.CodeWebAuthnVerification]
// (or the code core/auth gave it, such as
// [auth.CodeOAuthAccountNotLinked]); read it with [auth.CodeOf]. An error
// without a code is a failure of the server (the store). Every failure
// leaves the store unchanged.
func (p *Passkeys) Callback(ctx context.Context, providerID string, form url.Values, challenge string, user *core.User) (*auth.SignIn, error) {
	rp, err := p.relyingParty(providerID)
	if err != nil {
		return nil, err
	}
	action, data := form.Get("action"), form.Get("data")
	state, err := p.readChallenge(challenge)
	if err != nil {
		return nil, refuse(err)
	}
	if action != ActionRegister && action != ActionAuthenticate {
		return nil, refuse(fmt.Errorf("%w: %q (want register or authenticate)", refusal.ErrInvalidAction, action))
	}
	if action != state.Action {
		return nil, refuse(fmt.Errorf("%w: the options were made to %s, the form says %s", refusal.ErrInvalidAction, state.Action, action))
	}
	if state.Provider != providerID {
		return nil, refuse(fmt.Errorf("%w: the options were made for provider %q", refusal.ErrChallengeMismatch, state.Provider))
	}
	if state.SecondFactor != nil {
		return nil, refuse(fmt.Errorf("%w: the options were made for a second factor", refusal.ErrChallengeMismatch))
	}
	if data == "" {
		return nil, refuse(fmt.Errorf("%w: the form has no data", refusal.ErrInvalidCredential))
	}
	if action == ActionRegister {
		return p.register(ctx, rp, state, []byte(data), user)
	}
	return p.authenticate(ctx, rp, state, []byte(data), user)
}
