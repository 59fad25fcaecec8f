package handler

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/authport/authport/core"
	"github.com/authport/authport/jwt"
)

// SecureCookies says whether the handler's cookies are Secure and carry the
// __Secure-/__Host- name prefixes.
type SecureCookies int

const (
	// SecureAuto (the default) makes cookies Secure, with the prefixes,
	// when BaseURL is https, as Auth.js does.
	SecureAuto SecureCookies = iota
	// SecureOn makes them Secure, with the prefixes, whatever BaseURL's
	// scheme. With an http BaseURL it is accepted for localhost only
	// (localhost, *.localhost, loopback addresses), the one http origin on
	// which browsers keep Secure cookies.
	SecureOn
	// SecureOff makes them plain (no Secure, no prefixes) even with an
	// https BaseURL: for development over plain http only. New logs a
	// warning when BaseURL is https.
	SecureOff
)

// CookieOptions change the attributes of the handler's session, CSRF and
// callback-url cookies. The zero value is the default: host-only cookies,
// SameSite=Lax, Secure with the prefixes on https. The OAuth check cookies
// (PKCE, state, nonce: module oauth) are not affected: they stay host-only
// and Lax, since the provider must send them back on its cross-site
// redirect to this host.
type CookieOptions struct {
	// Domain, e.g. "example.com", shares the session cookie (and the
	// callback-url cookie) with every subdomain of it, so that one sign-in
	// on auth.example.com is a session on app.example.com. It must be
	// BaseURL's host or a parent of it, and not a public suffix ("com",
	// "github.io"). A leading dot is ignored. Empty (the default) makes
	// host-only cookies. The CSRF cookie stays host-only whatever Domain
	// says: on https its __Host- name forbids a Domain, and only the
	// handler's own host checks it.
	Domain string
	// SameSite is the cookies' SameSite attribute: 0 (the default) means
	// http.SameSiteLaxMode, as Auth.js; http.SameSiteStrictMode, or
	// http.SameSiteNoneMode, which needs Secure cookies. Strict makes a
	// user who follows a link from another site look signed out on that
	// first request.
	SameSite http.SameSite
	// Secure overrides whether cookies are Secure (and prefixed); see
	// SecureCookies.
	Secure SecureCookies
}

// cookieSettings are the checked CookieOptions.
type cookieSettings struct {
	domain   string // "" for host-only cookies
	sameSite http.SameSite
	secure   bool
}

// check validates o against the base URL and returns the settings; the
// error says what to change.
func (o CookieOptions) check(base *url.URL) (cookieSettings, error) {
	s := cookieSettings{sameSite: o.SameSite, secure: base.Scheme == "https"}
	host := strings.ToLower(base.Hostname())
	switch o.Secure {
	case SecureAuto:
	case SecureOn:
		if !s.secure && !isLocalhost(host) {
			return s, fmt.Errorf("%w: Cookies.Secure is SecureOn but BaseURL %q is http and not localhost: browsers drop Secure cookies set over plain http; set BaseURL to the https URL users visit", core.ErrInvalidConfig, base.String())
		}
		s.secure = true
	case SecureOff:
		s.secure = false
	default:
		return s, fmt.Errorf("%w: Cookies.Secure %d is not SecureAuto, SecureOn or SecureOff", core.ErrInvalidConfig, o.Secure)
	}
	switch o.SameSite {
	case 0:
		s.sameSite = http.SameSiteLaxMode
	case http.SameSiteLaxMode, http.SameSiteStrictMode:
	case http.SameSiteNoneMode:
		if !s.secure {
			return s, fmt.Errorf("%w: Cookies.SameSite is None but the cookies are not Secure: browsers refuse SameSite=None cookies without Secure; use an https BaseURL (or SecureOn on localhost), or SameSite Lax", core.ErrInvalidConfig)
		}
	default:
		return s, fmt.Errorf("%w: Cookies.SameSite must be 0 (Lax, the default), http.SameSiteLaxMode, http.SameSiteStrictMode or http.SameSiteNoneMode; http.SameSiteDefaultMode leaves the attribute out, which browsers read differently", core.ErrInvalidConfig)
	}
	if o.Domain == "" {
		return s, nil
	}
	d := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(o.Domain), "."))
	switch {
	case d == "" || strings.ContainsAny(d, ":/ \t;,") || strings.HasSuffix(d, "."):
		return s, fmt.Errorf("%w: Cookies.Domain %q is not a domain name; give a bare domain such as \"example.com\"", core.ErrInvalidConfig, o.Domain)
	case net.ParseIP(host) != nil:
		return s, fmt.Errorf("%w: Cookies.Domain is set but BaseURL's host %q is an IP address, which cookies cannot share with other hosts; leave Domain empty", core.ErrInvalidConfig, host)
	case host != d && !strings.HasSuffix(host, "."+d):
		return s, fmt.Errorf("%w: Cookies.Domain %q is not BaseURL's host %q nor a parent of it: browsers refuse such cookies; give %q or one of its parent domains", core.ErrInvalidConfig, o.Domain, host, host)
	}
	if ps, _ := publicsuffix.PublicSuffix(d); ps == d {
		return s, fmt.Errorf("%w: Cookies.Domain %q is a public suffix: browsers refuse cookies for it (and it would share sessions with other sites); give your own domain, e.g. the parent of %q", core.ErrInvalidConfig, o.Domain, host)
	}
	s.domain = d
	return s, nil
}

// isLocalhost reports whether host is localhost, a subdomain of it, or a
// loopback address.
func isLocalhost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// cookie returns a cookie with the handler's attributes: HttpOnly, Path=/,
// the configured SameSite and Secure, and the Domain when shared (the CSRF
// cookie never is). maxAge 0 makes a browser-session cookie, negative
// deletes it.
func (h *Handler) cookie(name, value string, maxAge time.Duration, shared bool) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: h.cookies.sameSite, Secure: h.cookies.secure}
	if shared {
		c.Domain = h.cookies.domain
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
	h.setCookie(w, h.names.SessionToken, s.SessionToken, max(time.Second, s.Expires.Sub(h.now())), true)
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
	if h.cookies.domain != "" {
		setCookies(w, jwt.ClearCookies(r, h.cookie(h.names.SessionToken, "", 0, false)))
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
