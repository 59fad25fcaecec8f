package bboltadapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

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
