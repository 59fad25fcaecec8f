package memory_test

import (
	"context"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Harness{Name: "memory", New: newFixture})
}

func newFixture(testing.TB) conformance.Fixture {
	a := memory.New()
	return conformance.Fixture{Adapter: a, Raw: conformance.RawSnapshot(func(context.Context) (conformance.Records, error) {
		return conformance.Records(a.Snapshot()), nil
	})}
}
