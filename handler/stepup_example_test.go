package handler_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// Require a session from the last ten minutes on a sensitive route. A
// stale session is sent to re-authenticate: a browser page to the
// re-authentication page and back, an API client with RFC 9470's
// challenge.
func ExampleReader_RequireFresh() {
	const secret = "at least 32 random bytes, e.g. AUTH_SECRET"
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	rd, err := handler.NewReader(handler.ReaderConfig{Secrets: []string{secret}, Now: func() time.Time { return now },
		ReauthURL: "https://example.com/auth/reauth"})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/settings/delete-account", rd.RequireFresh(auth.StepUp{MaxAge: 10 * time.Minute})(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "confirm the deletion") })))

	// A JWT session signed in with a password at signedIn.
	session := func(signedIn time.Time) *http.Cookie {
		codec, _ := jwt.NewCodec(secret)
		token, _ := codec.WithClock(func() time.Time { return now }).Encode(jwt.SessionTokenCookie,
			map[string]any{"sub": "user-1", "auth_time": signedIn.Unix(), "amr": []string{"pwd"}, "acr": auth.LevelSingleFactor}, time.Hour)
		return &http.Cookie{Name: jwt.SessionTokenCookie, Value: token}
	}
	get := func(signedIn time.Time, accept string) *http.Response {
		r := httptest.NewRequest("GET", "https://example.com/settings/delete-account", nil)
		r.AddCookie(session(signedIn))
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w.Result()
	}
	fresh := get(now.Add(-2*time.Minute), "text/html")
	fmt.Println("fresh:", fresh.StatusCode)
	page := get(now.Add(-time.Hour), "text/html")
	fmt.Println("stale page:", page.StatusCode, page.Header.Get("Location"))
	api := get(now.Add(-time.Hour), "application/json")
	fmt.Println("stale API:", api.StatusCode, api.Header.Get("WWW-Authenticate"))
	// Output:
	// fresh: 200
	// stale page: 303 https://example.com/auth/reauth?callbackUrl=%2Fsettings%2Fdelete-account
	// stale API: 401 Bearer error="insufficient_user_authentication", error_description="A more recent authentication is required", max_age=600
}
