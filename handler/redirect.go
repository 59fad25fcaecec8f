package handler

import (
	"net/url"
	"strings"
)

// SafeRedirect checks a callbackUrl the way Auth.js's default redirect
// callback does, more strictly: a path ("/dashboard?x=1") is taken relative
// to origin, an absolute URL must have origin's scheme and host, and
// anything else (another origin, a protocol-relative "//host" that is not
// under origin, "javascript:", backslashes, control characters, user info,
// relative paths without a leading slash) is refused. origin is
// "scheme://host[:port]" without a path. The result is absolute, canonical
// and starts with origin + "/".
func SafeRedirect(raw, origin string) (string, bool) {
	o, err := url.Parse(origin)
	if err != nil || o.Scheme == "" || o.Host == "" || o.User != nil || (o.Path != "" && o.Path != "/") || o.RawQuery != "" || o.Fragment != "" {
		return "", false
	}
	if raw == "" || len(raw) > 4096 {
		return "", false
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "", false
		}
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
	if u.Path == "" {
		u.Path = "/"
	}
	out := u.String()
	if !strings.HasPrefix(out, base+"/") {
		return "", false
	}
	return out, true
}

// queryEscape escapes s for a query parameter.
func queryEscape(s string) string { return url.QueryEscape(s) }
