package passkeystore

import (
	"testing"

	"github.com/authport/authport/passkey/passkeytest"
	"github.com/authport/authport/tests/handlersec/stores"
)

// TestRedis runs the ceremonies on a Redis server, each scenario under a
// key prefix of its own, removed afterwards.
func TestRedis(t *testing.T) {
	passkeytest.Run(t, func(t *testing.T) passkeytest.Store { return stores.Redis(t, "passkey_") })
}

// TestPostgres runs the ceremonies on PostgreSQL through GORM, each
// scenario in a schema of its own, dropped afterwards.
func TestPostgres(t *testing.T) {
	passkeytest.Run(t, func(t *testing.T) passkeytest.Store { return stores.Postgres(t, "passkey_") })
}
