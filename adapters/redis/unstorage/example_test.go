package unstorage_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/unstorage"
	"github.com/authport/authport/core"
)

// The adapter shares the keys of an Auth.js application using
// @auth/unstorage-adapter with unstorage's Redis driver and the same base.
func Example() {
	ctx := context.Background()
	opt, err := redis.ParseURL(cmp.Or(os.Getenv("AUTHPORT_REDIS_URL"), "redis://127.0.0.1:6379"))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := redis.NewClient(opt)
	defer client.Close()

	base := "authport-example-" + rand.Text() // Auth.js: redisDriver({ url, base })
	store, err := unstorage.New(ctx, client, base)
	if err != nil {
		fmt.Println(err)
		return
	}
	verified := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	user := core.User{ID: "u1", Email: "ada@example.com", EmailVerified: &verified}
	if _, err := core.NewStore(store).CreateUser(ctx, user); err != nil {
		fmt.Println(err)
		return
	}
	// The user is the JSON document Auth.js reads, dates as ISO strings.
	doc, err := client.Get(ctx, base+":user:u1").Result()
	fmt.Println(doc, err)
	_, _ = store.DeleteUser(ctx, "u1")
	// Output:
	// {"id":"u1","email":"ada@example.com","emailVerified":"2024-05-01T12:00:00.000Z","name":null,"image":null} <nil>
}
