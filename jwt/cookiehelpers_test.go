package jwt

import (
	"net/http"
	"strings"
	"time"
)

// newCookie is a cookie with Auth.js's attributes, as the handler makes
// them: HttpOnly, SameSite=Lax, Path "/", Secure for a prefixed name, and
// Expires and Max-Age from expires (zero: a browser-session cookie).
func newCookie(name, value string, expires time.Time) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: strings.HasPrefix(name, "__Secure-") || strings.HasPrefix(name, "__Host-")}
	if !expires.IsZero() {
		c.Expires = expires.UTC()
		if c.MaxAge = int(time.Until(expires) / time.Second); c.MaxAge <= 0 {
			c.MaxAge = -1
		}
	}
	return c
}

// writeCookie writes SetCookies' cookies on w, as the handler does.
func writeCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	if w == nil {
		return
	}
	for _, part := range SetCookies(r, c) {
		http.SetCookie(w, part)
	}
}

// clearCookie writes ClearCookies' cookies on w.
func clearCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	if w == nil {
		return
	}
	for _, part := range ClearCookies(r, c) {
		http.SetCookie(w, part)
	}
}

// Auth.js's names of the check cookies, for salts in tests.
const (
	secureStateCookie = "__Secure-authjs.state"
	pkceCookie        = "authjs.pkce.code_verifier"
)
