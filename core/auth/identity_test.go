package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// identitySecret is 32 bytes or more, as secrets must be.
const identitySecret = "identity-test-secret-0123456789abcdef"

// newDangerous is newJWT with Auth.js's behaviour towards unproven
// addresses (Config.AllowDangerousUnverifiedEmail).
func newDangerous(t *testing.T, adapter any, providers ...provider.Provider) *auth.Auth {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: adapter, Secrets: []string{identitySecret}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: providers, AllowDangerousUnverifiedEmail: true})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Takeover before sign-up: by default nobody signs up with a passkey for an address they
// have not proven; nothing is stored.
func TestRegisterPasskeySignedOutRefusedByDefault(t *testing.T) {
	stub := newSignupStub()
	a := newJWT(t, stub, provider.Passkey())
	if a.Settings().AllowDangerousUnverifiedEmail {
		t.Fatal("the dangerous option is on by default")
	}
	_, err := a.RegisterPasskey(context.Background(), "passkey", nil, core.User{Email: "victim@example.com"}, testAuthenticator())
	if !errors.Is(err, auth.ErrUnprovenSignUp) || auth.CodeOf(err) != auth.CodeWebAuthnVerification {
		t.Errorf("signed-out passkey sign-up: %v, want ErrUnprovenSignUp (WebAuthnVerificationError)", err)
	}
	if len(stub.users) != 0 || len(stub.accounts) != 0 || len(stub.authenticators) != 0 {
		t.Errorf("left %d users, %d accounts, %d authenticators", len(stub.users), len(stub.accounts), len(stub.authenticators))
	}
}

// WebAuthn registration is all or nothing (core side): when the
// authenticator cannot be stored, the webauthn account linked for it is
// unlinked again.
type unlinkingStub struct {
	*signupStub
	unlinked []core.AccountKey
}

func (s *unlinkingStub) UnlinkAccount(_ context.Context, k core.AccountKey) (*core.Account, error) {
	s.unlinked = append(s.unlinked, k)
	a, ok := s.accounts[k.Provider+"/"+k.ProviderAccountID]
	if !ok {
		return nil, nil
	}
	delete(s.accounts, k.Provider+"/"+k.ProviderAccountID)
	return &a, nil
}

func TestRegisterPasskeyAllOrNothing(t *testing.T) {
	ctx := context.Background()
	stub := &unlinkingStub{signupStub: newSignupStub()}
	stub.users["u1"] = core.User{ID: "u1", Email: "u1@example.com"}
	stub.createAuthErr = errors.New("disk full")
	a := newJWT(t, stub, provider.Passkey())
	u1 := &core.User{ID: "u1", Email: "u1@example.com"}
	if _, err := a.RegisterPasskey(ctx, "passkey", u1, core.User{}, core.Authenticator{CredentialID: "Y3JlZA==", ProviderAccountID: "Y3JlZA==", CredentialPublicKey: "a2V5"}); err == nil || !strings.Contains(err.Error(), "disk full") || auth.CodeOf(err) != auth.CodeConfiguration {
		t.Fatalf("RegisterPasskey with a failing createAuthenticator: %v", err)
	}
	if len(stub.accounts) != 0 {
		t.Errorf("a webauthn account is left without its authenticator: %+v", stub.accounts)
	}
	// An account that was there before (the credential registered again)
	// is not unlinked by a failure.
	stub.accounts["passkey/Y3JlZA=="] = core.Account{UserID: "u1", Provider: "passkey", ProviderAccountID: "Y3JlZA==", Type: core.AccountTypeWebAuthn}
	stub.createAuthErr = core.ErrAlreadyExists
	if _, err := a.RegisterPasskey(ctx, "passkey", u1, core.User{}, core.Authenticator{CredentialID: "Y3JlZA==", ProviderAccountID: "Y3JlZA==", CredentialPublicKey: "a2V5"}); !errors.Is(err, core.ErrAlreadyExists) || auth.CodeOf(err) != auth.CodeWebAuthnVerification {
		t.Fatalf("registering again: %v", err)
	}
	if len(stub.accounts) != 1 || len(stub.unlinked) != 1 {
		t.Errorf("an existing account was unlinked: %+v, unlinked %v", stub.accounts, stub.unlinked)
	}
	// Without unlinkAccount the error says what is left.
	plain := newSignupStub()
	plain.users["u1"] = core.User{ID: "u1", Email: "u1@example.com"}
	plain.createAuthErr = errors.New("disk full")
	b := newJWT(t, plain, provider.Passkey())
	if _, err := b.RegisterPasskey(ctx, "passkey", u1, core.User{}, core.Authenticator{CredentialID: "Y3JlZA==", ProviderAccountID: "Y3JlZA==", CredentialPublicKey: "a2V5"}); err == nil || !strings.Contains(err.Error(), "no unlinkAccount") {
		t.Errorf("without unlinkAccount: %v", err)
	}
}

// One e-mail identity: one normal form for every spelling of an address.
func TestNormalizeEmail(t *testing.T) {
	same := [][]string{
		{"victim@example.com", "Victim@Example.COM", " victim@example.com", "victim@example.com\t", "VICTIM@EXAMPLE.COM"},
		{"ada@xn--bcher-kva.example", "ada@bücher.example", "ada@BÜCHER.example", "Ada@xn--bcher-kva.EXAMPLE", "ada@bu\u0308cher.example"},
		{"jos\u00e9@example.com", "jose\u0301@example.com", "JOSE\u0301@example.com", "JOS\u00c9@Example.com"},
		{"ann@example.com", "ann@ｅｘａｍｐｌｅ.com"}, // full-width domain, mapped by IDNA
	}
	for _, group := range same {
		for _, in := range group {
			got, err := auth.NormalizeEmail(in)
			if err != nil || got != group[0] {
				t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, group[0])
			}
		}
	}
	for _, in := range []string{"", " ", "a", "@b.c", "a@", "a@b@c", "a b@c.d", "a@b..c", "a@.b", "a@b.", "a,b@c.d", "a@[1.2.3.4]",
		"a@-bad-.example", "a@xn--zz.example", "a\x00@b.c", "a@b\xff.c", strings.Repeat("a", 65) + "@b.c", "a@" + strings.Repeat("b.", 130) + "c"} {
		if got, err := auth.NormalizeEmail(in); !errors.Is(err, provider.ErrInvalidEmail) {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want ErrInvalidEmail", in, got, err)
		}
	}
}

// FuzzNormalizeEmailIdentity: the normaliser never panics, its result is
// stable, valid UTF-8 in NFC with an ASCII domain, and the same for an
// address and its spaced, upper-cased spelling.
func FuzzNormalizeEmailIdentity(f *testing.F) {
	for _, s := range []string{"victim@example.com", "Victim@Example.COM", " victim@example.com", "ada@bücher.example", "ada@xn--bcher-kva.example",
		"jos\u00e9@example.com", "jose\u0301@example.com", "İ@example.com", "ǅ@example.com", "ß@straße.de", "a@ﬁ.example", "\u212a@example.com",
		"a@xn--ls8h.la", "a@b", "@", "a@b@c", "a@\u200d.com", "a@ab--c.com", "a@١.example", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := auth.NormalizeEmail(s)
		if err != nil {
			if !errors.Is(err, provider.ErrInvalidEmail) {
				t.Fatalf("NormalizeEmail(%q): %v, not ErrInvalidEmail", s, err)
			}
			return
		}
		again, err := auth.NormalizeEmail(got)
		if err != nil || again != got {
			t.Fatalf("NormalizeEmail(%q) = %q, but NormalizeEmail(%q) = %q, %v", s, got, got, again, err)
		}
		if !utf8.ValidString(got) || strings.Count(got, "@") != 1 || len(got) > 254 {
			t.Fatalf("NormalizeEmail(%q) = %q", s, got)
		}
		_, domain, _ := strings.Cut(got, "@")
		for _, r := range domain {
			if r >= utf8.RuneSelf || (r >= 'A' && r <= 'Z') {
				t.Fatalf("NormalizeEmail(%q) = %q: domain not lowercase ASCII", s, got)
			}
		}
		if spaced, err := auth.NormalizeEmail("  " + strings.ToUpper(got) + " "); err == nil && spaced != got && strings.ToLower(strings.ToUpper(got)) == got {
			t.Fatalf("NormalizeEmail(%q) = %q, but the upper-cased spelling gives %q", s, got, spaced)
		}
	})
}
