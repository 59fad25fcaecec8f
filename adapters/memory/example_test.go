package memory_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
)

func Example() {
	ctx := context.Background()
	store := memory.New()

	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com"}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := store.CreateSession(ctx, core.Session{SessionToken: "tok", UserID: "u1", Expires: time.Now().Add(time.Hour)}); err != nil {
		fmt.Println(err)
		return
	}
	su, err := store.GetSessionAndUser(ctx, "tok")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(su.User.Email)

	// A lookup that finds nothing is not an error.
	missing, err := store.GetSessionAndUser(ctx, "no-such-token")
	fmt.Println(missing == nil, err)

	// Uniqueness is enforced.
	_, err = store.CreateUser(ctx, core.User{ID: "u2", Email: "ada@example.com"})
	fmt.Println(errors.Is(err, core.ErrAlreadyExists))
	// Output:
	// ada@example.com
	// true <nil>
	// true
}
