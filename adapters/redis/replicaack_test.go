package redisadapter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
)

// TestReplicaAckWithoutReplicas: the test servers have no replicas, so
// with WithReplicaAck(1, …) every write the adapter sends is applied on the
// master and then reported as ErrReplicaAck (its WAIT counted 0 replicas),
// while reads wait for nothing. The positive case (a replica that
// acknowledges, and a failover that keeps every acknowledged write) is in
// tests/faults, which starts a cluster with replicas.
func TestReplicaAckWithoutReplicas(t *testing.T) {
	if _, err := New(context.Background(), singleNodeOrSkip(t), WithReplicaAck(1, -time.Second)); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("New with a negative replica-ack timeout: %v, want ErrInvalidInput", err)
	}
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, plain *Adapter, _ rawView) {
		ctx := context.Background()
		a, err := New(context.Background(), c, WithPrefix(plain.Prefix()), WithReplicaAck(1, 20*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		tok := core.VerificationToken{Identifier: "ack@example.com", Token: "t-ack", Expires: soon(time.Hour)}
		start := time.Now()
		if _, err := a.CreateVerificationToken(ctx, tok); !errors.Is(err, ErrReplicaAck) {
			t.Fatalf("CreateVerificationToken with no replica: %v, want ErrReplicaAck", err)
		}
		if d := time.Since(start); d < 20*time.Millisecond {
			t.Errorf("the write returned after %v, before its 20 ms WAIT", d)
		}
		// The write was applied on the master: the plain adapter uses it.
		got, err := plain.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: tok.Identifier, Token: tok.Token})
		if err != nil || got == nil {
			t.Fatalf("the token written without replica ack: %v, %v; want it stored", got, err)
		}
		// Token use waits too.
		if _, err := plain.CreateVerificationToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if _, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: tok.Identifier, Token: tok.Token}); !errors.Is(err, ErrReplicaAck) {
			t.Errorf("UseVerificationToken with no replica: %v, want ErrReplicaAck", err)
		}
		// A write script (createSession) waits; reads do not.
		u, err := plain.CreateUser(ctx, core.User{ID: "u-ack", Email: "ack-user@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		s := core.Session{SessionToken: "s-ack", UserID: u.ID, Expires: soon(time.Hour)}
		if _, err := a.CreateSession(ctx, s); !errors.Is(err, ErrReplicaAck) {
			t.Errorf("CreateSession with no replica: %v, want ErrReplicaAck", err)
		}
		if plain.ClusterMode() {
			// On a cluster the session key is claimed first, and that
			// claim's WAIT already fails: the claim stays until the
			// session's expiry, as after any failed write (README,
			// "Redis Cluster"). Remove it so that the consistency check
			// at the end sees only what deleteUser leaves.
			if err := c.Del(ctx, plain.Prefix()+"session:{s-ack}").Err(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.GetUser(ctx, u.ID); err != nil {
			t.Errorf("GetUser (a read) with replica ack on: %v", err)
		}
		// deleteSessionsByUserId is applied on the master and reported as
		// ErrReplicaAck; on a cluster the session keys are released all the
		// same (the consistency check at the end fails otherwise).
		if _, err := plain.CreateSession(ctx, core.Session{SessionToken: "s-ack2", UserID: u.ID, Expires: soon(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.ListSessionsByUserID(ctx, u.ID); err != nil {
			t.Errorf("ListSessionsByUserID (a read script) with replica ack on: %v", err)
		}
		if _, err := a.DeleteSessionsByUserID(ctx, u.ID, ""); !errors.Is(err, ErrReplicaAck) {
			t.Errorf("DeleteSessionsByUserID with no replica: %v, want ErrReplicaAck", err)
		}
		if n, err := plain.DeleteSessionsByUserID(ctx, u.ID, ""); err != nil || n != 0 {
			t.Errorf("DeleteSessionsByUserID after the unacknowledged one = %d, %v; want 0 (deleted on the master)", n, err)
		}
		if _, err := a.GetUserByEmail(ctx, u.Email); err != nil {
			t.Errorf("GetUserByEmail (a read script) with replica ack on: %v", err)
		}
		// deleteUser is applied on the master and reported as
		// ErrReplicaAck; on a cluster its index keys are released all the
		// same (the consistency check at the end fails otherwise).
		if _, err := a.DeleteUser(ctx, u.ID); !errors.Is(err, ErrReplicaAck) {
			t.Errorf("DeleteUser with no replica: %v, want ErrReplicaAck", err)
		}
		if got, err := plain.GetUser(ctx, u.ID); err != nil || got != nil {
			t.Errorf("GetUser after the unacknowledged deleteUser: %v, %v; want the user deleted on the master", got, err)
		}
	})
}

func singleNodeOrSkip(t *testing.T) redis.UniversalClient {
	c := singleNode(t)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// soon returns now plus d as the adapter stores it (core.Store normalizes
// times on the way in; these tests call the adapter directly).
func soon(d time.Duration) time.Time { return core.NormalizeTime(time.Now().Add(d)) }
