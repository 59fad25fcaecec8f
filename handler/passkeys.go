package handler

import (
	"context"
	"net/http"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// Passkeys runs WebAuthn ceremonies for a WebAuthn provider; *passkey.Passkeys implements it.
type Passkeys interface {
	// Options answers GET {base}/webauthn-options/{provider}?action=register|authenticate
	// (action may be empty: then "authenticate", or "register" when the caller is signed in
	// and has none — Auth.js's rule). It returns the JSON body ({"action":…,"options":…})
	// and sets on w what the ceremony keeps for the callback (a sealed challenge cookie).
	// user is the signed-in user, or nil.
	Options(ctx context.Context, w http.ResponseWriter, r *http.Request, providerID string, user *core.User) (any, error)
	// Callback verifies POST {base}/callback/{provider} (form fields "action" and "data",
	// the credential JSON, as Auth.js's client posts them; CSRF already checked by the
	// handler), registers or authenticates through core/auth (auth.Auth.SignInWithWebAuthn,
	// auth.Auth.RegisterWebAuthn: the SignIn callback, the database session), and returns
	// that sign-in. It writes no session cookie: the handler sets the cookie (or issues the
	// JWT) and redirects.
	Callback(ctx context.Context, w http.ResponseWriter, r *http.Request, providerID string, user *core.User) (*auth.SignIn, error)
	// Script is the JavaScript the default sign-in page loads (served by the handler at
	// {base}/passkey.js) to run the ceremony in the browser.
	Script() []byte
}
