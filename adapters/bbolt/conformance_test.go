package bboltadapter

import (
	"context"
	"testing"

	"github.com/authport/authport/conformance"
)

// TestConformance runs the shared suite with a fresh file per test; the
// suite runs CheckConsistency after every test through the raw view.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		Name: "bbolt",
		New: func(t testing.TB) conformance.Fixture {
			a, raw := newTestAdapter(t)
			return conformance.Fixture{Adapter: a, Raw: raw, Peer: func(t testing.TB) any {
				// A second adapter on the same open file (bbolt locks the
				// file to one process).
				b, err := New(context.Background(), a.DB())
				if err != nil {
					t.Fatalf("New on the same *bbolt.DB: %v", err)
				}
				return b
			}}
		},
	})
}

var (
	_ conformance.Raw                = rawView{}
	_ conformance.Mentioner          = rawView{}
	_ conformance.ConsistencyChecker = rawView{}
	_ conformance.RawWriter          = rawView{}
	_ conformance.UserDataWriter     = rawView{}
	_ conformance.FactorRaw          = rawView{}
)
