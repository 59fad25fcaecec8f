package bboltadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Adapter stores authport records in a bbolt file. It implements every
// method of the adapter contract ([core.Adapter]), the extensions
// [core.ExpiredPurger], [core.AuthenticatorCounterAdvancer],
// [core.AccountsByUserLister], [core.AccountUpdater],
// [core.SessionExtender], [core.SessionsByUserLister],
// [core.SessionsByUserDeleter], [core.UserByUsernameGetter] (it keeps
// usernames), [core.PasswordHashSwapper] (it keeps password hashes on
// accounts) and the second factors ([core.FactorCreator],
// [core.FactorsByUserLister], [core.FactorSwapper],
// [core.FactorDeleter]), and keeps session metadata
// ([core.SessionMetadataKeeper]). It is safe for concurrent use.
type Adapter struct {
	db      *bolt.DB
	owned   bool // Open opened db; Close closes it
	root    []byte
	now     func() time.Time
	mode    WriteMode
	grouper grouper
}

// The contract and the extensions the adapter implements.
var _ interface {
	core.Adapter
	core.ExpiredPurger
	core.AuthenticatorCounterAdvancer
	core.AccountsByUserLister
	core.AccountUpdater
	core.SessionExtender
	core.SessionsByUserLister
	core.SessionsByUserDeleter
	core.SessionMetadataKeeper
	core.UserByUsernameGetter
	core.PasswordHashSwapper
	core.FactorCreator
	core.FactorsByUserLister
	core.FactorSwapper
	core.FactorDeleter
} = (*Adapter)(nil)

// New returns an adapter that keeps its records in db, which the caller
// opened and keeps owning (Close does not close it). It creates the root
// bucket and the buckets in it when they are missing, in one transaction,
// and fails if db is nil or read-only and the buckets are missing. It
// refuses, with an error matching [ErrLayout], a root bucket of a layout
// version this build does not read, whether db is writable or read-only.
// A ctx already done stops it before the transaction (bbolt cannot cancel
// one once it runs); errors start with "bboltadapter: ".
func New(ctx context.Context, db *bolt.DB, opts ...Option) (*Adapter, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bboltadapter: %w", err)
	}
	if db == nil {
		return nil, fmt.Errorf("bboltadapter: nil *bbolt.DB: %w", core.ErrInvalidInput)
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	a := &Adapter{db: db, root: []byte(c.root), now: c.now, mode: c.mode}
	a.grouper.db = db
	a.grouper.update = db.Update
	if db.IsReadOnly() {
		err = db.View(func(tx *bolt.Tx) error { return checkBuckets(tx, a.root) })
	} else {
		err = db.Update(func(tx *bolt.Tx) error { return createBuckets(tx, a.root) })
	}
	if err != nil {
		return nil, fmt.Errorf("bboltadapter: %w", err)
	}
	return a, nil
}

// Open opens (creating it if needed) the bbolt file at path and returns an
// adapter that owns it: Close closes the file. bbolt locks the file for one
// process; when it is locked, Open waits up to the lock timeout
// ([WithLockTimeout], default [DefaultLockTimeout]) and then fails with an
// error matching [ErrLocked] rather than hang. A ctx already done stops it
// before the file is opened.
func Open(ctx context.Context, path string, opts ...Option) (*Adapter, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bboltadapter: %w", err)
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	bo := bolt.Options{}
	if c.boltOptions != nil {
		bo = *c.boltOptions
	} else {
		bo = *bolt.DefaultOptions
	}
	bo.Timeout = c.lockTimeout
	db, err := bolt.Open(path, c.fileMode, &bo)
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("bboltadapter: open %s: gave up after %v: %w (%w)", path, c.lockTimeout, ErrLocked, err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if dir := filepath.Dir(path); !dirExists(dir) {
			return nil, fmt.Errorf("bboltadapter: open %s: the directory %s does not exist: create it first, or choose another path: %w", path, dir, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bboltadapter: open %s: %w", path, err)
	}
	a, err := New(ctx, db, opts...)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	a.owned = true
	return a, nil
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// DB returns the underlying database, e.g. for a backup with tx.WriteTo.
func (a *Adapter) DB() *bolt.DB {
	if a == nil {
		return nil
	}
	return a.db
}

// Close closes the database if [Open] opened it; for an adapter from [New]
// it does nothing, since the caller owns the database.
func (a *Adapter) Close() error {
	if a == nil || !a.owned {
		return nil
	}
	return a.db.Close()
}

// errZeroAdapter is returned by every method of an Adapter not made by New
// or Open (a nil pointer or the zero value).
var errZeroAdapter = errors.New("bboltadapter: not created with New or Open")

// ready reports an unusable adapter or a done context.
func (a *Adapter) ready(ctx context.Context) error {
	if a == nil || a.db == nil {
		return errZeroAdapter
	}
	if ctx == nil {
		return fmt.Errorf("nil context: %w", core.ErrInvalidInput)
	}
	return ctx.Err()
}

// view runs fn in a read transaction.
func (a *Adapter) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := a.ready(ctx); err != nil {
		return err
	}
	return a.db.View(fn)
}

// readTx begins a read transaction, for the hot reads that run without
// view's closure; the caller must roll it back.
func (a *Adapter) readTx(ctx context.Context) (*bolt.Tx, error) {
	if err := a.ready(ctx); err != nil {
		return nil, err
	}
	return a.db.Begin(false)
}

// keyOf returns s's bytes without copying them, for lookups (bbolt's Get
// and Seek only read the key). s must not be empty.
func keyOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// update runs fn in a write transaction, committed according to the write
// mode. fn may run more than once (when a group it joined is retried), so
// it must set its results afresh each time; it runs to completion in one
// transaction that commits only if fn returns nil. A panic in fn is
// returned as an error, in every mode.
//
// ctx is checked before the write starts and, in the group mode, while it
// waits in the queue: a write whose ctx is done before it was taken into a
// transaction returns ctx's error and is not committed. Once taken, it
// runs to completion and returns its real result (bbolt cannot abort a
// running transaction, and a committed write must not report an error).
func (a *Adapter) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := a.ready(ctx); err != nil {
		return err
	}
	switch a.mode {
	case WriteUpdate:
		return a.db.Update(func(tx *bolt.Tx) error { return safeCall(fn, tx) })
	case WriteBatch:
		return a.db.Batch(func(tx *bolt.Tx) error { return safeCall(fn, tx) })
	default:
		return a.grouper.do(ctx, fn)
	}
}

// insertOwned stores a new record of the user's with put, in one write
// transaction, after checking that the user exists (else core.ErrNotFound)
// and that the bucket recs does not hold key (else core.ErrAlreadyExists,
// saying taken).
func (a *Adapter) insertOwned(ctx context.Context, userID string, key, recs []byte, taken string, put func(*buckets) error) error {
	err := a.update(ctx, func(tx *bolt.Tx) error {
		b, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		if b.users.Get([]byte(userID)) == nil {
			return fmt.Errorf("no user with this id: %w", core.ErrNotFound)
		}
		if b.root.Bucket(recs).Get(key) != nil {
			return fmt.Errorf("%s: %w", taken, core.ErrAlreadyExists)
		}
		return put(b)
	})
	return storeErr(err)
}

// createOwned is linkAccount's and createAuthenticator's write: with
// insertOwned, it puts the record val under key in the bucket recs and the
// user's entry for it in the owner index idx, and returns out.
func createOwned[T any](ctx context.Context, a *Adapter, out T, userID string, key, val, recs, idx []byte, taken string) (*T, error) {
	err := a.insertOwned(ctx, userID, key, recs, taken, func(b *buckets) error {
		if err := b.root.Bucket(recs).Put(key, val); err != nil {
			return err
		}
		return b.root.Bucket(idx).Put(ownerKey(userID, key), marker)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// storeErr maps bbolt's refusals of a key or value to core.ErrInvalidInput
// (errors carry no method name: core.Store adds it).
func storeErr(err error) error {
	if errors.Is(err, berrors.ErrKeyTooLarge) || errors.Is(err, berrors.ErrValueTooLarge) || errors.Is(err, berrors.ErrKeyRequired) {
		return fmt.Errorf("%w: %w", core.ErrInvalidInput, err)
	}
	return err
}

// write runs fn on the adapter's buckets in a write transaction, committed
// according to the write mode (see update: fn may run more than once), and
// returns the result of its last run.
func write[T any](ctx context.Context, a *Adapter, fn func(b *buckets) (T, error)) (T, error) {
	return inTx(func(f func(*bolt.Tx) error) error { return a.update(ctx, f) }, func(tx *bolt.Tx) (T, error) {
		b, err := openBuckets(tx, a.root)
		if err != nil {
			var zero T
			return zero, err
		}
		return fn(b)
	})
}

// writeFound runs change, in one write transaction as write does, on the
// record that get reads there, and returns what change returns; when get
// finds no record it returns the zero R and a nil error, and change does
// not run.
func writeFound[T, R any](ctx context.Context, a *Adapter, get func(b *buckets) (*T, error), change func(b *buckets, old *T) (R, error)) (R, error) {
	return write(ctx, a, func(b *buckets) (R, error) {
		old, err := get(b)
		if err != nil || old == nil {
			var zero R
			return zero, err
		}
		return change(b, old)
	})
}

// read runs fn in a read transaction and returns its result.
func read[T any](ctx context.Context, a *Adapter, fn func(tx *bolt.Tx) (T, error)) (T, error) {
	return inTx(func(f func(*bolt.Tx) error) error { return a.view(ctx, f) }, fn)
}

// inTx runs fn in the transaction run gives it and returns the result of
// its last run, or the zero value and the error (through storeErr).
func inTx[T any](run func(func(*bolt.Tx) error) error, fn func(tx *bolt.Tx) (T, error)) (T, error) {
	var out T
	err := run(func(tx *bolt.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, storeErr(err)
	}
	return out, nil
}

// getRecord reads and decodes the record under key in b; nil when key is
// empty or there is none.
func getRecord[T any](b *bolt.Bucket, key []byte, decode func([]byte) (*T, error)) (*T, error) {
	if len(key) == 0 {
		return nil, nil
	}
	v := b.Get(key)
	if v == nil {
		return nil, nil
	}
	return decode(v)
}

// getOne reads and decodes the record under key in the bucket name; nil
// when there is none.
func getOne[T any](ctx context.Context, a *Adapter, name, key []byte, decode func([]byte) (*T, error)) (*T, error) {
	return read(ctx, a, func(tx *bolt.Tx) (*T, error) {
		b, err := bucket(tx, a.root, name)
		if err != nil {
			return nil, err
		}
		return getRecord(b, key, decode)
	})
}

// listOwned returns the records of the bucket recs that the user's entries
// in the owner index idx point to, in index order, leaving out those keep
// (when not nil) refuses; an empty, non-nil list for a user with none. It
// is one read transaction: a Seek to the user's prefix in idx, Next while
// the prefix holds, and a Get of each record.
func listOwned[T any](ctx context.Context, a *Adapter, idx, recs []byte, userID string, decode func([]byte) (*T, error), keep func(*T) bool) ([]T, error) {
	return read(ctx, a, func(tx *bolt.Tx) ([]T, error) {
		index, records, err := bucket2(tx, a.root, idx, recs)
		if err != nil {
			return nil, err
		}
		out := []T{}
		if index == nil || records == nil { // later buckets a read-only file from before them lacks
			if index != records {
				return nil, fmt.Errorf("%w: one of the buckets %q and %q is missing", ErrCorrupt, idx, recs)
			}
			return out, nil
		}
		prefix := ownerPrefix(userID)
		c := index.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			v := records.Get(k[len(prefix):])
			if v == nil {
				return nil, fmt.Errorf("%w: index entry in %s for a missing record", ErrCorrupt, idx)
			}
			x, err := decode(v)
			if err != nil {
				return nil, err
			}
			if keep == nil || keep(x) {
				out = append(out, *x)
			}
		}
		return out, nil
	})
}
