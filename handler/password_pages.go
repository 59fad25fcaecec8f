package handler

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
)

// The built-in pages of password sign-in and one-time codes (GET; each
// form posts to the route of password.go that bears its name):
//
//	GET /password/signup   the sign-up form
//	GET /password/forgot   the "forgot your password" form
//	GET /password/reset    ?email&token: the reset link's form
//	GET /password/verify   ?email&token: the verification link's confirmation form
//	GET /password/change   signed in: the change (or, without a password, set) form
//	GET /verify-request    ?type=verify-email|reset-password: the code form beside "check your e-mail"
//	                       ?type=email&code=1&provider: the e-mail sign-in code form
//
// The sign-in page shows the password form beside the other providers.
// A form refused for something the user can fix (BadRequest: an address,
// username or password that cannot be used; Verification: a link or code
// that is no longer good; CredentialsSignin: a wrong current password)
// comes back to its own page with ?error=code (and reason=…), which says
// why without telling whether an address has an account.

// passwordPage is what the pages show of the password provider.
type passwordPage struct {
	SignUpURL, ForgotURL string
	Usernames, Codes     bool
	MinLength, MaxLength int
}

// passwordPageOf returns the page's view of a password provider.
func (h *Handler) passwordPageOf(c *provider.PasswordConfig) *passwordPage {
	lo, hi := c.Policy.MinLength, c.Policy.MaxLength
	if lo == 0 {
		lo = password.MinLength
	}
	if hi == 0 {
		hi = password.MaxLength
	}
	return &passwordPage{SignUpURL: h.URL("password/signup"), ForgotURL: h.URL("password/forgot"),
		Usernames: c.Usernames, Codes: c.Codes, MinLength: lo, MaxLength: hi}
}

// Reasons of a BadRequest refusal, the reason parameter of a form page:
// a fixed set, so that a page never echoes what a URL says.
const (
	reasonPasswordLength   = "password-length"
	reasonPasswordRejected = "password-rejected"
	reasonPassword         = "password"
	reasonUsernameTaken    = "username-taken"
	reasonEmailTaken       = "email-taken"
	reasonHasPassword      = "has-password"
)

// badRequestReason is the reason a form page gives for a BadRequest
// refusal, or "" for the generic one (the address or username).
func badRequestReason(err error) string {
	switch {
	case errors.Is(err, auth.ErrUsernameTaken):
		return reasonUsernameTaken
	case errors.Is(err, auth.ErrEmailTaken):
		return reasonEmailTaken
	case errors.Is(err, auth.ErrHasPassword):
		return reasonHasPassword
	case errors.Is(err, password.ErrTooShort), errors.Is(err, password.ErrTooLong):
		return reasonPasswordLength
	case errors.Is(err, password.ErrRejected):
		return reasonPasswordRejected
	case errors.Is(err, password.ErrPolicy), errors.Is(err, password.ErrMalformed):
		return reasonPassword
	}
	return ""
}

// formMessage is a form page's message for a refusal code and reason;
// false for a code the form pages do not word themselves.
func formMessage(p *passwordPage, code, reason string) (string, bool) {
	switch code {
	case ErrorVerification:
		return "The link or code is no longer valid: it may have been used already, have expired or been mistyped. Ask for a new one.", true
	case ErrorCredentialsSignin:
		return "The current password is not correct.", true
	case ErrorBadRequest:
	default:
		return "", false
	}
	switch reason {
	case reasonPasswordLength:
		if p != nil {
			return "The password must be " + strconv.Itoa(p.MinLength) + " to " + strconv.Itoa(p.MaxLength) + " characters long.", true
		}
		return "The password is too short or too long.", true
	case reasonPasswordRejected:
		return "This password is too common or known from a data breach. Choose another one.", true
	case reasonPassword:
		return "This password cannot be used: it holds characters that are not allowed. Choose another one.", true
	case reasonUsernameTaken:
		return "This username is taken. Choose another one.", true
	case reasonEmailTaken:
		return "This e-mail address has an account: sign in instead.", true
	case reasonHasPassword:
		return "You have a password already: change it instead.", true
	}
	return "Check the e-mail address or username you entered.", true
}

// formPageData is pageData for a form page: the CSRF token (a new cookie
// when the browser has none), callbackUrl, and the refusal's message in
// the form pages' words.
func (h *Handler) formPageData(w http.ResponseWriter, r *http.Request) pageData {
	token, _ := h.csrf(w, r, "")
	d := h.pageData(r, token, h.callbackURL(w, r))
	if m, ok := formMessage(d.Password, d.Error, r.URL.Query().Get("reason")); ok {
		d.Message = m
	}
	return d
}

// servePasswordPage answers GET /password/{signup,forgot,change}.
func (h *Handler) servePasswordPage(w http.ResponseWriter, r *http.Request, action string) {
	d := h.formPageData(w, r)
	switch action {
	case "signup":
		d.Title = "Create an account"
	case "forgot":
		d.Title = "Reset your password"
	case "change":
		s, _, err := h.session(r.Context(), r)
		if err != nil {
			h.fail(w, r, ErrorConfiguration, err)
			return
		}
		if s == nil {
			h.redirect(w, r, withQuery(h.pageURL(h.pages.SignIn, "signin"), "callbackUrl="+queryEscape(h.URL("password/change"))))
			return
		}
		has, err := h.auth.Passwords().HasPassword(r.Context(), s.User.ID)
		if err != nil {
			h.fail(w, r, ErrorConfiguration, err)
			return
		}
		d.HasPassword, d.Title = has, "Set a password"
		if has {
			d.Title = "Change your password"
		}
	}
	h.render(w, http.StatusOK, action, d)
}

// verifyPageData is the verify-request page's data: for a password
// e-mail or an e-mail sign-in with a code, the form that takes the code.
func (h *Handler) verifyPageData(w http.ResponseWriter, r *http.Request) pageData {
	d := h.formPageData(w, r)
	q := r.URL.Query()
	d.Kind = q.Get("type")
	d.Email, d.VerifyUsername = h.codeEmail(r)
	codes := d.Password != nil && d.Password.Codes
	switch d.Kind {
	case string(provider.PurposeVerifyEmail):
		if codes {
			d.CodeURL = h.URL("password/verify")
		}
	case string(provider.PurposeResetPassword):
		if codes {
			d.CodeURL = h.URL("password/reset")
		}
	case "email":
		id := q.Get("provider")
		if p, ok := h.byID[id].(*provider.EmailConfig); ok && p.Codes && q.Get("code") == "1" {
			d.CodeURL = h.URL("email-code-verify/" + pathEscape(id))
		}
	}
	return d
}

// verifyPage is the URL of the verify-request page for a mail of kind
// (its type parameter) from the provider; code says that an e-mail
// sign-in mail holds a code. The address is not in it: it would make the
// answers to two addresses differ, and put addresses in access logs.
func (h *Handler) verifyPage(providerID, kind string, code bool) string {
	q := "provider=" + queryEscape(providerID) + "&type=" + queryEscape(kind)
	if code {
		q += "&code=1"
	}
	return withQuery(h.pageURL(h.pages.VerifyRequest, "verify-request"), q)
}

// maxEmailLen bounds an address the code form is prefilled with, and
// maxUsernameLen a username it carries.
const (
	maxEmailLen    = 320
	maxUsernameLen = 64
)

// rememberCodeEmail keeps the address a browser asked a mail for in a
// cookie, which prefills the code form of the verify-request page (not
// for a script: it has no page), with the username a sign-up chose beside
// it ("" for none), which the verification code was issued for and the
// form posts back.
func (h *Handler) rememberCodeEmail(w http.ResponseWriter, r *http.Request, email, username string) {
	email, username = strings.TrimSpace(email), strings.TrimSpace(username)
	if email == "" || len(email) > maxEmailLen || len(username) > maxUsernameLen || wantsJSON(r) {
		return
	}
	v := url.Values{"email": {email}}
	if username != "" {
		v.Set("username", username)
	}
	h.setCookie(w, h.names.CodeEmail, v.Encode(), codeBindingAge, false)
}

// forgetCodeUsername drops the username from the code form's cookie: a
// verification e-mail sent again at sign-in carries none.
func (h *Handler) forgetCodeUsername(w http.ResponseWriter, r *http.Request) {
	if email, username := h.codeEmail(r); username != "" {
		h.rememberCodeEmail(w, r, email, "")
	}
}

// codeEmail returns the address and username rememberCodeEmail kept, or
// "" (an address kept alone, unescaped, is read too).
func (h *Handler) codeEmail(r *http.Request) (email, username string) {
	v, _ := cookieValue(r, h.names.CodeEmail)
	q, err := url.ParseQuery(v)
	if err != nil || !q.Has("email") {
		email, err = url.QueryUnescape(v)
	} else {
		email, username = q.Get("email"), q.Get("username")
	}
	if err != nil || len(email) > maxEmailLen || len(username) > maxUsernameLen {
		return "", ""
	}
	return email, username
}

// passwordID is the password provider's id, or "password".
func (h *Handler) passwordID() string {
	for _, p := range h.providers {
		if c := p.Common(); c.Type == provider.TypePassword {
			return c.ID
		}
	}
	return "password"
}

// formPage is the page a refused browser form post goes back to (the
// page that showed the form, without error), or "" for the usual
// refusal (the sign-in or error page).
func (h *Handler) formPage(r *http.Request) string {
	if r.Method != http.MethodPost {
		return ""
	}
	f := r.PostFormValue
	route := strings.TrimPrefix(r.URL.Path, h.prefix)
	switch route {
	case "password/signup", "password/forgot":
		return h.URL(route)
	case "password/change", "password/set":
		return h.URL("password/change")
	case "password/verify", "password/reset":
		if token := f("token"); token != "" {
			q := url.Values{"email": {f("email")}, "token": {token}}
			if name := f("username"); name != "" {
				q.Set("username", name)
			}
			return h.URL(route) + "?" + q.Encode()
		}
		purpose := provider.PurposeVerifyEmail
		if route == "password/reset" {
			purpose = provider.PurposeResetPassword
		}
		return h.verifyPage(h.passwordID(), string(purpose), false)
	}
	if id, ok := strings.CutPrefix(route, "email-code-verify/"); ok {
		return h.verifyPage(id, "email", true)
	}
	return ""
}

// refuseOnForm answers a refusal of a browser form post that its own page
// can show (see formPage), and reports whether it did.
func (h *Handler) refuseOnForm(w http.ResponseWriter, r *http.Request, code string, err error) bool {
	if wantsJSON(r) || (code != ErrorBadRequest && code != ErrorVerification && code != ErrorCredentialsSignin) {
		return false
	}
	page := h.formPage(r)
	if page == "" {
		return false
	}
	h.log.InfoContext(r.Context(), "authport: form refused", "error_code", code, "error", err)
	target := withQuery(page, "error="+queryEscape(code))
	if reason := badRequestReason(err); code == ErrorBadRequest && reason != "" {
		target += "&reason=" + reason
	}
	h.redirect(w, r, target)
	return true
}

// serveResetForm answers GET /password/reset?email&token: the form that
// posts the new password with the link's token. Without a token it sends
// the browser to the forgot-password page.
func (h *Handler) serveResetForm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("token") == "" {
		h.redirect(w, r, h.URL("password/forgot"))
		return
	}
	d := h.formPageData(w, r)
	h.renderLinkForm(w, r, "reset", d)
}

// serveConfirmForm answers GET /password/verify?email&token, the
// verification link: a page whose form posts the token back, with the
// CSRF token, to confirm it. Opening the link verifies nothing (mail
// scanners open links, and someone may have signed up with the address of
// whoever follows the link): the post verifies only in the browser that
// signed up (its code binding) or with the account's password. Without a
// token it sends the browser to the verify-request page.
func (h *Handler) serveConfirmForm(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("token") == "" {
		h.redirect(w, r, h.verifyPage(h.passwordID(), string(provider.PurposeVerifyEmail), false))
		return
	}
	d := h.formPageData(w, r)
	d.HasBinding = h.bindingOf(r) != ""
	if d.Error == ErrorVerification {
		d.Message = "The link is no longer valid, or the password is not correct. Try again, or sign in to have a new link sent."
	}
	h.renderLinkForm(w, r, "confirm", d)
}

// renderLinkForm renders the page of a mailed link (reset, confirm),
// which holds the link's address and token: no referrer leaves with them.
func (h *Handler) renderLinkForm(w http.ResponseWriter, r *http.Request, page string, d pageData) {
	q := r.URL.Query()
	d.LinkEmail, d.LinkToken, d.VerifyUsername = q.Get("email"), q.Get("token"), q.Get("username")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.render(w, http.StatusOK, page, d)
}
