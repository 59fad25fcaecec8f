package auth

import (
	"context"
	"sync"
	"time"

	"github.com/authport/authport/core"
)

// extensionMemory is how long a finished extension is remembered, so that
// a request that read the session before the extension was written (and so
// still sees it due) takes that extension instead of writing its own.
const extensionMemory = time.Minute

// extensions coalesces the extension writes of a session made by
// concurrent requests in this process: a page loading its API calls sends
// several requests at once, and each finds the session due for
// extension. One of them (the leader) writes; the others wait for it and
// take its result. Without it, each would write expires once.
type extensions struct {
	mu        sync.Mutex
	m         map[string]*extension // by session token
	nextSweep time.Time
}

// extension is one session's extension write, running or finished.
type extension struct {
	done chan struct{} // closed when the write has returned
	// from is the Expires the leader read: a request that read the same
	// value (or an older one) was due for the same extension.
	from time.Time
	// Set before done is closed.
	session *core.Session // nil: the session was gone
	err     error
	at      time.Time // when the write returned
}

// join returns the extension of the session with token whose Expires read
// as from: an existing one that a request with that read shares (running,
// or finished with a result), and leader false; or a new one, and leader
// true, which the caller must end with finish.
func (x *extensions) join(token string, from, now time.Time) (e *extension, leader bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		x.m = make(map[string]*extension)
	}
	if now.After(x.nextSweep) {
		for k, old := range x.m {
			if !old.at.IsZero() && now.Sub(old.at) > extensionMemory {
				delete(x.m, k)
			}
		}
		x.nextSweep = now.Add(extensionMemory)
	}
	if e := x.m[token]; e != nil && !from.After(e.from) {
		return e, false
	}
	e = &extension{done: make(chan struct{}), from: from}
	x.m[token] = e
	return e, true
}

// finish records the leader's result and releases the requests waiting
// for it. A failed write is forgotten at once, so the next request tries
// again.
func (x *extensions) finish(token string, e *extension, s *core.Session, err error, now time.Time) {
	x.mu.Lock()
	e.session, e.err, e.at = s, err, now
	if err != nil && x.m[token] == e {
		delete(x.m, token)
	}
	x.mu.Unlock()
	close(e.done)
}

// extendSession moves the session's expiry to now + MaxAge, once for all
// the concurrent requests of this process that found it due (see
// [extensions]); it returns the session as stored afterwards, or nil when
// it was deleted in the meantime. With UpdateAge zero every access
// extends, as the configuration asks, and nothing is shared.
//
// Across processes, an adapter that offers [core.SessionExtender] makes
// the write conditional on the expiry this request read, so that of the
// instances that found the session due at once only one writes; the others
// take the session as that one stored it.
func (a *Auth) extendSession(ctx context.Context, s core.Session, now time.Time) (*core.Session, error) {
	write := func() (*core.Session, error) {
		// With UpdateAge zero, two accesses in one millisecond would ask
		// for the expiry already stored, which is no extension: every
		// access writes then, as configured.
		to := core.NormalizeTime(now.Add(a.maxAge))
		if a.updateAge > 0 && to.After(s.Expires) && a.store.Capabilities().HasExtension(core.ExtensionExtendSession) {
			return call(a, "session extension", func(x core.SessionExtender) (*core.Session, error) {
				stored, _, err := x.ExtendSession(ctx, s.SessionToken, s.Expires, to, now)
				return stored, err
			})
		}
		return call(a, "session extension", func(u core.SessionUpdater) (*core.Session, error) {
			return u.UpdateSession(ctx, core.SessionUpdate{SessionToken: s.SessionToken, Expires: core.Set(now.Add(a.maxAge)), UpdatedAt: core.Set(now)})
		})
	}
	if a.updateAge == 0 {
		return write()
	}
	e, leader := a.extensions.join(s.SessionToken, s.Expires, now)
	if leader {
		updated, err := write()
		a.extensions.finish(s.SessionToken, e, updated, err, a.now())
		return updated, err
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		// The leader's write failed, maybe only because its own request
		// ended: this request tries for itself.
		return write()
	}
	return e.session, nil
}
