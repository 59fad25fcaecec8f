package handler_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// pwFixture is a handler with a password provider (codes and usernames
// on) on the memory adapter.
type pwFixture struct {
	store *memory.Adapter
	a     *auth.Auth
	h     *handler.Handler
	mu    sync.Mutex
	mails []provider.VerificationRequest
}

// newPWFixture builds the fixture with the hasher (nil: a cheap one).
func newPWFixture(tb testing.TB, hasher password.Hasher) *pwFixture {
	tb.Helper()
	if hasher == nil {
		h, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
		if err != nil {
			tb.Fatal(err)
		}
		hasher = h
	}
	f := &pwFixture{store: memory.New()}
	pc := provider.Password("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.mails = append(f.mails, r)
		return nil
	})
	pc.Codes, pc.Usernames, pc.Hasher = true, true, hasher
	var err error
	f.a, err = auth.New(auth.Config{Adapter: f.store, Providers: []provider.Provider{pc}, Secrets: []string{secret},
		BaseURL: "http://app.example/auth"})
	if err != nil {
		tb.Fatal(err)
	}
	f.h, err = handler.New(handler.Config{Auth: f.a, RateLimit: handler.RateLimit{Disabled: true}})
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// FuzzPasswordRoutes posts arbitrary fields to the password routes: none
// panics or answers 5xx, none redirects off the site, no answer shows a
// password hash, every stored user's address and username are in their
// normal forms, and a code of the wrong shape uses no token.
func FuzzPasswordRoutes(f *testing.F) {
	fx := newPWFixture(f, nil)
	ctx := context.Background()
	if _, err := fx.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "ada@example.com", Username: "ada"}, Password: "correct horse battery"}); err != nil {
		f.Fatal(err)
	}
	const csrf = "authjs.csrf-token=tok|" // completed per input with the hash
	f.Add("signup", "eve@example.com", "Eve", "correct horse battery", "")
	f.Add("signup", "a@b", "x", "\x00\x00\x00\x00\x00\x00\x00\x00", "")
	f.Add("signup", "", "ADMIN", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", "")
	f.Add("signin", "ada@example.com", "", "wrong password", "")
	f.Add("signin", "", "Ada", "correct horse battery", "")
	f.Add("verify", "ada@example.com", "", "", "12345")
	f.Add("verify", "ada@example.com", "", "", "１２３４５６")
	f.Add("forgot", "ADA@example.com", "", "", "")
	f.Add("reset", "ada@example.com", "", "new password here", "000000")
	f.Add("reset", "ada@example.com", "", strings.Repeat("p", password.MaxBytes+1), "abcdef")
	f.Fuzz(func(t *testing.T, action, email, username, pw, code string) {
		form := url.Values{"csrfToken": {"tok"}, "email": {email}, "username": {username}, "password": {pw}, "code": {code}, "callbackUrl": {"//evil.example"}}
		// A forgot of an earlier input writes its tokens in the
		// background (RequestResetInBackground): wait for them, before
		// counting and after, so that the count is this input's alone.
		fx.a.Wait()
		before := len(fx.store.Snapshot().VerificationTokens)
		u, _ := url.Parse("/auth/password/" + url.PathEscape(action))
		w := serveFuzzed(fx.h, http.MethodPost, u, u.String(), form.Encode(), csrf+csrfHashOf("tok"))
		fx.a.Wait()
		if w.Code >= 500 {
			t.Fatalf("%s: %d %s", action, w.Code, w.Body)
		}
		if loc := w.Header().Get("Location"); loc != "" && !strings.HasPrefix(loc, "http://app.example/") {
			t.Fatalf("%s redirected to %q", action, loc)
		}
		if strings.Contains(w.Body.String(), "$argon2id$") || strings.Contains(w.Header().Get("Location"), "$argon2id$") {
			t.Fatalf("%s answered a hash: %s", action, w.Body)
		}
		snap := fx.store.Snapshot()
		for _, user := range snap.Users {
			if user.Username != "" {
				if n, err := core.NormalizeUsername(user.Username); err != nil || n != user.Username {
					t.Fatalf("stored username %q is not normal", user.Username)
				}
			}
			if user.Email != "" {
				if n, err := auth.NormalizeEmail(user.Email); err != nil || n != user.Email {
					t.Fatalf("stored address %q is not normal", user.Email)
				}
			}
		}
		if (action == "verify" || action == "reset") && code != "" && !password.ValidCode(code) && len(snap.VerificationTokens) != before {
			t.Fatalf("a code of the wrong shape (%q) used a token", code)
		}
	})
}

// BenchmarkPasswordSignIn measures refused password sign-ins through
// core/auth with the default hasher (Argon2id, RFC 9106's parameters) on
// the memory adapter: a wrong password, an unknown address, an unknown
// username and a user without a password. Each iteration runs the four in
// turn (the order rotating), so that a machine's changing load falls on
// all of them alike; it reports each one's mean (<case>-ns/op) and the
// largest mean over the smallest (max/min), the enumeration bound of
// docs/passwords.md. The unknown ones verify against the dummy hash, so
// each costs one Argon2id like a wrong password.
func BenchmarkPasswordSignIn(b *testing.B) {
	hasher, err := password.NewArgon2id(password.RFC9106Params())
	if err != nil {
		b.Fatal(err)
	}
	fx := newPWFixture(b, hasher)
	ctx := context.Background()
	if _, err := fx.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "ada@example.com", Username: "ada"}, Password: "correct horse battery"}); err != nil {
		b.Fatal(err)
	}
	if _, err := fx.store.CreateUser(ctx, core.User{ID: "oauth-only", Email: "grace@example.com"}); err != nil {
		b.Fatal(err)
	}
	cases := []struct{ name, identifier string }{
		{"wrong_password", "ada@example.com"},
		{"unknown_address", "nobody@example.com"},
		{"unknown_username", "nobody"},
		{"no_password_account", "grace@example.com"},
	}
	total := make([]time.Duration, len(cases))
	n := 0
	for b.Loop() {
		for k := range cases {
			i := (k + n) % len(cases)
			start := time.Now()
			_, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: cases[i].identifier, Password: "not the password"})
			total[i] += time.Since(start)
			if auth.CodeOf(err) != auth.CodeCredentialsSignin {
				b.Fatalf("%s: %v", cases[i].name, err)
			}
		}
		n++
	}
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	for i, c := range cases {
		mean := total[i] / time.Duration(n)
		b.ReportMetric(float64(mean), c.name+"-ns/op")
		lo, hi = min(lo, mean), max(hi, mean)
	}
	b.ReportMetric(float64(hi)/float64(lo), "max/min")
}

// csrfHashOf is the CSRF cookie's hash of token with the test secret (as
// Auth.js makes it: hex SHA-256 of token and secret).
func csrfHashOf(token string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

// TestSignInPageWithPasswords renders the sign-in page and the provider
// list with a password provider configured.
func TestSignInPageWithPasswords(t *testing.T) {
	fx := newPWFixture(t, nil)
	for _, path := range []string{"/auth/signin", "/auth/providers"} {
		u, _ := url.Parse(path)
		w := serveFuzzed(fx.h, http.MethodGet, u, path, "", "")
		if w.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, w.Code, w.Body)
		}
	}
	u, _ := url.Parse("/auth/password/verify?email=a%40b.c&token=t")
	if w := serveFuzzed(fx.h, http.MethodHead, u, u.String(), "", ""); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("HEAD of a verification link: %d; want 405", w.Code)
	}
}
