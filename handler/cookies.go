package handler

import (
	"net/http"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/jwt"
)

// cookie returns a cookie with the handler's attributes: HttpOnly, Path=/,
// the configured SameSite and Secure, and the Domain when shared (the CSRF
// cookie never is). maxAge 0 makes a browser-session cookie, negative
// deletes it.
func (h *Handler) cookie(name, value string, maxAge time.Duration, shared bool) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: h.cookies.SameSite, Secure: h.cookies.Secure}
	if shared {
		c.Domain = h.cookies.Domain
	}
	switch {
	case maxAge > 0:
		c.MaxAge = int(maxAge / time.Second)
		c.Expires = h.now().Add(maxAge)
	case maxAge < 0:
		c.MaxAge = -1
		c.Expires = time.Unix(0, 0)
	}
	return c
}

// setCookie sets a cookie with the handler's attributes (cookie).
func (h *Handler) setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration, shared bool) {
	setCookies(w, []*http.Cookie{h.cookie(name, value, maxAge, shared)})
}

// writeSessionCookie gives the browser the database session's cookie
// (jwt's cookie name), expiring with the session. It and writeSessionJWT
// are the only writers of the session cookie.
func (h *Handler) writeSessionCookie(w http.ResponseWriter, s core.Session) {
	value := s.SessionToken
	if h.ba != nil {
		value = h.ba.sign(value) // Better Auth's signed cookie (betterauth.go)
	}
	h.setCookie(w, h.names.SessionToken, value, max(time.Second, s.Expires.Sub(h.now())), true)
}

// writeSessionJWT gives the browser the JWT session cookie, split into
// chunks when large (jwt.SetCookies).
func (h *Handler) writeSessionJWT(w http.ResponseWriter, r *http.Request, token string) {
	setCookies(w, jwt.SetCookies(r, h.cookie(h.names.SessionToken, token, h.sessions.MaxAge, true)))
}

// clearSession deletes the session cookie and its chunks. With a Domain it
// deletes the host-only cookie of that name too (one left from before the
// Domain was configured would otherwise shadow the shared one).
func (h *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	setCookies(w, jwt.ClearCookies(r, h.cookie(h.names.SessionToken, "", 0, true)))
	if h.cookies.Domain != "" {
		setCookies(w, jwt.ClearCookies(r, h.cookie(h.names.SessionToken, "", 0, false)))
	}
	if h.ba != nil && carriesCookie(r, h.ba.data) {
		// Better Auth's cookie cache of the session (betterauth.go).
		setCookies(w, jwt.ClearCookies(r, h.cookie(h.ba.data, "", 0, true)))
	}
}

// setCookies writes cookies on w, in order: with setCookie, the one place
// authport writes Set-Cookie.
func setCookies(w http.ResponseWriter, cookies []*http.Cookie) {
	for _, c := range cookies {
		http.SetCookie(w, c)
	}
}

// cookieNames are the names of every cookie the handler writes, as
// Auth.js names them. The sealed ones (PKCE code verifier, state, nonce,
// WebAuthn challenge, and the JWT session) use their name as the salt.
type cookieNames struct {
	SessionToken      string // the session JWT, or the database session's token
	CallbackURL       string // where to go after sign-in (not sealed)
	CSRFToken         string // the double-submit CSRF token (not sealed)
	PKCECodeVerifier  string // sealed, 15 minutes
	State             string // sealed, 15 minutes
	Nonce             string // sealed, 15 minutes
	WebAuthnChallenge string // sealed, the ceremony's timeout
	OtherSessions     string // the browser's other sessions (Config.MultiSession; not sealed)
	CodeBinding       string // the browser's binding of one-time codes (not sealed)
	CodeEmail         string // the address a code was last mailed to, for the code form (not sealed)
	Pending           string // the pending sign-in's token (auth.PendingSignIn.Token; sealed by core/auth)
	TrustedDevice     string // the trusted-device token (auth.SignIn.TrustedDevice; sealed by core/auth)
}

// cookieNamesFor returns the cookie names: with the "__Secure-" prefix
// (and "__Host-" for the CSRF token) when secure, as Auth.js names them on
// an https site, without when not.
func cookieNamesFor(secure bool) cookieNames {
	prefix, host, session := "", "", jwt.SessionTokenCookie
	if secure {
		prefix, host, session = "__Secure-", "__Host-", jwt.SecureSessionTokenCookie
	}
	return cookieNames{
		SessionToken:      session,
		CallbackURL:       prefix + "authjs.callback-url",
		CSRFToken:         host + "authjs.csrf-token",
		PKCECodeVerifier:  prefix + "authjs.pkce.code_verifier",
		State:             prefix + "authjs.state",
		Nonce:             prefix + "authjs.nonce",
		WebAuthnChallenge: prefix + "authjs.challenge",
		OtherSessions:     prefix + "authport.other-sessions",
		CodeBinding:       prefix + "authport.code-binding",
		CodeEmail:         prefix + "authport.code-email",
		Pending:           prefix + "authport.pending",
		TrustedDevice:     prefix + "authport.trusted-device",
	}
}

// cookieValue returns the value of the first cookie called name that r
// carries with a non-empty value, as r.Cookie would find it, without
// parsing every cookie of the request into http.Cookie values (the session
// read's hot path). Values net/http would unquote or refuse are left to
// r.Cookie.
func cookieValue(r *http.Request, name string) (string, bool) {
	for _, line := range r.Header["Cookie"] {
		for line != "" {
			part := line
			if i := strings.IndexByte(line, ';'); i >= 0 {
				part, line = line[:i], line[i+1:]
			} else {
				line = ""
			}
			k, v, ok := strings.Cut(strings.Trim(part, " \t"), "=")
			if !ok || strings.TrimRight(k, " \t") != name {
				continue
			}
			if !plainCookieValue(v) {
				return slowCookieValue(r, name)
			}
			if v != "" {
				return v, true
			}
		}
	}
	return "", false
}

// plainCookieValue reports whether v is a cookie value net/http takes as
// it is (no quotes, no byte it would refuse).
func plainCookieValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= 0x20 || c >= 0x7f || c == '"' || c == ';' || c == '\\' || c == ',' {
			return false
		}
	}
	return true
}

// slowCookieValue is cookieValue through net/http's parser.
func slowCookieValue(r *http.Request, name string) (string, bool) {
	for _, c := range r.CookiesNamed(name) {
		if c.Value != "" {
			return c.Value, true
		}
	}
	return "", false
}
