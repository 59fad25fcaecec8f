package auth_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// FuzzSessionToken feeds SessionToken (the reader of the session cookie)
// fuzzed Cookie headers, and the cookies SessionCookie and
// ClearSessionCookie write fuzzed tokens. Properties:
//
//   - reading never panics; the token is the first cookie of the expected
//     name, trimmed, or "" when there is none: with secure only the
//     __Secure- cookie counts (a cookie planted over plain HTTP is
//     ignored), without it only the plain one;
//   - a cookie SessionCookie writes is HttpOnly, SameSite=Lax, Path=/,
//     Secure and __Secure- prefixed exactly when secure, and expires with
//     the session; sent back by a browser, it reads as the same token;
//   - the clearing cookie has the same name and attributes, no value, and
//     expires at once.
func FuzzSessionToken(f *testing.F) {
	f.Add("authjs.session-token=abc", "abc", false)
	f.Add("__Secure-authjs.session-token=abc", "0123abcdef", true)
	f.Add("authjs.session-token=planted; __Secure-authjs.session-token=real", "x", true)
	f.Add(`a=1; authjs.session-token=" spaced "; authjs.session-token=second`, "", false)
	f.Add("authjs.session-token", "tok en", false)
	f.Add("AUTHJS.SESSION-TOKEN=upper; =empty-name; ;;", `"quoted"`, false)
	f.Add("__secure-authjs.session-token=lower-prefix", "é", true)
	f.Add("authjs.session-token=\x00\xff", "a;b", false)
	f.Fuzz(func(t *testing.T, header, token string, secure bool) {
		r := &http.Request{Header: http.Header{"Cookie": {header}}}
		got := auth.SessionToken(r, secure)
		name, other := auth.SessionCookieName, auth.SecureSessionCookieName
		if secure {
			name, other = other, name
		}
		want := ""
		for _, c := range r.Cookies() {
			if c.Name == name {
				want = strings.TrimSpace(c.Value)
				break
			}
		}
		if got != want {
			t.Fatalf("SessionToken(%q, secure=%v) = %q, want %q", header, secure, got, want)
		}
		if got != "" && (!strings.Contains(header, name) || got != strings.TrimSpace(got)) {
			t.Fatalf("SessionToken(%q, secure=%v) = %q, which is not the trimmed value of a %s cookie", header, secure, got, name)
		}
		// Only the cookie of the other name: no token.
		if !strings.Contains(header, name) && got != "" {
			t.Fatalf("SessionToken(%q, secure=%v) read %q from a cookie other than %s", header, secure, got, other)
		}

		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		a, err := auth.New(auth.Config{Adapter: struct{}{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
			Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		s := core.Session{SessionToken: token, UserID: "u", Expires: now.Add(time.Hour)}
		c := a.SessionCookie(s, secure)
		clear := auth.ClearSessionCookie(secure)
		for _, k := range []*http.Cookie{c, clear} {
			if k.Name != name || !k.HttpOnly || k.SameSite != http.SameSiteLaxMode || k.Path != "/" || k.Secure != secure {
				t.Fatalf("cookie %+v: want %s, HttpOnly, SameSite=Lax, Path=/, Secure=%v", k, name, secure)
			}
		}
		if c.Value != token || !c.Expires.Equal(s.Expires) || c.MaxAge != 3600 {
			t.Fatalf("session cookie %+v for token %q expiring %v", c, token, s.Expires)
		}
		if clear.Value != "" || clear.MaxAge >= 0 || !clear.Expires.Before(now) {
			t.Fatalf("clearing cookie %+v does not expire at once", clear)
		}
		if c.Valid() != nil {
			return // a token no browser would store; the library's tokens are hex
		}
		// The browser sends back name=value.
		back := &http.Request{Header: http.Header{"Cookie": {c.Name + "=" + c.Value}}}
		if got := auth.SessionToken(back, secure); got != strings.TrimSpace(token) {
			t.Fatalf("token %q written as %q reads back as %q", token, c.String(), got)
		}
		if got := auth.SessionToken(back, !secure); got != "" {
			t.Fatalf("a %s cookie read as the %s cookie: %q", name, other, got)
		}
	})
}
