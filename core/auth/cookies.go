package auth

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/authport/authport/core"
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

// CookieOptions change the attributes of the session, CSRF and
// callback-url cookies the handler (module
// github.com/authport/authport/handler) writes. The zero value is the default: host-only cookies,
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

// CookieSettings are the checked [CookieOptions], as [Settings] gives
// them.
type CookieSettings struct {
	// Domain is the cookies' Domain attribute, "" for host-only cookies.
	Domain string
	// SameSite is their SameSite attribute: never 0.
	SameSite http.SameSite
	// Secure reports that they are Secure and carry the
	// __Secure-/__Host- name prefixes.
	Secure bool
}

// check validates o against the base URL and returns the settings; the
// error says what to change.
func (o CookieOptions) check(base *url.URL) (CookieSettings, error) {
	s := CookieSettings{SameSite: o.SameSite, Secure: base.Scheme == "https"}
	host := strings.ToLower(base.Hostname())
	switch o.Secure {
	case SecureAuto:
	case SecureOn:
		if !s.Secure && !isLocalhost(host) {
			return s, fmt.Errorf("%w: Cookies.Secure is SecureOn but BaseURL %q is http and not localhost: browsers drop Secure cookies set over plain http; set BaseURL to the https URL users visit", core.ErrInvalidConfig, base.String())
		}
		s.Secure = true
	case SecureOff:
		s.Secure = false
	default:
		return s, fmt.Errorf("%w: Cookies.Secure %d is not SecureAuto, SecureOn or SecureOff", core.ErrInvalidConfig, o.Secure)
	}
	switch o.SameSite {
	case 0:
		s.SameSite = http.SameSiteLaxMode
	case http.SameSiteLaxMode, http.SameSiteStrictMode:
	case http.SameSiteNoneMode:
		if !s.Secure {
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
	s.Domain = d
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
