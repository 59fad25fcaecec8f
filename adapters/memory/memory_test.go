package memory_test

import (
	"context"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		Name: "memory",
		New: func(testing.TB) conformance.Fixture {
			a := memory.New()
			return conformance.Fixture{Adapter: a, Raw: Raw{a}}
		},
	})
}

// Raw is the conformance suite's view of what a memory adapter stores.
type Raw struct{ A *memory.Adapter }

func (r Raw) Users(context.Context) ([]core.User, error) { return r.A.Snapshot().Users, nil }
func (r Raw) Accounts(context.Context) ([]core.Account, error) {
	return r.A.Snapshot().Accounts, nil
}
func (r Raw) Sessions(context.Context) ([]core.Session, error) {
	return r.A.Snapshot().Sessions, nil
}
func (r Raw) VerificationTokens(context.Context) ([]core.VerificationToken, error) {
	return r.A.Snapshot().VerificationTokens, nil
}
func (r Raw) Authenticators(context.Context) ([]core.Authenticator, error) {
	return r.A.Snapshot().Authenticators, nil
}
