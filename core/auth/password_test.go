package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// emailOnly has the methods e-mail sign-in needs, and counts token uses;
// nothing is stored.
type emailOnly struct{ uses *int }

func (emailOnly) CreateVerificationToken(_ context.Context, v core.VerificationToken) (*core.VerificationToken, error) {
	return &v, nil
}
func (e emailOnly) UseVerificationToken(context.Context, core.VerificationTokenKey) (*core.VerificationToken, error) {
	*e.uses++
	return nil, nil
}
func (emailOnly) GetUserByEmail(context.Context, string) (*core.User, error) { return nil, nil }
func (emailOnly) CreateUser(_ context.Context, u core.User) (*core.User, error) {
	return &u, nil
}
func (emailOnly) UpdateUser(context.Context, core.UserUpdate) (*core.User, error) {
	return nil, errDown
}
func (emailOnly) GetUserByAccount(context.Context, core.AccountKey) (*core.User, error) {
	return nil, nil
}
func (emailOnly) LinkAccount(_ context.Context, a core.Account) (*core.Account, error) {
	return &a, nil
}

func TestNewNamesWhatPasswordsNeed(t *testing.T) {
	pc := provider.Password("a@example.com", send)
	pc.Usernames = true
	_, err := auth.New(auth.Config{Adapter: emailOnly{uses: new(int)}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"},
		Providers: []provider.Provider{pc}, BaseURL: "https://example.com/auth"})
	var mm *core.MissingMethodsError
	if !errors.As(err, &mm) {
		t.Fatalf("New: %v, want a MissingMethodsError", err)
	}
	got := map[core.Method]string{}
	for _, m := range mm.Missing {
		got[m.Method] = m.NeededBy
	}
	for m, why := range map[core.Method]string{
		core.MethodSwapPasswordHash:       "password sign-in",
		core.MethodDeleteSessionsByUserID: "a reset or change ends the user's other sessions",
		core.MethodGetUserByUsername:      "usernames",
	} {
		if !strings.Contains(got[m], why) {
			t.Errorf("%s: needed by %q, want it to say %q (all: %v)", m, got[m], why, got)
		}
	}
	other := provider.Password("a@example.com", send)
	other.ID = "password-2"
	_, err = auth.New(auth.Config{Adapter: emailOnly{uses: new(int)}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"},
		Providers: []provider.Provider{provider.Password("a@example.com", send), other}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		BaseURL: "https://example.com/auth"})
	if !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), "more than one password provider") {
		t.Errorf("two password providers: %v; want the configuration error saying so", err)
	}
	_, err = auth.New(auth.Config{Adapter: emailOnly{uses: new(int)}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"},
		Providers: []provider.Provider{provider.Password("a@example.com", send)}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if !errors.Is(err, core.ErrInvalidConfig) || !strings.Contains(err.Error(), "BaseURL") {
		t.Errorf("a password provider without BaseURL: %v; want the configuration error naming BaseURL", err)
	}
}

func TestCodeOfTheWrongShapeLooksNothingUp(t *testing.T) {
	uses := 0
	email := provider.Email("a@example.com", send)
	email.Codes = true
	a, err := auth.New(auth.Config{Adapter: emailOnly{uses: &uses}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"},
		Providers: []provider.Provider{email}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, code := range []string{"", "12345", "1234567", "12a456", "１２３４５６", " 123456", "123456\x00"} {
		_, err := a.VerifyEmailSignInCode(ctx, "email", "ada@example.com", code, "binding")
		if auth.CodeOf(err) != auth.CodeVerification {
			t.Errorf("code %q: %v, want Verification", code, err)
		}
	}
	_, err = a.VerifyEmailSignInCode(ctx, "email", "ada@example.com", "123456", "")
	if auth.CodeOf(err) != auth.CodeVerification {
		t.Errorf("a code without a binding: %v, want Verification", err)
	}
	if uses != 0 {
		t.Errorf("%d token lookups for refused codes; want none", uses)
	}
	if _, err := a.VerifyEmailSignInCode(ctx, "email", "ada@example.com", "123456", "binding"); auth.CodeOf(err) != auth.CodeVerification || uses == 0 {
		t.Errorf("a well-formed wrong code: %v after %d lookups; want Verification after a lookup", err, uses)
	}
}
