// Package ratelimit limits how often something may happen per key (an
// e-mail address, a client address): the [Store] interface the HTTP
// handler calls, and [Memory], the in-process store.
//
// Limits follow the generic cell rate algorithm (GCRA): a [Limit] of N
// events per period allows a burst of N, then one more every period/N.
// Stores for several instances (e.g. the Redis one in
// github.com/authport/authport/adapters/redis/ratelimit) implement the
// same algorithm atomically in the shared server, so that a limit holds
// across every instance.
package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/authport/authport/core"
)

// Limit is how many events a key may have per period.
type Limit struct {
	// Events is the burst and the number of events per Period; zero or
	// less disables the limit.
	Events int
	// Period is the time over which Events are allowed.
	Period time.Duration
}

// Enabled reports whether the limit limits anything.
func (l Limit) Enabled() bool { return l.Events > 0 && l.Period > 0 }

// Check returns nil for an enabled limit, and for one that is not an error
// matching [core.ErrInvalidConfig]: what a [Store]'s Allow returns for it.
func (l Limit) Check() error {
	if !l.Enabled() {
		return errInvalidLimit
	}
	return nil
}

// Interval is the time one event uses up: Period/Events.
func (l Limit) Interval() time.Duration { return l.Period / time.Duration(l.Events) }

// String describes the limit, e.g. "5 per 1h0m0s".
func (l Limit) String() string {
	if !l.Enabled() {
		return "unlimited"
	}
	return fmt.Sprintf("%d per %v", l.Events, l.Period)
}

// Result is a store's answer for one event.
type Result struct {
	// Allowed reports whether the event is within the limit; a refused
	// event is not counted.
	Allowed bool
	// RetryAfter is, for a refused event, how long until one more is
	// allowed.
	RetryAfter time.Duration
}

// Store counts events per key against a limit. Allow counts one event
// for key and reports whether it is within limit; it must be atomic: two
// concurrent calls never both take the last event of a burst, across
// every process that shares the store. Keys are at most a few hundred
// bytes; a store may hash them. Implementations are safe for concurrent
// use.
type Store interface {
	Allow(ctx context.Context, key string, limit Limit) (Result, error)
}

// errInvalidLimit is returned for a limit that is not enabled.
var errInvalidLimit = fmt.Errorf("ratelimit: limit must have Events > 0 and Period > 0: %w", core.ErrInvalidConfig)

// DefaultMaxKeys is the default bound of a [Memory] store: about 100 bytes
// a key, so some 10 MB at most.
const DefaultMaxKeys = 100_000

// Memory is the in-process [Store]: GCRA with one time per key, kept until
// the key is back to a full burst. It holds at most MaxKeys keys; when
// full, a new key is refused (rather than an old one forgotten, which
// would let a flood of keys reset anyone's limit) until keys expire. It
// limits one process only: instances behind a load balancer each allow
// the whole limit; give them a shared store instead.
type Memory struct {
	maxKeys int
	now     func() time.Time

	mu    sync.Mutex
	tat   map[string]time.Time // theoretical arrival time of the next event
	sweep time.Time            // when expired keys were last removed
}

// MemoryOption configures a [Memory] store.
type MemoryOption func(*Memory)

// WithMaxKeys bounds how many keys the store holds (default
// [DefaultMaxKeys]).
func WithMaxKeys(n int) MemoryOption { return func(m *Memory) { m.maxKeys = n } }

// WithClock sets the store's clock (default time.Now), for tests.
func WithClock(now func() time.Time) MemoryOption { return func(m *Memory) { m.now = now } }

// NewMemory returns an empty in-process store.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{maxKeys: DefaultMaxKeys, now: time.Now, tat: map[string]time.Time{}}
	for _, o := range opts {
		o(m)
	}
	if m.maxKeys <= 0 {
		m.maxKeys = DefaultMaxKeys
	}
	return m
}

// Allow implements [Store].
func (m *Memory) Allow(ctx context.Context, key string, limit Limit) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := limit.Check(); err != nil {
		return Result{}, err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	tat, ok := m.tat[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	next := tat.Add(limit.Interval())
	if over := next.Sub(now) - limit.Period; over > 0 {
		return Result{RetryAfter: over}, nil
	}
	if !ok && len(m.tat) >= m.maxKeys {
		m.removeExpired(now, true)
		if len(m.tat) >= m.maxKeys {
			return Result{RetryAfter: limit.Interval()}, nil
		}
	}
	m.tat[key] = next
	if now.Sub(m.sweep) > time.Minute {
		m.removeExpired(now, false)
	}
	return Result{Allowed: true}, nil
}

// removeExpired forgets keys back at a full burst (their time is past).
// Unless forced it runs at most once a minute.
func (m *Memory) removeExpired(now time.Time, force bool) {
	if !force && now.Sub(m.sweep) <= time.Minute {
		return
	}
	m.sweep = now
	for k, t := range m.tat {
		if !t.After(now) {
			delete(m.tat, k)
		}
	}
}

// Len returns how many keys the store holds.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tat)
}
