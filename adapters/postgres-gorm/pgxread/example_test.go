package pgxread_test

import (
	"context"
	"log"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/postgres-gorm/pgxread"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// The adapter on PostgreSQL, its session reads through pgx. (Not run: it
// needs a server; the adapter's TestRowReaderReadsAlike and the
// postgres_pgxread conformance row run it.)
func ExampleNew() {
	ctx := context.Background()
	db, err := gorm.Open(postgres.Open("postgres://app@localhost:5432/app"), &gorm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	store, err := gormadapter.New(ctx, db, gormadapter.WithRowReader(pgxread.New()))
	if err != nil {
		log.Fatal(err) // e.g. the pool's connections are not pgx's
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	su, err := store.GetSessionAndUser(ctx, "the session cookie's value")
	if err != nil {
		log.Fatal(err)
	}
	_ = su // nil: no such session
}
