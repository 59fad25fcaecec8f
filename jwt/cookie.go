package jwt

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SessionTokenCookie is the name of Auth.js's session cookie on http:// sites
// (development); SecureSessionTokenCookie is its name on https:// sites.
// The name is also the salt of the session token. (Auth.js's other cookie
// names are the handler's: module github.com/authport/authport/handler
// writes every cookie.)
const (
	SessionTokenCookie       = "authjs.session-token"
	SecureSessionTokenCookie = "__Secure-authjs.session-token"
)

// ChunkSize is the most characters of a value one cookie carries, as in
// Auth.js: 4096 bytes a browser allows per cookie, less 160 for the name
// and attributes.
const ChunkSize = 4096 - 160

// SplitCookie cuts c the way Auth.js cuts a large session cookie: a value of
// at most ChunkSize characters stays in one cookie named c.Name; a longer one
// goes into cookies named c.Name+".0", c.Name+".1", … of ChunkSize characters
// each (the last shorter), with c's attributes. It returns copies; c is not
// modified. A nil c gives nil.
func SplitCookie(c *http.Cookie) []*http.Cookie {
	if c == nil {
		return nil
	}
	if len(c.Value) <= ChunkSize {
		one := *c
		return []*http.Cookie{&one}
	}
	n := (len(c.Value) + ChunkSize - 1) / ChunkSize
	out := make([]*http.Cookie, n)
	for i := range n {
		chunk := *c
		chunk.Name = c.Name + "." + strconv.Itoa(i)
		chunk.Value = c.Value[i*ChunkSize : min((i+1)*ChunkSize, len(c.Value))]
		out[i] = &chunk
	}
	return out
}

// JoinCookies returns the value of the cookie name that r carries, joined
// from its chunks name.0, name.1, … when it was split (by SplitCookie or by
// Auth.js). Empty cookies are ignored, as Auth.js does; of two cookies with
// one name the first counts. When r carries both the unsplit cookie and
// chunks, the unsplit one wins.
//
// It returns an error matching http.ErrNoCookie when there is neither, and
// one matching ErrInvalidToken when the chunks do not run from 0 without a
// gap.
func JoinCookies(r *http.Request, name string) (string, error) {
	if r == nil {
		return "", fmt.Errorf("jwt: cookie %q: no request: %w", name, http.ErrNoCookie)
	}
	plain, chunks := cookieParts(r, name)
	if plain != "" {
		return plain, nil
	}
	if len(chunks) == 0 {
		return "", fmt.Errorf("jwt: cookie %q: %w", name, http.ErrNoCookie)
	}
	indexes := make([]int, 0, len(chunks))
	for i := range chunks {
		indexes = append(indexes, i)
	}
	sort.Ints(indexes)
	var b strings.Builder
	for want, i := range indexes {
		if i != want {
			return "", fmt.Errorf("%w: cookie %q is split but chunk %s.%d is missing", ErrInvalidToken, name, name, want)
		}
		b.WriteString(chunks[i].Value)
	}
	return b.String(), nil
}

// cookieParts returns the value of the unsplit cookie name and the chunks
// name.N that r carries, by index; empty cookies are left out.
func cookieParts(r *http.Request, name string) (string, map[int]*http.Cookie) {
	var plain string
	chunks := map[int]*http.Cookie{}
	for _, c := range r.Cookies() {
		if c.Value == "" {
			continue
		}
		if c.Name == name {
			if plain == "" {
				plain = c.Value
			}
			continue
		}
		if i, ok := chunkIndex(c.Name, name); ok {
			if _, seen := chunks[i]; !seen {
				chunks[i] = c
			}
		}
	}
	return plain, chunks
}

// chunkIndex reports whether cookie is name.N with N a decimal index (no
// sign, no leading zero) and returns N.
func chunkIndex(cookie, name string) (int, bool) {
	suffix, ok := strings.CutPrefix(cookie, name+".")
	if !ok || suffix == "" || len(suffix) > 6 || (len(suffix) > 1 && suffix[0] == '0') {
		return 0, false
	}
	for _, r := range suffix {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(suffix)
	return i, err == nil
}

// SetCookies returns the cookies that store c in a browser holding r's
// cookies: c split by [SplitCookie], then deletions of the cookies of the
// same name that r carries and the new ones do not overwrite (chunks left
// over from a longer value, or the unsplit cookie when the value is now
// split), as Auth.js does when a session cookie grows or shrinks. r may be
// nil (nothing to delete); a nil c gives nil. The caller writes them, in
// order, with http.SetCookie.
func SetCookies(r *http.Request, c *http.Cookie) []*http.Cookie {
	if c == nil {
		return nil
	}
	out := SplitCookie(c)
	written := make(map[string]bool, len(out))
	for _, part := range out {
		written[part.Name] = true
	}
	return appendStale(out, r, c, written)
}

// ClearCookies returns the cookies that delete the cookie c.Name and every
// chunk of it that r carries (r may be nil). c gives the attributes a
// browser matches on (Path, Domain) and the ones it requires (Secure for a
// "__Secure-" name). A nil c gives nil.
func ClearCookies(r *http.Request, c *http.Cookie) []*http.Cookie {
	if c == nil {
		return nil
	}
	return appendStale([]*http.Cookie{expired(c, c.Name)}, r, c, map[string]bool{c.Name: true})
}

// appendStale appends deletions of the cookies named c.Name or a chunk of
// it that r carries, except those in keep.
func appendStale(out []*http.Cookie, r *http.Request, c *http.Cookie, keep map[string]bool) []*http.Cookie {
	if r == nil {
		return out
	}
	plain, chunks := cookieParts(r, c.Name)
	var names []string
	if plain != "" {
		names = append(names, c.Name)
	}
	for i := range chunks {
		names = append(names, c.Name+"."+strconv.Itoa(i))
	}
	sort.Strings(names)
	for _, n := range names {
		if !keep[n] {
			out = append(out, expired(c, n))
		}
	}
	return out
}

func expired(c *http.Cookie, name string) *http.Cookie {
	d := *c
	d.Name, d.Value = name, ""
	d.MaxAge, d.Expires = -1, time.Unix(0, 0)
	return &d
}

// DecodeCookie reads the cookie name from r, joining its chunks
// (JoinCookies), and decodes it with name as the salt, as Auth.js's getToken
// does. It returns an error matching http.ErrNoCookie when r has no such
// cookie, else Decode's errors.
func (c *Codec) DecodeCookie(r *http.Request, name string) (map[string]any, error) {
	token, err := JoinCookies(r, name)
	if err != nil {
		return nil, err
	}
	claims, err := c.Decode(name, token)
	if err != nil {
		return nil, fmt.Errorf("cookie %q: %w", name, err)
	}
	return claims, nil
}
