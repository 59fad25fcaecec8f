package jwt

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzCookieChunks fuzzes the session cookie's chunking: SplitCookie and
// SetCookies (written as the handler writes them) on the way out, JoinCookies (the reader of every Cookie
// header) on the way back. Properties:
//
//   - JoinCookies never panics on any Cookie header; it returns a value,
//     an error matching http.ErrNoCookie, or one matching ErrInvalidToken;
//   - a valid cookie value of any length splits into chunks of at most
//     ChunkSize named name or name.0, name.1, …, with the cookie's
//     attributes, and a browser sending them back in any order, among
//     other cookies, gives JoinCookies the value;
//   - SetCookies over a browser that holds an older value of another
//     length (split or not) leaves the browser, once it has applied the
//     Set-Cookie headers, with exactly the new value.
func FuzzCookieChunks(f *testing.F) {
	f.Add("authjs.session-token=abc", "eyJhbGciOi", uint16(1), uint16(0), uint8(0))
	f.Add("authjs.session-token.0=a; authjs.session-token.2=c", "x", uint16(5000), uint16(9000), uint8(1))
	f.Add("authjs.session-token.00=a; authjs.session-token.1=b; authjs.session-token.-1=c", "ab", uint16(3000), uint16(1), uint8(2))
	f.Add("authjs.session-token=; authjs.session-token.0=z", "", uint16(0), uint16(2), uint8(3))
	f.Add("a=1; authjs.session-token.999999=x; authjs.session-token.1000000=y", "\"q\"", uint16(2), uint16(3), uint8(4))
	f.Fuzz(func(t *testing.T, header, unit string, n, old uint16, order uint8) {
		name := SessionTokenCookie
		r := &http.Request{Header: http.Header{"Cookie": {header}}}
		if v, err := JoinCookies(r, name); err != nil {
			if v != "" || !(errors.Is(err, http.ErrNoCookie) || errors.Is(err, ErrInvalidToken)) {
				t.Fatalf("JoinCookies(%q) = %q, %v", header, v, err)
			}
		} else if v == "" {
			t.Fatalf("JoinCookies(%q) returned an empty value and no error", header)
		}

		value := strings.Repeat(unit, int(n)%(4*ChunkSize+1)/max(1, len(unit)))
		c := newCookie(name, value, time.Now().Add(time.Hour))
		if value == "" || c.Valid() != nil {
			return // a value no browser would hold; tokens are base64url
		}
		parts := SplitCookie(c)
		if len(parts) == 0 || (len(value) <= ChunkSize) != (len(parts) == 1 && parts[0].Name == name) {
			t.Fatalf("a %d-byte value split into %d cookies", len(value), len(parts))
		}
		for _, p := range parts {
			if len(p.Value) > ChunkSize || p.Path != c.Path || p.HttpOnly != c.HttpOnly || p.SameSite != c.SameSite || p.Secure != c.Secure || !p.Expires.Equal(c.Expires) {
				t.Fatalf("chunk %s (%d bytes) lost the cookie's attributes or is too long", p.Name, len(p.Value))
			}
		}
		// The browser sends them back, as they were set, in an order of
		// the fuzzer's choice, after an unrelated cookie.
		pairs := []string{"other=1"}
		for i := range parts {
			p := parts[(i+int(order))%len(parts)]
			pairs = append(pairs, sent(p.Name, p.Value))
		}
		back := &http.Request{Header: http.Header{"Cookie": {strings.Join(pairs, "; ")}}}
		if got, err := JoinCookies(back, name); err != nil || got != value {
			t.Fatalf("a %d-byte value split into %d cookies joins as %d bytes, %v", len(value), len(parts), len(got), err)
		}

		// The browser holds an older value of another length.
		jar := map[string]string{}
		for _, p := range SplitCookie(newCookie(name, strings.Repeat("o", int(old)%(4*ChunkSize)+1), time.Time{})) {
			jar[p.Name] = p.Value
		}
		var held []string
		for k, v := range jar {
			held = append(held, sent(k, v))
		}
		w := httptest.NewRecorder()
		writeCookie(w, &http.Request{Header: http.Header{"Cookie": {strings.Join(held, "; ")}}}, c)
		for _, set := range w.Result().Cookies() {
			if set.MaxAge < 0 {
				delete(jar, set.Name)
			} else {
				jar[set.Name] = set.Value
			}
		}
		held = held[:0]
		for k, v := range jar {
			held = append(held, sent(k, v))
		}
		after := &http.Request{Header: http.Header{"Cookie": {strings.Join(held, "; ")}}}
		if got, err := JoinCookies(after, name); err != nil || got != value {
			t.Fatalf("after SetCookies over an older value the browser holds %v, which joins as %d bytes (want %d), %v", keys(jar), len(got), len(value), err)
		}
		if len(jar) != len(parts) {
			t.Fatalf("after SetCookies the browser holds %v, want the %d new cookies only", keys(jar), len(parts))
		}
	})
}

// sent is the name=value pair a browser sends back for a cookie set with
// that value: as http.SetCookie wrote it (quoted when it holds a space or
// a comma).
func sent(name, value string) string {
	return (&http.Cookie{Name: name, Value: value}).String()
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
