package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// getterOnly implements getUser and nothing else.
type getterOnly struct{}

func (getterOnly) GetUser(context.Context, string) (*core.User, error) { return nil, nil }

func TestProbeReportsImplementedMethods(t *testing.T) {
	c := core.Probe(getterOnly{})
	if got := c.Implemented(); len(got) != 1 || got[0] != core.MethodGetUser {
		t.Errorf("Implemented() = %v, want [getUser]", got)
	}
	if !c.Has(core.MethodGetUser) || c.Has(core.MethodCreateUser) {
		t.Errorf("Has: getUser %v, createUser %v", c.Has(core.MethodGetUser), c.Has(core.MethodCreateUser))
	}
	if c.Adapter() != "core_test.getterOnly" {
		t.Errorf("Adapter() = %q", c.Adapter())
	}
	if got := core.Probe(nil).Implemented(); len(got) != 0 {
		t.Errorf("Probe(nil) implements %v", got)
	}
}

func TestMethodsListsTheSpecMethodsInOrder(t *testing.T) {
	ms := core.Methods()
	if len(ms) != 19 || ms[0] != core.MethodCreateUser || ms[18] != core.MethodUpdateAuthenticatorCounter {
		t.Errorf("Methods() = %v", ms)
	}
	seen := map[core.Method]bool{}
	for _, m := range ms {
		if seen[m] {
			t.Errorf("%s listed twice", m)
		}
		seen[m] = true
	}
}

func TestRequireNamesEveryMissingMethod(t *testing.T) {
	err := core.Probe(getterOnly{}).Require("OAuth sign-in", core.MethodGetUser, core.MethodGetUserByAccount, core.MethodLinkAccount, core.MethodLinkAccount)
	if !errors.Is(err, core.ErrMissingAdapterMethod) {
		t.Fatalf("Require: %v, want ErrMissingAdapterMethod", err)
	}
	var mm *core.MissingMethodsError
	if !errors.As(err, &mm) || len(mm.Missing) != 2 {
		t.Fatalf("Require: %#v, want two missing methods", err)
	}
	msg := err.Error()
	for _, want := range []string{"core_test.getterOnly", "getUserByAccount (needed by OAuth sign-in)", "linkAccount"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if err := core.Probe(getterOnly{}).Require("x", core.MethodGetUser); err != nil {
		t.Errorf("Require of an implemented method: %v", err)
	}
}

func TestRequireInterface(t *testing.T) {
	if _, err := core.Require[core.UserGetter](getterOnly{}, "session lookup"); err != nil {
		t.Errorf("Require[UserGetter]: %v", err)
	}
	_, err := core.Require[core.SessionAndUserGetter](getterOnly{}, "session lookup")
	if !errors.Is(err, core.ErrMissingAdapterMethod) || !strings.Contains(err.Error(), "getSessionAndUser (needed by session lookup)") {
		t.Errorf("Require[SessionAndUserGetter]: %v", err)
	}
	if _, err := core.Require[core.UserGetter](nil, "x"); !errors.Is(err, core.ErrMissingAdapterMethod) {
		t.Errorf("Require on a nil adapter: %v", err)
	}
	if m := core.MethodOf[core.VerificationTokenUser](); m != core.MethodUseVerificationToken {
		t.Errorf("MethodOf[VerificationTokenUser] = %q", m)
	}
	if m := core.MethodOf[error](); m != "" {
		t.Errorf("MethodOf[error] = %q, want empty", m)
	}
}

func TestNormalizeTime(t *testing.T) {
	in := time.Date(2030, 1, 2, 3, 4, 5, 678901234, time.FixedZone("X", -3600))
	got := core.NormalizeTime(in)
	want := time.Date(2030, 1, 2, 4, 4, 5, 678000000, time.UTC)
	if got != want || got.Location() != time.UTC {
		t.Errorf("NormalizeTime = %v, want %v", got, want)
	}
	if core.NormalizeTimePtr(nil) != nil {
		t.Error("NormalizeTimePtr(nil) != nil")
	}
}

func TestAccountNormalizeLowercasesTokenTypeAndCopies(t *testing.T) {
	tt := "Bearer"
	a := core.Account{TokenType: &tt, AuthorizationDetails: []core.AuthorizationDetail{{Type: "x", Actions: []string{"a"}}}}
	n := a.Normalize()
	if *n.TokenType != "bearer" || tt != "Bearer" {
		t.Errorf("token type %q, original %q", *n.TokenType, tt)
	}
	n.AuthorizationDetails[0].Actions[0] = "changed"
	if a.AuthorizationDetails[0].Actions[0] != "a" {
		t.Error("Normalize shares AuthorizationDetails with the original")
	}
	empty := core.Account{AuthorizationDetails: []core.AuthorizationDetail{}}.Clone()
	if empty.AuthorizationDetails == nil {
		t.Error("Clone turned an empty AuthorizationDetails into nil")
	}
}

func TestUserUpdateApply(t *testing.T) {
	name, img := "Ada", "a.png"
	u := core.User{ID: "u", Email: "a@example.com", Name: &name, Image: &img}
	got := core.UserUpdate{ID: "u", Name: core.Null[string](), Email: core.Set("b@example.com")}.Apply(u)
	if got.Name != nil || got.Email != "b@example.com" || got.Image == nil || *got.Image != "a.png" {
		t.Errorf("Apply = %+v", got)
	}
	if u.Name == nil || u.Email != "a@example.com" {
		t.Error("Apply changed its argument")
	}
}

func TestValidateRejectsEmptyFields(t *testing.T) {
	cases := map[string]error{
		"user without id":          (&core.User{Email: "a@b"}).Validate(),
		"user with raw username":   (&core.User{ID: "u", Username: "Ada"}).Validate(),
		"user with bad username":   (&core.User{ID: "u", Username: "a\u0430b"}).Validate(),
		"empty password hash":      (&core.Account{UserID: "u", Provider: "p", ProviderAccountID: "x", Type: core.AccountTypeCredentials, PasswordHash: new(string)}).Validate(),
		"account with bad type":    (&core.Account{UserID: "u", Provider: "p", ProviderAccountID: "x", Type: "magic"}).Validate(),
		"session without expiry":   (&core.Session{SessionToken: "t", UserID: "u"}).Validate(),
		"token without identifier": (&core.VerificationToken{Token: "t", Expires: time.Now()}).Validate(),
		"negative counter":         (&core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", UserID: "u", ProviderAccountID: "p", Counter: -1}).Validate(),
		"update without id":        core.UserUpdate{}.Validate(),
		"update to raw username":   core.UserUpdate{ID: "u", Username: core.Set("ADA")}.Validate(),
		"session update no token":  core.SessionUpdate{}.Validate(),
		"session update zero time": core.SessionUpdate{SessionToken: "t", Expires: core.Set(time.Time{})}.Validate(),
	}
	for name, err := range cases {
		var ie *core.InputError
		if !errors.Is(err, core.ErrInvalidInput) || !errors.As(err, &ie) || ie.Field == "" {
			t.Errorf("%s: %v, want an InputError naming the field", name, err)
		}
	}
	for name, err := range map[string]error{
		"user without email":    (&core.User{ID: "u"}).Validate(),
		"update to empty email": core.UserUpdate{ID: "u", Email: core.Set("")}.Validate(),
		"normalised username":   (&core.User{ID: "u", Username: "ada.l"}).Validate(),
	} {
		if err != nil {
			t.Errorf("%s: %v, want none (an e-mail address is optional)", name, err)
		}
	}
	ok := core.Account{UserID: "u", Provider: "p", ProviderAccountID: "x", Type: core.AccountTypeOIDC}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid account: %v", err)
	}
}

func TestExpiredAtTheInstant(t *testing.T) {
	now := time.Now()
	s := core.Session{Expires: now}
	if !s.Expired(now) || s.Expired(now.Add(-time.Millisecond)) {
		t.Error("a session expires exactly at Expires")
	}
}

// extended offers both extensions and no spec method.
type extended struct{}

func (extended) PurgeExpired(context.Context) (core.PurgeResult, error) {
	return core.PurgeResult{}, nil
}
func (extended) AdvanceAuthenticatorCounter(context.Context, string, int64) (*core.Authenticator, error) {
	return nil, nil
}

func TestProbeReportsExtensions(t *testing.T) {
	c := core.Probe(extended{})
	want := []core.Extension{core.ExtensionPurgeExpired, core.ExtensionAdvanceAuthenticatorCounter}
	if got := c.Extensions(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Extensions() = %v, want %v", got, want)
	}
	if !c.HasExtension(core.ExtensionAdvanceAuthenticatorCounter) || len(c.Implemented()) != 0 {
		t.Errorf("Probe(extended) = %v", c)
	}
	if s := c.String(); !strings.HasSuffix(s, "[purgeExpired, advanceAuthenticatorCounter]") {
		t.Errorf("String() = %q, want the extensions in brackets", s)
	}
	if x := core.Probe(getterOnly{}); len(x.Extensions()) != 0 || x.HasExtension(core.ExtensionPurgeExpired) || strings.Contains(x.String(), "[") {
		t.Errorf("Probe(getterOnly) reports extensions: %v", x)
	}
}

func TestCounterAdvances(t *testing.T) {
	for _, c := range []struct {
		stored, reported int64
		want             bool
	}{{0, 0, true}, {0, 1, true}, {7, 8, true}, {7, 7, false}, {7, 6, false}, {7, 0, false}, {1, 0, false}} {
		if got := core.CounterAdvances(c.stored, c.reported); got != c.want {
			t.Errorf("CounterAdvances(%d, %d) = %v, want %v", c.stored, c.reported, got, c.want)
		}
	}
}

func ExampleCounterAdvances() {
	fmt.Println(core.CounterAdvances(7, 8)) // a new signature
	fmt.Println(core.CounterAdvances(8, 8)) // a replay, or a race lost
	fmt.Println(core.CounterAdvances(0, 0)) // an authenticator without a counter
	// Output:
	// true
	// false
	// true
}

func TestNormalizeUsername(t *testing.T) {
	for in, want := range map[string]string{"Ada": "ada", "ada.lovelace": "ada.lovelace", "A_1-b": "a_1-b", "abc": "abc"} {
		if got, err := core.NormalizeUsername(in); err != nil || got != want {
			t.Errorf("NormalizeUsername(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ab", strings.Repeat("a", 33), ".ada", "ada_", "a da", "\u0430da", "ad\x00a", "ada@x", "\xff\xfe\xfd"} {
		if got, err := core.NormalizeUsername(in); !errors.Is(err, core.ErrInvalidUsername) {
			t.Errorf("NormalizeUsername(%q) = %q, %v; want ErrInvalidUsername", in, got, err)
		}
	}
}

// Missing and Require see the extensions named like methods: an adapter
// with the four factor methods is missing none of them.
func TestMissingCountsExtensions(t *testing.T) {
	caps := core.Probe(core.NewStore(nil))
	if got := caps.Missing(core.FactorMethods()...); len(got) != 4 {
		t.Fatalf("nil adapter: missing %v, want the four factor methods", got)
	}
	full := core.Probe(&fullFactors{})
	if got := full.Missing(core.FactorMethods()...); len(got) != 0 {
		t.Errorf("an adapter with the factor methods is missing %v", got)
	}
	if err := full.Require("second factors", core.FactorMethods()...); err != nil {
		t.Errorf("Require: %v", err)
	}
}

type fullFactors struct{}

func (fullFactors) CreateFactor(context.Context, core.Factor) (*core.Factor, error) { return nil, nil }
func (fullFactors) ListFactorsByUserID(context.Context, string) ([]core.Factor, error) {
	return nil, nil
}
func (fullFactors) SwapFactor(context.Context, core.Factor, core.Factor) (*core.Factor, error) {
	return nil, nil
}
func (fullFactors) DeleteFactor(context.Context, string, string) (*core.Factor, error) {
	return nil, nil
}
