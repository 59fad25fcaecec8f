package handler

import (
	"fmt"
	"net/url"
	"strings"
)

// maxRedirectLen bounds a callbackUrl, before and after escaping.
const maxRedirectLen = 8192

// SafeRedirect checks a callbackUrl the way Auth.js's default redirect
// callback does, more strictly: a path ("/dashboard?x=1") is taken relative
// to origin, an absolute URL must have origin's scheme and host, and
// anything else (another origin, a protocol-relative "//host",
// "javascript:", backslashes, control characters, user info,
// relative paths without a leading slash) is refused. origin is
// "scheme://host[:port]" without a path. The result is absolute, canonical
// and starts with origin + "/".
func SafeRedirect(raw, origin string) (string, bool) {
	o, err := url.Parse(origin)
	if err != nil || o.Scheme == "" || o.Host == "" || o.User != nil || (o.Path != "" && o.Path != "/") || o.RawQuery != "" || o.Fragment != "" {
		return "", false
	}
	if raw == "" || len(raw) > maxRedirectLen {
		return "", false
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "", false
		}
	}
	if strings.HasPrefix(raw, "//") {
		// Protocol-relative: meant for another host.
		return "", false
	}
	base := o.Scheme + "://" + o.Host
	candidate := raw
	if strings.HasPrefix(raw, "/") {
		candidate = base + raw
	}
	u, err := url.Parse(candidate)
	if err != nil || u.Opaque != "" || u.User != nil {
		return "", false
	}
	if !strings.EqualFold(u.Scheme, o.Scheme) || !strings.EqualFold(u.Host, o.Host) {
		return "", false
	}
	u.Scheme, u.Host = o.Scheme, o.Host
	u.RawQuery = escapeUnsafe(u.RawQuery)
	if u.Path == "" {
		u.Path = "/"
	}
	out := u.String()
	if !strings.HasPrefix(out, base+"/") || len(out) > maxRedirectLen {
		return "", false
	}
	return out, true
}

// escapeUnsafe percent-encodes the bytes of a raw query that a URL must
// not hold as they are (url.URL.String keeps a query verbatim).
func escapeUnsafe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("\\\"<>`{}|^", c) >= 0 {
			b.WriteString(fmt.Sprintf("%%%02X", c))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// queryEscape escapes s for a query parameter.
func queryEscape(s string) string { return url.QueryEscape(s) }
