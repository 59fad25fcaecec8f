package jwt

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// bigClaims is a claim set whose token needs several cookies.
func bigClaims(n int) map[string]any {
	groups := make([]any, n)
	for i := range groups {
		groups[i] = fmt.Sprintf("group-%04d-with-a-longish-name", i)
	}
	return map[string]any{"sub": "user-1", "groups": groups}
}

// requestWith returns a request carrying cookies, in the given order.
func requestWith(cookies ...*http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
	for _, c := range cookies {
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	return r
}

func TestChunkingRoundTripWithLargeClaims(t *testing.T) {
	c := mustCodec(t, "s")
	claims := bigClaims(600)
	name := SecureSessionTokenCookie
	token, err := c.Encode(name, claims, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(token) < 3*ChunkSize {
		t.Fatalf("token of %d bytes: want one needing at least 4 cookies", len(token))
	}
	template := newCookie(name, token, t0.Add(time.Hour))
	parts := SplitCookie(template)
	if want := (len(token) + ChunkSize - 1) / ChunkSize; len(parts) != want {
		t.Fatalf("%d cookies; want %d", len(parts), want)
	}
	var joined strings.Builder
	for i, p := range parts {
		if p.Name != fmt.Sprintf("%s.%d", name, i) {
			t.Errorf("cookie %d named %q", i, p.Name)
		}
		if len(p.Value) > ChunkSize || (i < len(parts)-1 && len(p.Value) != ChunkSize) {
			t.Errorf("cookie %d carries %d bytes (ChunkSize %d)", i, len(p.Value), ChunkSize)
		}
		if !p.HttpOnly || !p.Secure || p.SameSite != http.SameSiteLaxMode || p.Path != "/" || !p.Expires.Equal(template.Expires) {
			t.Errorf("cookie %d lost the attributes: %+v", i, p)
		}
		joined.WriteString(p.Value)
	}
	if joined.String() != token || template.Value != token || template.Name != name {
		t.Fatal("the chunks do not add up to the token, or the template was modified")
	}

	shuffled := append([]*http.Cookie{{Name: "other", Value: "x"}}, parts...)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	r := requestWith(shuffled...)
	got, err := JoinCookies(r, name)
	if err != nil || got != token {
		t.Fatalf("JoinCookies: %d bytes, %v; want the token (%d bytes)", len(got), err, len(token))
	}
	decoded, err := c.DecodeCookie(r, name)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded["groups"], viaJSON(t, claims)["groups"]) {
		t.Error("decoded claims differ from the encoded ones")
	}
}

func TestSplitCookieSmallAndEdges(t *testing.T) {
	if SplitCookie(nil) != nil {
		t.Error("SplitCookie(nil) != nil")
	}
	for _, n := range []int{0, 1, ChunkSize} {
		in := &http.Cookie{Name: "n", Value: strings.Repeat("a", n)}
		out := SplitCookie(in)
		if len(out) != 1 || out[0].Name != "n" || out[0].Value != in.Value || out[0] == in {
			t.Errorf("value of %d bytes: %v; want one copy named n", n, out)
		}
	}
	out := SplitCookie(&http.Cookie{Name: "n", Value: strings.Repeat("a", ChunkSize+1)})
	if len(out) != 2 || out[0].Name != "n.0" || out[1].Name != "n.1" || len(out[1].Value) != 1 {
		t.Errorf("ChunkSize+1 bytes: %v", out)
	}
	if ChunkSize != 3936 {
		t.Errorf("ChunkSize = %d; Auth.js's is 4096-160", ChunkSize)
	}
}

func TestJoinCookies(t *testing.T) {
	const n = "authjs.session-token"
	ck := func(name, value string) *http.Cookie { return &http.Cookie{Name: name, Value: value} }
	for _, tc := range []struct {
		name    string
		cookies []*http.Cookie
		want    string
		err     error
	}{
		{"none", nil, "", http.ErrNoCookie},
		{"others only", []*http.Cookie{ck("x", "1"), ck(n+"-x", "2"), ck(n+"x.0", "3")}, "", http.ErrNoCookie},
		{"plain", []*http.Cookie{ck(n, "tok")}, "tok", nil},
		{"plain beats chunks", []*http.Cookie{ck(n+".0", "a"), ck(n, "tok"), ck(n+".1", "b")}, "tok", nil},
		{"chunks in any order", []*http.Cookie{ck(n+".2", "c"), ck(n+".0", "a"), ck(n+".1", "b")}, "abc", nil},
		{"ten and more sort as numbers", chunkSet(n, 12), "0123456789AB", nil},
		{"empty cookies ignored", []*http.Cookie{ck(n, ""), ck(n+".0", "a"), ck(n+".1", "b")}, "ab", nil},
		{"first of two with one name", []*http.Cookie{ck(n+".0", "a"), ck(n+".0", "z")}, "a", nil},
		{"odd suffixes ignored", []*http.Cookie{ck(n+".0", "a"), ck(n+".01", "x"), ck(n+".+1", "x"), ck(n+".1x", "x"), ck(n+".", "x")}, "a", nil},
		{"gap", []*http.Cookie{ck(n+".0", "a"), ck(n+".2", "c")}, "", ErrInvalidToken},
		{"no chunk 0", []*http.Cookie{ck(n+".1", "b")}, "", ErrInvalidToken},
		{"huge index", []*http.Cookie{ck(n+".0", "a"), ck(n+".99999999999999999999", "x")}, "a", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JoinCookies(requestWith(tc.cookies...), n)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("JoinCookies = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
	if _, err := JoinCookies(nil, n); !errors.Is(err, http.ErrNoCookie) {
		t.Errorf("nil request: %v", err)
	}
}

func chunkSet(name string, n int) []*http.Cookie {
	const digits = "0123456789ABCDEF"
	out := make([]*http.Cookie, n)
	for i := range n {
		out[n-1-i] = &http.Cookie{Name: fmt.Sprintf("%s.%d", name, i), Value: digits[i : i+1]}
	}
	return out
}

// setCookies returns the Set-Cookie headers of a response by cookie name.
func setCookies(t *testing.T, rec *httptest.ResponseRecorder) map[string]*http.Cookie {
	t.Helper()
	out := map[string]*http.Cookie{}
	for _, c := range rec.Result().Cookies() {
		if _, dup := out[c.Name]; dup {
			t.Errorf("cookie %s set twice", c.Name)
		}
		out[c.Name] = c
	}
	return out
}

func names(m map[string]*http.Cookie) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func TestSetCookiesReplacesStaleChunks(t *testing.T) {
	const n = SecureSessionTokenCookie
	long := strings.Repeat("L", 2*ChunkSize+5)

	t.Run("long to short", func(t *testing.T) {
		r := requestWith(SplitCookie(&http.Cookie{Name: n, Value: long})...)
		rec := httptest.NewRecorder()
		writeCookie(rec, r, newCookie(n, "short", time.Time{}))
		got := setCookies(t, rec)
		if !reflect.DeepEqual(names(got), []string{n, n + ".0", n + ".1", n + ".2"}) {
			t.Fatalf("set %v", names(got))
		}
		if got[n].Value != "short" || got[n].MaxAge != 0 {
			t.Errorf("new cookie: %+v", got[n])
		}
		for _, c := range []string{n + ".0", n + ".1", n + ".2"} {
			if got[c].MaxAge != -1 || got[c].Value != "" || !got[c].Secure || got[c].Path != "/" {
				t.Errorf("stale %s not deleted with the same attributes: %+v", c, got[c])
			}
		}
	})
	t.Run("short to long", func(t *testing.T) {
		r := requestWith(&http.Cookie{Name: n, Value: "short"}, &http.Cookie{Name: n + ".3", Value: "old"})
		rec := httptest.NewRecorder()
		writeCookie(rec, r, newCookie(n, long, time.Time{}))
		got := setCookies(t, rec)
		if !reflect.DeepEqual(names(got), []string{n, n + ".0", n + ".1", n + ".2", n + ".3"}) {
			t.Fatalf("set %v", names(got))
		}
		if got[n].MaxAge != -1 || got[n+".3"].MaxAge != -1 {
			t.Errorf("stale cookies not deleted: %+v %+v", got[n], got[n+".3"])
		}
		if got[n+".0"].Value+got[n+".1"].Value+got[n+".2"].Value != long {
			t.Error("chunks do not add up to the value")
		}
	})
	t.Run("no request", func(t *testing.T) {
		rec := httptest.NewRecorder()
		writeCookie(rec, nil, newCookie(n, "v", time.Time{}))
		writeCookie(nil, nil, nil) // nothing to do, no panic
		if got := setCookies(t, rec); len(got) != 1 || got[n].Value != "v" {
			t.Errorf("set %v", names(got))
		}
	})
}

func TestClearCookies(t *testing.T) {
	const n = SessionTokenCookie
	r := requestWith(&http.Cookie{Name: n + ".0", Value: "a"}, &http.Cookie{Name: n + ".1", Value: "b"}, &http.Cookie{Name: "keep", Value: "k"})
	rec := httptest.NewRecorder()
	clearCookie(rec, r, newCookie(n, "", time.Time{}))
	got := setCookies(t, rec)
	if !reflect.DeepEqual(names(got), []string{n, n + ".0", n + ".1"}) {
		t.Fatalf("set %v", names(got))
	}
	for _, c := range got {
		if c.MaxAge != -1 || c.Value != "" || !c.HttpOnly {
			t.Errorf("%s not deleted: %+v", c.Name, c)
		}
	}
	clearCookie(nil, r, nil) // no panic
}

func TestDecodeCookieErrors(t *testing.T) {
	c := mustCodec(t, "s")
	if _, err := c.DecodeCookie(requestWith(), SessionTokenCookie); !errors.Is(err, http.ErrNoCookie) {
		t.Errorf("no cookie: %v", err)
	}
	if _, err := c.DecodeCookie(requestWith(&http.Cookie{Name: SessionTokenCookie, Value: "garbage"}), SessionTokenCookie); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("garbage: %v", err)
	}
	token, _ := c.Encode(SessionTokenCookie, nil, 0)
	if _, err := c.DecodeCookie(requestWith(&http.Cookie{Name: SecureSessionTokenCookie, Value: token}), SecureSessionTokenCookie); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token for another cookie name: %v", err)
	}
}
