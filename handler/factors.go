package handler

import (
	"context"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// Second factors (auth.Factors), under the handler's base path. They
// answer 404 when second factors are off (auth.SecondFactorOptions.Enabled,
// read through auth.Settings).
//
// A sign-in whose first factor passed (OAuth/OIDC, e-mail link or code,
// password, passkey without user verification, credentials) and whose
// user must give a second one ends in a pending sign-in (auth.SignIn's
// Pending) rather than a session: the handler keeps its token in the
// authport.pending cookie (__Secure- on https; HttpOnly, SameSite=Lax so
// that an OAuth provider's redirect back keeps it, host-only, until the
// pending sign-in expires) and sends the browser to the challenge page, or
// answers a script {"twoFactorRequired":true,"factors":[…],"enroll":bool,"url":…}.
// The routes of the pending sign-in (the authport.pending cookie):
//
//	GET  /two-factor                   the challenge page: a code form, "use a recovery code", "send me a code", a passkey, "trust this browser"; enrolment when the user must enrol
//	POST /two-factor/verify            type (totp, recovery, email), code, trustDevice → the session, then callbackUrl
//	POST /two-factor/email             sends an e-mail code
//	GET|POST /two-factor/passkey/options  the assertion options (user verification required)
//	POST /two-factor/passkey           the assertion (fields action, data), trustDevice → the session
//	POST /two-factor/enroll            name → a TOTP key (QR code and text) for a user who must enrol
//	POST /two-factor/enroll/confirm    enrollment, code, trustDevice → the key active, the session, and the recovery codes shown once (JSON {"url":…,"recoveryCodes":[…]})
//
// The routes of the signed-in user (the session; changing factors needs a
// fresh session, Config.FactorFreshness, whose authentication included a
// second factor when the user has one):
//
//	GET  /account/security             the factors, with what adds and removes them (JSON {"factors":[…]} for a script)
//	POST /two-factor/totp/start        name → a TOTP key to confirm
//	POST /two-factor/totp/confirm      enrollment, code → the factor, and recovery codes the first time (shown once)
//	POST /two-factor/recovery-codes    → ten new recovery codes (shown once); the old ones stop working
//	POST /two-factor/email/add         → the e-mail code factor
//	POST /two-factor/passkey/add       credentialId, name → one of the user's passkeys as a factor
//	POST /two-factor/remove            id → the factor removed (refused for the last one where one is required)
//	POST /two-factor/devices/revoke    → every trusted browser of the user forgets its trust
//
// Bodies are forms or JSON objects of strings with csrfToken, like the
// other routes; every POST is rate-limited. A trusted browser holds
// authport.trusted-device (__Secure- on https; HttpOnly, SameSite=Lax)
// for as long as the trust lasts (auth.SecondFactorOptions.TrustDevice, at
// most the 400 days browsers keep a cookie): its sign-ins skip the second
// factor meanwhile, and ending the user's sessions ends the trust. With
// TrustDevice zero the pages offer no "trust this browser".

// ErrorSecondFactor is the error code of a refused second factor: a code
// that is wrong, replayed or of the wrong shape, or a pending sign-in
// that expired, was used or belongs to another browser.
const ErrorSecondFactor = string(auth.CodeSecondFactor)

// maxCookieAge is the longest lifetime browsers keep a cookie for (400
// days, RFC 6265bis): the trusted-device cookie's, for a longer
// auth.SecondFactorOptions.TrustDevice.
const maxCookieAge = 400 * 24 * time.Hour

// FactorPasskeys is implemented by a [Passkeys] that proves a passkey as
// a second factor or to re-authenticate (*passkey.Passkeys does): the
// handler offers passkeys on the challenge and re-authentication pages
// only when Config.Passkeys implements it. The ceremony's challenge is
// kept in Auth.js's challenge cookie, as for sign-in.
type FactorPasskeys interface {
	// SecondFactorOptions returns the assertion options ({"action":
	// "authenticate","options":…}, user verification required) for the
	// pending sign-in of pendingToken, or, when pendingToken is "", for
	// the signed-in userID re-authenticating; and the challenge to
	// remember.
	SecondFactorOptions(ctx context.Context, providerID, userID, pendingToken string) (body any, challenge string, err error)
	// VerifySecondFactor verifies the assertion of form (fields action
	// and data) against challenge and answers the pending sign-in
	// (auth.Factors.VerifyPasskey), or re-authenticates userID, whose
	// session token is current ("" with JWT sessions), when pendingToken
	// is "" (auth.Factors.ReauthenticatePasskey). A refusal carries its
	// code (auth.CodeOf).
	VerifySecondFactor(ctx context.Context, providerID string, form url.Values, challenge, userID, pendingToken, current string, trustDevice bool) (*auth.SignIn, error)
}

// errNoSignIn: a sign-in operation returned neither a result nor an error.
var errNoSignIn = errors.New("the sign-in returned no user")

// secondFactors are the Auth's second-factor settings, defaults applied
// (the zero value when they are off).
func (h *Handler) secondFactors() auth.SecondFactorOptions {
	return h.auth.Settings().SecondFactors
}

// factorsOn reports whether second factors are on (the Auth then checked
// that the adapter keeps factors).
func (h *Handler) factorsOn() bool { return h.secondFactors().Enabled }

// trustOffered reports whether the pages offer "trust this browser": when
// trusted devices are on (auth.SecondFactorOptions.TrustDevice).
func (h *Handler) trustOffered() bool { return h.secondFactors().TrustDevice > 0 }

// factorPasskeys returns Config.Passkeys as FactorPasskeys, or nil.
func (h *Handler) factorPasskeys() FactorPasskeys {
	fp, _ := h.passkeys.(FactorPasskeys)
	return fp
}

// webAuthnID is the id of the first WebAuthn provider, or "".
func (h *Handler) webAuthnID() string {
	for _, p := range h.providers {
		if c := p.Common(); c.Type == provider.TypeWebAuthn {
			return c.ID
		}
	}
	return ""
}

// complete gives the browser what a sign-in earned: with a pending
// sign-in its cookie and the challenge (answered here), else the session
// cookie (and the trusted-device cookie when the user chose to trust this
// browser). It reports whether a session was issued; false means it
// answered the request itself. Every sign-in that becomes cookies goes
// through it.
func (h *Handler) complete(w http.ResponseWriter, r *http.Request, si *auth.SignIn) bool {
	if si.Pending != nil {
		h.challenge(w, r, si.Pending)
		return false
	}
	if err := h.issueSession(w, r, si); err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return false
	}
	if trust := h.secondFactors().TrustDevice; si.TrustedDevice != "" && trust > 0 {
		// As long as the trust lasts: a cookie kept longer would only be
		// ignored.
		h.setCookie(w, h.names.TrustedDevice, si.TrustedDevice, min(trust, maxCookieAge), false)
	}
	return true
}

// pendingBody is a script's answer to a sign-in that waits for a second
// factor.
type pendingBody struct {
	TwoFactorRequired bool              `json:"twoFactorRequired"`
	Factors           []core.FactorType `json:"factors"`
	Enroll            bool              `json:"enroll"`
	URL               string            `json:"url"`
}

// challenge keeps the pending sign-in's token in its cookie and sends the
// browser to the challenge page with the sign-in's callbackUrl (a script
// gets pendingBody).
func (h *Handler) challenge(w http.ResponseWriter, r *http.Request, p *auth.PendingSignIn) {
	age := max(time.Second, p.Expires.Sub(h.now()))
	setCookies(w, []*http.Cookie{h.checkCookie(h.names.Pending, p.Token, age, false)})
	target := withQuery(h.URL("two-factor"), "callbackUrl="+queryEscape(h.callbackURL(w, r)))
	if wantsJSON(r) {
		factors := p.Factors
		if factors == nil {
			factors = []core.FactorType{}
		}
		writeJSON(w, http.StatusOK, pendingBody{TwoFactorRequired: true, Factors: factors, Enroll: p.Enroll, URL: target}, true)
		return
	}
	h.redirect(w, r, target)
}

// pendingToken is the request's pending sign-in token, or "".
func (h *Handler) pendingToken(r *http.Request) string {
	v, _ := cookieValue(r, h.names.Pending)
	return v
}

// clearPending deletes the pending sign-in cookie.
func (h *Handler) clearPending(w http.ResponseWriter) {
	setCookies(w, []*http.Cookie{h.checkCookie(h.names.Pending, "", -1, false)})
}

// answerOf is the Answer a POST gives: type (totp by default), code,
// enrollment and trustDevice.
func answerOf(r *http.Request) auth.Answer {
	f := r.PostFormValue
	t := core.FactorType(strings.TrimSpace(f("type")))
	if t == "" {
		t = core.FactorTOTP
	}
	return auth.Answer{Type: t, Code: f("code"), Enrollment: f("enrollment"), TrustDevice: checked(f("trustDevice"))}
}

// checked reports whether a checkbox or JSON flag is set.
func checked(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "on", "true", "yes":
		return true
	}
	return false
}

// pendingActions are the actions of /two-factor/{action} that answer a
// pending sign-in, and userActions those of the signed-in user, with
// their methods.
var (
	pendingActions = map[string]string{"verify": "POST", "email": "POST", "passkey/options": "GET, POST", "passkey": "POST",
		"enroll": "POST", "enroll/confirm": "POST"}
	userActions = map[string]string{"totp/start": "POST", "totp/confirm": "POST", "recovery-codes": "POST",
		"email/add": "POST", "passkey/add": "POST", "remove": "POST", "devices/revoke": "POST"}
)

// serveTwoFactor answers /two-factor and /two-factor/{action}.
func (h *Handler) serveTwoFactor(w http.ResponseWriter, r *http.Request, action string) {
	if !h.factorsOn() {
		h.notFound(w, r)
		return
	}
	if action == "" {
		h.serveChallengePage(w, r)
		return
	}
	methods, pending := pendingActions[action]
	if !pending {
		var ok bool
		if methods, ok = userActions[action]; !ok {
			h.notFound(w, r)
			return
		}
	}
	if !strings.Contains(methods, r.Method) {
		w.Header().Set("Allow", methods)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "MethodNotAllowed", Message: r.Method + " is not supported here"}, true)
		return
	}
	if r.Method == http.MethodPost && !h.postFields(w, r) {
		return
	}
	if pending {
		h.servePendingAction(w, r, action)
		return
	}
	h.serveUserAction(w, r, action)
}

// servePendingAction answers an action of the pending sign-in.
func (h *Handler) servePendingAction(w http.ResponseWriter, r *http.Request, action string) {
	token := h.pendingToken(r)
	if token == "" {
		h.pendingGone(w, r, auth.Fail(auth.CodeSecondFactor, errors.New("the request carries no pending sign-in cookie")))
		return
	}
	// Per client, and per pending sign-in (its token, hashed in the key).
	kind := signInAttempt
	if action == "email" {
		kind = emailAttempt
	}
	if r.Method == http.MethodPost && !h.allow(w, r, kind, "pending:"+token) {
		return
	}
	ctx := h.withClient(r)
	f := h.auth.Factors()
	var si *auth.SignIn
	var err error
	switch action {
	case "verify", "enroll/confirm":
		answer := answerOf(r)
		if action == "enroll/confirm" {
			answer.Type = core.FactorTOTP
		}
		si, err = f.Verify(ctx, token, answer)
	case "email":
		if err := f.SendEmailCode(ctx, token); err != nil {
			h.refuseFactor(w, r, err)
			return
		}
		h.done(w, r, withQuery(h.URL("two-factor"), "sent=email"))
		return
	case "enroll":
		e, err := f.StartTOTP(ctx, "", token, r.PostFormValue("name"))
		if err != nil {
			h.refuseFactor(w, r, err)
			return
		}
		h.showEnrollment(w, r, e, h.URL("two-factor/enroll/confirm"), true)
		return
	case "passkey/options":
		h.factorPasskeyOptions(w, r, "", token)
		return
	case "passkey":
		si, err = h.verifyFactorPasskey(w, r, "", token, "")
	}
	if err == nil && si == nil {
		err = errNoSignIn
	}
	if err != nil {
		h.refuseFactor(w, r, err)
		return
	}
	h.clearPending(w)
	if len(si.RecoveryCodes) > 0 {
		h.enrolledSignIn(w, r, si)
		return
	}
	h.signedIn(w, r, si, nil)
}

// enrolledBody is a script's answer to a sign-in that enrolled the user's
// first factor: where to go, and the recovery codes made with it, shown
// this once.
type enrolledBody struct {
	URL           string   `json:"url"`
	UsernameTaken bool     `json:"usernameTaken,omitempty"`
	RecoveryCodes []string `json:"recoveryCodes"`
}

// enrolledSignIn completes a pending sign-in that enrolled the user's
// first factor (auth.PendingSignIn's Enroll): the session cookie, then the
// recovery codes, once, with a link on to callbackUrl (JSON enrolledBody
// for a script).
func (h *Handler) enrolledSignIn(w http.ResponseWriter, r *http.Request, si *auth.SignIn) {
	if !h.complete(w, r, si) {
		return
	}
	next := h.callbackURL(w, r)
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, enrolledBody{URL: next, UsernameTaken: si.UsernameTaken, RecoveryCodes: si.RecoveryCodes}, true)
		return
	}
	d := h.factorPageData(w, r)
	d.Title = "Authenticator app added"
	d.Factor.RecoveryCodes, d.Factor.Next = si.RecoveryCodes, next
	h.render(w, http.StatusOK, "recoverycodes", d)
}

// refuseFactor answers a refused answer to a pending sign-in: while the
// pending sign-in can still be answered, the challenge page again with
// the error (JSON 401 {"error":"SecondFactor"}, 400 for BadRequest); once
// it cannot (expired, used, another browser's), the sign-in page with the
// error. Other failures are answered as the other routes answer them.
func (h *Handler) refuseFactor(w http.ResponseWriter, r *http.Request, err error) {
	code := errorCode(err)
	switch code {
	case ErrorSecondFactor, ErrorBadRequest, ErrorWebAuthnVerification, ErrorVerification:
	default:
		h.refuse(w, r, err)
		return
	}
	if _, perr := h.auth.Factors().Pending(r.Context(), h.pendingToken(r)); perr != nil {
		if errorCode(perr) == ErrorConfiguration {
			h.fail(w, r, ErrorConfiguration, perr)
			return
		}
		h.pendingGone(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "authport: second factor refused", "error_code", code, "error", err)
	if wantsJSON(r) {
		status := http.StatusUnauthorized
		if code == ErrorBadRequest {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, errorBody{Error: code, URL: withQuery(h.URL("two-factor"), "error="+queryEscape(code))}, true)
		return
	}
	h.redirect(w, r, withQuery(h.URL("two-factor"), "error="+queryEscape(code)))
}

// pendingGone answers a request for a pending sign-in that can no longer
// be answered: its cookie dropped, the sign-in page with the error
// SecondFactor (JSON 401 with its URL).
func (h *Handler) pendingGone(w http.ResponseWriter, r *http.Request, err error) {
	h.log.InfoContext(r.Context(), "authport: pending sign-in refused", "error_code", ErrorSecondFactor, "error", err)
	h.clearPending(w)
	target := withQuery(h.pageURL(h.pages.SignIn, "signin"), "error="+ErrorSecondFactor)
	if wantsJSON(r) || (r.Method != http.MethodPost && !wantsHTML(r) && r.Header.Get("Accept") != "") {
		writeJSON(w, http.StatusUnauthorized, errorBody{Error: ErrorSecondFactor, URL: target}, true)
		return
	}
	h.redirect(w, r, target)
}

// serveChallengePage answers GET /two-factor: what the pending sign-in
// can be answered with (JSON pendingBody for a script).
func (h *Handler) serveChallengePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "MethodNotAllowed", Message: r.Method + " is not supported here"}, true)
		return
	}
	token := h.pendingToken(r)
	if token == "" {
		h.pendingGone(w, r, auth.Fail(auth.CodeSecondFactor, errors.New("the request carries no pending sign-in cookie")))
		return
	}
	p, err := h.auth.Factors().Pending(r.Context(), token)
	if err != nil {
		if errorCode(err) == ErrorConfiguration {
			h.fail(w, r, ErrorConfiguration, err)
			return
		}
		h.pendingGone(w, r, err)
		return
	}
	if !wantsHTML(r) && containsJSON(r.Header.Get("Accept")) {
		writeJSON(w, http.StatusOK, pendingBody{TwoFactorRequired: true, Factors: append([]core.FactorType{}, p.Factors...), Enroll: p.Enroll,
			URL: withQuery(h.URL("two-factor"), "callbackUrl="+queryEscape(h.callbackURL(w, r)))}, true)
		return
	}
	d := h.factorPageData(w, r)
	d.Title = "Two-step verification"
	d.Factor.Types, d.Factor.Enroll, d.Factor.Trust = p.Factors, p.Enroll, h.trustOffered()
	d.Factor.Sent = r.URL.Query().Get("sent") == "email"
	d.Factor.Action, d.Factor.EmailURL = h.URL("two-factor/verify"), h.URL("two-factor/email")
	d.Factor.EnrollURL = h.URL("two-factor/enroll")
	if slices.Contains(p.Factors, core.FactorPasskey) && h.factorPasskeys() != nil {
		d.Factor.PasskeyOptionsURL, d.Factor.PasskeyURL = h.URL("two-factor/passkey/options"), h.URL("two-factor/passkey")
	}
	h.render(w, http.StatusOK, "twofactor", d)
}

// enrollmentBody is a script's answer to a TOTP enrolment's start.
type enrollmentBody struct {
	Secret     string `json:"secret"`
	URI        string `json:"uri"`
	QRCode     string `json:"qrCode"`
	Enrollment string `json:"enrollment"`
}

// showEnrollment shows a TOTP key offered to the user: its QR code, its
// text and the form that confirms it (posting to confirm).
func (h *Handler) showEnrollment(w http.ResponseWriter, r *http.Request, e *auth.TOTPEnrollment, confirm string, pending bool) {
	qr := ""
	if len(e.Key.QRCode) > 0 {
		qr = "data:image/png;base64," + base64.StdEncoding.EncodeToString(e.Key.QRCode)
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, enrollmentBody{Secret: e.Key.Text, URI: e.Key.URI, QRCode: qr, Enrollment: e.Token}, true)
		return
	}
	d := h.factorPageData(w, r)
	d.Title = "Set up an authenticator app"
	d.Factor.Action, d.Factor.Trust = confirm, pending && h.trustOffered()
	d.Factor.Enrollment = &enrollmentPage{QRCode: template.URL(qr), Text: e.Key.Text, URI: e.Key.URI, Token: e.Token}
	h.render(w, http.StatusOK, "totpenroll", d)
}

// factorPasskeyOptions answers the assertion options of a passkey as the
// second factor of the pending sign-in (pendingToken), or to
// re-authenticate userID, keeping the challenge in Auth.js's challenge
// cookie as the sign-in ceremony does.
func (h *Handler) factorPasskeyOptions(w http.ResponseWriter, r *http.Request, userID, pendingToken string) {
	fp, id := h.factorPasskeys(), h.webAuthnID()
	if fp == nil || id == "" {
		h.notFound(w, r)
		return
	}
	body, challenge, err := fp.SecondFactorOptions(r.Context(), id, userID, pendingToken)
	if err == nil {
		err = h.keepChallenge(w, r, challenge)
	}
	if code := auth.CodeOf(err); code == auth.CodeConfiguration {
		h.log.ErrorContext(r.Context(), "authport: passkey options failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: ErrorConfiguration, Message: "passkey options could not be made"}, true)
		return
	} else if err != nil {
		h.log.InfoContext(r.Context(), "authport: passkey options refused", "error", err)
		writeJSON(w, http.StatusBadRequest, errorBody{Error: string(code), Message: "passkey options could not be made"}, true)
		return
	}
	writeJSON(w, http.StatusOK, body, true)
}

// verifyFactorPasskey verifies the posted passkey assertion against the
// challenge cookie (which it drops): the second factor of the pending
// sign-in, or the re-authentication of userID (session token current).
func (h *Handler) verifyFactorPasskey(w http.ResponseWriter, r *http.Request, userID, pendingToken, current string) (*auth.SignIn, error) {
	fp, id := h.factorPasskeys(), h.webAuthnID()
	if fp == nil || id == "" {
		return nil, auth.Fail(auth.CodeBadRequest, errors.New("no passkey provider can prove a second factor (Config.Passkeys does not implement handler.FactorPasskeys)"))
	}
	challenge, err := h.takeChallenge(w, r)
	if err != nil {
		return nil, err
	}
	return fp.VerifySecondFactor(h.withClient(r), id, r.PostForm, challenge, userID, pendingToken, current, checked(r.PostFormValue("trustDevice")))
}

// serveSecurityPage answers GET /account/security: the signed-in user's
// factors and the forms that change them (JSON {"factors":[…]} for a
// script).
func (h *Handler) serveSecurityPage(w http.ResponseWriter, r *http.Request, id string) {
	if id != "security" || !h.factorsOn() {
		h.notFound(w, r)
		return
	}
	ctx := r.Context()
	s, _, err := h.session(ctx, r)
	if err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return
	}
	if s == nil {
		h.signInFirst(w, r)
		return
	}
	infos, err := h.auth.Factors().List(ctx, s.User.ID)
	if err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return
	}
	if !wantsHTML(r) && containsJSON(r.Header.Get("Accept")) {
		writeJSON(w, http.StatusOK, map[string]any{"factors": factorsJSON(infos)}, true)
		return
	}
	d := h.factorPageData(w, r)
	d.Title = "Sign-in security"
	d.Factor.Factors = infos
	d.Factor.Types = factorTypes(infos)
	d.Factor.Done = securityNotice(r.URL.Query().Get("done"))
	if s.User.Email != nil && *s.User.Email != "" {
		d.Factor.CanEmail = true
	}
	if h.factorPasskeys() != nil {
		creds, err := h.auth.Factors().PasskeyCredentials(ctx, s.User.ID, "")
		if err != nil {
			h.fail(w, r, ErrorConfiguration, err)
			return
		}
		for _, c := range creds {
			d.Factor.Passkeys = append(d.Factor.Passkeys, c.CredentialID)
		}
	}
	h.render(w, http.StatusOK, "security", d)
}

// securityNotice is the security page's notice for a done parameter: a
// fixed set, so that the page never echoes what a URL says.
func securityNotice(done string) string {
	switch done {
	case "removed":
		return "The factor was removed."
	case "email":
		return "E-mail codes are now a second factor."
	case "passkey":
		return "The passkey is now a second factor."
	case "devices":
		return "Every trusted browser will be asked for a second factor again."
	}
	return ""
}

// serveUserAction answers an action of the signed-in user on their
// factors (the body read and CSRF-checked).
func (h *Handler) serveUserAction(w http.ResponseWriter, r *http.Request, action string) {
	ctx := r.Context()
	s, _, err := h.session(ctx, r)
	if err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return
	}
	if s == nil {
		h.signInFirst(w, r)
		return
	}
	if !h.allow(w, r, signInAttempt, "user:"+s.User.ID) || !h.fresh(w, r, s, action) {
		return
	}
	f, uid, form := h.auth.Factors(), s.User.ID, r.PostFormValue
	security := h.URL("account/security")
	switch action {
	case "totp/start":
		e, err := f.StartTOTP(ctx, uid, "", form("name"))
		if err != nil {
			h.refuseUser(w, r, err)
			return
		}
		h.showEnrollment(w, r, e, h.URL("two-factor/totp/confirm"), false)
	case "totp/confirm":
		en, err := f.ConfirmTOTP(ctx, uid, form("enrollment"), form("code"))
		if err != nil {
			h.refuseUser(w, r, err)
			return
		}
		if wantsJSON(r) {
			writeJSON(w, http.StatusOK, map[string]any{"factor": factorJSONOf(en.Factor), "recoveryCodes": nonNil(en.RecoveryCodes)}, true)
			return
		}
		h.showRecoveryCodes(w, r, en.RecoveryCodes, "Authenticator app added")
	case "recovery-codes":
		codes, err := f.NewRecoveryCodes(ctx, uid)
		if err != nil {
			h.refuseUser(w, r, err)
			return
		}
		if wantsJSON(r) {
			writeJSON(w, http.StatusOK, map[string]any{"recoveryCodes": nonNil(codes)}, true)
			return
		}
		h.showRecoveryCodes(w, r, codes, "New recovery codes")
	case "email/add":
		info, err := f.AddEmail(ctx, uid)
		h.userDone(w, r, info, err, withQuery(security, "done=email"))
	case "passkey/add":
		info, err := f.AddPasskey(ctx, uid, form("credentialId"), form("name"))
		h.userDone(w, r, info, err, withQuery(security, "done=passkey"))
	case "remove":
		if err := f.Remove(ctx, uid, form("id")); err != nil {
			h.refuseUser(w, r, err)
			return
		}
		if wantsJSON(r) {
			writeJSON(w, http.StatusOK, map[string]bool{"removed": true}, true)
			return
		}
		h.redirect(w, r, withQuery(security, "done=removed"))
	case "devices/revoke":
		n, err := f.RevokeTrustedDevices(ctx, uid)
		if err != nil {
			h.refuseUser(w, r, err)
			return
		}
		h.setCookie(w, h.names.TrustedDevice, "", -1, false)
		if wantsJSON(r) {
			writeJSON(w, http.StatusOK, map[string]int{"revoked": n}, true)
			return
		}
		h.redirect(w, r, withQuery(security, "done=devices"))
	}
}

// userDone answers an action that added a factor: JSON {"factor":…}, or
// the security page with a notice.
func (h *Handler) userDone(w http.ResponseWriter, r *http.Request, info *auth.FactorInfo, err error, next string) {
	if err != nil {
		h.refuseUser(w, r, err)
		return
	}
	if wantsJSON(r) {
		var body any
		if info != nil {
			body = factorJSONOf(*info)
		}
		writeJSON(w, http.StatusOK, map[string]any{"factor": body}, true)
		return
	}
	h.redirect(w, r, next)
}

// refuseUser answers a refused change of the user's factors: a wrong
// confirmation code, or input that cannot be used (the last factor where
// one is required, an unknown factor), back on the security page with the
// error (JSON 400/401 with the code and, for bad input or an id that is
// not the user's, why).
func (h *Handler) refuseUser(w http.ResponseWriter, r *http.Request, err error) {
	code := errorCode(err)
	// A bad input's message goes back to the client; a configuration's
	// (a failing RequiredFor policy, whatever its error wraps) does not.
	if (errors.Is(err, core.ErrInvalidInput) || errors.Is(err, core.ErrNotFound)) && !errors.Is(err, core.ErrInvalidConfig) && code == ErrorConfiguration {
		code = ErrorBadRequest
	}
	switch code {
	case ErrorSecondFactor, ErrorBadRequest, ErrorVerification, ErrorWebAuthnVerification:
	default:
		h.refuse(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "authport: second-factor change refused", "error_code", code, "error", err)
	if wantsJSON(r) {
		status, body := http.StatusUnauthorized, errorBody{Error: code}
		if code == ErrorBadRequest {
			status, body.Message = http.StatusBadRequest, err.Error()
		}
		writeJSON(w, status, body, true)
		return
	}
	h.redirect(w, r, withQuery(h.URL("account/security"), "error="+queryEscape(code)))
}

// showRecoveryCodes shows recovery codes, once.
func (h *Handler) showRecoveryCodes(w http.ResponseWriter, r *http.Request, codes []string, title string) {
	d := h.factorPageData(w, r)
	d.Title = title
	d.Factor.RecoveryCodes = codes
	h.render(w, http.StatusOK, "recoverycodes", d)
}

// factorJSON is a factor as the JSON answers show it: never its secret.
type factorJSON struct {
	ID         string          `json:"id"`
	Type       core.FactorType `json:"type"`
	Name       string          `json:"name,omitempty"`
	CreatedAt  time.Time       `json:"createdAt"`
	LastUsedAt *time.Time      `json:"lastUsedAt,omitempty"`
	Remaining  int             `json:"remaining,omitempty"`
}

func factorJSONOf(f auth.FactorInfo) factorJSON {
	out := factorJSON{ID: f.ID, Type: f.Type, Name: f.Name, CreatedAt: f.CreatedAt.UTC(), Remaining: f.Remaining}
	if !f.LastUsedAt.IsZero() {
		t := f.LastUsedAt.UTC()
		out.LastUsedAt = &t
	}
	return out
}

func factorsJSON(infos []auth.FactorInfo) []factorJSON {
	out := make([]factorJSON, 0, len(infos))
	for _, f := range infos {
		out = append(out, factorJSONOf(f))
	}
	return out
}

// factorTypes are the distinct types of the factors, in order.
func factorTypes(infos []auth.FactorInfo) []core.FactorType {
	var out []core.FactorType
	for _, f := range infos {
		if !slices.Contains(out, f.Type) {
			out = append(out, f.Type)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
