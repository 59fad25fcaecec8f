package handler

import (
	"net/url"
	"strings"

	"github.com/authport/authport/core"
)

func pathEscape(s string) string { return url.PathEscape(s) }

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
