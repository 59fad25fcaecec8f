package jwt

import (
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/jwt/jwttest"
	jose "github.com/go-jose/go-jose/v4"
)

// The interop tests run Auth.js's own code (@auth/core/jwt, pinned in
// interop/package.json) in Node through interop/authjs.mjs.

func seconds(n int) *int { return &n }

// richClaims exercise JSON types and text Auth.js sessions carry.
func richClaims() map[string]any {
	return map[string]any{
		"name":    "Ada Lovelace",
		"email":   "ada@example.com",
		"picture": nil,
		"sub":     "b3c1e0f2-user",
		"n":       42,
		"x":       -1.5,
		"admin":   false,
		"roles":   []any{"admin", "editor"},
		"nested":  map[string]any{"deep": []any{map[string]any{"k": "v"}, nil, 3}},
		"text":    "<script>&\"quotes\"</script> é 😀 \u2028",
	}
}

func withRegistered(t *testing.T, claims map[string]any, from map[string]any) map[string]any {
	t.Helper()
	want := viaJSON(t, claims)
	for _, k := range []string{"iat", "exp", "jti"} {
		want[k] = from[k]
	}
	return want
}

func TestInteropAuthjsEncodesGoDecodes(t *testing.T) {
	const secret = "interop-secret-1"
	c := mustCodec(t, secret)
	salts := []string{SessionTokenCookie, SecureSessionTokenCookie, secureStateCookie}
	var reqs []jwttest.Request
	for _, salt := range salts {
		reqs = append(reqs, jwttest.Request{Op: "encode", Secret: secret, Salt: salt, Claims: richClaims(), MaxAge: seconds(3600)})
	}
	reqs = append(reqs, jwttest.Request{Op: "encode", Secret: secret, Salt: SessionTokenCookie, Claims: map[string]any{"sub": "d"}}) // default maxAge
	res := jwttest.AuthJS(t, "interop", reqs...)
	for i, salt := range salts {
		t.Run(salt, func(t *testing.T) {
			if res[i].Error != "" {
				t.Fatalf("Auth.js encode: %s", res[i].Error)
			}
			got, err := c.Decode(salt, res[i].Token)
			if err != nil {
				t.Fatalf("Go cannot decode Auth.js's token: %v", err)
			}
			if want := withRegistered(t, richClaims(), got); !reflect.DeepEqual(got, want) {
				t.Errorf("claims:\n got %v\nwant %v", got, want)
			}
			iat, _ := got["iat"].(float64)
			if exp, _ := got["exp"].(float64); exp-iat != 3600 || time.Since(time.Unix(int64(iat), 0)).Abs() > time.Minute {
				t.Errorf("iat %v, exp %v: want now and now+3600", got["iat"], got["exp"])
			}
		})
	}
	got, err := c.Decode(SessionTokenCookie, res[len(salts)].Token)
	if err != nil {
		t.Fatal(err)
	}
	if exp, iat := got["exp"].(float64), got["iat"].(float64); exp-iat != DefaultMaxAge.Seconds() {
		t.Errorf("Auth.js's default maxAge is %vs; DefaultMaxAge %v", exp-iat, DefaultMaxAge)
	}
}

func TestInteropGoEncodesAuthjsDecodes(t *testing.T) {
	const secret = "interop-secret-2"
	c := mustCodec(t, secret)
	salts := []string{SessionTokenCookie, SecureSessionTokenCookie, pkceCookie}
	var reqs []jwttest.Request
	var mine []map[string]any
	for _, salt := range salts {
		token, err := c.Encode(salt, richClaims(), 15*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := c.Decode(salt, token)
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, decoded)
		reqs = append(reqs, jwttest.Request{Op: "decode", Secret: secret, Salt: salt, Token: token})
	}
	res := jwttest.AuthJS(t, "interop", reqs...)
	for i, salt := range salts {
		if res[i].Error != "" {
			t.Errorf("%s: Auth.js cannot decode Go's token: %s (%s)", salt, res[i].Error, res[i].Code)
			continue
		}
		if want := withRegistered(t, richClaims(), mine[i]); !reflect.DeepEqual(res[i].Claims, want) {
			t.Errorf("%s: Auth.js decoded\n %v\nwant %v", salt, res[i].Claims, want)
		}
	}
}

func TestInteropRotation(t *testing.T) {
	const a, b = "rotation-secret-A", "rotation-secret-B"
	goB := mustCodec(t, b)
	goBA := mustCodec(t, b, a)
	fromGoB, err := goB.Encode(SessionTokenCookie, map[string]any{"sub": "made-by-go-with-B"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := jwttest.AuthJS(t, "interop",
		jwttest.Request{Op: "decode", Secret: []string{b, a}, Salt: SessionTokenCookie, Token: fromGoB},
		jwttest.Request{Op: "decode", Secret: []string{a}, Salt: SessionTokenCookie, Token: fromGoB},
		jwttest.Request{Op: "encode", Secret: a, Salt: SessionTokenCookie, Claims: map[string]any{"sub": "made-by-authjs-with-A"}},
		jwttest.Request{Op: "encode", Secret: []string{b, a}, Salt: SessionTokenCookie, Claims: map[string]any{"sub": "made-by-authjs-with-B,A"}},
	)
	if res[0].Error != "" || res[0].Claims["sub"] != "made-by-go-with-B" {
		t.Errorf("Auth.js [B, A] decoding Go's B token: %+v", res[0])
	}
	if res[1].Error == "" {
		t.Errorf("Auth.js [A] decoded Go's B token: %+v", res[1])
	}
	if got, err := goBA.Decode(SessionTokenCookie, res[2].Token); err != nil || got["sub"] != "made-by-authjs-with-A" {
		t.Errorf("Go (B, A) decoding Auth.js's A token: %v, %v", got, err)
	}
	if _, err := goB.Decode(SessionTokenCookie, res[2].Token); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("Go (B) decoding Auth.js's A token: %v; want ErrInvalidToken", err)
	}
	if got, err := goB.Decode(SessionTokenCookie, res[3].Token); err != nil || got["sub"] != "made-by-authjs-with-B,A" {
		t.Errorf("Auth.js [B, A] must encode with B: Go (B) says %v, %v", got, err)
	}
}

func TestInteropSaltMatters(t *testing.T) {
	const secret = "salt-secret"
	c := mustCodec(t, secret)
	fromGo, err := c.Encode(SessionTokenCookie, map[string]any{"sub": "x"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := jwttest.AuthJS(t, "interop",
		jwttest.Request{Op: "decode", Secret: secret, Salt: SecureSessionTokenCookie, Token: fromGo},
		jwttest.Request{Op: "decode", Secret: secret, Salt: SessionTokenCookie, Token: fromGo},
		jwttest.Request{Op: "encode", Secret: secret, Salt: SecureSessionTokenCookie, Claims: map[string]any{"sub": "y"}},
	)
	if res[0].Error == "" {
		t.Errorf("Auth.js decoded Go's token with another salt: %+v", res[0])
	}
	if res[1].Error != "" || res[1].Claims["sub"] != "x" {
		t.Errorf("Auth.js with the right salt: %+v", res[1])
	}
	if _, err := c.Decode(SessionTokenCookie, res[2].Token); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("Go decoded Auth.js's token with another salt: %v", err)
	}
	if got, err := c.Decode(SecureSessionTokenCookie, res[2].Token); err != nil || got["sub"] != "y" {
		t.Errorf("Go with the right salt: %v, %v", got, err)
	}
}

func TestInteropExpiry(t *testing.T) {
	const secret = "expiry-secret"
	c := mustCodec(t, secret)
	old, err := c.WithClock(fixed(time.Now().Add(-2*time.Hour))).Encode(SessionTokenCookie, map[string]any{"sub": "x"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	res := jwttest.AuthJS(t, "interop",
		jwttest.Request{Op: "decode", Secret: secret, Salt: SessionTokenCookie, Token: old},
		jwttest.Request{Op: "encode", Secret: secret, Salt: SessionTokenCookie, Claims: map[string]any{"sub": "x"}, MaxAge: seconds(-120)},
		jwttest.Request{Op: "encode", Secret: secret, Salt: SessionTokenCookie, Claims: map[string]any{"sub": "x"}, MaxAge: seconds(-5)},
	)
	if res[0].Code != "ERR_JWT_EXPIRED" {
		t.Errorf("Auth.js decoding Go's expired token: %+v; want ERR_JWT_EXPIRED", res[0])
	}
	if _, err := c.Decode(SessionTokenCookie, res[1].Token); !errors.Is(err, ErrExpiredToken) {
		t.Errorf("Go decoding Auth.js's token expired 2 minutes ago: %v; want ErrExpiredToken", err)
	}
	if _, err := c.Decode(SessionTokenCookie, res[2].Token); err != nil {
		t.Errorf("Go decoding Auth.js's token expired 5s ago (within the 15s tolerance): %v", err)
	}
}

// TestInteropGCM checks the A256GCM path Auth.js accepts when decoding: a
// 32-byte key and a SHA-256 key id.
func TestInteropGCM(t *testing.T) {
	const secret = "gcm-secret"
	withKID := seal(t, secret, SessionTokenCookie, jose.A256GCM, "derive", nil, `{"sub":"gcm"}`)
	noKID := seal(t, secret, SessionTokenCookie, jose.A256GCM, "", nil, `{"sub":"gcm"}`)
	res := jwttest.AuthJS(t, "interop",
		jwttest.Request{Op: "decode", Secret: secret, Salt: SessionTokenCookie, Token: withKID},
		jwttest.Request{Op: "decode", Secret: secret, Salt: SessionTokenCookie, Token: noKID},
	)
	for i, r := range res {
		if r.Error != "" || r.Claims["sub"] != "gcm" {
			t.Errorf("token %d: Auth.js: %+v", i, r)
		}
	}
	c := mustCodec(t, secret)
	for _, tok := range []string{withKID, noKID} {
		if got, err := c.Decode(SessionTokenCookie, tok); err != nil || got["sub"] != "gcm" {
			t.Errorf("Go: %v, %v", got, err)
		}
	}
}

// TestInteropChunks compares SplitCookie with Auth.js's SessionStore and has
// each side read the other's chunked cookies.
func TestInteropChunks(t *testing.T) {
	const secret = "chunk-secret"
	name := SecureSessionTokenCookie
	c := mustCodec(t, secret)
	token, err := c.Encode(name, bigClaims(400), 0)
	if err != nil {
		t.Fatal(err)
	}
	ours := SplitCookie(newCookie(name, token, time.Time{}))
	var header []string
	for _, p := range slices.Backward(ours) { // the browser's order is not ours
		header = append(header, p.Name+"="+p.Value)
	}
	res := jwttest.AuthJS(t, "interop",
		jwttest.Request{Op: "chunk", CookieName: name, Value: token},
		jwttest.Request{Op: "chunk", CookieName: name, Value: "short"},
		jwttest.Request{Op: "getToken", Secret: secret, CookieName: name, Cookie: strings.Join(header, "; ")},
		jwttest.Request{Op: "encode", Secret: secret, Salt: name, Claims: bigClaims(400)},
	)
	if len(ours) < 3 || len(res[0].Cookies) != len(ours) {
		t.Fatalf("Go split into %d cookies, Auth.js into %d", len(ours), len(res[0].Cookies))
	}
	for i, p := range ours {
		if res[0].Cookies[i].Name != p.Name || res[0].Cookies[i].Value != p.Value {
			t.Errorf("chunk %d: Go %s (%d bytes), Auth.js %s (%d bytes)", i, p.Name, len(p.Value), res[0].Cookies[i].Name, len(res[0].Cookies[i].Value))
		}
	}
	if len(res[1].Cookies) != 1 || res[1].Cookies[0].Name != name {
		t.Errorf("Auth.js keeps a short value in one cookie named %s: %+v", name, res[1].Cookies)
	}
	if res[2].Error != "" || res[2].Claims == nil || res[2].Claims["sub"] != "user-1" {
		t.Errorf("Auth.js getToken on Go's chunked cookies: %+v", res[2].Error)
	}

	chunked := jwttest.AuthJS(t, "interop", jwttest.Request{Op: "chunk", CookieName: name, Value: res[3].Token})[0].Cookies
	r := requestWith()
	for _, ck := range slices.Backward(chunked) {
		r.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	}
	got, err := c.DecodeCookie(r, name)
	if err != nil {
		t.Fatalf("Go reading Auth.js's %d chunked cookies: %v", len(chunked), err)
	}
	if !reflect.DeepEqual(got["groups"], viaJSON(t, bigClaims(400))["groups"]) {
		t.Error("claims differ")
	}
}
