package coretest

import (
	"context"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// ExtendOnce makes n concurrent extendSession calls for the session with
// token (of the user userID), spread over instances in turn, all with the
// same from and each asking for an expiry of its own (from plus i+1
// minutes), and fails t unless exactly one call wrote and every call
// returned the session as that one stored it. It returns the expiry
// written. It is the check of [core.SessionExtender]'s "of concurrent
// callers that read the same expiry, one writes".
func ExtendOnce(t testing.TB, ctx context.Context, token, userID string, from time.Time, n int, instances ...core.SessionExtender) time.Time {
	t.Helper()
	type result struct {
		s     *core.Session
		wrote bool
		err   error
	}
	results := make([]result, n)
	Concurrently(n, func(i int) {
		s, wrote, err := instances[i%len(instances)].ExtendSession(ctx, token, from, from.Add(time.Duration(i+1)*time.Minute), from.Add(time.Second))
		results[i] = result{s, wrote, err}
	})
	winner := -1
	for i, r := range results {
		if r.err != nil || r.s == nil {
			t.Fatalf("extendSession %d = %v, %v, %v; want the session", i, r.s, r.wrote, r.err)
		}
		if !r.wrote {
			continue
		}
		if winner >= 0 {
			t.Fatalf("extendSession calls %d and %d both wrote; want exactly one of %d concurrent calls with the same from", winner, i, n)
		}
		winner = i
	}
	if winner < 0 {
		t.Fatalf("none of %d concurrent extendSession calls with the same from wrote; want exactly one", n)
	}
	want := core.NormalizeTime(from.Add(time.Duration(winner+1) * time.Minute))
	for i, r := range results {
		if !r.s.Expires.Equal(want) || r.s.SessionToken != token || r.s.UserID != userID {
			t.Errorf("extendSession %d returned %+v; want the session as the writer stored it (expires %v)", i, *r.s, want)
		}
	}
	return want
}
