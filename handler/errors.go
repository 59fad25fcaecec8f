package handler

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/authport/authport/core/auth"
)

// Auth.js's error codes, the values of the error parameter of the sign-in
// and error pages.
const (
	ErrorConfiguration         = "Configuration"
	ErrorAccessDenied          = "AccessDenied"
	ErrorVerification          = "Verification"
	ErrorOAuthSignin           = "OAuthSignin"
	ErrorOAuthCallback         = "OAuthCallbackError"
	ErrorOAuthAccountNotLinked = "OAuthAccountNotLinked"
	ErrorEmailSignin           = "EmailSignin"
	ErrorCredentialsSignin     = "CredentialsSignin"
	ErrorMissingCSRF           = "MissingCSRF"
	ErrorWebAuthnVerification  = "WebAuthnVerificationError"
	ErrorSessionRequired       = "SessionRequired"
)

// errorCode is the Auth.js error code a failed sign-in shows: the one
// the error carries (auth.CodeOf), Configuration when it carries none.
func errorCode(err error) string { return string(auth.CodeOf(err)) }

// signInPageErrors are the codes Auth.js shows on the sign-in page (its
// SignInError kind, MissingCSRF included); the others go to the error page.
func signInPageError(code string) bool {
	switch code {
	case ErrorOAuthSignin, ErrorOAuthCallback, ErrorOAuthAccountNotLinked, ErrorEmailSignin, ErrorCredentialsSignin,
		ErrorWebAuthnVerification, ErrorSessionRequired, ErrorMissingCSRF, ErrorRateLimited, ErrorBadRequest, ErrorSecondFactor:
		return true
	}
	return false
}

// errorStatus is the error page's status for a code, as Auth.js's.
func errorStatus(code string) int {
	switch code {
	case ErrorConfiguration:
		return http.StatusInternalServerError
	case ErrorAccessDenied, ErrorVerification, ErrorMissingCSRF:
		return http.StatusForbidden
	case ErrorRateLimited:
		return http.StatusTooManyRequests
	}
	return http.StatusOK
}

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
	URL     string `json:"url,omitempty"`
}

// noStore marks a response as not cacheable, as Auth.js marks its session
// and CSRF answers.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "private, no-cache, no-store")
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("Expires", "0")
}

// jsonResponse holds a JSON answer's header values and the start of its
// body in one allocation.
type jsonResponse struct {
	values [5]string
	body   [192]byte
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any, private bool) {
	buf := new(jsonResponse)
	var body []byte
	var err error
	if s, ok := v.(*Session); ok && s != nil {
		// Its appendJSON writes compact, valid JSON: json.Marshal would
		// only check and copy it.
		body = s.appendJSON(buf.body[:0])
	} else {
		body, err = json.Marshal(v)
	}
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"Configuration"}`)
	}
	// Each header value's slice is full, so an Add to one of them copies
	// it rather than writing over the next.
	values := buf.values[:]
	values[0], values[1] = "application/json", "nosniff"
	h := w.Header()
	h["Content-Type"], h["X-Content-Type-Options"] = values[0:1:1], values[1:2:2]
	if private {
		values[2], values[3], values[4] = "private, no-cache, no-store", "no-cache", "0"
		h["Cache-Control"], h["Pragma"], h["Expires"] = values[2:3:3], values[3:4:4], values[4:5:5]
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// wantsJSON reports whether a POST came from a script that expects JSON
// rather than a page.
func wantsJSON(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/json") ||
		!wantsHTML(r) && r.Header.Get("Accept") != "" && r.Header.Get("X-Auth-Return-Redirect") == "" &&
			containsJSON(r.Header.Get("Accept"))
}

func containsJSON(accept string) bool { return strings.Contains(accept, "application/json") }

// unknownProvider answers a sign-in or callback for a provider id that no
// configured provider has: the client's mistake (a stale or forged link),
// so 404 and not Auth.js's 500 Configuration.
func (h *Handler) unknownProvider(w http.ResponseWriter, r *http.Request) {
	h.log.InfoContext(r.Context(), "authport: request for an unknown provider", "path", r.URL.Path)
	writeJSON(w, http.StatusNotFound, errorBody{Error: "UnknownProvider", Message: "no provider has this id"}, true)
}

// fail answers a failed action the Auth.js way: a redirect to the sign-in
// page (sign-in errors) or the error page (others) with ?error=code, or
// JSON for a script.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, code string, err error) {
	if err != nil {
		if code == ErrorConfiguration {
			h.log.ErrorContext(r.Context(), "authport: request failed", "error_code", code, "error", err)
		} else {
			h.log.WarnContext(r.Context(), "authport: sign-in failed", "error_code", code, "error", err)
		}
	}
	page := h.pageURL(h.pages.Error, "error")
	if signInPageError(code) {
		page = h.pageURL(h.pages.SignIn, "signin")
	}
	sep := "?"
	if strings.Contains(page, "?") {
		sep = "&"
	}
	target := page + sep + "error=" + queryEscape(code)
	if code == ErrorCredentialsSignin {
		target += "&code=credentials"
	}
	if wantsJSON(r) {
		status := errorStatus(code)
		if status == http.StatusOK {
			status = http.StatusBadRequest
		}
		if code == ErrorCredentialsSignin {
			status = http.StatusUnauthorized
		}
		writeJSON(w, status, errorBody{Error: code, URL: target}, true)
		return
	}
	h.redirect(w, r, target)
}
