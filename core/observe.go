package core

import (
	"context"
	"time"
)

// Call is one call through a [Store], as an [Observer] is told of it.
type Call struct {
	// Method is the spec name of the method (or of the extension) called.
	Method Method
	// Took is how long the call took, the layer's checks included.
	Took time.Duration
	// Err is the error the call returned (nil on success), as the caller
	// got it: a [*MethodError], an [*InputError], a
	// [*MissingMethodsError].
	Err error
}

// Observer is told of every call through a [Store] once the call has
// returned: the standard methods and the extensions alike, including the
// calls the layer answers itself (a missing method, a done context, input
// it rejects, a lookup by a key nothing can be stored under). Use it for
// metrics (calls and errors per method, latency), logging, tracing
// annotations, or in tests to count what a request costs (see
// core/coretest.Counting).
//
// A Store calls its observers from the goroutine of the call, so an
// Observer must be safe for concurrent use, and should return quickly:
// the caller waits for it. A Store without observers measures nothing and
// calls nothing.
type Observer interface {
	// Observe is called once per call, after it returned, with the call's
	// context.
	Observe(ctx context.Context, c Call)
}

// ObserverFunc is a function used as an [Observer].
type ObserverFunc func(ctx context.Context, c Call)

// Observe calls f.
func (f ObserverFunc) Observe(ctx context.Context, c Call) { f(ctx, c) }

// StoreOption configures a [Store] made by [NewStore].
type StoreOption func(*Store)

// WithObserver adds o to the observers of the Store, which are told of
// every call in the order they were added. A nil o is ignored.
func WithObserver(o Observer) StoreOption {
	return func(s *Store) {
		if o != nil {
			s.observers = append(s.observers[:len(s.observers):len(s.observers)], o)
		}
	}
}

// observed runs the call run and tells the Store's observers of it, if it
// has any.
func observed[R any](ctx context.Context, s *Store, m Method, run func() (R, error)) (R, error) {
	if len(s.observers) == 0 {
		return run()
	}
	start := time.Now()
	r, err := run()
	c := Call{Method: m, Took: time.Since(start), Err: err}
	for _, o := range s.observers {
		o.Observe(ctx, c)
	}
	return r, err
}
