// A program that stores its users in mysql through the adapter, as an
// application does: TestOneDriverLinked builds it and reads which modules
// the binary links (go version -m). It is built, never run.
package main

import (
	"context"
	"log"
	"os"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

func main() {
	dsn := os.Getenv("DSN")
	db, err := gorm.Open(mysql.Open(dsn), &gorm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	store, err := gormadapter.New(context.Background(), db)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(context.Background()); err != nil {
		log.Fatal(err)
	}
}
