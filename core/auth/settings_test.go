package auth_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// factorsOnly has the adapter methods second factors need; nothing is
// stored.
type factorsOnly struct{}

func (factorsOnly) CreateFactor(_ context.Context, f core.Factor) (*core.Factor, error) {
	return &f, nil
}
func (factorsOnly) ListFactorsByUserID(context.Context, string) ([]core.Factor, error) {
	return []core.Factor{}, nil
}
func (factorsOnly) SwapFactor(context.Context, core.Factor, core.Factor) (*core.Factor, error) {
	return nil, nil
}
func (factorsOnly) DeleteFactor(context.Context, string, string) (*core.Factor, error) {
	return nil, nil
}
func (factorsOnly) CreateVerificationToken(_ context.Context, v core.VerificationToken) (*core.VerificationToken, error) {
	return &v, nil
}
func (factorsOnly) UseVerificationToken(context.Context, core.VerificationTokenKey) (*core.VerificationToken, error) {
	return nil, nil
}
func (factorsOnly) GetUser(context.Context, string) (*core.User, error) { return nil, nil }

// TestSettingsSecondFactors: Settings carries the second-factor options
// as New checked them, defaults applied, and the zero value when they are
// off; changing the copy changes nothing.
func TestSettingsSecondFactors(t *testing.T) {
	cfg := auth.Config{Adapter: factorsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, BaseURL: "https://example.com/auth",
		Session:       auth.SessionOptions{Strategy: auth.StrategyJWT},
		SecondFactors: auth.SecondFactorOptions{Enabled: true, TrustDevice: 30 * 24 * time.Hour}}
	a, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sf := a.Settings().SecondFactors
	want := auth.SecondFactorOptions{Enabled: true, TrustDevice: 30 * 24 * time.Hour, PendingMaxAge: auth.DefaultPendingMaxAge,
		Attempts: auth.DefaultFactorAttempts, Issuer: "example.com"}
	if !reflect.DeepEqual(sf, want) {
		t.Fatalf("Settings().SecondFactors = %+v, want %+v", sf, want)
	}
	s := a.Settings()
	s.SecondFactors.Enabled = false
	if !a.Settings().SecondFactors.Enabled {
		t.Fatal("changing the settings' copy changed the Auth's")
	}

	cfg.SecondFactors = auth.SecondFactorOptions{}
	off, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sf := off.Settings().SecondFactors; !reflect.DeepEqual(sf, auth.SecondFactorOptions{}) {
		t.Fatalf("Settings().SecondFactors with second factors off = %+v, want the zero value", sf)
	}
}

// TestSecondFactorsRequiredForConfig: RequiredFor needs Enabled and a
// factor every user can enrol (TOTP or EmailCode), as Required does;
// Settings carries the function New was given.
func TestSecondFactorsRequiredForConfig(t *testing.T) {
	policy := func(context.Context, core.User) (bool, error) { return true, nil }
	base := auth.Config{Adapter: factorsOnly{}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, BaseURL: "https://example.com/auth",
		Session: auth.SessionOptions{Strategy: auth.StrategyJWT}}
	for name, sf := range map[string]auth.SecondFactorOptions{
		"not enabled":        {RequiredFor: policy},
		"nothing to enrol":   {Enabled: true, RequiredFor: policy},
		"Required, no TOTP":  {Enabled: true, Required: true},
		"off with a setting": {RequiredFor: policy, Required: true},
	} {
		cfg := base
		cfg.SecondFactors = sf
		if _, err := auth.New(cfg); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
	cfg := base
	cfg.SecondFactors = auth.SecondFactorOptions{Enabled: true, RequiredFor: policy, TOTP: nopTOTP{}}
	a, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f := a.Settings().SecondFactors.RequiredFor; f == nil {
		t.Fatal("Settings lost RequiredFor")
	} else if ok, err := f(context.Background(), core.User{}); !ok || err != nil {
		t.Fatalf("Settings' RequiredFor = %v, %v", ok, err)
	}
}

// nopTOTP is a TOTP that makes no key and matches no code.
type nopTOTP struct{}

func (nopTOTP) NewKey(string, string) (auth.TOTPKey, error) {
	return auth.TOTPKey{}, errors.New("no keys")
}
func (nopTOTP) Match([]byte, string, time.Time) (int64, bool) { return 0, false }
