// Package coretest holds helpers for tests of code that calls an adapter:
// [Counting] counts the calls of each method through a [core.Store], e.g.
// to show that a request costs one read and no write; [Clock] is a time
// source the test moves; [Concurrently] starts calls that overlap;
// [SyncBuffer] keeps the log a server writes while the test reads it. It
// uses only the standard library and core.
package coretest

import (
	"context"
	"strings"
	"sync"

	"github.com/authport/authport/core"
)

// Counting is a [core.Observer] that counts the calls of each method
// (standard methods and extensions) through the [core.Store] it observes,
// e.g. to show that a request costs one read and no write: observe a
// [core.Store] with it (core.NewStore(adapter, core.WithObserver(c))),
// configure the code under test with that store, then Reset, act, and look
// at Calls or Writes, as ExampleCounting does.
//
// Every call is counted, failed ones and the ones the layer answers
// itself included. It is safe for concurrent use.
type Counting struct {
	mu    sync.Mutex
	calls map[core.Method]int
}

// NewCounting returns a Counting that has counted nothing.
func NewCounting() *Counting {
	return &Counting{calls: map[core.Method]int{}}
}

// Observe counts the call.
func (c *Counting) Observe(_ context.Context, call core.Call) {
	c.mu.Lock()
	c.calls[call.Method]++
	c.mu.Unlock()
}

// Calls returns how often each method was called since the last Reset.
func (c *Counting) Calls() map[core.Method]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[core.Method]int, len(c.calls))
	for m, n := range c.calls {
		out[m] = n
	}
	return out
}

// Reset forgets the calls counted so far.
func (c *Counting) Reset() {
	c.mu.Lock()
	clear(c.calls)
	c.mu.Unlock()
}

// Writes returns the calls counted since the last Reset of methods that
// may change the store: every method but the get and list ones.
func (c *Counting) Writes() map[core.Method]int {
	out := map[core.Method]int{}
	for m, n := range c.Calls() {
		if !IsRead(m) {
			out[m] = n
		}
	}
	return out
}

// WritesExcept returns what Writes returns less the methods named: the
// writes a test did not allow, e.g. anything but the use of an e-mail
// link after a refused sign-in, so that an empty map means "no other
// write".
func (c *Counting) WritesExcept(allowed ...core.Method) map[core.Method]int {
	out := c.Writes()
	for _, m := range allowed {
		delete(out, m)
	}
	return out
}

// IsRead reports whether the method only reads the store (get and list
// methods).
func IsRead(m core.Method) bool {
	return strings.HasPrefix(string(m), "get") || strings.HasPrefix(string(m), "list")
}

// Counting is an observer of a Store.
var _ core.Observer = (*Counting)(nil)
