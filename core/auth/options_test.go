package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

func TestProvidersAndSessionOptions(t *testing.T) {
	authorize := func(context.Context, provider.AuthorizeRequest) (*provider.User, error) { return nil, nil }
	other := provider.Credentials(authorize)
	other.ID = "other"
	a, err := auth.New(auth.Config{
		Adapter:   sessionsOnly{},
		Providers: []provider.Provider{other, provider.Credentials(authorize)},
		Secrets:   []string{"s-0123456789abcdefghijklmnopqrst"},
		Session:   auth.SessionOptions{Strategy: auth.StrategyJWT, MaxAge: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	ps := a.Providers()
	if len(ps) != 2 || ps[0].Common().ID != "other" || ps[1].Common().ID != "credentials" {
		t.Fatalf("Providers() = %v, want other then credentials", ps)
	}
	ps[0] = nil
	if a.Providers()[0] == nil {
		t.Fatal("Providers() shares its slice with the Auth")
	}
	o := a.Settings().Session
	if o.Strategy != auth.StrategyJWT || o.MaxAge != time.Hour || o.UpdateAge == nil || *o.UpdateAge != time.Hour {
		t.Fatalf("SessionOptions() = %+v (UpdateAge %v), want jwt, 1h, 1h", o, o.UpdateAge)
	}
}
