package gormadapter

import (
	"database/sql"
	"testing"

	"gorm.io/gorm"
)

// For the tests of package gormadapter_test (rowreader_test.go): they
// import pgxread, which imports this package, so they cannot be in it.

// RunVariant runs the conformance suite on each backend with opt, as
// <backend>_<name> (runVariant).
var RunVariant = runVariant

// OpenTestDB opens a fresh database of backend on the shared servers, or on
// PostgreSQL with pgx's connection parameters params; it is dropped when
// the test ends.
func OpenTestDB(t testing.TB, backend string, params map[string]string) (*gorm.DB, *sql.DB) {
	t.Helper()
	var db *testDB
	if backend == "postgres" && params != nil {
		db = openPostgresWith(t, false, params)
	} else {
		db = openDB(t, backend, false)
	}
	return db.gdb, db.sqlDB
}
