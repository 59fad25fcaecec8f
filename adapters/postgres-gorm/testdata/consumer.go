//go:build authport_consumer

// The consumer check's opener of this adapter (tools/release, consumer.go):
// with its program, open is built into a module outside the repository
// that uses the adapter through the released modules only.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"github.com/authport/authport/adapters/postgres-gorm/pgxread"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

func open(ctx context.Context) (any, func() error, error) {
	dsn := os.Getenv("AUTHPORT_POSTGRES_URL")
	u, err := url.Parse(dsn)
	if err != nil || dsn == "" {
		return nil, nil, fmt.Errorf("AUTHPORT_POSTGRES_URL %q is not a PostgreSQL URL", dsn)
	}
	cfg := &gorm.Config{Logger: logger.Discard}
	admin, err := gorm.Open(postgres.Open(dsn), cfg)
	if err != nil {
		return nil, nil, err
	}
	// The run works in a schema of its own and drops it at the end.
	schema := fmt.Sprintf("authport_consumer_%d", time.Now().UnixNano())
	if err := admin.WithContext(ctx).Exec("CREATE SCHEMA " + schema).Error; err != nil {
		return nil, nil, err
	}
	dropSchema := func() error {
		err := admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		if sql, derr := admin.DB(); derr == nil {
			err = errors.Join(err, sql.Close())
		}
		return err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := gorm.Open(postgres.Open(u.String()), cfg)
	if err != nil {
		return nil, nil, errors.Join(err, dropSchema())
	}
	closeDB := func() error {
		sql, err := db.DB()
		if err != nil {
			return err
		}
		return sql.Close()
	}
	// As the README recommends for PostgreSQL: sessions read through
	// pgx, whose package links no other driver either.
	store, err := gormadapter.New(ctx, db, gormadapter.WithRowReader(pgxread.New()))
	if err == nil {
		err = store.Migrate(ctx)
	}
	if err != nil {
		return nil, nil, errors.Join(err, closeDB(), dropSchema())
	}
	return store, func() error { return errors.Join(store.Close(), closeDB(), dropSchema()) }, nil
}
