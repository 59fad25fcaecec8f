package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Harness{Name: "memory", New: newFixture})
}

func newFixture(testing.TB) conformance.Fixture {
	a := memory.New()
	return conformance.Fixture{Adapter: a, Peer: func(testing.TB) any {
		return a // the store is the adapter value: a second "instance" shares it
	}, Raw: rawView{
		Raw: conformance.RawSnapshot(func(context.Context) (conformance.Records, error) {
			return records(a.Snapshot()), nil
		}),
		a: a,
	}}
}

// records is the snapshot as the raw view's records; the factors are
// read through Factors.
func records(s memory.Snapshot) conformance.Records {
	return conformance.Records{Users: s.Users, Accounts: s.Accounts, Sessions: s.Sessions,
		VerificationTokens: s.VerificationTokens, Authenticators: s.Authenticators}
}

// rawView reads through Snapshot and writes through Import.
type rawView struct {
	conformance.Raw
	a *memory.Adapter
}

// Factors implements conformance.FactorRaw: the factors as stored.
func (r rawView) Factors(context.Context) ([]core.Factor, error) { return r.a.Snapshot().Factors, nil }

func (r rawView) WriteAccount(ctx context.Context, acc core.Account) error {
	return r.a.Import(ctx, memory.Snapshot{Accounts: []core.Account{acc}})
}

// WriteUserData sets application fields on a stored user as another program
// would: it reads the user from a snapshot and imports it back changed.
func (r rawView) WriteUserData(ctx context.Context, userID string, data map[string]json.RawMessage) error {
	for _, u := range r.a.Snapshot().Users {
		if u.ID == userID {
			u.Data = core.MergeData(u.Data, data)
			return r.a.Import(ctx, memory.Snapshot{Users: []core.User{u}})
		}
	}
	return fmt.Errorf("no user %q", userID)
}
