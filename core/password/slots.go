package password

import "context"

// slots is a counting semaphore of n slots whose acquire takes k at once
// and gives up when its context ends. A request for more than one slot
// first takes the big lock, so two of them never each hold part of what
// the other waits for; single-slot requests cannot deadlock at all.
type slots struct {
	free chan struct{} // one element per free slot
	big  chan struct{} // held by the one multi-slot request taking slots
	n    int
}

func newSlots(n int) *slots {
	s := &slots{free: make(chan struct{}, n), big: make(chan struct{}, 1), n: n}
	for range n {
		s.free <- struct{}{}
	}
	return s
}

// acquire takes min(k, n) slots (at least one) and returns the function
// that gives them back, or ctx's error, holding nothing, if ctx ends first.
func (s *slots) acquire(ctx context.Context, k int) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k = max(1, min(k, s.n))
	if k > 1 {
		select {
		case s.big <- struct{}{}:
			defer func() { <-s.big }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	held := 0
	give := func() {
		for range held {
			s.free <- struct{}{}
		}
	}
	for held < k {
		select {
		case <-s.free:
			held++
		case <-ctx.Done():
			give()
			return nil, ctx.Err()
		}
	}
	return give, nil
}
