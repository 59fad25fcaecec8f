package handler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// The password and one-time code routes, under the handler's base path
// (auth.Passwords; they answer 404 without a password provider):
//
//	POST /password/signup   email and/or username, password, name → the same answer for a new and a taken address
//	POST /password/signin   email or username, password → a session (also POST /callback/{password provider id})
//	GET  /password/verify   ?email&token: the verification link → a page confirming it (verifies nothing)
//	POST /password/verify   email, code: the verification code, in the browser that asked → a session;
//	                        or email, token, password: the link confirmed in the browser that signed up,
//	                        or elsewhere with the account's password → a session
//	POST /password/forgot   email → the same answer for every address
//	GET  /password/reset    ?email&token: the reset link → the reset form
//	POST /password/reset    email, token or code, password → the password reset, every session ended
//	POST /password/change   currentPassword, password (signed in) → the other sessions ended
//	POST /password/set      password (signed in, no password yet)
//	POST /email-code/{id}   email → an e-mail sign-in mail with a code (Codes on)
//	POST /email-code-verify/{id}  email, code → a session
//
// Bodies are a form or a JSON object of strings, with the CSRF token (GET
// /csrf) as csrfToken and optionally callbackUrl (same-origin, or what
// auth.Callbacks.Redirect allows). A script (JSON body or Accept:
// application/json) gets JSON: {"ok":true} or {"url":…} after a sign-in;
// refusals as the other routes give them ({"error":code,"url":…}, 4xx). A
// browser form post is redirected: to callbackUrl after a sign-in, to the
// verify-request page after a mail, to the sign-in or error page with
// ?error=code after a refusal. Every POST is rate-limited like the other
// sign-in routes.

// passwordActions are the actions of /password/{action}, and the methods
// each takes.
var passwordActions = map[string]string{
	"signup": "GET, POST", "signin": "POST", "verify": "GET, POST", "forgot": "GET, POST",
	"reset": "GET, POST", "change": "GET, POST", "set": "POST",
}

// codeBindingAge is how long the code binding cookie lives: longer than
// any code.
const codeBindingAge = 24 * time.Hour

// ErrorBadRequest is the error code of input the password routes cannot
// use (an invalid address or username, a password the policy refuses, a
// taken username); the JSON answer's message says which.
const ErrorBadRequest = string(auth.CodeBadRequest)

// servePassword answers /password/{action}.
func (h *Handler) servePassword(w http.ResponseWriter, r *http.Request, action string) {
	methods, ok := passwordActions[action]
	if !ok || !h.hasPasswords() {
		h.notFound(w, r)
		return
	}
	if !strings.Contains(methods, r.Method) {
		// HEAD included: a link checker must not use up a link.
		w.Header().Set("Allow", methods)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "MethodNotAllowed", Message: r.Method + " is not supported here"}, true)
		return
	}
	if r.Method == http.MethodGet {
		switch action {
		case "verify":
			h.serveConfirmForm(w, r)
		case "reset":
			h.serveResetForm(w, r)
		default:
			h.servePasswordPage(w, r, action)
		}
		return
	}
	if !h.postFields(w, r) {
		return
	}
	ctx := h.withClient(r)
	pw := h.auth.Passwords()
	f := r.PostFormValue
	switch action {
	case "signup":
		id := auth.Identity{Email: f("email"), Username: f("username")}
		if !h.allowMail(w, r, id.Email, id.Username) {
			return
		}
		h.callbackURL(w, r) // kept for the sign-in that verifying the address makes
		req := auth.SignUpRequest{Identity: id, Password: f("password"), Binding: h.codeBinding(w, r)}
		if name := strings.TrimSpace(f("name")); name != "" {
			req.Name = &name
		}
		res, err := pw.SignUp(ctx, req)
		switch {
		case err != nil:
			h.refuse(w, r, err)
		case res.SignIn != nil:
			h.signedIn(w, r, res.SignIn, nil)
		default:
			h.mailSent(w, r, provider.PurposeVerifyEmail, id.Email, id.Username)
		}
	case "signin":
		if !h.allow(w, r, signInAttempt, credentialsIdentifier(r)) {
			return
		}
		si, err := pw.SignIn(ctx, h.passwordSignIn(w, r))
		h.signedIn(w, r, si, err)
	case "verify":
		if !h.allow(w, r, signInAttempt, rateIdentifier(f("email"))) {
			return
		}
		// A code, or the link's token confirmed by this browser's binding
		// or the password (the confirmation form).
		proof := auth.Proof{Code: f("code"), Binding: h.bindingOf(r), Username: f("username")}
		if proof.Code == "" {
			proof.Token, proof.Password = f("token"), f("password")
		}
		si, err := pw.VerifyEmail(ctx, f("email"), proof)
		h.signedIn(w, r, si, err)
	case "forgot":
		if !h.allowMail(w, r, f("email"), "") {
			return
		}
		// Off the request path: the answer takes the same time whether
		// the address has a password (token writes, the mailer) or not.
		if err := pw.RequestResetInBackground(ctx, f("email"), h.codeBinding(w, r)); err != nil {
			h.refuse(w, r, err)
			return
		}
		h.mailSent(w, r, provider.PurposeResetPassword, f("email"), "")
	case "reset":
		if !h.allow(w, r, signInAttempt, rateIdentifier(f("email"))) {
			return
		}
		proof := auth.Proof{Token: f("token"), Code: f("code"), Binding: h.bindingOf(r)}
		if err := pw.Reset(ctx, f("email"), proof, f("password")); err != nil {
			h.refuse(w, r, err)
			return
		}
		// Every session ended, this browser's too.
		h.clearSession(w, r)
		h.done(w, r, h.pageURL(h.pages.SignIn, "signin"))
	case "change", "set":
		h.changePassword(w, r, action)
	}
}

// changePassword answers /password/change and /password/set, for the
// signed-in user.
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, action string) {
	ctx := r.Context()
	s, _, err := h.session(ctx, r)
	if err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return
	}
	if s == nil {
		h.fail(w, r, ErrorSessionRequired, errors.New("changing a password needs a session"))
		return
	}
	if !h.allow(w, r, signInAttempt, "user:"+s.User.ID) {
		return
	}
	if action == "set" {
		err = h.auth.Passwords().Set(ctx, s.User.ID, r.PostFormValue("password"))
	} else {
		err = h.auth.Passwords().Change(ctx, s.User.ID, s.token, r.PostFormValue("currentPassword"), r.PostFormValue("password"))
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.done(w, r, h.callbackURL(w, r))
}

// passwordSignIn is the sign-in a POST names: its email, or else its
// username (or identifier) field. It drops the sign-up's username from the
// code form's cookie: the verification e-mail a sign-in sends again is
// issued for no username.
func (h *Handler) passwordSignIn(w http.ResponseWriter, r *http.Request) auth.SignInRequest {
	h.forgetCodeUsername(w, r) // a verification e-mail sent again carries no username
	return auth.SignInRequest{Identifier: signInIdentifier(r), Password: r.PostFormValue("password"), Binding: h.codeBinding(w, r)}
}

// serveEmailCode answers POST /email-code/{id}: an e-mail sign-in whose
// mail carries a code for this browser.
func (h *Handler) serveEmailCode(w http.ResponseWriter, r *http.Request, id string) {
	p, ok := h.byID[id].(*provider.EmailConfig)
	if !ok || !p.Codes {
		h.unknownProvider(w, r)
		return
	}
	if !h.postFields(w, r) {
		return
	}
	email := r.PostFormValue("email")
	identifier, _ := p.Normalize(email)
	if !h.allow(w, r, emailAttempt, identifier) {
		return
	}
	h.callbackURL(w, r)
	if _, err := h.auth.StartEmailSignInWithCode(r.Context(), id, email, h.codeBinding(w, r)); err != nil {
		h.failEmailStart(w, r, err)
		return
	}
	h.rememberCodeEmail(w, r, email, "")
	h.done(w, r, h.verifyPage(id, "email", true))
}

// serveEmailCodeVerify answers POST /email-code-verify/{id}: the code of
// an e-mail sign-in, typed in the browser that asked for it.
func (h *Handler) serveEmailCodeVerify(w http.ResponseWriter, r *http.Request, id string) {
	if p, ok := h.byID[id].(*provider.EmailConfig); !ok || !p.Codes {
		h.unknownProvider(w, r)
		return
	}
	if !h.postFields(w, r) || !h.allow(w, r, signInAttempt, rateIdentifier(r.PostFormValue("email"))) {
		return
	}
	si, err := h.auth.VerifyEmailSignInCode(h.withClient(r), id, r.PostFormValue("email"), r.PostFormValue("code"), h.bindingOf(r))
	h.signedIn(w, r, si, err)
}

// hasPasswords reports whether a password provider is configured.
func (h *Handler) hasPasswords() bool {
	for _, p := range h.providers {
		if p.Common().Type == provider.TypePassword {
			return true
		}
	}
	return false
}

// withClient returns r's context carrying the client, which the session a
// sign-in creates records, with the browser's trusted-device cookie.
func (h *Handler) withClient(r *http.Request) context.Context {
	ip, agent := h.client(r)
	trusted, _ := cookieValue(r, h.names.TrustedDevice)
	return auth.WithClient(r.Context(), auth.Client{IPAddress: ip, UserAgent: agent, TrustedDevice: trusted})
}

// signedIn completes a sign-in: the session cookie, then callbackUrl
// (JSON {"url":…} for a script), or the second-factor challenge of a
// pending sign-in (complete); or the refusal.
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request, si *auth.SignIn, err error) {
	if err == nil && si == nil {
		err = errors.New("the sign-in returned no user")
	}
	if err != nil {
		if !h.denied(w, r, err) {
			h.refuse(w, r, err)
		}
		return
	}
	if !h.complete(w, r, si) {
		return
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, signedInBody{URL: h.callbackURL(w, r), UsernameTaken: si.UsernameTaken}, true)
		return
	}
	h.redirect(w, r, h.callbackURL(w, r))
}

// signedInBody is a script's answer to a sign-in: where to go, and
// whether the username chosen at sign-up was taken before the address was
// verified (the user is signed in without one; ask for another).
type signedInBody struct {
	URL           string `json:"url"`
	UsernameTaken bool   `json:"usernameTaken,omitempty"`
}

// refuse answers a refused password or code action with its code; bad
// input says why in JSON (never quoting a password).
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	code := errorCode(err)
	if h.refuseOnForm(w, r, code, err) {
		return
	}
	if code == ErrorBadRequest && wantsJSON(r) {
		h.log.InfoContext(r.Context(), "authport: request refused", "error_code", code, "error", err)
		writeJSON(w, http.StatusBadRequest, errorBody{Error: code, Message: err.Error()}, true)
		return
	}
	if d := (*auth.DeniedError)(nil); errors.As(err, &d) {
		h.denied(w, r, err)
		return
	}
	h.fail(w, r, code, err)
}

// mailSent answers an action that sent (or, for an address it must not
// reveal, would have sent) an e-mail of the purpose to the address typed:
// the same bytes whatever the address. A browser goes to the
// verify-request page, which holds the code form when codes are on (the
// address it prefills is in a cookie, not in the URL).
func (h *Handler) mailSent(w http.ResponseWriter, r *http.Request, purpose provider.Purpose, email, username string) {
	h.rememberCodeEmail(w, r, email, username)
	h.done(w, r, h.verifyPage(h.passwordID(), string(purpose), false))
}

// done answers a completed action: {"ok":true} for a script, else a
// redirect to next.
func (h *Handler) done(w http.ResponseWriter, r *http.Request, next string) {
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true}, true)
		return
	}
	h.redirect(w, r, next)
}

// allowMail checks the limits of an action that sends mail to the
// address (or, without one, a sign-in attempt for the username).
func (h *Handler) allowMail(w http.ResponseWriter, r *http.Request, email, username string) bool {
	if normal, err := auth.NormalizeEmail(email); err == nil {
		return h.allow(w, r, emailAttempt, normal)
	}
	return h.allow(w, r, signInAttempt, rateIdentifier(username))
}

// bindingOf returns the browser's code binding (its cookie), or "".
func (h *Handler) bindingOf(r *http.Request) string {
	v, _ := cookieValue(r, h.names.CodeBinding)
	return v
}

// codeBinding returns the browser's code binding, setting a new cookie
// when it has none: a random value only this browser holds, without which
// the codes mailed to it do not work.
func (h *Handler) codeBinding(w http.ResponseWriter, r *http.Request) string {
	if v := h.bindingOf(r); len(v) == 64 {
		return v
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	v := hex.EncodeToString(b)
	h.setCookie(w, h.names.CodeBinding, v, codeBindingAge, false)
	return v
}

// checkFields is postFields in checkCSRF's shape, for admit.
func (h *Handler) checkFields(w http.ResponseWriter, r *http.Request) (string, bool) {
	return "", h.postFields(w, r)
}

// postFields reads a POST's fields, from a form or a JSON object of
// strings, into r.PostForm (so that every reader of the form sees them),
// and checks its CSRF token; it answers a refusal itself.
func (h *Handler) postFields(w http.ResponseWriter, r *http.Request) bool {
	if isJSON(r) {
		var body map[string]string
		if !decodeJSONBody(w, r, &body, "a JSON object of strings") {
			return false
		}
		form := make(url.Values, len(body))
		for k, v := range body {
			form.Set(k, v)
		}
		r.PostForm, r.Form = form, form
	} else if !h.form(w, r) {
		return false
	}
	if _, ok := h.csrf(w, r, r.PostFormValue("csrfToken")); !ok {
		h.fail(w, r, ErrorMissingCSRF, nil)
		return false
	}
	return true
}
