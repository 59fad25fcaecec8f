package handler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/jwt"
)

// Passkeys runs WebAuthn ceremonies for a WebAuthn provider; *passkey.Passkeys implements it.
// It keeps no state between the options and the callback and writes no cookies: the
// handler remembers the challenge Options returns in Auth.js's challenge cookie, sealed,
// for Timeout, and gives it back to Callback.
type Passkeys interface {
	// Options answers GET {base}/webauthn-options/{provider}?action=register|authenticate
	// (action may be empty: then "authenticate", or "register" when the caller is signed in
	// and has none — Auth.js's rule); query is the request's. It returns the JSON body
	// ({"action":…,"options":…}) and the challenge to remember for the callback. user is
	// the signed-in user, or nil. A refusal carries its code (auth.CodeOf); an error
	// without one is the server's.
	Options(ctx context.Context, providerID string, query url.Values, user *core.User) (body any, challenge string, err error)
	// Callback verifies POST {base}/callback/{provider}: form holds the fields "action" and
	// "data" (the credential JSON, as Auth.js's client posts them; CSRF already checked by
	// the handler), challenge what Options returned ("" when the request has none). It
	// registers or authenticates through core/auth (auth.Auth.RegisterPasskey,
	// auth.Auth.SignInWithPasskey: the SignIn callback, the database session) and returns
	// that sign-in; the handler sets the session cookie (or issues the JWT) and redirects.
	// A refusal carries its code (auth.CodeOf), which the handler shows.
	Callback(ctx context.Context, providerID string, form url.Values, challenge string, user *core.User) (*auth.SignIn, error)
	// Timeout is the ceremony timeout: the challenge cookie's lifetime.
	Timeout() time.Duration
	// Script is the JavaScript the default sign-in page loads (served by the handler at
	// {base}/passkey.js) to run the ceremony in the browser.
	Script() []byte
}

// passkeyOptions runs the options of the WebAuthn provider id for user
// and seals the challenge into Auth.js's challenge cookie on w (its name
// is the JWT's salt, its claims {"value": challenge}, its lifetime the
// ceremony timeout). It returns the body to answer with.
func (h *Handler) passkeyOptions(w http.ResponseWriter, r *http.Request, id string, user *core.User) (any, error) {
	body, challenge, err := h.passkeys.Options(r.Context(), id, r.URL.Query(), user)
	if err != nil {
		return nil, err
	}
	if err := h.keepChallenge(w, r, challenge); err != nil {
		return nil, err
	}
	return body, nil
}

// keepChallenge seals a ceremony's challenge into Auth.js's challenge
// cookie on w, for the ceremony timeout.
func (h *Handler) keepChallenge(w http.ResponseWriter, r *http.Request, challenge string) error {
	name, timeout := h.names.WebAuthnChallenge, h.passkeys.Timeout()
	token, err := h.codec.Encode(name, map[string]any{"value": challenge}, timeout)
	if err != nil {
		return fmt.Errorf("the passkey challenge cookie: %w", err)
	}
	h.writeChunkedCookie(w, r, h.cookie(name, token, timeout, false))
	return nil
}

// passkeyCallback reads the challenge cookie, clears it on w whatever the
// outcome (Auth.js's webauthnChallenge.use), and runs the callback of the
// WebAuthn provider id with the posted form for user. A cookie that cannot
// be opened (tampered, sealed under another name or secret, expired) is a
// refusal; a missing one is the ceremony's to refuse.
func (h *Handler) passkeyCallback(w http.ResponseWriter, r *http.Request, id string, user *core.User) (*auth.SignIn, error) {
	challenge, err := h.takeChallenge(w, r)
	if err != nil {
		return nil, err
	}
	return h.passkeys.Callback(r.Context(), id, r.PostForm, challenge, user)
}

// takeChallenge reads the challenge cookie and clears it on w whatever
// the outcome: "" when there is none (the ceremony's to refuse), a
// refusal when it cannot be opened.
func (h *Handler) takeChallenge(w http.ResponseWriter, r *http.Request) (string, error) {
	name := h.names.WebAuthnChallenge
	claims, err := h.codec.DecodeCookie(r, name)
	if !errors.Is(err, http.ErrNoCookie) {
		h.clearChunkedCookie(w, r, h.cookie(name, "", 0, false))
	}
	challenge := ""
	switch {
	case errors.Is(err, http.ErrNoCookie):
	case err != nil:
		return "", auth.Fail(auth.CodeWebAuthnVerification, fmt.Errorf("passkey: the WebAuthn challenge cookie: %w; request new options", err))
	default:
		value, ok := claims["value"].(string)
		if !ok {
			return "", auth.Fail(auth.CodeWebAuthnVerification, errors.New("passkey: the WebAuthn challenge cookie holds no value; request new options"))
		}
		challenge = value
	}
	return challenge, nil
}

// writeChunkedCookie sets c, split into chunks when large, deleting the
// chunks of a longer value that r carries.
func (h *Handler) writeChunkedCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	setCookies(w, jwt.SetCookies(r, c))
}

// clearChunkedCookie deletes the cookie c.Name and every chunk of it that
// r carries.
func (h *Handler) clearChunkedCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	setCookies(w, jwt.ClearCookies(r, c))
}
