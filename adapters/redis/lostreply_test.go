package redisadapter

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// errLostReply stands for a connection that broke after the command was
// sent: the server may or may not have run it. tests/faults met the real
// thing when a cluster master was killed under load (the commit of a
// linkAccount ran, its reply never came back).
var errLostReply = redistest.ErrLostReply

// replyDropper is a go-redis hook that, for the scripts whose SHA1 is in
// run, runs the command and then reports errLostReply, and for those in
// skip reports errLostReply without running it.
type replyDropper struct {
	run, skip atomic.Pointer[map[string]bool]
}

// process is the hook's Process (see redistest.Hook).
func (d *replyDropper) process(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
	args := cmd.Args()
	if len(args) < 2 || cmd.Name() != "evalsha" {
		return next(ctx, cmd)
	}
	sha, _ := args[1].(string)
	if m := d.skip.Load(); m != nil && (*m)[sha] {
		cmd.SetErr(errLostReply)
		return errLostReply
	}
	err := next(ctx, cmd)
	if m := d.run.Load(); m != nil && (*m)[sha] {
		cmd.SetErr(errLostReply)
		return errLostReply
	}
	return err
}

// TestClusterLostCommitReply: on a cluster, linkAccount and
// createAuthenticator claim the unique pointer, write the record in the
// user's slot and commit the pointer. When the commit's reply is lost, the
// call fails, and what it leaves must never be an orphan pointer: after
// deleteUser the account and the credential can be linked again, by
// another user or by the same one.
func TestClusterLostCommitReply(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	drop := &replyDropper{}
	c.AddHook(redistest.Hook{Process: drop.process})
	a, raw := fixture(t, c, WithClaimTTL(300*time.Millisecond))
	ctx := context.Background()
	if err := a.Preload(ctx); err != nil {
		t.Fatal(err)
	}
	commit, release := a.s.commit.Hash(), a.s.release.Hash()
	user := func(id string) {
		t.Helper()
		if _, err := a.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	// Phase n links account gh-n and credential cred-n.
	phase := "1"
	link := func(uid string) error {
		_, err := a.LinkAccount(ctx, core.Account{UserID: uid, Provider: "github", Type: core.AccountTypeOAuth,
			ProviderAccountID: "gh-" + phase})
		return err
	}
	register := func(uid string) error {
		_, err := a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "cred-" + phase, CredentialPublicKey: "pk",
			CredentialDeviceType: "singleDevice", ProviderAccountID: "gh-" + phase, UserID: uid})
		return err
	}

	// 1. The commit runs, its reply is lost, and so is the release's:
	// the link may be whole. deleteUser must then take the pointers too.
	user("u1")
	drop.run.Store(&map[string]bool{commit: true})
	drop.skip.Store(&map[string]bool{release: true})
	if err := link("u1"); err == nil {
		t.Fatal("linkAccount with the commit's reply lost: no error")
	}
	if err := register("u1"); err == nil {
		t.Fatal("createAuthenticator with the commit's reply lost: no error")
	}
	drop.run.Store(nil)
	drop.skip.Store(nil)
	if _, err := a.DeleteUser(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if left, err := raw.Mentions(ctx, "u1"); err != nil || len(left) > 0 {
		t.Errorf("after deleteUser(u1): %v still mention u1 (%v)", left, err)
	}
	user("u2")
	if err := link("u2"); err != nil {
		t.Errorf("linking the account to u2 after u1 was deleted: %v", err)
	}
	if err := register("u2"); err != nil {
		t.Errorf("registering the credential for u2 after u1 was deleted: %v", err)
	}
	if _, err := a.DeleteUser(ctx, "u2"); err != nil {
		t.Fatal(err)
	}

	// 2. Neither the commit nor the release reaches the server: the claim
	// expires uncommitted. The same user must be able to link again.
	phase = "2"
	user("u3")
	drop.skip.Store(&map[string]bool{commit: true, release: true})
	if err := link("u3"); err == nil {
		t.Fatal("linkAccount with the commit lost: no error")
	}
	if err := register("u3"); err == nil {
		t.Fatal("createAuthenticator with the commit lost: no error")
	}
	drop.skip.Store(nil)
	time.Sleep(400 * time.Millisecond) // the claims expire
	if err := link("u3"); err != nil {
		t.Errorf("linking the account to u3 again once its claim expired: %v", err)
	}
	if err := register("u3"); err != nil {
		t.Errorf("registering the credential for u3 again once its claim expired: %v", err)
	}
	if got, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: "github", ProviderAccountID: "gh-2"}); err != nil || got == nil || got.ID != "u3" {
		t.Errorf("getUserByAccount after the second link = %v, %v; want u3", got, err)
	}
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Errorf("inconsistent at the end: %v", err)
	}
}

// clusterSeeds returns the cluster's seed addresses (skipping or failing
// like the other cluster tests when there is none).
func clusterSeeds(t *testing.T) []string {
	t.Helper()
	c := cluster(t).(*redis.ClusterClient)
	seeds := c.Options().Addrs
	_ = c.Close()
	return seeds
}

// TestUseVerificationTokenLostReply: see redistest.LostTokenReply. Single
// node and cluster (the unstorage layout's test is in its package).
func TestUseVerificationTokenLostReply(t *testing.T) {
	for _, name := range []string{"redis", "redis-cluster"} {
		t.Run(name, func(t *testing.T) {
			drop := &redistest.ConnDropper{}
			var c redis.UniversalClient
			if name != "redis-cluster" {
				opt, err := redis.ParseURL(provision.Redis(t))
				if err != nil {
					t.Fatal(err)
				}
				opt.Dialer = drop.Dial
				c = redis.NewClient(opt)
			} else {
				c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), Dialer: drop.Dial})
			}
			t.Cleanup(func() { _ = c.Close() })
			a, raw := fixture(t, c)
			redistest.LostTokenReply(t, drop, a, raw)
		})
	}
}

// TestClusterLostReplyRetriedByClient: on a cluster, with go-redis's own
// retries (MaxRetries at its default), the first reply of createUser,
// of an e-mail change and of deleteUser is lost after the server ran the
// command (the connection breaks; go-redis sends it again on a new one).
// Each call must still succeed as if nothing happened: the claim's retry
// finds its own claim (not "taken"), the lock's retry its own lock (not
// "busy" until the lease ends), and deleteUser's retry the first run's
// answer from the tombstone (the user, not "no such user"), releasing
// every index key.
func TestClusterLostReplyRetriedByClient(t *testing.T) {
	drop := &redistest.ConnDropper{}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), Dialer: drop.Dial, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	a, raw := fixture(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lose := func(what string, call func() error) {
		t.Helper()
		drop.Fired.Store(false)
		drop.Armed.Store(true)
		err := call()
		drop.Armed.Store(false)
		if !drop.Fired.Load() {
			t.Fatalf("%s: no reply was dropped: the test did not exercise a retry", what)
		}
		if err != nil {
			t.Errorf("%s whose first reply was lost and was retried: %v", what, err)
		}
	}
	u := core.User{ID: "lost-1", Email: "lost-1@example.com"}
	lose("createUser", func() error { _, err := a.CreateUser(ctx, u); return err })
	if _, err := a.LinkAccount(ctx, core.Account{UserID: u.ID, Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "lost-gh"}); err != nil {
		t.Fatal(err)
	}
	lose("createFactor", func() error { _, err := a.CreateFactor(ctx, testFactor("lost-f", u.ID)); return err })
	lose("updateUser (e-mail)", func() error {
		got, err := a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Email: core.Set("lost-2@example.com")})
		if err == nil && got.Email != "lost-2@example.com" {
			err = fmt.Errorf("returned e-mail %q", got.Email)
		}
		return err
	})
	lose("deleteUser", func() error {
		got, err := a.DeleteUser(ctx, u.ID)
		if err == nil && (got == nil || got.ID != u.ID) {
			err = fmt.Errorf("returned %v, want the deleted user", got)
		}
		return err
	})
	if left, err := raw.Mentions(ctx, u.ID); err != nil || len(left) > 0 {
		t.Errorf("after deleteUser: %v still mention %s (%v)", left, u.ID, err)
	}
	for _, email := range []string{"lost-1@example.com", "lost-2@example.com"} {
		if _, err := a.CreateUser(ctx, core.User{ID: "next-" + email, Email: email}); err != nil {
			t.Errorf("createUser of another user with %s: %v", email, err)
		}
	}
	if _, err := a.CreateFactor(ctx, testFactor("lost-f", "next-lost-1@example.com")); err != nil {
		t.Errorf("createFactor of the deleted user's factor id by another user: %v", err)
	}
	lose("deleteFactor", func() error {
		got, err := a.DeleteFactor(ctx, "next-lost-1@example.com", "lost-f")
		if err == nil && got != nil {
			err = fmt.Errorf("returned %v", got) // the retry finds it gone
		}
		return err
	})
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Errorf("after the lost deleteFactor: %v", err)
	}
}

// TestClusterDeleteUserTombstone: on a cluster, a deleteUser whose release
// of the index keys loses its replies (twice: the adapter's own second
// try too) fails, and leaves its tombstone, with a TTL, in the user's
// slot; the application's retry then releases every index key, deletes
// the tombstone and returns no user (the first call deleted it; a deleted
// user is returned at most once).
func TestClusterDeleteUserTombstone(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	loser := &redistest.ReplyLoser{}
	c.AddHook(redistest.Hook{Process: loser.Process, Pipeline: loser.Pipeline})
	a, raw := fixture(t, c)
	ctx := context.Background()
	u := core.User{ID: "tomb", Email: "tomb@example.com"}
	must[*core.User](t)(a.CreateUser(ctx, u))
	must[*core.Account](t)(a.LinkAccount(ctx, core.Account{UserID: u.ID, Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "tomb-gh"}))
	must[*core.Session](t)(a.CreateSession(ctx, core.Session{SessionToken: "tomb-s", UserID: u.ID, Expires: time.Now().Add(time.Hour)}))
	must[*core.Factor](t)(a.CreateFactor(ctx, testFactor("tomb-f", u.ID)))

	loser.LoseReplies(1, 2) // the script runs; the release pipeline's replies are lost twice
	if _, err := a.DeleteUser(ctx, u.ID); err == nil {
		t.Fatal("deleteUser whose release lost its replies: no error")
	}
	if n := loser.Lost(); n != 2 {
		t.Fatalf("%d replies lost, want 2", n)
	}
	ttl, err := c.PTTL(ctx, a.k.tombstone(u.ID)).Result()
	if err != nil || ttl <= 0 {
		t.Fatalf("tombstone's TTL = %v, %v; want one", ttl, err)
	}
	got, err := a.DeleteUser(ctx, u.ID)
	if err != nil || got != nil {
		t.Errorf("the retried deleteUser = %v, %v; want nil, nil", got, err)
	}
	if left, err := raw.Mentions(ctx, u.ID); err != nil || len(left) > 0 {
		t.Errorf("after the retried deleteUser: %v still mention %s (%v)", left, u.ID, err)
	}
	if got, err := a.DeleteUser(ctx, u.ID); err != nil || got != nil {
		t.Errorf("a third deleteUser = %v, %v; want nil, nil", got, err)
	}
	must[*core.User](t)(a.CreateUser(ctx, core.User{ID: "tomb-next", Email: u.Email}))
	must[*core.Account](t)(a.LinkAccount(ctx, core.Account{UserID: "tomb-next", Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "tomb-gh"}))
	must[*core.Session](t)(a.CreateSession(ctx, core.Session{SessionToken: "tomb-s", UserID: "tomb-next", Expires: time.Now().Add(time.Hour)}))
	must[*core.Factor](t)(a.CreateFactor(ctx, testFactor("tomb-f", "tomb-next")))
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Errorf("inconsistent at the end: %v", err)
	}
}

// TestClusterEmailLockLostReply: on a cluster without client retries, an
// e-mail change whose lock script runs and loses its reply (and so does
// the adapter's second try) fails, and gives the lock back at once: the
// next change does not wait for the lease (WithClaimTTL, an hour here).
func TestClusterEmailLockLostReply(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	drop := &replyDropper{}
	c.AddHook(redistest.Hook{Process: drop.process})
	a, raw := fixture(t, c, WithClaimTTL(time.Hour))
	ctx := context.Background()
	if err := a.Preload(ctx); err != nil {
		t.Fatal(err)
	}
	u := core.User{ID: "locked", Email: "locked@example.com"}
	must[*core.User](t)(a.CreateUser(ctx, u))
	drop.run.Store(&map[string]bool{a.s.lock.Hash(): true})
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Email: core.Set("locked-2@example.com")}); err == nil {
		t.Fatal("an e-mail change whose lock lost its replies: no error")
	}
	drop.run.Store(nil)
	if held, err := c.HExists(ctx, a.k.user(u.ID), lockField).Result(); err != nil || held {
		t.Errorf("lock still held after the failed change: %v, %v", held, err)
	}
	next, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if got, err := a.UpdateUser(next, core.UserUpdate{ID: u.ID, Email: core.Set("locked-3@example.com")}); err != nil || got.Email != "locked-3@example.com" {
		t.Errorf("the next e-mail change = %v, %v; want it done", got, err)
	}
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Errorf("inconsistent at the end: %v", err)
	}
}
