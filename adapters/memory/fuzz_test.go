package memory_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance/fuzzrecord"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// FuzzAdapterRoundTrip writes records built from fuzzed fields through the
// memory adapter and reads them back (see fuzzrecord.RoundTrip), then
// checks that deleting the user left nothing behind.
func FuzzAdapterRoundTrip(f *testing.F) {
	fuzzrecord.AddSeeds(f)
	a := memory.New()
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzrecord.RoundTrip(context.Background(), t, a, b)
		if s := a.Snapshot(); len(s.Users)+len(s.Accounts)+len(s.Sessions)+len(s.VerificationTokens)+len(s.Authenticators)+len(s.Factors) != 0 {
			t.Fatalf("left behind: %+v", s)
		}
	})
}

// FuzzEmailSignIn drives core/auth's e-mail sign-in over the memory adapter
// with fuzzed input: the address and provider id of StartEmailSignIn, then
// the provider id, address and token of VerifyEmailSignIn (the real token
// when useSentToken is set, else the fuzzed one). Properties:
//
//   - nothing panics; a refused start stores nothing and says why
//     (ErrUnknownProvider, ErrWrongProviderType, or provider.ErrInvalidEmail
//     for an address NormalizeEmail refuses);
//   - a started sign-in stores one token for the normalised address
//     (trimmed, lowercased), hashed: never the token sent in the link; the
//     link points at BaseURL/callback/<id> and carries that address and
//     token;
//   - verification signs in exactly when the provider, the normalised
//     address and the token all match, then as the user with that
//     address, with a session; any other input gets ErrVerificationFailed
//     (or ErrUnknownProvider/ErrWrongProviderType) and creates no user and
//     no session;
//   - a link works once.
func FuzzEmailSignIn(f *testing.F) {
	f.Add("email", " Ada@Example.COM ", "email", "ada@example.com", "", true)
	f.Add("email", "ada@example.com", "email", "ADA@example.com\t", "", true)
	f.Add("email", "ada@example.com", "email", "bob@example.com", "", true)
	f.Add("email", "ada@example.com", "email", "ada@example.com", "0000", false)
	f.Add("email", "ada@example.com", "other", "ada@example.com", "", true)
	f.Add("passkey", "ada@example.com", "passkey", "ada@example.com", "", true)
	f.Add("email", "a@b@c", "email", "a@b@c", "", true)
	f.Add("email", "\u212Aelvin@example.com", "email", "kelvin@example.com", "", true)
	f.Add("email", "ada@example..com", "email", "ada@example..com", "x", false)
	f.Add("email", "", "", "", "", false)
	f.Fuzz(func(t *testing.T, startID, startEmail, verifyID, verifyEmail, token string, useSentToken bool) {
		ctx := context.Background()
		store := memory.New()
		const secret = "fuzz secret-0123456789abcdefghij"
		var sent []provider.VerificationRequest
		send := func(_ context.Context, req provider.VerificationRequest) error {
			sent = append(sent, req)
			return nil
		}
		a, err := auth.New(auth.Config{
			Adapter:   store,
			Providers: []provider.Provider{provider.Email("auth@example.com", send), provider.Passkey()},
			Secrets:   []string{secret},
			BaseURL:   "https://example.com/auth",
		})
		if err != nil {
			t.Fatal(err)
		}
		nothingStored := func(when string) {
			t.Helper()
			if s := store.Snapshot(); len(s.Users)+len(s.Accounts)+len(s.Sessions)+len(s.VerificationTokens) != 0 {
				t.Fatalf("%s, yet the store holds %+v", when, s)
			}
		}

		req, err := a.StartEmailSignIn(ctx, startID, startEmail)
		identifier, normErr := provider.NormalizeEmail(startEmail)
		switch {
		case refusedProvider(t, "StartEmailSignIn", startID, err):
		case normErr != nil:
			if !errors.Is(err, provider.ErrInvalidEmail) {
				t.Fatalf("StartEmailSignIn(%q): %v, want ErrInvalidEmail (NormalizeEmail: %v)", startEmail, err, normErr)
			}
		case err != nil:
			t.Fatalf("StartEmailSignIn(%q): %v", startEmail, err)
		}
		if err != nil {
			nothingStored("StartEmailSignIn failed")
			if len(sent) != 0 {
				t.Fatalf("StartEmailSignIn failed but sent %+v", sent)
			}
			return
		}

		// The identifier is normalised (trimmed, lowercased, the domain
		// in its ASCII form: "0@0粔" is "0@xn--0-e45c"), idempotently.
		if identifier != strings.TrimSpace(identifier) || identifier != strings.ToLower(identifier) {
			t.Fatalf("NormalizeEmail(%q) = %q, not trimmed and lowercased", startEmail, identifier)
		}
		if _, domain, _ := strings.Cut(identifier, "@"); strings.IndexFunc(domain, func(r rune) bool { return r > 0x7f }) >= 0 {
			t.Fatalf("NormalizeEmail(%q) = %q: the domain is not in its ASCII form", startEmail, identifier)
		}
		if again, err := provider.NormalizeEmail(identifier); err != nil || again != identifier {
			t.Fatalf("NormalizeEmail(%q) = %q, %v: not idempotent", identifier, again, err)
		}
		if len(sent) != 1 || sent[0] != *req || req.Identifier != identifier || req.Token == "" {
			t.Fatalf("sent %+v, returned %+v, want one request for %q", sent, req, identifier)
		}
		s := store.Snapshot()
		if len(s.VerificationTokens) != 1 {
			t.Fatalf("stored tokens %+v, want one", s.VerificationTokens)
		}
		stored := s.VerificationTokens[0]
		if stored.Identifier != identifier || stored.Token != auth.HashToken(req.Token, secret) || strings.Contains(stored.Token, req.Token) {
			t.Fatalf("stored %+v for token %q, want the hash for %q", stored, req.Token, identifier)
		}
		link, err := url.Parse(req.URL)
		if err != nil || link.Scheme != "https" || link.Host != "example.com" || link.Path != "/auth/callback/email" ||
			link.Query().Get("email") != identifier || link.Query().Get("token") != req.Token {
			t.Fatalf("link %q (%v) does not lead to https://example.com/auth/callback/email with the address and token", req.URL, err)
		}

		if useSentToken {
			token = req.Token
		}
		verifyIdentifier, verifyErr := provider.NormalizeEmail(verifyEmail)
		match := verifyID == "email" && verifyErr == nil && verifyIdentifier == identifier && token == req.Token
		in, err := a.VerifyEmailSignIn(ctx, verifyID, verifyEmail, token)
		if !match {
			switch {
			case refusedProvider(t, "VerifyEmailSignIn", verifyID, err):
			case auth.CodeOf(err) != auth.CodeVerification:
				t.Fatalf("VerifyEmailSignIn(%q, %q) for a link to %q: %v, want ErrVerificationFailed", verifyEmail, token, identifier, err)
			}
			if in != nil {
				t.Fatalf("VerifyEmailSignIn failed but returned %+v", in)
			}
			if s := store.Snapshot(); len(s.Users)+len(s.Sessions)+len(s.Accounts) != 0 {
				t.Fatalf("a failed verification created records: %+v", s)
			}
			return
		}
		if err != nil {
			t.Fatalf("VerifyEmailSignIn(%q, %q) with the sent token: %v", verifyEmail, token, err)
		}
		if in.User.Email != identifier || in.User.EmailVerified == nil || !in.IsNewUser ||
			in.Session.UserID != in.User.ID || !in.Session.Expires.After(time.Now()) {
			t.Fatalf("signed in as %+v", in)
		}
		su, _, err := a.Session(ctx, in.Session.SessionToken)
		if err != nil || su == nil || su.User.ID != in.User.ID {
			t.Fatalf("session lookup after sign-in: %+v, %v", su, err)
		}
		if s := store.Snapshot(); len(s.VerificationTokens) != 0 {
			t.Fatalf("the used token is still stored: %+v", s.VerificationTokens)
		}
		if _, err := a.VerifyEmailSignIn(ctx, verifyID, verifyEmail, token); auth.CodeOf(err) != auth.CodeVerification {
			t.Fatalf("second use of the link: %v, want ErrVerificationFailed", err)
		}
	})
}

// refusedProvider checks err, returned by call with the provider id, when
// id is not the e-mail provider's: the passkey provider gives
// core.ErrInvalidInput, an unknown id core.ErrNotFound. It
// reports whether it checked.
func refusedProvider(t *testing.T, call, id string, err error) bool {
	t.Helper()
	switch {
	case id == "passkey":
		if !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("%s with the passkey provider: %v, want ErrWrongProviderType", call, err)
		}
	case id != "email":
		if !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("%s(%q): %v, want ErrUnknownProvider", call, id, err)
		}
	default:
		return false
	}
	return true
}
