package jwt_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/authport/authport/jwt"
)

// A Go service reads the session of a Next.js app that signs users in with
// Auth.js (JWT sessions): same AUTH_SECRET, and the cookie name as the salt.
func ExampleCodec_DecodeCookie() {
	codec, err := jwt.NewCodec("the app's AUTH_SECRET")
	if err != nil {
		panic(err)
	}
	// What the Next.js app set (made here with the same codec).
	token, _ := codec.Encode(jwt.SecureSessionTokenCookie,
		map[string]any{"name": "Ada", "email": "ada@example.com", "sub": "user-1"}, 0)
	r := httptest.NewRequest(http.MethodGet, "https://app.example.com/api/me", nil)
	r.AddCookie(&http.Cookie{Name: jwt.SecureSessionTokenCookie, Value: token})

	// In a handler:
	session, err := codec.DecodeCookie(r, jwt.SecureSessionTokenCookie)
	switch {
	case errors.Is(err, http.ErrNoCookie):
		fmt.Println("not signed in")
	case errors.Is(err, jwt.ErrExpiredToken):
		fmt.Println("session over: sign in again")
	case err != nil:
		fmt.Println("not a session of this app")
	default:
		fmt.Println(session["email"], session["sub"])
	}
	// Output: ada@example.com user-1
}

// Encode and Decode with a fixed clock; the salt is the cookie name.
func ExampleCodec() {
	made := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	codec, _ := jwt.NewCodec("secret")
	codec = codec.WithClock(func() time.Time { return made })

	state := "__Secure-authjs.state" // Auth.js's state cookie on https
	token, _ := codec.Encode(state, map[string]any{"value": "xyz", "provider": "github"}, 15*time.Minute)
	fmt.Println(strings.Count(token, "."), "dots: a compact JWE")

	claims, _ := codec.Decode(state, token)
	fmt.Println(claims["value"], claims["provider"], time.Unix(int64(claims["exp"].(float64)), 0).UTC())

	_, err := codec.Decode("__Secure-authjs.nonce", token) // another cookie's salt
	fmt.Println(errors.Is(err, jwt.ErrInvalidToken))

	later := codec.WithClock(func() time.Time { return made.Add(16 * time.Minute) })
	_, err = later.Decode(state, token)
	fmt.Println(errors.Is(err, jwt.ErrExpiredToken))
	// Output:
	// 4 dots: a compact JWE
	// xyz github 2026-01-01 00:15:00 +0000 UTC
	// true
	// true
}

// Rotating AUTH_SECRET: the newest secret first encodes, the older ones still
// decode the sessions made before the change.
func ExampleNewCodec_rotation() {
	before, _ := jwt.NewCodec("old-secret")
	token, _ := before.Encode(jwt.SessionTokenCookie, map[string]any{"sub": "user-1"}, 0)

	after, _ := jwt.NewCodec("new-secret", "old-secret")
	claims, err := after.Decode(jwt.SessionTokenCookie, token)
	fmt.Println(claims["sub"], err)

	_, err = jwt.NewCodec()
	fmt.Println(errors.Is(err, jwt.ErrInvalidArgument))
	// Output:
	// user-1 <nil>
	// true
}

// A session token too large for one cookie is cut in chunks, as Auth.js does.
func ExampleSplitCookie() {
	big := strings.Repeat("x", 9000) // a token of 9000 characters
	for _, c := range jwt.SplitCookie(&http.Cookie{Name: jwt.SecureSessionTokenCookie, Value: big, Path: "/", Secure: true, HttpOnly: true}) {
		fmt.Println(c.Name, len(c.Value), c.Secure, c.HttpOnly)
	}
	// Output:
	// __Secure-authjs.session-token.0 3936 true true
	// __Secure-authjs.session-token.1 3936 true true
	// __Secure-authjs.session-token.2 1128 true true
}

// SetCookies gives the cookies that store a (possibly chunked) value and
// delete the chunks the browser still holds from a larger one;
// JoinCookies reads it back.
func ExampleSetCookies() {
	r := httptest.NewRequest(http.MethodGet, "http://localhost:3000/", nil)
	r.AddCookie(&http.Cookie{Name: "authjs.session-token.0", Value: "old"})
	r.AddCookie(&http.Cookie{Name: "authjs.session-token.1", Value: "old"})

	for _, c := range jwt.SetCookies(r, &http.Cookie{Name: jwt.SessionTokenCookie, Value: "new-token", Path: "/", HttpOnly: true}) {
		fmt.Printf("%s=%q max-age=%d\n", c.Name, c.Value, c.MaxAge)
	}

	next := httptest.NewRequest(http.MethodGet, "http://localhost:3000/", nil)
	next.AddCookie(&http.Cookie{Name: jwt.SessionTokenCookie, Value: "new-token"})
	v, err := jwt.JoinCookies(next, jwt.SessionTokenCookie)
	fmt.Println(v, err)
	// Output:
	// authjs.session-token="new-token" max-age=0
	// authjs.session-token.0="" max-age=-1
	// authjs.session-token.1="" max-age=-1
	// new-token <nil>
}
