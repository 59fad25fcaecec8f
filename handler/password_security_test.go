package handler_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core/ratelimit"
	"github.com/authport/authport/handler"
)

// TestSignInLimitKeysOnWhatTheLookupResolves: the per-identifier sign-in
// limit counts every spelling of one address or username, through every
// field the sign-in reads (email, username, identifier), as one.
func TestSignInLimitKeysOnWhatTheLookupResolves(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spelling []url.Values
	}{
		{"username", []url.Values{{"identifier": {"victim"}}, {"username": {"VICTIM"}}, {"identifier": {"Victim"}}, {"username": {"vIcTiM"}}}},
		{"address", []url.Values{{"identifier": {"victim@example.com"}}, {"email": {"victim@exa\u00admple.com"}}, {"email": {"victim@ＥＸＡＭＰＬＥ.com"}}, {"username": {"Victim@Example.com"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newPWFixture(t, nil)
			h, err := handler.New(handler.Config{Auth: fx.a, RateLimit: handler.RateLimit{
				SignInPerClient:     ratelimit.Limit{Events: -1},
				SignInPerIdentifier: ratelimit.Limit{Events: 2, Period: time.Hour}}})
			if err != nil {
				t.Fatal(err)
			}
			cookie := "authjs.csrf-token=tok|" + csrfHashOf("tok")
			u, _ := url.Parse("/auth/password/signin")
			limited := 0
			for i, form := range tc.spelling {
				form.Set("csrfToken", "tok")
				form.Set("password", "wrong-guess-123")
				w := serveFuzzed(h, http.MethodPost, u, u.String(), form.Encode(), cookie)
				if got := w.Code == http.StatusTooManyRequests || strings.Contains(w.Header().Get("Location"), handler.ErrorRateLimited); got {
					limited++
				} else if i >= 2 {
					t.Errorf("attempt %d (%v) was not rate-limited: one identifier spelled otherwise gets a fresh counter", i+1, form)
				}
			}
			if limited != len(tc.spelling)-2 {
				t.Errorf("%d of %d attempts limited; want all but the first 2", limited, len(tc.spelling))
			}
		})
	}
}
