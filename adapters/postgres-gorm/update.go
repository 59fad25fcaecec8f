package gormadapter

import (
	"context"
	"database/sql"
	"errors"
)

// updateIf runs the conditional UPDATE s (with args) of one row and reads
// the row as stored afterwards into dest, with the SELECT read (with key).
// It reports whether s changed the row and whether the row exists.
//
// Where the dialect has UPDATE … RETURNING, s returns the row it changed,
// and read runs only when s changed nothing. Elsewhere (MySQL, MariaDB) s
// and read run in one transaction, so that the row read back is the one s
// changed (s holds its row lock until the commit); s then changed the row
// when it reports one row affected.
func (a *Adapter) updateIf(ctx context.Context, s, read *statement, args, key, dest []any) (updated, found bool, err error) {
	if a.d.updateReturning {
		err := a.queryRow(ctx, nil, s, args...).Scan(dest...)
		if !errors.Is(err, sql.ErrNoRows) {
			return err == nil, err == nil, err
		}
		found, err := a.read(ctx, nil, read, dest, key...)
		return false, found, err
	}
	err = a.inTx(ctx, []*statement{s, read}, func(tx *sql.Tx) error {
		n, err := a.affected(ctx, tx, s, args...)
		if err != nil {
			return err
		}
		updated = n > 0
		found, err = a.read(ctx, tx, read, dest, key...)
		return err
	})
	if err != nil {
		return false, false, err
	}
	return updated, found, nil
}

// read runs the SELECT s of at most one row (in tx when not nil) and scans
// it into dest, reporting whether there was one. A key the database cannot
// convert to its column's type (see keyUnusable) finds nothing.
func (a *Adapter) read(ctx context.Context, tx *sql.Tx, s *statement, dest []any, key ...any) (bool, error) {
	err := a.queryRow(ctx, tx, s, key...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) || keyUnusable(err) {
		return false, nil
	}
	return err == nil, err
}
