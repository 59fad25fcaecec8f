package redisadapter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	redisadapter "github.com/authport/authport/adapters/redis"
	"github.com/authport/authport/core"
)

// The adapter takes your client (here a single server; a
// *redis.ClusterClient works the same) and a key prefix.
func Example() {
	ctx := context.Background()
	url := os.Getenv("AUTHPORT_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	client := redis.NewClient(opt)
	defer client.Close()

	var b [6]byte
	_, _ = rand.Read(b[:])
	store, err := redisadapter.New(ctx, client, redisadapter.WithPrefix("authport-example:"+hex.EncodeToString(b[:])+":"))
	if err != nil {
		fmt.Println(err)
		return
	}

	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = store.CreateSession(ctx, core.Session{SessionToken: "cookie-value", UserID: "u1", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		fmt.Println(err)
		return
	}
	su, err := store.GetSessionAndUser(ctx, "cookie-value")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(su.User.Email)

	// Deleting the user deletes its sessions, accounts and authenticators.
	if _, err := store.DeleteUser(ctx, "u1"); err != nil {
		fmt.Println(err)
		return
	}
	su, err = store.GetSessionAndUser(ctx, "cookie-value")
	fmt.Println(su, err)
	// Output:
	// ada@example.com
	// <nil> <nil>
}
