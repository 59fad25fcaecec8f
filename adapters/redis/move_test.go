package redisadapter

import (
	"context"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// TestClusterSessionMoveAwaited checks, on a cluster, that an update of a
// session's expiry, a delete or a read of the session, arriving while a move of
// the session to another user is under way (the session is absent between
// the delete at the old user and the create at the new one) waits for the
// move and acts on the moved session, instead of finding nothing and
// losing its write. The move's middle is staged by hand: the marker set,
// the session deleted at its old user, and created at the new user only
// after the concurrent call has had time to find it absent.
func TestClusterSessionMoveAwaited(t *testing.T) {
	c := cluster(t)
	a, _ := fixture(t, c)
	ctx := context.Background()
	for _, u := range []string{"u1", "u2"} {
		if _, err := a.CreateUser(ctx, core.User{ID: u, Email: u + "@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range []string{"update", "delete", "get"} {
		t.Run(op, func(t *testing.T) {
			tok := "moving-" + op
			exp := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u1", Expires: exp}); err != nil {
				t.Fatal(err)
			}
			// The first half of a move.
			if err := c.Set(ctx, a.k.moving(tok), "test", moveMarkerTTL).Err(); err != nil {
				t.Fatal(err)
			}
			if old, err := a.deleteSession(ctx, tok, false); err != nil || old == nil {
				t.Fatalf("deleting at the old user: %+v, %v", old, err)
			}
			newExp := exp.Add(24 * time.Hour)
			type result struct {
				s   *core.Session
				err error
			}
			done := make(chan result, 1)
			go func() {
				var r result
				switch op {
				case "update":
					r.s, r.err = a.UpdateSession(ctx, core.SessionUpdate{SessionToken: tok, Expires: core.Set(newExp)})
				case "delete":
					r.s, r.err = a.DeleteSession(ctx, tok)
				default:
					var su *core.SessionAndUser
					if su, r.err = a.GetSessionAndUser(ctx, tok); su != nil {
						r.s = &su.Session
					}
				}
				done <- r
			}()
			select {
			case r := <-done:
				t.Fatalf("%s during a move returned %+v, %v before the move ended; want it to wait", op, r.s, r.err)
			case <-time.After(100 * time.Millisecond):
			}
			// The second half: created at the new user, marker removed.
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u2", Expires: exp}); err != nil {
				t.Fatal(err)
			}
			if err := c.Del(ctx, a.k.moving(tok)).Err(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil || r.s == nil || r.s.UserID != "u2" {
				t.Fatalf("%s during a move = %+v, %v; want the moved session (user u2)", op, r.s, r.err)
			}
			su, err := a.GetSessionAndUser(ctx, tok)
			if err != nil {
				t.Fatal(err)
			}
			switch op {
			case "update":
				if su == nil || su.Session.UserID != "u2" || !su.Session.Expires.Equal(newExp) {
					t.Fatalf("after the update: %+v; want user u2, expires %v", su, newExp)
				}
			case "delete":
				if su != nil {
					t.Fatalf("after the delete the moved session is still there: %+v", su)
				}
			default:
				if su == nil || su.User.ID != "u2" {
					t.Fatalf("after the move: %+v; want the session of user u2", su)
				}
			}
		})
	}
}
