package passkey

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/internal/refusal"
)

// OptionsResponse is the body of the webauthn-options route, as Auth.js
// sends it: the action the browser must run and the options of
// navigator.credentials.create (register) or .get (authenticate), in the
// JSON form with base64url strings for binary values.
type OptionsResponse struct {
	Action  string `json:"action"`
	Options any    `json:"options"`
}

// Options answers GET {base}/webauthn-options/{provider}: it decides the
// action and makes the options. It returns the body to send as JSON (an
// [OptionsResponse]) and the challenge the caller must remember for
// [Passkeys.Timeout] and give back to [Passkeys.Callback]: an opaque
// string (JSON) that the handler seals into Auth.js's challenge cookie.
// user is the signed-in user, or nil.
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
// A refused request (a bad action or e-mail address, a combination that is
// not allowed, such as a signed-out registration, which also matches
// [auth.ErrUnprovenSignUp]) is an [*auth.Error] with code
// [auth.CodeWebAuthnVerification]; an error without a code is a failure
// of the server (the store).
func (p *Passkeys) Options(ctx context.Context, providerID string, query url.Values, user *core.User) (body any, challenge string, err error) {
	rp, err := p.relyingParty(providerID)
	if err != nil {
		return nil, "", err
	}
	q := query
	action := q.Get("action")
	if action != "" && action != ActionRegister && action != ActionAuthenticate {
		return nil, "", refuse(fmt.Errorf("%w: %q (want register or authenticate)", refusal.ErrInvalidAction, action))
	}
	signUp := p.allowSignUp
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
			return nil, "", refuse(fmt.Errorf("%w: %w", refusal.ErrInvalidEmail, err))
		}
		if !p.byEmail && !signUp {
			break
		}
		found, err := p.auth.UserByEmail(ctx, email)
		if err != nil {
			return nil, "", err
		}
		info = &registerData{Email: email}
		if found != nil {
			info, exists = &registerData{ID: found.ID, Email: found.Email, Name: found.Name}, true
		}
	}
	if exists {
		if authenticators, err = p.auth.Authenticators(ctx, info.ID); err != nil {
			return nil, "", err
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
			return nil, "", refuse(fmt.Errorf("%w: %w", refusal.ErrNotAllowed, auth.ErrUnprovenSignUp))
		case info == nil:
			return nil, "", refuse(fmt.Errorf("%w: registering a passkey needs an e-mail address or a signed-in user", refusal.ErrNotAllowed))
		}
		return nil, "", refuse(fmt.Errorf("%w: the e-mail address belongs to a user; sign in to add a passkey", refusal.ErrNotAllowed))
	}
	descriptors := make([]protocol.CredentialDescriptor, 0, len(authenticators))
	for _, a := range authenticators {
		d, err := descriptor(a)
		if err != nil {
			return nil, "", err
		}
		descriptors = append(descriptors, d)
	}

	state := challengeState{Action: decision, Provider: providerID}
	var resp OptionsResponse
	if decision == ActionAuthenticate {
		var opts []webauthn.LoginOption
		if len(descriptors) > 0 {
			opts = append(opts, webauthn.WithAllowedCredentials(descriptors))
		}
		assertion, session, err := rp.wa.BeginDiscoverableLogin(opts...)
		if err != nil {
			return nil, "", fmt.Errorf("passkey: authentication options: %w", err)
		}
		state.Session = *session
		resp = OptionsResponse{Action: decision, Options: assertion.Response}
	} else {
		handle := make([]byte, 32)
		if _, err := rand.Read(handle); err != nil {
			return nil, "", fmt.Errorf("passkey: user handle: %w", err)
		}
		opts := []webauthn.RegistrationOption{}
		if len(descriptors) > 0 {
			opts = append(opts, webauthn.WithExclusions(descriptors))
		}
		creation, session, err := rp.wa.BeginRegistration(ceremonyUser{id: handle, name: info.Email, displayName: deref(info.Name)}, opts...)
		if err != nil {
			return nil, "", fmt.Errorf("passkey: registration options: %w", err)
		}
		state.Session = *session
		state.RegisterData = info
		resp = OptionsResponse{Action: decision, Options: creation.Response}
	}
	state.Challenge = state.Session.Challenge
	state.Expires = p.now().Add(p.timeout)
	if challenge, err = encodeChallenge(state); err != nil {
		return nil, "", err
	}
	return resp, challenge, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
