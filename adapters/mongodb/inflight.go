package mongoadapter

import (
	"context"
	"sync"
	"time"
)

// settleTimeout bounds how long a write whose caller has returned (its
// context ended) goes on waiting for the server's answer.
const settleTimeout = 10 * time.Second

// inflight tracks, by key, the writes of this adapter that have been sent
// and not yet answered, so that a call that must come after them (deleteUser
// after the insert of its user, useVerificationToken after the insert of its
// token) waits for them.
//
// The issue: when a call's context ends while its insert is on the wire,
// the driver stops waiting for the answer but the server may still apply
// the insert, and may do so after later commands sent on other connections.
// The FerretDB stand-in ignores maxTimeMS on insert and runs a command to
// its end even when the client has closed the connection, so under load it
// applied a cut createUser's insert after the deleteUser retried behind it,
// and the user (its e-mail) stayed for good. Such writes therefore run with
// a context of their own (see [settle]), so that their answer is always
// read, and are tracked here until it is.
type inflight struct {
	mu sync.Mutex
	m  map[string]*flight
}

// flight counts the writes in flight under one key; done is closed when
// the count drops to zero.
type flight struct {
	n    int
	done chan struct{}
}

// begin records a write under key and returns the function that ends it.
func (f *inflight) begin(key string) (end func()) {
	f.mu.Lock()
	if f.m == nil {
		f.m = make(map[string]*flight)
	}
	fl := f.m[key]
	if fl == nil {
		fl = &flight{done: make(chan struct{})}
		f.m[key] = fl
	}
	fl.n++
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if fl.n--; fl.n == 0 {
				close(fl.done)
				delete(f.m, key)
			}
		})
	}
}

// wait returns once no write under key is in flight, or with ctx's error
// when ctx ends first.
func (f *inflight) wait(ctx context.Context, key string) error {
	f.mu.Lock()
	fl := f.m[key]
	f.mu.Unlock()
	if fl == nil {
		return nil
	}
	select {
	case <-fl.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle runs w, a write that claims key (a user id, a token), so that it
// cannot land after the calls ordered behind it: w runs with a context that
// the end of ctx does not cancel (bounded by settleTimeout), so the answer
// to every command it sends is read, and it is tracked under key until it
// returns. The call itself returns when w does or when ctx ends, whichever
// comes first (as [outlive]); nothing is sent once ctx has ended.
func (a *Adapter) settle(ctx context.Context, key string, w func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	end := a.flights.begin(key)
	return outlive(ctx, settleTimeout, func(ctx context.Context) error {
		defer end()
		return w(ctx)
	})
}

// Keys of [inflight]: the kinds of record, then the record's key.
func userFlight(id string) string { return "user\x00" + id }

func tokenFlight(identifier, token string) string {
	return "token\x00" + identifier + "\x00" + token
}
