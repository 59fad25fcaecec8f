package bboltadapter

import (
	"sync/atomic"
	"time"
)

// systemClock is the default clock: the system's wall time, read as the
// wall time of its last full reading plus the monotonic time elapsed since
// then, with a full reading again once a second. On virtual machines a
// full reading (time.Now: the wall clock and the monotonic clock) costs
// two reads of a paravirtual clock, about 100 ns on kvm-clock, which is a
// tenth of a getSessionAndUser; the monotonic read alone is half that. A
// step of the system's wall clock is seen within a second; expiry is
// compared at millisecond precision against times that are minutes to
// months away. Linux's monotonic clock stops while the machine is
// suspended: for up to a second after a resume the time read may lag by
// the suspension's length (a session that expired meanwhile is still
// accepted in that second).
type systemClock struct {
	base atomic.Pointer[time.Time] // the last full reading, with its monotonic reading
}

// resync is how long a full reading of the system clock is used before the
// next.
const resync = time.Second

// now returns the current wall time (with a monotonic reading, as
// time.Now's has).
func (c *systemClock) now() time.Time {
	if b := c.base.Load(); b != nil {
		if d := time.Since(*b); d >= 0 && d < resync {
			return b.Add(d)
		}
	}
	t := time.Now()
	c.base.Store(&t)
	return t
}
