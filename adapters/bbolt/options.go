package bboltadapter

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// WriteMode chooses how write transactions are committed. bbolt has one
// writer at a time and every commit pays an fsync; batching many callers'
// writes into one commit amortises it.
type WriteMode int

const (
	// WriteGroup (the default) runs a write at once when no other write is
	// committing, and otherwise joins it to the next commit together with
	// every write that arrived meanwhile. A lone writer waits for nothing;
	// concurrent writers share fsyncs. A write that fails in a shared
	// transaction, and every member of a group whose commit fails, is rerun
	// alone, so that each write gets its own result; a write whose context
	// is done while it is still queued leaves the queue, uncommitted. See
	// the README's "Writes and throughput" and benchmarks.
	WriteGroup WriteMode = iota
	// WriteUpdate gives every write its own db.Update transaction.
	WriteUpdate
	// WriteBatch sends every write through db.Batch, which waits up to
	// db.MaxBatchDelay (10ms by default) to collect a batch, even for a
	// lone writer.
	WriteBatch
)

// String returns the mode's name: "group", "update" or "batch".
func (m WriteMode) String() string {
	switch m {
	case WriteGroup:
		return "group"
	case WriteUpdate:
		return "update"
	case WriteBatch:
		return "batch"
	}
	return fmt.Sprintf("WriteMode(%d)", int(m))
}

// Option configures [New] and [Open].
type Option func(*config)

type config struct {
	root        string
	now         func() time.Time
	mode        WriteMode
	lockTimeout time.Duration
	fileMode    os.FileMode
	boltOptions *bolt.Options
}

// DefaultLockTimeout is how long [Open] waits for the file lock by default.
const DefaultLockTimeout = time.Second

// DefaultRootBucket is the name of the bucket that holds all of the
// adapter's buckets unless [WithRootBucket] names another.
const DefaultRootBucket = "authport"

// WithRootBucket names the top-level bucket that holds the adapter's
// buckets (default [DefaultRootBucket]). Two adapters on one file with
// different root buckets are independent stores.
func WithRootBucket(name string) Option { return func(c *config) { c.root = name } }

// WithClock sets the clock used to decide expiry (default: the system
// clock, its wall time read in full once a second and moved on by the
// monotonic clock in between, which is cheaper to read on virtual
// machines). Tests use it to move time.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithWriteMode sets how writes are committed (default [WriteGroup]).
func WithWriteMode(m WriteMode) Option { return func(c *config) { c.mode = m } }

// WithLockTimeout sets how long [Open] waits for the file lock that another
// process (or another Open of the same file) holds, before it gives up with
// an error matching [ErrLocked] (default [DefaultLockTimeout]). It must be
// positive; New ignores it.
func WithLockTimeout(d time.Duration) Option { return func(c *config) { c.lockTimeout = d } }

// WithFileMode sets the permissions [Open] creates the file with (default
// 0600). New ignores it.
func WithFileMode(m os.FileMode) Option { return func(c *config) { c.fileMode = m } }

// WithBoltOptions passes bbolt options to [Open] (its Timeout is replaced by
// the lock timeout). New ignores it.
func WithBoltOptions(o *bolt.Options) Option { return func(c *config) { c.boltOptions = o } }

// ErrLocked is matched by the error [Open] returns when another process, or
// another open handle in this process, holds the file's lock past the lock
// timeout. bbolt allows one process per file.
var ErrLocked = errors.New("database file is locked by another process or another open handle")

func newConfig(opts []Option) (config, error) {
	c := config{root: DefaultRootBucket, now: new(systemClock).now, mode: WriteGroup, lockTimeout: DefaultLockTimeout, fileMode: 0o600}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	switch {
	case c.root == "":
		return c, fmt.Errorf("bboltadapter: root bucket name must not be empty: %w", core.ErrInvalidInput)
	case c.now == nil:
		return c, fmt.Errorf("bboltadapter: clock must not be nil: %w", core.ErrInvalidInput)
	case c.mode < WriteGroup || c.mode > WriteBatch:
		return c, fmt.Errorf("bboltadapter: unknown %v: %w", c.mode, core.ErrInvalidInput)
	case c.lockTimeout <= 0:
		return c, fmt.Errorf("bboltadapter: lock timeout must be positive: %w", core.ErrInvalidInput)
	}
	return c, nil
}
