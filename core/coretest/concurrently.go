package coretest

import "sync"

// Concurrently runs f(0) … f(n-1), each in a goroutine of its own, all
// released at once so that the calls overlap as much as the scheduler
// lets them, and returns when every call has returned. It is how the
// tests of "of concurrent callers, one …" rules make their callers.
func Concurrently(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}
