package bboltadapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// Adapter stores authport records in a bbolt file. It implements every
// method of the adapter contract ([core.Adapter]) and [core.ExpiredPurger].
// It is safe for concurrent use.
type Adapter struct {
	db      *bolt.DB
	owned   bool // Open opened db; Close closes it
	root    []byte
	now     func() time.Time
	mode    WriteMode
	grouper grouper
}

var (
	_ core.Adapter       = (*Adapter)(nil)
	_ core.ExpiredPurger = (*Adapter)(nil)
)

// WriteMode chooses how write transactions are committed. bbolt has one
// writer at a time and every commit pays an fsync; batching many callers'
// writes into one commit amortises it.
type WriteMode int

const (
	// WriteGroup (the default) runs a write at once when no other write is
	// committing, and otherwise joins it to the next commit together with
	// every write that arrived meanwhile. A lone writer waits for nothing;
	// concurrent writers share fsyncs. See the README's benchmarks.
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

// WithClock sets the clock used to decide expiry (default time.Now). Tests
// use it to move time.
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
	c := config{root: DefaultRootBucket, now: time.Now, mode: WriteGroup, lockTimeout: DefaultLockTimeout, fileMode: 0o600}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	switch {
	case c.root == "":
		return c, fmt.Errorf("bbolt adapter: root bucket name must not be empty: %w", core.ErrInvalidInput)
	case c.now == nil:
		return c, fmt.Errorf("bbolt adapter: clock must not be nil: %w", core.ErrInvalidInput)
	case c.mode < WriteGroup || c.mode > WriteBatch:
		return c, fmt.Errorf("bbolt adapter: unknown %v: %w", c.mode, core.ErrInvalidInput)
	case c.lockTimeout <= 0:
		return c, fmt.Errorf("bbolt adapter: lock timeout must be positive: %w", core.ErrInvalidInput)
	}
	return c, nil
}

// New returns an adapter that keeps its records in db, which the caller
// opened and keeps owning (Close does not close it). It creates the root
// bucket and the buckets in it when they are missing, in one transaction,
// and fails if db is nil or read-only and the buckets are missing.
func New(db *bolt.DB, opts ...Option) (*Adapter, error) {
	if db == nil {
		return nil, fmt.Errorf("bbolt adapter: nil *bbolt.DB: %w", core.ErrInvalidInput)
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	a := &Adapter{db: db, root: []byte(c.root), now: c.now, mode: c.mode}
	a.grouper.db = db
	if db.IsReadOnly() {
		err = db.View(func(tx *bolt.Tx) error { _, err := openBuckets(tx, a.root); return err })
	} else {
		err = db.Update(func(tx *bolt.Tx) error { return createBuckets(tx, a.root) })
	}
	if err != nil {
		return nil, fmt.Errorf("bbolt adapter: %w", err)
	}
	return a, nil
}

// Open opens (creating it if needed) the bbolt file at path and returns an
// adapter that owns it: Close closes the file. bbolt locks the file for one
// process; when it is locked, Open waits up to the lock timeout
// ([WithLockTimeout], default [DefaultLockTimeout]) and then fails with an
// error matching [ErrLocked] rather than hang.
func Open(path string, opts ...Option) (*Adapter, error) {
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
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("bbolt adapter: open %s: gave up after %v: %w (%w)", path, c.lockTimeout, ErrLocked, err)
	}
	if err != nil {
		return nil, fmt.Errorf("bbolt adapter: open %s: %w", path, err)
	}
	a, err := New(db, opts...)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	a.owned = true
	return a, nil
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
var errZeroAdapter = errors.New("bbolt adapter: not created with New or Open")

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

// update runs fn in a write transaction, committed according to the write
// mode. fn may run more than once (when a batch it joined is retried), so
// it must set its results afresh each time; it runs to completion in one
// transaction that commits only if fn returns nil.
func (a *Adapter) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := a.ready(ctx); err != nil {
		return err
	}
	switch a.mode {
	case WriteUpdate:
		return a.db.Update(fn)
	case WriteBatch:
		return a.db.Batch(fn)
	default:
		return a.grouper.do(fn)
	}
}

// storeErr maps bbolt's refusals of a key or value to core.ErrInvalidInput.
func storeErr(err error) error {
	if errors.Is(err, bolt.ErrKeyTooLarge) || errors.Is(err, bolt.ErrValueTooLarge) || errors.Is(err, bolt.ErrKeyRequired) {
		return fmt.Errorf("%w: %w", core.ErrInvalidInput, err)
	}
	return err
}

// wrap prefixes err with the spec method name, leaving core.InputError
// (which names the method already) alone.
func wrap(method core.Method, err error) error {
	if err == nil {
		return nil
	}
	var ie *core.InputError
	if errors.As(err, &ie) && ie.Method == string(method) {
		return err
	}
	return fmt.Errorf("%s: %w", method, storeErr(err))
}

// grouper commits concurrent writes together (WriteGroup). The first writer
// to arrive while none is committing becomes the leader: it takes every
// queued write, runs them in one transaction, and hands leadership to the
// first write queued meanwhile. A write whose fn fails is taken out and run
// alone, so one failing write never fails others.
type grouper struct {
	db      *bolt.DB
	mu      sync.Mutex
	running bool
	queue   []*groupCall

	// Counters for tests: the largest group committed together, and how
	// many calls were sent back to run alone.
	maxGroup, solo atomic.Int64
}

type groupCall struct {
	fn func(*bolt.Tx) error
	ch chan error // buffered 1: errLead, errSolo or the result
}

var (
	errLead = errors.New("lead the next group")
	errSolo = errors.New("run alone")
)

func (g *grouper) do(fn func(*bolt.Tx) error) error {
	c := &groupCall{fn: fn, ch: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.running {
		g.mu.Unlock()
		err := <-c.ch
		if err != errLead {
			return g.result(c, err)
		}
		g.mu.Lock()
	}
	g.running = true
	group := g.queue
	g.queue = nil
	g.mu.Unlock()

	g.run(group)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].ch <- errLead
	} else {
		g.running = false
	}
	g.mu.Unlock()
	return g.result(c, <-c.ch)
}

func (g *grouper) result(c *groupCall, err error) error {
	if err == errSolo {
		return g.db.Update(c.fn)
	}
	return err
}

// run commits the group in one transaction, taking out and sending back to
// run alone any call whose fn fails.
func (g *grouper) run(group []*groupCall) {
	for len(group) > 0 {
		if len(group) == 1 {
			c := group[0]
			c.ch <- g.db.Update(func(tx *bolt.Tx) error { return safeCall(c.fn, tx) })
			return
		}
		failed := -1
		err := g.db.Update(func(tx *bolt.Tx) error {
			for i, c := range group {
				if err := safeCall(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed >= 0 {
			g.solo.Add(1)
			group[failed].ch <- errSolo
			group = append(group[:failed], group[failed+1:]...)
			continue
		}
		if n := int64(len(group)); err == nil && n > g.maxGroup.Load() {
			g.maxGroup.Store(n) // only the leader writes it
		}
		for _, c := range group {
			c.ch <- err
		}
		return
	}
}

// safeCall runs fn, turning a panic (a bug, never expected) into an error
// so that one call cannot take down the other callers of its group.
func safeCall(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bbolt adapter: panic in write: %v", p)
		}
	}()
	return fn(tx)
}
