package handler

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// Step-up: how fresh a session is, middleware that asks for more, and the
// re-authentication routes (under the handler's base path):
//
//	GET  /reauth                  the page: the password (when the user has one), a factor's code, an e-mail code, a passkey
//	POST /reauth                  password, or type and code, or both (level mfa) → a fresh session replacing this one, then callbackUrl
//	POST /reauth/email            sends an e-mail code for the re-authentication
//	GET|POST /reauth/passkey/options  the assertion options for one of the user's passkeys
//	POST /reauth/passkey          the assertion → a fresh session
//
// They answer 404 when second factors are off
// (auth.SecondFactorOptions.Enabled): re-authentication is part of them.
// Bodies are forms or JSON objects of strings with csrfToken, like the
// other routes. A fresh session replaces the old one: with database
// sessions a new token (the old one is deleted), with JWT sessions a new
// cookie, either way with auth_time now and the methods just proven.

// DefaultFactorFreshness is how recently a user must have authenticated
// to enrol or remove a second factor, when Config.FactorFreshness is zero.
const DefaultFactorFreshness = 10 * time.Minute

// Authentication returns how and when the session's user last proved who
// they are (auth_time, amr, acr): with database sessions as core/auth
// recorded it for the session's token, with JWT sessions from the claims.
// The zero value (no time, no methods) means unknown: a session made
// before authport recorded it, or read by a Reader without an Auth whose
// token has no such claims.
func (s *Session) Authentication() auth.Authentication {
	if s == nil {
		return auth.Authentication{}
	}
	if s.auth != nil {
		return s.auth.Edge().Authentication(auth.SessionState{
			Session: core.Session{SessionToken: s.token, UserID: s.User.ID, Expires: s.Expires},
			User:    s.user, Claims: s.Claims,
		})
	}
	return authenticationFromClaims(s.Claims)
}

// authenticationFromClaims reads auth_time, amr and acr from JWT claims
// (as encoding/json decodes them), for a Reader without an Auth.
func authenticationFromClaims(claims map[string]any) auth.Authentication {
	var au auth.Authentication
	if t, ok := claims["auth_time"].(float64); ok && t > 0 {
		au.Time = time.Unix(int64(t), 0).UTC()
	}
	switch v := claims["amr"].(type) {
	case []any:
		for _, m := range v {
			if s, ok := m.(string); ok {
				au.Methods = append(au.Methods, s)
			}
		}
	case []string:
		au.Methods = slices.Clone(v)
	}
	au.Level, _ = claims["acr"].(string)
	return au
}

// RequireFresh returns middleware that lets a request through to next
// only when its session meets step: signed in (a request that is not is
// answered as Require answers it), recently enough (step.MaxAge) and
// with the methods or level step asks for. A session that does not meet
// it is sent to re-authenticate: a browser page (Accept: text/html,
// without a bearer token) is redirected (303) to the re-authentication
// page (ReaderConfig.ReauthURL, the handler's GET {base}/reauth) with
// the request's URL as callbackUrl, which comes back once the user has
// proven a factor again; an API client gets 401 with RFC 9470's
// challenge, WWW-Authenticate: Bearer error="insufficient_user_authentication"
// with max_age (seconds) and acr_values as step asks. The handler's
// /reauth needs second factors on (auth.SecondFactorOptions.Enabled):
// without them a Handler's Reader sends stale sessions to the sign-in page
// instead, where signing in again makes a fresh session. Give a standalone
// Reader a ReauthURL of the application's.
func (rd *Reader) RequireFresh(step auth.StepUp) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return rd.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s, _ := FromContext(r.Context())
			if step.Satisfied(s.Authentication(), rd.now()) {
				next.ServeHTTP(w, r)
				return
			}
			if !s.Bearer && wantsHTML(r) {
				target := rd.reauthURL
				sep := "?"
				if strings.Contains(target, "?") {
					sep = "&"
				}
				noStore(w)
				http.Redirect(w, r, target+sep+"callbackUrl="+queryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", stepUpChallenge(step))
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: "insufficient_user_authentication", Message: "authenticate again to use this resource", URL: rd.reauthURL}, true)
		}))
	}
}

// stepUpChallenge is RFC 9470's WWW-Authenticate challenge for step.
func stepUpChallenge(step auth.StepUp) string {
	var b strings.Builder
	b.WriteString(`Bearer error="insufficient_user_authentication", error_description="`)
	switch {
	case step.MaxAge > 0 && step.Level != "":
		b.WriteString("A more recent authentication with more factors is required")
	case step.MaxAge > 0:
		b.WriteString("A more recent authentication is required")
	default:
		b.WriteString("A different authentication level is required")
	}
	b.WriteByte('"')
	if step.MaxAge > 0 {
		b.WriteString(", max_age=")
		b.WriteString(strconv.FormatInt(int64(step.MaxAge/time.Second), 10))
	}
	if step.Level != "" && validQuoted(step.Level) {
		b.WriteString(`, acr_values="`)
		b.WriteString(step.Level)
		b.WriteByte('"')
	}
	return b.String()
}

// validQuoted reports whether s can stand in a quoted-string as it is
// (printable ASCII, no quote or backslash).
func validQuoted(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// reauthActions are the actions of /reauth/{action}, and their methods.
var reauthActions = map[string]string{"email": "POST", "passkey/options": "GET, POST", "passkey": "POST"}

// serveReauth answers /reauth and /reauth/{action}.
func (h *Handler) serveReauth(w http.ResponseWriter, r *http.Request, action string) {
	if !h.factorsOn() {
		h.notFound(w, r)
		return
	}
	if action != "" {
		methods, ok := reauthActions[action]
		if !ok {
			h.notFound(w, r)
			return
		}
		if !strings.Contains(methods, r.Method) {
			w.Header().Set("Allow", methods)
			writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "MethodNotAllowed", Message: r.Method + " is not supported here"}, true)
			return
		}
	}
	if r.Method == http.MethodPost && !h.postFields(w, r) {
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
	if r.Method == http.MethodPost && !h.allow(w, r, signInAttempt, "user:"+s.User.ID) {
		return
	}
	f := h.auth.Factors()
	switch action {
	case "":
		if r.Method != http.MethodPost {
			h.serveReauthPage(w, r, s)
			return
		}
		// A password, a factor's code, or both (a password and a code
		// reach level mfa).
		pw, answer := r.PostFormValue("password"), auth.Answer{}
		if pw == "" || strings.TrimSpace(r.PostFormValue("code")) != "" {
			answer = answerOf(r)
			answer.Enrollment, answer.TrustDevice = "", false
		}
		si, err := f.Reauthenticate(h.withClient(r), s.User.ID, s.token, pw, answer)
		h.reauthenticated(w, r, si, err)
	case "email":
		if !h.allow(w, r, emailAttempt, "user:"+s.User.ID) {
			return
		}
		if err := f.SendReauthCode(ctx, s.User.ID); err != nil {
			h.refuseReauth(w, r, err)
			return
		}
		h.done(w, r, withQuery(h.URL("reauth"), "sent=email"))
	case "passkey/options":
		h.factorPasskeyOptions(w, r, s.User.ID, "")
	case "passkey":
		si, err := h.verifyFactorPasskey(w, r, s.User.ID, "", s.token)
		h.reauthenticated(w, r, si, err)
	}
}

// reauthenticated gives the browser the fresh session of a
// re-authentication and sends it back to callbackUrl, or answers the
// refusal.
func (h *Handler) reauthenticated(w http.ResponseWriter, r *http.Request, si *auth.SignIn, err error) {
	if err == nil && si == nil {
		err = auth.Fail(auth.CodeConfiguration, errNoSignIn)
	}
	if err != nil {
		h.refuseReauth(w, r, err)
		return
	}
	h.signedIn(w, r, si, nil)
}

// refuseReauth answers a refused re-authentication: a code or password
// that is not right goes back to the page with the error (JSON 401
// {"error":code}); anything else as the other routes answer it.
func (h *Handler) refuseReauth(w http.ResponseWriter, r *http.Request, err error) {
	code := errorCode(err)
	switch code {
	case ErrorSecondFactor, ErrorCredentialsSignin, ErrorBadRequest, ErrorWebAuthnVerification, ErrorVerification:
	default:
		h.refuse(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "authport: re-authentication refused", "error_code", code, "error", err)
	if wantsJSON(r) {
		status := http.StatusUnauthorized
		if code == ErrorBadRequest {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, errorBody{Error: code}, true)
		return
	}
	h.redirect(w, r, withQuery(h.URL("reauth"), "error="+queryEscape(code)))
}

// serveReauthPage answers GET /reauth: the ways the signed-in user can
// prove who they are again (JSON {"password":bool,"factors":[…]} for a
// script).
func (h *Handler) serveReauthPage(w http.ResponseWriter, r *http.Request, s *Session) {
	ctx := r.Context()
	hasPassword := false
	if h.hasPasswords() {
		var err error
		if hasPassword, err = h.auth.Passwords().HasPassword(ctx, s.User.ID); err != nil {
			h.fail(w, r, ErrorConfiguration, err)
			return
		}
	}
	infos, err := h.auth.Factors().List(ctx, s.User.ID)
	if err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return
	}
	types := factorTypes(infos)
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"password": hasPassword, "factors": types}, true)
		return
	}
	d := h.factorPageData(w, r)
	d.Title = "Confirm it's you"
	d.HasPassword = hasPassword
	d.Factor.Types = types
	d.Factor.Sent = r.URL.Query().Get("sent") == "email"
	d.Factor.Action = h.URL("reauth")
	d.Factor.EmailURL = h.URL("reauth/email")
	if slices.Contains(types, core.FactorPasskey) && h.factorPasskeys() != nil {
		d.Factor.PasskeyOptionsURL, d.Factor.PasskeyURL = h.URL("reauth/passkey/options"), h.URL("reauth/passkey")
	}
	h.render(w, http.StatusOK, "reauth", d)
}

// signInFirst answers a route that needs a session, for a request without
// one: 401 JSON for a script, else the sign-in page and back.
func (h *Handler) signInFirst(w http.ResponseWriter, r *http.Request) {
	if wantsJSON(r) || (r.Method != http.MethodPost && !wantsHTML(r) && r.Header.Get("Accept") != "") {
		writeJSON(w, http.StatusUnauthorized, errorBody{Error: "Unauthorized", Message: "sign in first"}, true)
		return
	}
	back := r.URL.RequestURI()
	if r.Method == http.MethodPost {
		back = h.URL("account/security")
	}
	h.redirect(w, r, withQuery(h.pageURL(h.pages.SignIn, "signin"), "callbackUrl="+queryEscape(back)))
}

// fresh reports whether the session is fresh enough to change the user's
// factors (Config.FactorFreshness), answering otherwise itself: a script
// gets 401 with RFC 9470's challenge, a browser goes to /reauth and back
// to the security page.
//
// For a user who has a second factor, the recent authentication must
// have proven one (amr "otp": a TOTP, recovery or e-mail code of theirs;
// or "hwk": a passkey), unless the action only takes trust away (ending
// trusted browsers): else a stolen session and the password would remove
// the factor that guards the password, or add one of the thief's. A user
// without one enrols their first with a recent sign-in alone.
func (h *Handler) fresh(w http.ResponseWriter, r *http.Request, s *Session, action string) bool {
	if h.freshness <= 0 {
		return true
	}
	step := auth.StepUp{MaxAge: h.freshness}
	if action != "devices/revoke" {
		infos, err := h.auth.Factors().List(r.Context(), s.User.ID)
		if err != nil {
			h.fail(w, r, ErrorConfiguration, err)
			return false
		}
		if slices.ContainsFunc(infos, func(f auth.FactorInfo) bool {
			return f.Type == core.FactorTOTP || f.Type == core.FactorPasskey || f.Type == core.FactorEmail
		}) {
			step.Methods = []string{auth.AMROneTimePassword, auth.AMRHardwareKey}
		}
	}
	if step.Satisfied(s.Authentication(), h.now()) {
		return true
	}
	if wantsJSON(r) || (r.Method != http.MethodPost && !wantsHTML(r)) {
		challenge := step
		if len(step.Methods) > 0 {
			// RFC 9470 names levels, not methods: a second factor is mfa.
			challenge.Level = auth.LevelMultiFactor
		}
		w.Header().Set("WWW-Authenticate", stepUpChallenge(challenge))
		message := "authenticate again to change your second factors"
		if len(step.Methods) > 0 {
			message = "authenticate again, with your second factor, to change your second factors"
		}
		writeJSON(w, http.StatusUnauthorized, errorBody{Error: "insufficient_user_authentication", Message: message, URL: h.URL("reauth")}, true)
		return false
	}
	h.redirect(w, r, withQuery(h.URL("reauth"), "callbackUrl="+queryEscape(h.URL("account/security"))))
	return false
}
