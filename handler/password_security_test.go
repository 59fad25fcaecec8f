package handler_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
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

// TestForgotAnswersBeforeTheMailer: POST /password/forgot answers for an
// account with a password without waiting for the token writes or the
// mailer (here blocked until the answer has come), so that it takes the
// time it takes for an address without one; the mail follows
// (auth.Auth.Wait). Without the fix this test blocks until go test's
// timeout.
func TestForgotAnswersBeforeTheMailer(t *testing.T) {
	ctx := context.Background()
	hasher, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var mu sync.Mutex
	var mails []provider.VerificationRequest
	pc := provider.Password("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
		if r.Purpose == provider.PurposeResetPassword {
			<-release
		}
		mu.Lock()
		defer mu.Unlock()
		mails = append(mails, r)
		return nil
	})
	pc.Hasher, pc.Usernames = hasher, true
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{pc}, Secrets: []string{secret}, BaseURL: "http://app.example/auth"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "slowmail@example.com"}, Password: "owner-pass-123"}); err != nil {
		t.Fatal(err)
	}
	cookie := "authjs.csrf-token=tok|" + csrfHashOf("tok")
	u, _ := url.Parse("/auth/password/forgot")
	form := url.Values{"csrfToken": {"tok"}, "email": {"slowmail@example.com"}}
	w := serveFuzzed(h, http.MethodPost, u, u.String(), form.Encode(), cookie)
	if w.Code != http.StatusSeeOther && w.Code != http.StatusFound {
		t.Fatalf("forgot: %d %s", w.Code, w.Body)
	}
	close(release)
	a.Wait()
	mu.Lock()
	defer mu.Unlock()
	if n := len(mails); n != 2 || mails[1].Purpose != provider.PurposeResetPassword || mails[1].Token == "" {
		t.Errorf("after the background work: %d mails (%+v); want the verification and the reset e-mail", n, mails)
	}
}
