package redisadapter

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// errLostReply stands for a connection that broke after the command was
// sent: the server may or may not have run it. tools/faults met the real
// thing when a cluster master was killed under load (the commit of a
// linkAccount ran, its reply never came back).
var errLostReply = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer (injected)")}

// replyDropper is a go-redis hook that, for the scripts whose SHA1 is in
// run, runs the command and then reports errLostReply, and for those in
// skip reports errLostReply without running it.
type replyDropper struct {
	run, skip atomic.Pointer[map[string]bool]
}

func (d *replyDropper) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d *replyDropper) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (d *replyDropper) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
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
	c.AddHook(drop)
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

// TestUseVerificationTokenLostReply: the reply of useVerificationToken's
// command is lost after the server took the token (the connection breaks
// while the client waits for it), and go-redis retries the command on a
// new connection (its default on a network error). The retry must give the
// token, not "no token"; and the token stays single-use: a later call gets
// nothing. Single node, cluster and the unstorage layout.
func TestUseVerificationTokenLostReply(t *testing.T) {
	for _, name := range []string{"redis", "redis-cluster", "redis-unstorage"} {
		t.Run(name, func(t *testing.T) {
			drop := &connDropper{}
			var c redis.UniversalClient
			if name != "redis-cluster" {
				opt, err := redis.ParseURL(provision.Redis(t))
				if err != nil {
					t.Fatal(err)
				}
				opt.Dialer = drop.dial
				c = redis.NewClient(opt)
			} else {
				c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSeeds(t), Dialer: drop.dial})
			}
			t.Cleanup(func() { _ = c.Close() })
			var a *Adapter
			var raw interface {
				Mentions(context.Context, string) ([]string, error)
			}
			if name == "redis-unstorage" {
				a, raw = unstorageFixture(t, c)
			} else {
				a, raw = fixture(t, c)
			}
			ctx := context.Background()
			if err := a.Preload(ctx); err != nil {
				t.Fatal(err)
			}
			exp := core.NormalizeTime(time.Now().Add(time.Hour))
			vt := core.VerificationToken{Identifier: "ada@example.com", Token: "hash-1", Expires: exp}
			if _, err := a.CreateVerificationToken(ctx, vt); err != nil {
				t.Fatal(err)
			}
			drop.armed.Store(true)
			got, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: vt.Identifier, Token: vt.Token})
			if !drop.fired.Load() {
				t.Fatal("no reply was dropped: the test did not exercise a retry")
			}
			if err != nil || got == nil || !got.Expires.Equal(exp) {
				t.Fatalf("useVerificationToken whose first reply was lost and was retried = %v, %v; want the token", got, err)
			}
			again, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: vt.Identifier, Token: vt.Token})
			if err != nil || again != nil {
				t.Errorf("a second useVerificationToken = %v, %v; want nil, nil (single use)", again, err)
			}
			if left, err := raw.Mentions(ctx, vt.Identifier); err != nil || len(left) > 0 {
				t.Errorf("after the token was used, %v still mention its identifier (%v)", left, err)
			}
		})
	}
}

// connDropper dials real connections; once armed, the next read of a reply
// waits for the server to act on what was sent, then breaks the
// connection and fails, as a connection reset after the command would.
type connDropper struct {
	armed, fired atomic.Bool
}

func (d *connDropper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &droppingConn{Conn: c, d: d}, nil
}

type droppingConn struct {
	net.Conn
	d *connDropper
}

func (c *droppingConn) Read(p []byte) (int, error) {
	if c.d.armed.CompareAndSwap(true, false) {
		c.d.fired.Store(true)
		time.Sleep(100 * time.Millisecond) // the server runs the command
		_ = c.Conn.Close()
		return 0, errLostReply
	}
	return c.Conn.Read(p)
}
