package redisadapter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/core"
)

// noScriptHook records the commands of every pipeline and, while armed,
// answers the release script's EVALSHA with NOSCRIPT without sending it,
// as a node that has not loaded the script (a restarted or new master, a
// SCRIPT FLUSH) would. It is not done with a real SCRIPT FLUSH because the
// cluster is shared with the other tests of the run, whose own EVALSHA
// calls would then fail.
type noScriptHook struct {
	sha   string
	mu    sync.Mutex
	armed bool
	names []string
}

// pipeline is the hook's Pipeline (see redistest.Hook).
func (h *noScriptHook) pipeline(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
	h.mu.Lock()
	refuse := false
	for _, c := range cmds {
		h.names = append(h.names, c.Name())
		if h.armed && c.Name() == "evalsha" && len(c.Args()) > 1 && c.Args()[1] == h.sha {
			refuse = true
		}
	}
	if refuse {
		h.armed = false
	}
	h.mu.Unlock()
	if refuse {
		err := noScriptErr("NOSCRIPT No matching script. Please use EVAL.")
		for _, c := range cmds {
			c.SetErr(err)
		}
		return err
	}
	return next(ctx, cmds)
}

// noScriptErr is a Redis error reply (it has go-redis's RedisError method).
type noScriptErr string

func (e noScriptErr) Error() string { return string(e) }
func (noScriptErr) RedisError()     {}

func (h *noScriptHook) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.names
	h.names = nil
	return n
}

// TestClusterDeleteUserReleasesBySHA: on a cluster, deleteUser releases the
// user's pointer keys (e-mail, accounts, sessions) in one pipeline of
// EVALSHA, not of EVAL with the script's text, and when a node answers
// NOSCRIPT it sends the script itself; either way no pointer is left.
func TestClusterDeleteUserReleasesBySHA(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t)})
	t.Cleanup(func() { _ = c.Close() })
	a, raw := fixture(t, c)
	h := &noScriptHook{sha: a.s.release.Hash()}
	c.AddHook(redistest.Hook{Pipeline: h.pipeline})
	ctx := context.Background()
	if err := a.Preload(ctx); err != nil {
		t.Fatal(err)
	}
	seed := func(id string) {
		t.Helper()
		if _, err := a.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"github", "gitlab"} {
			if _, err := a.LinkAccount(ctx, core.Account{UserID: id, Provider: p, Type: core.AccountTypeOAuth, ProviderAccountID: id}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			tok := id + "-s" + string(rune('0'+i))
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: id, Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		id       string
		noScript bool
		want     string
	}{{"u1", false, "evalsha"}, {"u2", true, "eval"}} {
		seed(tc.id)
		h.take()
		h.mu.Lock()
		h.armed = tc.noScript
		h.mu.Unlock()
		if u, err := a.DeleteUser(ctx, tc.id); err != nil || u == nil || u.ID != tc.id {
			t.Fatalf("deleteUser(%s) = %v, %v", tc.id, u, err)
		}
		names := strings.Join(h.take(), " ")
		if !strings.Contains(names, tc.want) || (!tc.noScript && strings.Contains(" "+names+" ", " eval ")) {
			t.Errorf("deleteUser(%s), NOSCRIPT %v: pipelined %q; want %s", tc.id, tc.noScript, names, tc.want)
		}
		if left, err := raw.Mentions(ctx, tc.id); err != nil || len(left) > 0 {
			t.Errorf("after deleteUser(%s): %v still mention it (%v)", tc.id, left, err)
		}
		// The pointers are free: another user can take the e-mail and
		// the accounts.
		other := tc.id + "-next"
		if _, err := a.CreateUser(ctx, core.User{ID: other, Email: tc.id + "@example.com"}); err != nil {
			t.Errorf("creating a user with %s's e-mail after deleteUser: %v", tc.id, err)
		}
		if _, err := a.LinkAccount(ctx, core.Account{UserID: other, Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: tc.id}); err != nil {
			t.Errorf("linking %s's account to another user after deleteUser: %v", tc.id, err)
		}
	}
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Errorf("inconsistent at the end: %v", err)
	}
}
