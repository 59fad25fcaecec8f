package coretest_test

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// Counting shows what a piece of code costs the store: here, that reading
// a user twice is two getUser calls and no write.
func ExampleCounting() {
	ctx := context.Background()
	c := coretest.NewCounting()
	store := core.NewStore(users{}, core.WithObserver(c)) // users: an adapter over a map (counting_test.go)
	// Configure the code under test with store; set it up, then Reset.
	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com"}); err != nil {
		fmt.Println(err)
		return
	}
	c.Reset()

	// Act: the code under test reads the user twice.
	for range 2 {
		if _, err := store.GetUser(ctx, "u1"); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("calls:", c.Calls())
	fmt.Println("writes:", c.Writes())
	// Output:
	// calls: map[getUser:2]
	// writes: map[]
}
