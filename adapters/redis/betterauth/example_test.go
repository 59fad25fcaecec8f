package betterauth_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/adapters/redis/betterauth"
	"github.com/authport/authport/core"
)

// The adapter keeps sessions where a Better Auth app with secondaryStorage
// on Redis keeps them, and users in the primary adapter (the app's
// database; the memory adapter here).
func Example() {
	ctx := context.Background()
	opt, err := redis.ParseURL(cmp.Or(os.Getenv("AUTHPORT_REDIS_URL"), "redis://127.0.0.1:6379"))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := redis.NewClient(opt)
	defer client.Close()

	// The prefix the app's secondaryStorage puts before Better Auth's keys.
	prefix := "authport-example-" + rand.Text() + ":"
	store, err := betterauth.New(ctx, client, prefix, memory.New())
	if err != nil {
		fmt.Println(err)
		return
	}
	name := "Ada"
	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com", Name: &name}); err != nil {
		fmt.Println(err)
		return
	}
	created := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := core.Session{SessionToken: "tok1", UserID: "u1", Expires: time.Now().Add(time.Hour), CreatedAt: created, UpdatedAt: created}
	if _, err := store.CreateSession(ctx, s); err != nil {
		fmt.Println(err)
		return
	}
	// Better Auth's value at the token's key: the session and a copy of
	// the user.
	var v struct {
		Session map[string]any `json:"session"`
		User    map[string]any `json:"user"`
	}
	raw, _ := client.Get(ctx, prefix+"tok1").Result()
	_ = json.Unmarshal([]byte(raw), &v)
	fmt.Println(v.Session["token"], v.Session["userId"], v.Session["createdAt"])
	fmt.Println(v.User["id"], v.User["email"], v.User["name"], v.User["emailVerified"])
	// The user's list of sessions.
	list, _ := client.Get(ctx, prefix+"active-sessions-u1").Result()
	var entries []struct{ Token string }
	_ = json.Unmarshal([]byte(list), &entries)
	fmt.Println(len(entries), entries[0].Token)

	_, _ = store.DeleteUser(ctx, "u1")
	_ = client.Del(ctx, prefix+"revoked-sessions-before-u1").Err()
	// Output:
	// tok1 u1 2026-05-01T12:00:00.000Z
	// u1 ada@example.com Ada false
	// 1 tok1
}
