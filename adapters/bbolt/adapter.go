package bboltadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	_ core.Adapter                      = (*Adapter)(nil)
	_ core.ExpiredPurger                = (*Adapter)(nil)
	_ core.AuthenticatorCounterAdvancer = (*Adapter)(nil)
	_ core.AccountsByUserLister         = (*Adapter)(nil)
	_ core.AccountUpdater               = (*Adapter)(nil)
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

// New returns an adapter that keeps its records in db, which the caller
// opened and keeps owning (Close does not close it). It creates the root
// bucket and the buckets in it when they are missing, in one transaction,
// and fails if db is nil or read-only and the buckets are missing. It
// refuses, with an error matching [ErrLayout], a root bucket of a layout
// version this build does not read, whether db is writable or read-only.
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
// error matching [ErrLocked] rather than hang.
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
	if errors.Is(err, bolt.ErrTimeout) {
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

// storeErr maps bbolt's refusals of a key or value to core.ErrInvalidInput
// (errors carry no method name: core.Store adds it).
func storeErr(err error) error {
	if errors.Is(err, bolt.ErrKeyTooLarge) || errors.Is(err, bolt.ErrValueTooLarge) || errors.Is(err, bolt.ErrKeyRequired) {
		return fmt.Errorf("%w: %w", core.ErrInvalidInput, err)
	}
	return err
}

// grouper commits concurrent writes together (WriteGroup). The first writer
// to arrive while none is committing becomes the leader: it takes every
// queued write, runs them in one transaction, and hands leadership to the
// first write queued meanwhile. A write whose fn fails is taken out and run
// alone, so one failing write never fails the others; if the commit itself
// fails, every member is rerun alone, so that each gets its own result.
//
// A write leaves the queue when its context is done before a leader took
// it; once taken, it waits for its result. The leader answers every member
// and hands over leadership even if bbolt panics (deferred in lead), so a
// panic cannot leave later writes waiting for ever.
type grouper struct {
	db     *bolt.DB
	update func(func(*bolt.Tx) error) error // db.Update; tests inject failures

	mu      sync.Mutex
	running bool         // a leader is running a group, or has been named (errLead sent)
	queue   []*groupCall // waiting to be taken into a group; queue[0] may hold errLead

	// Counters for tests: the largest group taken into one transaction
	// (counted when taken, before failing members are taken out), and how
	// many calls were sent back to run alone.
	maxGroup, solo atomic.Int64
}

type groupCall struct {
	fn func(*bolt.Tx) error
	ch chan error // buffered 1: errLead, errSolo or the result

	// answered is set by the leader once it has sent the call's answer;
	// only the leader of the call's group reads or writes it.
	answered bool
}

// answer sends c its result, errSolo or a panic error (once).
func (c *groupCall) answer(err error) {
	c.answered = true
	c.ch <- err
}

var (
	errLead = errors.New("lead the next group")
	errSolo = errors.New("run alone")
)

func (g *grouper) do(ctx context.Context, fn func(*bolt.Tx) error) error {
	c := &groupCall{fn: fn, ch: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.running {
		g.mu.Unlock()
		var err error
		select {
		case err = <-c.ch:
		case <-ctx.Done():
			if g.leave(c) {
				return ctx.Err() // never taken: nothing of it was committed
			}
			err = <-c.ch // taken into a group already: wait for its result
		}
		if err != errLead {
			return g.result(ctx, c, err)
		}
		g.mu.Lock()
	}
	g.running = true
	group := g.queue
	g.queue = nil
	if n := int64(len(group)); n > g.maxGroup.Load() {
		g.maxGroup.Store(n) // under mu: one leader at a time
	}
	g.mu.Unlock()

	g.lead(group)
	return g.result(ctx, c, <-c.ch)
}

// leave takes c out of the queue after its context is done, and reports
// whether it was still there. If c had just been named leader (errLead in
// its channel), it passes the lead on. It reports false if a leader has
// taken c into a group already; c must then wait for its answer.
func (g *grouper) leave(c *groupCall) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.queue, c)
	if i < 0 {
		return false
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	select {
	case <-c.ch: // only errLead can be sent to a queued call
		g.handoff()
	default:
	}
	return true
}

// handoff names the first queued call the next leader, or marks the
// grouper idle. g.mu must be held.
func (g *grouper) handoff() {
	if len(g.queue) > 0 {
		g.queue[0].ch <- errLead
	} else {
		g.running = false
	}
}

// result turns a call's answer into its caller's result: errSolo means the
// call was rolled back with its group and must run alone, unless its
// context is done by now (nothing of it was committed).
func (g *grouper) result(ctx context.Context, c *groupCall, err error) error {
	if err != errSolo {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return g.alone(c.fn)
}

// lead runs group, then hands over leadership. Whatever happens in run,
// even a panic in bbolt, every member of the group is answered (a member
// left unanswered gets an error, since whether its write was committed is
// unknown) and the lead is passed on; the panic is not re-raised.
func (g *grouper) lead(group []*groupCall) {
	defer func() {
		p := recover()
		for _, c := range group {
			if !c.answered {
				c.answer(fmt.Errorf("write group aborted, the write may or may not be committed: %w", panicError(p)))
			}
		}
		g.mu.Lock()
		g.handoff()
		g.mu.Unlock()
	}()
	g.run(group)
}

// run commits the group in one transaction. A call whose fn fails is taken
// out and sent back to run alone, and the others are retried without it; if
// the transaction fails with no call to blame (the commit failed), every
// call is sent back to run alone.
func (g *grouper) run(group []*groupCall) {
	for len(group) > 1 {
		failed := -1
		err := g.update(func(tx *bolt.Tx) error {
			for i, c := range group {
				if err := safeCall(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		switch {
		case failed >= 0:
			g.solo.Add(1)
			group[failed].answer(errSolo)
			group = slices.Concat(group[:failed], group[failed+1:])
		case err != nil:
			g.solo.Add(int64(len(group)))
			for _, c := range group {
				c.answer(errSolo)
			}
			return
		default:
			for _, c := range group {
				c.answer(nil)
			}
			return
		}
	}
	if len(group) == 1 {
		group[0].answer(g.alone(group[0].fn))
	}
}

// alone runs fn in a transaction of its own. A panic, in fn or in bbolt,
// is returned as an error.
func (g *grouper) alone(fn func(*bolt.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("write aborted, it may or may not be committed: %w", panicError(p))
		}
	}()
	return g.update(func(tx *bolt.Tx) error { return safeCall(fn, tx) })
}

// panicError describes a recovered panic value (nil when the goroutine
// exited by runtime.Goexit).
func panicError(p any) error {
	if p == nil {
		return errors.New("the leading write's goroutine exited")
	}
	return fmt.Errorf("panic while committing: %v", p)
}

// safeCall runs fn, turning a panic (a bug, never expected) into an error
// so that one call cannot take down the other callers of its group.
func safeCall(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in write: %v", p)
		}
	}()
	return fn(tx)
}
