package conformance_test

import (
	"testing"

	"github.com/authport/authport/conformance"
)

// Example is the test an adapter's module writes: TestConformance runs
// every rule of the contract against a fresh adapter per test, with a raw
// view of the same storage. (It needs a *testing.T, so this example is
// compiled, not run: adapters/memory's memory_test.go has one that runs.)
func Example() {
	testConformance := func(t *testing.T) { // func TestConformance(t *testing.T) in your module
		conformance.Run(t, conformance.Harness{Name: "mybackend", New: newFixture})
	}
	_ = testConformance
}

// newFixture opens an empty store of its own for one test (a database,
// schema, key prefix or file, dropped in t.Cleanup; provision finds the
// server) and returns the adapter with a raw view of the same storage.
func newFixture(t testing.TB) conformance.Fixture {
	adapter, raw := openMyBackend(t)
	return conformance.Fixture{Adapter: adapter, Raw: raw}
}

// openMyBackend stands for the backend's own setup.
var openMyBackend func(t testing.TB) (adapter any, raw conformance.Raw)
