package gormadapter

import (
	"context"
	"errors"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// With the authenticators table omitted, the authenticator methods the Go
// type has are reported missing everywhere the library looks: Probe,
// auth.New's start-up check and a call through core.Store. With the table,
// they are there.
func TestOmittedAuthenticatorsAreMissing(t *testing.T) {
	authenticatorMethods := []core.Method{
		core.MethodCreateAuthenticator, core.MethodGetAuthenticator,
		core.MethodListAuthenticatorsByUserID, core.MethodUpdateAuthenticatorCounter,
	}
	db := openDB(t, "sqlite", false)
	omitted := mustNew(t, db, WithNames(Names{Authenticators: Omit}))
	full := migrated(t, db)

	caps := core.Probe(omitted)
	if got := caps.Missing(authenticatorMethods...); len(got) != len(authenticatorMethods) {
		t.Errorf("Probe with Omit: missing %v, want all of %v", got, authenticatorMethods)
	}
	if caps.HasExtension(core.ExtensionAdvanceAuthenticatorCounter) {
		t.Error("Probe with Omit reports advanceAuthenticatorCounter")
	}
	if got := caps.Missing(core.Methods()...); len(got) != len(authenticatorMethods) {
		t.Errorf("Probe with Omit: missing %v, want only the authenticator methods", got)
	}
	if got := core.Probe(full).Missing(core.Methods()...); len(got) != 0 {
		t.Errorf("Probe with the table: missing %v", got)
	}
	if !core.Probe(full).HasExtension(core.ExtensionAdvanceAuthenticatorCounter) {
		t.Error("Probe with the table lacks advanceAuthenticatorCounter")
	}

	cfg := func(a any) auth.Config {
		return auth.Config{
			Adapter:   a,
			Secrets:   []string{"s-0123456789abcdefghijklmnopqrst"},
			Providers: []provider.Provider{provider.Passkey()},
		}
	}
	_, err := auth.New(cfg(omitted))
	var mm *core.MissingMethodsError
	if !errors.As(err, &mm) {
		t.Fatalf("auth.New with Omit and a passkey provider: %v, want a MissingMethodsError", err)
	}
	named := map[core.Method]bool{}
	for _, m := range mm.Missing {
		named[m.Method] = true
	}
	for _, m := range authenticatorMethods {
		if !named[m] {
			t.Errorf("auth.New's error %q does not name %s", err, m)
		}
	}
	if len(named) != len(authenticatorMethods) {
		t.Errorf("auth.New's error names %v, want only the authenticator methods", mm.Missing)
	}
	if _, err := auth.New(cfg(full)); err != nil {
		t.Errorf("auth.New with the table: %v", err)
	}

	ctx := context.Background()
	_, err = core.NewStore(omitted).GetAuthenticator(ctx, "cred")
	if !errors.As(err, &mm) || !errors.Is(err, core.ErrMissingAdapterMethod) {
		t.Errorf("Store.GetAuthenticator with Omit: %v, want a MissingMethodsError", err)
	}
	_, err = core.NewStore(omitted).AdvanceAuthenticatorCounter(ctx, "cred", 1)
	if !errors.As(err, &mm) {
		t.Errorf("Store.AdvanceAuthenticatorCounter with Omit: %v, want a MissingMethodsError", err)
	}
	if got, err := core.NewStore(full).GetAuthenticator(ctx, "cred"); got != nil || err != nil {
		t.Errorf("Store.GetAuthenticator with the table: %v, %v, want nil, nil", got, err)
	}
}
