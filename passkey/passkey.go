package passkey

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/jwt"
)

// DefaultTimeout is the ceremony timeout when [Config.Timeout] is zero: the
// time the browser gives the user, and the lifetime of the challenge cookie
// (Auth.js uses 5 minutes for the former).
const DefaultTimeout = 5 * time.Minute

// maxFormBytes bounds the callback's form when the handler has not parsed
// it yet: a credential is a few kilobytes.
const maxFormBytes = 64 << 10

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
	// providers whose RPID is empty. Empty means the host of
	// [auth.Auth.BaseURL]; New refuses a provider left without one.
	RPID string
	// RPName is the name authenticators show, for providers whose RPName is
	// empty. Empty means the RP id.
	RPName string
	// Origins are the origins the browser may report, e.g.
	// "https://example.com", for providers whose RPOrigin is empty. Empty
	// means the origin of [auth.Auth.BaseURL]; New refuses a provider left
	// without one.
	Origins []string
	// Timeout is the ceremony timeout and the challenge cookie's
	// lifetime; zero means [DefaultTimeout].
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
// It implements the Passkeys interface of the handler module. It is safe
// for concurrent use.
type Passkeys struct {
	auth    *auth.Auth
	codec   *jwt.Codec
	rpID    string
	rpName  string
	origins []string
	timeout time.Duration
	now     func() time.Time
	used    usedChallenges
	// byEmail is Config.ListCredentialsByEmail.
	byEmail bool
}

// New checks cfg and returns the ceremonies. Errors match
// [ErrInvalidConfig].
func New(cfg Config) (*Passkeys, error) {
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: Auth is nil", ErrInvalidConfig)
	}
	// The challenge cookie is sealed with the Auth's secrets (Auth.js's
	// AUTH_SECRET) and timed with its clock: configured once, there.
	now := cfg.Auth.Settings().Now
	codec, err := jwt.NewCodec(cfg.Auth.Settings().Secrets...)
	if err != nil {
		return nil, fmt.Errorf("%w: Secrets: %w", ErrInvalidConfig, err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: Timeout %v is negative", ErrInvalidConfig, cfg.Timeout)
	}
	if cfg.RPID != "" {
		if err := protocol.ValidateRPID(cfg.RPID); err != nil {
			return nil, fmt.Errorf("%w: RPID %q: %w", ErrInvalidConfig, cfg.RPID, err)
		}
	}
	for _, o := range cfg.Origins {
		if _, err := origin(o); err != nil {
			return nil, fmt.Errorf("%w: Origins: %w", ErrInvalidConfig, err)
		}
	}
	// The relying party must come from the configuration: the request's
	// Host header is the client's to choose, and r.TLS is absent behind a
	// TLS-terminating proxy.
	base := baseOrigin(cfg.Auth)
	for _, pr := range cfg.Auth.Providers() {
		c, ok := pr.(*provider.WebAuthnConfig)
		if !ok {
			continue
		}
		if base == nil && ((c.RPID == "" && cfg.RPID == "") || (c.RPOrigin == "" && len(cfg.Origins) == 0)) {
			return nil, fmt.Errorf("%w: provider %q: no relying party id or origin configured; set auth.Config.BaseURL, or Config.RPID and Config.Origins (or the provider's RPID and RPOrigin)", ErrInvalidConfig, c.ID)
		}
	}
	p := &Passkeys{
		auth:    cfg.Auth,
		codec:   codec.WithClock(now),
		rpID:    cfg.RPID,
		rpName:  cfg.RPName,
		origins: append([]string(nil), cfg.Origins...),
		timeout: cfg.Timeout,
		now:     now,
		byEmail: cfg.ListCredentialsByEmail,
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

// Callback verifies POST {base}/callback/{provider} (form fields "action"
// and "data") and registers or authenticates, through core/auth
// ([auth.Auth.RegisterWebAuthn], [auth.Auth.SignInWithWebAuthn]), which
// runs the SignIn callback and creates the database session. It writes no
// session cookie: the caller (the handler) gives the browser the session of
// the result, or issues the JWT. user is the signed-in user, or nil; a
// signed-in user keeps their session (the result's KeepSession).
//
// Registration stores the authenticator (and the webauthn account) for the
// signed-in user, or, only with auth.Config.AllowDangerousUnverifiedEmail,
// creates the user with the e-mail address the options were made for
// (refused, with an error whose code is auth.CodeOAuthAccountNotLinked, when a user has it by now). Authentication verifies the assertion with the stored public
// key, then advances the stored counter, which must increase (unless both
// are 0): a replay fails with [ErrCounterNotIncreased]. A passkey of
// another user than the signed-in one gives an error whose code is auth.CodeOAuthAccountNotLinked.
//
// The challenge cookie is cleared on w whatever the outcome. Every failure
// leaves the store unchanged.
func (p *Passkeys) Callback(ctx context.Context, w http.ResponseWriter, r *http.Request, providerID string, user *core.User) (*auth.SignIn, error) {
	rp, err := p.relyingParty(providerID)
	if err != nil {
		return nil, err
	}
	if r.PostForm == nil && r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	}
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("%w: reading the form: %w", ErrInvalidCredential, err)
	}
	action, data := r.PostForm.Get("action"), r.PostForm.Get("data")
	state, err := p.useChallenge(w, r, rp)
	if err != nil {
		return nil, err
	}
	if action != ActionRegister && action != ActionAuthenticate {
		return nil, fmt.Errorf("%w: %q (want register or authenticate)", ErrInvalidAction, action)
	}
	if action != state.Action {
		return nil, fmt.Errorf("%w: the options were made to %s, the form says %s", ErrInvalidAction, state.Action, action)
	}
	if state.Provider != providerID {
		return nil, fmt.Errorf("%w: the options were made for provider %q", ErrChallengeMismatch, state.Provider)
	}
	if data == "" {
		return nil, fmt.Errorf("%w: the form has no data", ErrInvalidCredential)
	}
	if action == ActionRegister {
		return p.register(ctx, rp, state, []byte(data), user)
	}
	return p.authenticate(ctx, rp, state, []byte(data), user)
}
