package handlersec

import (
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/tests/handlersec/stores"
)

func randomName(t testing.TB) string { return stores.RandomName(t, "handlersec_") }

// testStores are the stores the tests run on, each fresh for the test: the
// real ones, and the memory adapter the handler module's own tests use.
var testStores = []struct {
	name string
	open func(t *testing.T) core.Adapter
}{
	{"memory", func(*testing.T) core.Adapter { return memory.New() }},
	{"bbolt", func(t *testing.T) core.Adapter { return stores.Bbolt(t) }},
	{"postgres", func(t *testing.T) core.Adapter { return stores.Postgres(t, "handlersec_") }},
	{"redis", func(t *testing.T) core.Adapter { return stores.Redis(t, "handlersec_") }},
}
