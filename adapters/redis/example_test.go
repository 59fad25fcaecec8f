package redisadapter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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

// A second factor's use is a compare-and-set: of two uses of the same
// state (one TOTP code checked twice, on one instance or two), one
// succeeds and the other gets core.ErrFactorChanged.
func Example_factors() {
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
	totp := core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP, Name: "Phone",
		Secret: []byte("sealed by the library"), CreatedAt: time.Now()}
	if _, err := store.CreateFactor(ctx, totp); err != nil {
		fmt.Println(err)
		return
	}
	used := totp
	used.Step, used.LastUsedAt = 58_000_000, time.Now() // the time step of the code accepted
	for range 2 {
		f, err := store.SwapFactor(ctx, totp, used)
		fmt.Println(f.Step, errors.Is(err, core.ErrFactorChanged))
	}

	// Deleting the user deletes its factors.
	if _, err := store.DeleteUser(ctx, "u1"); err != nil {
		fmt.Println(err)
		return
	}
	fs, err := store.ListFactorsByUserID(ctx, "u1")
	fmt.Println(len(fs), err)
	// Output:
	// 58000000 false
	// 58000000 true
	// 0 <nil>
}
