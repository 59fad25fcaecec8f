package redisadapter

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/core"
)

// frozenHook is a go-redis hook that, while armed, holds every command and
// pipeline sent on a context without cancellation for stall before sending
// it: a master that stops answering, which a step run to its end
// (context.WithoutCancel) waits for until the client's read timeout.
// Commands on the caller's context end with it, as with
// ContextTimeoutEnabled.
type frozenHook struct {
	armed atomic.Bool
	stall time.Duration
}

// hook holds, while armed, every command and pipeline sent on a context
// without cancellation.
func (h *frozenHook) hook() redistest.Hook {
	wait := func(ctx context.Context) {
		if h.armed.Load() && ctx.Done() == nil {
			time.Sleep(h.stall)
		}
	}
	return redistest.Hook{
		Process: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
			wait(ctx)
			return next(ctx, cmd)
		},
		Pipeline: func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
			wait(ctx)
			return next(ctx, cmds)
		},
	}
}

// TestClusterCallsReturnByDeadline: on a cluster, the writes whose later
// steps run to their end (an e-mail change, createSession, deleteUser's
// release of the index keys, deleteSessionsByUserId, deleteSession) return by the caller's deadline when a
// master stops answering in those steps, and the steps then finish in the
// background, leaving the store consistent.
func TestClusterCallsReturnByDeadline(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	frozen := &frozenHook{stall: 1500 * time.Millisecond}
	c.AddHook(frozen.hook())
	a, raw := fixture(t, c)
	ctx := context.Background()
	if err := a.Preload(ctx); err != nil {
		t.Fatal(err)
	}
	const deadline, slack = 50 * time.Millisecond, 200 * time.Millisecond
	for i, tc := range []struct {
		name string
		call func(ctx context.Context, uid string) error
		done func(ctx context.Context, uid string) (bool, error) // whether the background steps are through
	}{{
		name: "updateUser (e-mail)",
		call: func(ctx context.Context, uid string) error {
			_, err := a.UpdateUser(ctx, core.UserUpdate{ID: uid, Email: core.Set("moved@example.com")})
			return err
		},
		done: func(ctx context.Context, uid string) (bool, error) {
			u, err := a.GetUserByEmail(ctx, "moved@example.com")
			n, err2 := c.Exists(ctx, a.k.email(uid+"@example.com")).Result()
			return u != nil && u.ID == uid && n == 0, firstErr(err, err2)
		},
	}, {
		name: "createSession",
		call: func(ctx context.Context, uid string) error {
			_, err := a.CreateSession(ctx, core.Session{SessionToken: uid + "-new", UserID: uid, Expires: time.Now().Add(time.Hour)})
			return err
		},
		done: func(ctx context.Context, uid string) (bool, error) {
			su, err := a.GetSessionAndUser(ctx, uid+"-new")
			return su != nil, err
		},
	}, {
		name: "deleteUser",
		call: func(ctx context.Context, uid string) error { _, err := a.DeleteUser(ctx, uid); return err },
		done: func(ctx context.Context, uid string) (bool, error) {
			left, err := raw.Mentions(ctx, uid)
			return len(left) == 0, err
		},
	}, {
		name: "deleteSessionsByUserId",
		call: func(ctx context.Context, uid string) error {
			_, err := a.DeleteSessionsByUserID(ctx, uid, "")
			return err
		},
		done: func(ctx context.Context, uid string) (bool, error) {
			n, err := c.Exists(ctx, a.k.session(uid+"-s")).Result()
			return n == 0, err
		},
	}, {
		name: "deleteSession",
		call: func(ctx context.Context, uid string) error { _, err := a.DeleteSession(ctx, uid+"-s"); return err },
		done: func(ctx context.Context, uid string) (bool, error) {
			n, err := c.Exists(ctx, a.k.session(uid+"-s")).Result()
			return n == 0, err
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			uid := fmt.Sprint("u", i)
			if _, err := a.CreateUser(ctx, core.User{ID: uid, Email: uid + "@example.com"}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: uid + "-s", UserID: uid, Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.LinkAccount(ctx, core.Account{UserID: uid, Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: uid}); err != nil {
				t.Fatal(err)
			}

			frozen.armed.Store(true)
			cctx, cancel := context.WithTimeout(ctx, deadline)
			start := time.Now()
			err := tc.call(cctx, uid)
			took := time.Since(start)
			cancel()
			frozen.armed.Store(false)
			if took > deadline+slack {
				t.Errorf("returned after %v with a master frozen for %v; want by the deadline %v (+%v)", took, frozen.stall, deadline, slack)
			}
			if err == nil {
				t.Errorf("returned no error with its steps still waiting for the frozen master")
			}
			// The steps finish in the background.
			until := time.Now().Add(10 * time.Second)
			for {
				ok, err := tc.done(ctx, uid)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					break
				}
				if time.Now().After(until) {
					t.Fatalf("the call's steps did not finish in the background")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := raw.CheckConsistency(ctx); err != nil {
				t.Errorf("inconsistent once the steps finished: %v", err)
			}
		})
	}
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
