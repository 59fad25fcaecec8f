package passkey

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

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

// usedChallenges remembers the challenges that served a verified ceremony
// until their cookie has expired, so that a challenge serves one ceremony
// even when its cookie is replayed (the cookie is stateless, and synced
// passkeys report no signature counter that would catch the replay). It
// holds one entry per successful ceremony of the last Timeout; it is per
// process: several instances behind a load balancer each keep their own.
type usedChallenges struct {
	mu        sync.Mutex
	until     map[string]time.Time
	nextPrune time.Time
}

// claim records challenge as used until until, and reports whether it was
// unused.
func (u *usedChallenges) claim(challenge string, now, until time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.until == nil {
		u.until = map[string]time.Time{}
	}
	if !now.Before(u.nextPrune) {
		for c, t := range u.until {
			if now.After(t) {
				delete(u.until, c)
			}
		}
		u.nextPrune = now.Add(time.Minute)
	}
	if _, ok := u.until[challenge]; ok {
		return false
	}
	u.until[challenge] = until
	return true
}

// claimChallenge marks the state's challenge used, or fails with
// ErrChallengeReused. It runs once the ceremony has verified, before
// anything is stored.
func (p *Passkeys) claimChallenge(state *challengeState) error {
	now := p.now()
	// Past the cookie's lifetime and the JWT clock tolerance.
	if !p.used.claim(state.Challenge, now, now.Add(p.timeout+jwt.ClockTolerance+time.Minute)) {
		return ErrChallengeReused
	}
	return nil
}

// New checks cfg and returns the ceremonies. Errors match
// [ErrInvalidConfig].
func New(cfg Config) (*Passkeys, error) {
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: Auth is nil", ErrInvalidConfig)
	}
	// The challenge cookie is sealed with the Auth's secrets (Auth.js's
	// AUTH_SECRET) and timed with its clock: configured once, there.
	now := cfg.Auth.Clock()
	codec, err := jwt.NewCodec(cfg.Auth.Secrets()...)
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

// relyingParty is what one ceremony runs with.
type relyingParty struct {
	providerID string
	id, name   string
	origins    []string
	uv         protocol.UserVerificationRequirement
	// secure: the site is served over https (BaseURL's scheme, else
	// every origin's), which gives the challenge cookie its "__Secure-"
	// prefix and Secure attribute, as in Auth.js.
	secure bool
	wa     *webauthn.WebAuthn
}

// baseOrigin is the scheme and host of the Auth's BaseURL, or nil.
func baseOrigin(a *auth.Auth) *url.URL {
	if base := a.BaseURL(); base != "" {
		if u, err := url.Parse(base); err == nil && u.Host != "" {
			return &url.URL{Scheme: u.Scheme, Host: u.Host}
		}
	}
	return nil
}

// relyingParty resolves the relying party of the provider: the provider's
// settings, else the Config's, else the base URL's. New has checked that
// one of them is set; the request (its Host) is never used.
func (p *Passkeys) relyingParty(providerID string) (*relyingParty, error) {
	c, err := p.auth.WebAuthnProvider(providerID)
	if err != nil {
		return nil, err
	}
	fallback := baseOrigin(p.auth)
	if fallback == nil {
		fallback = &url.URL{}
	}
	rp := &relyingParty{providerID: providerID, id: c.RPID, name: c.RPName, uv: protocol.UserVerificationRequirement(c.UserVerification)}
	if rp.id == "" {
		rp.id = p.rpID
	}
	if rp.id == "" {
		rp.id = fallback.Hostname()
	}
	if rp.name == "" {
		rp.name = p.rpName
	}
	if rp.name == "" {
		rp.name = rp.id
	}
	switch {
	case c.RPOrigin != "":
		o, err := origin(c.RPOrigin)
		if err != nil {
			return nil, fmt.Errorf("%w: provider %q RPOrigin: %w", ErrInvalidConfig, providerID, err)
		}
		rp.origins = []string{o}
	case len(p.origins) > 0:
		for _, o := range p.origins {
			o, _ = origin(o) // checked by New
			rp.origins = append(rp.origins, o)
		}
	case fallback.Host != "":
		rp.origins = []string{fallback.String()}
	}
	if rp.id == "" || len(rp.origins) == 0 {
		return nil, fmt.Errorf("%w: provider %q: no relying party id or origin configured; set auth.Config.BaseURL, or Config.RPID and Config.Origins", ErrInvalidConfig, providerID)
	}
	rp.secure = strings.EqualFold(fallback.Scheme, "https")
	if fallback.Host == "" {
		rp.secure = true
		for _, o := range rp.origins {
			rp.secure = rp.secure && strings.HasPrefix(o, "https://")
		}
	}
	if rp.uv == "" {
		rp.uv = protocol.VerificationPreferred
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  rp.id,
		RPDisplayName:         rp.name,
		RPOrigins:             rp.origins,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
			UserVerification: rp.uv,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: p.timeout, TimeoutUVD: p.timeout},
			Registration: webauthn.TimeoutConfig{Timeout: p.timeout, TimeoutUVD: p.timeout},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: provider %q: relying party %q, origins %v: %w", ErrInvalidConfig, providerID, rp.id, rp.origins, err)
	}
	rp.wa = wa
	return rp, nil
}

// OptionsResponse is the body of the webauthn-options route, as Auth.js
// sends it: the action the browser must run and the options of
// navigator.credentials.create (register) or .get (authenticate), in the
// JSON form with base64url strings for binary values.
type OptionsResponse struct {
	Action  string `json:"action"`
	Options any    `json:"options"`
}

// registerData is the user a registration is for, kept in the challenge
// cookie (Auth.js's registerData).
type registerData struct {
	ID    string  `json:"id,omitempty"`
	Email string  `json:"email"`
	Name  *string `json:"name,omitempty"`
}

// challengeState is the JSON the challenge cookie seals as its "value":
// Auth.js's {challenge, registerData}, plus the action and go-webauthn's
// session data.
type challengeState struct {
	Challenge    string               `json:"challenge"`
	RegisterData *registerData        `json:"registerData,omitempty"`
	Action       string               `json:"action"`
	Provider     string               `json:"provider"`
	Session      webauthn.SessionData `json:"session"`
}

// Options answers GET {base}/webauthn-options/{provider}: it decides the
// action, makes the options and sets the sealed challenge cookie on w. user
// is the signed-in user, or nil.
//
// The query's "action" is "register", "authenticate" or empty; "email" is
// the address someone not signed in typed. By default:
//
//   - signed in, "register" adds a passkey (the user's credentials are
//     excluded), "authenticate" lists the user's credentials, and no action
//     is "register" when the user has no passkey yet, else "authenticate";
//   - not signed in, "register" is refused: a passkey sign-up would create
//     a user holding an address nobody has proven (sign in first, then add
//     a passkey); "authenticate" and no action are a discoverable
//     authentication. The e-mail address is checked but not looked up, so
//     the answer is the same whether or not it has an account.
//
// Auth.js's inferWebAuthnOptions (an address of a user means
// "authenticate" with its credentials, an unknown one "register") comes
// back with [Config.ListCredentialsByEmail] for the lookup, and with
// auth.Config.AllowDangerousUnverifiedEmail for signing up while signed out.
//
// A refused combination gives [ErrNotAllowed]; a bad action
// [ErrInvalidAction]; a bad e-mail [ErrInvalidEmail].
func (p *Passkeys) Options(ctx context.Context, w http.ResponseWriter, r *http.Request, providerID string, user *core.User) (any, error) {
	rp, err := p.relyingParty(providerID)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	action := q.Get("action")
	if action != "" && action != ActionRegister && action != ActionAuthenticate {
		return nil, fmt.Errorf("%w: %q (want register or authenticate)", ErrInvalidAction, action)
	}
	signUp := p.auth.AllowsDangerousUnverifiedEmail()
	// Auth.js's getUserInfo: the signed-in user, else the user with the
	// e-mail address, else a new user with it. The address is looked up
	// only when the answer may depend on it (the options above).
	var info *registerData
	exists := false
	var authenticators []core.Authenticator
	switch {
	case user != nil:
		info, exists = &registerData{ID: user.ID, Email: user.Email, Name: user.Name}, true
	case q.Get("email") != "":
		email, err := auth.NormalizeEmail(q.Get("email"))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidEmail, err)
		}
		if !p.byEmail && !signUp {
			break
		}
		found, err := p.auth.UserByEmail(ctx, email)
		if err != nil {
			return nil, err
		}
		info = &registerData{Email: email}
		if found != nil {
			info, exists = &registerData{ID: found.ID, Email: found.Email, Name: found.Name}, true
		}
	}
	if exists {
		if authenticators, err = p.auth.Authenticators(ctx, info.ID); err != nil {
			return nil, err
		}
		if user == nil && !p.byEmail {
			// Signing up may look the address up (it must not be
			// taken), but its credentials are not given out.
			authenticators = nil
		}
	}
	loggedIn := user != nil
	decision := ""
	switch action {
	case ActionAuthenticate:
		decision = ActionAuthenticate
	case ActionRegister:
		if info != nil && loggedIn == exists && (loggedIn || signUp) {
			decision = ActionRegister
		}
	case "":
		switch {
		case loggedIn && len(authenticators) == 0:
			decision = ActionRegister
		case loggedIn, info == nil, exists, !signUp:
			decision = ActionAuthenticate
		default:
			decision = ActionRegister
		}
	}
	if decision == "" {
		switch {
		case !loggedIn && !signUp:
			return nil, fmt.Errorf("%w: %w", ErrNotAllowed, auth.ErrUnprovenSignUp)
		case info == nil:
			return nil, fmt.Errorf("%w: registering a passkey needs an e-mail address or a signed-in user", ErrNotAllowed)
		}
		return nil, fmt.Errorf("%w: the e-mail address belongs to a user; sign in to add a passkey", ErrNotAllowed)
	}
	descriptors := make([]protocol.CredentialDescriptor, 0, len(authenticators))
	for _, a := range authenticators {
		d, err := descriptor(a)
		if err != nil {
			return nil, err
		}
		descriptors = append(descriptors, d)
	}

	state := challengeState{Action: decision, Provider: providerID}
	var body OptionsResponse
	if decision == ActionAuthenticate {
		var opts []webauthn.LoginOption
		if len(descriptors) > 0 {
			opts = append(opts, webauthn.WithAllowedCredentials(descriptors))
		}
		assertion, session, err := rp.wa.BeginDiscoverableLogin(opts...)
		if err != nil {
			return nil, fmt.Errorf("passkey: authentication options: %w", err)
		}
		state.Session = *session
		body = OptionsResponse{Action: decision, Options: assertion.Response}
	} else {
		handle := make([]byte, 32)
		if _, err := rand.Read(handle); err != nil {
			return nil, fmt.Errorf("passkey: user handle: %w", err)
		}
		opts := []webauthn.RegistrationOption{}
		if len(descriptors) > 0 {
			opts = append(opts, webauthn.WithExclusions(descriptors))
		}
		creation, session, err := rp.wa.BeginRegistration(ceremonyUser{id: handle, name: info.Email, displayName: deref(info.Name)}, opts...)
		if err != nil {
			return nil, fmt.Errorf("passkey: registration options: %w", err)
		}
		state.Session = *session
		state.RegisterData = info
		body = OptionsResponse{Action: decision, Options: creation.Response}
	}
	state.Challenge = state.Session.Challenge
	if err := p.setChallenge(w, r, rp, state); err != nil {
		return nil, err
	}
	return body, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (p *Passkeys) cookieName(rp *relyingParty) string {
	return jwt.CookieNamesFor(rp.secure).WebAuthnChallenge
}

// setChallenge seals the state into Auth.js's challenge cookie.
func (p *Passkeys) setChallenge(w http.ResponseWriter, r *http.Request, rp *relyingParty, state challengeState) error {
	value, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("passkey: challenge cookie: %w", err)
	}
	name := p.cookieName(rp)
	token, err := p.codec.Encode(name, map[string]any{"value": string(value)}, p.timeout)
	if err != nil {
		return fmt.Errorf("passkey: challenge cookie: %w", err)
	}
	c := jwt.NewCookie(name, token, p.now().Add(p.timeout))
	jwt.WriteCookie(w, r, c)
	return nil
}

// useChallenge reads the challenge cookie and clears it on w (Auth.js's
// webauthnChallenge.use).
func (p *Passkeys) useChallenge(w http.ResponseWriter, r *http.Request, rp *relyingParty) (*challengeState, error) {
	name := p.cookieName(rp)
	claims, err := p.codec.DecodeCookie(r, name)
	if _, cerr := jwt.JoinCookies(r, name); cerr == nil {
		jwt.ClearCookie(w, r, jwt.NewCookie(name, "", time.Time{}))
	}
	switch {
	case errors.Is(err, jwt.ErrExpiredToken):
		return nil, ErrChallengeExpired
	case errors.Is(err, http.ErrNoCookie):
		return nil, ErrChallengeMissing
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrChallengeMissing, err)
	}
	value, ok := claims["value"].(string)
	var state challengeState
	if !ok || json.Unmarshal([]byte(value), &state) != nil || state.Challenge == "" || state.Challenge != state.Session.Challenge {
		return nil, fmt.Errorf("%w: the cookie holds no challenge", ErrChallengeMissing)
	}
	return &state, nil
}

// ceremonyUser is go-webauthn's view of the user of one ceremony. Like
// Auth.js, authport does not keep user handles: registration gives each
// credential a random handle, and authentication finds the user through
// the credential id.
type ceremonyUser struct {
	id          []byte
	name        string
	displayName string
	credentials []webauthn.Credential
}

func (u ceremonyUser) WebAuthnID() []byte                         { return u.id }
func (u ceremonyUser) WebAuthnName() string                       { return u.name }
func (u ceremonyUser) WebAuthnDisplayName() string                { return u.displayName }
func (u ceremonyUser) WebAuthnCredentials() []webauthn.Credential { return u.credentials }

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
// (refused, with [auth.ErrAccountNotLinked], when a user has it by now). Authentication verifies the assertion with the stored public
// key, then advances the stored counter, which must increase (unless both
// are 0): a replay fails with [ErrCounterNotIncreased]. A passkey of
// another user than the signed-in one gives [auth.ErrAccountNotLinked].
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

// checkClient checks the challenge, origin and RP id hash first, so that
// these failures get their own errors; go-webauthn checks them again.
func checkClient(rp *relyingParty, state *challengeState, cd protocol.CollectedClientData, rpIDHash []byte) error {
	if subtle.ConstantTimeCompare([]byte(cd.Challenge), []byte(state.Session.Challenge)) != 1 {
		return ErrChallengeMismatch
	}
	if !protocol.IsOriginInHaystack(cd.Origin, rp.origins) {
		return fmt.Errorf("%w: the browser reports %q, the relying party has %v", ErrOriginMismatch, cd.Origin, rp.origins)
	}
	want := sha256.Sum256([]byte(rp.id))
	if !bytes.Equal(rpIDHash, want[:]) {
		return fmt.Errorf("%w: the authenticator signed for another relying party than %q", ErrRPIDMismatch, rp.id)
	}
	return nil
}

func (p *Passkeys) register(ctx context.Context, rp *relyingParty, state *challengeState, data []byte, user *core.User) (*auth.SignIn, error) {
	reg := state.RegisterData
	if reg == nil || reg.Email == "" {
		return nil, fmt.Errorf("%w: the challenge cookie has no registration data", ErrChallengeMismatch)
	}
	switch {
	case user != nil && reg.ID != "" && reg.ID != user.ID:
		return nil, fmt.Errorf("%w: the options were made for another user", ErrChallengeMismatch)
	case user == nil && reg.ID != "":
		return nil, fmt.Errorf("%w: the options were made for a signed-in user; sign in again", ErrChallengeMismatch)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCredential, err)
	}
	if err := checkClient(rp, state, parsed.Response.CollectedClientData, parsed.Response.AttestationObject.AuthData.RPIDHash); err != nil {
		return nil, err
	}
	cred, err := rp.wa.CreateCredential(ceremonyUser{id: state.Session.UserID, name: reg.Email}, state.Session, parsed)
	if err != nil {
		return nil, verificationError(err)
	}
	if err := p.claimChallenge(state); err != nil {
		return nil, err
	}
	au := toAuthenticator(cred, parsed.Response.Transports)
	return p.auth.RegisterWebAuthn(ctx, rp.providerID, user, core.User{Email: reg.Email, Name: reg.Name}, au)
}

func (p *Passkeys) authenticate(ctx context.Context, rp *relyingParty, state *challengeState, data []byte, user *core.User) (*auth.SignIn, error) {
	if state.RegisterData != nil {
		return nil, fmt.Errorf("%w: the challenge cookie was made for a registration", ErrInvalidAction)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCredential, err)
	}
	credentialID := base64.StdEncoding.EncodeToString(parsed.RawID)
	stored, err := p.auth.WebAuthnAuthenticator(ctx, credentialID)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownCredential, credentialID)
	}
	if err := checkClient(rp, state, parsed.Response.CollectedClientData, parsed.Response.AuthenticatorData.RPIDHash); err != nil {
		return nil, err
	}
	if user != nil && user.ID != stored.UserID {
		return nil, fmt.Errorf("%w: the passkey belongs to another user than the one signed in", auth.ErrAccountNotLinked)
	}
	// The owner's credentials: go-webauthn checks that every allowed
	// credential of the options belongs to the user it verifies for.
	owned, err := p.auth.Authenticators(ctx, stored.UserID)
	if err != nil {
		return nil, err
	}
	creds := make([]webauthn.Credential, 0, len(owned)+1)
	found := false
	for _, a := range owned {
		c, err := toCredential(a)
		if err != nil {
			return nil, err
		}
		found = found || a.CredentialID == stored.CredentialID
		creds = append(creds, c)
	}
	if !found {
		c, err := toCredential(*stored)
		if err != nil {
			return nil, err
		}
		creds = append(creds, c)
	}
	session := state.Session
	session.UserID = parsed.Response.UserHandle
	if _, err := rp.wa.ValidateLogin(ceremonyUser{id: session.UserID, credentials: creds}, session, parsed); err != nil {
		return nil, verificationError(err)
	}
	if err := p.claimChallenge(state); err != nil {
		return nil, err
	}
	return p.auth.SignInWithWebAuthn(ctx, rp.providerID, credentialID, int64(parsed.Response.AuthenticatorData.Counter), user)
}

// verificationError wraps a go-webauthn failure, keeping its details.
func verificationError(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.DevInfo != "" {
		return fmt.Errorf("%w: %w (%s)", ErrVerificationFailed, err, pe.DevInfo)
	}
	return fmt.Errorf("%w: %w", ErrVerificationFailed, err)
}
