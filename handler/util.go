package handler

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/authport/authport/core"
)

func pathEscape(s string) string { return url.PathEscape(s) }

func sessionRecord(token string, s *Session) core.Session {
	return core.Session{SessionToken: token, UserID: s.User.ID, Expires: s.Expires}
}

// currentUser is the session's user for the passkey ceremonies, or nil.
func currentUser(s *Session) *core.User {
	if s == nil {
		return nil
	}
	return s.CoreUser()
}

// withQuery appends a raw query to a URL.
func withQuery(u, rawQuery string) string {
	if rawQuery == "" {
		return u
	}
	if strings.Contains(u, "?") {
		return u + "&" + rawQuery
	}
	return u + "?" + rawQuery
}

// withoutCookie returns a shallow copy of r without the cookie name and its
// chunks (name.0, name.1, …).
func withoutCookie(r *http.Request, name string) *http.Request {
	c := r.Clone(r.Context())
	c.Header.Del("Cookie")
	for _, ck := range r.Cookies() {
		if ck.Name == name || strings.HasPrefix(ck.Name, name+".") {
			continue
		}
		c.AddCookie(ck)
	}
	return c
}
