package core_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
)

// profileStore is an adapter that implements one method of the contract,
// getUser: what it implements is what it supports.
type profileStore struct{}

func (profileStore) GetUser(_ context.Context, id string) (*core.User, error) {
	if id != "u1" {
		return nil, nil // not found is not an error
	}
	return &core.User{ID: "u1", Email: "ada@example.com"}, nil
}

// Require hands out one method of an adapter, or an error that names the
// method and what needed it.
func ExampleRequire() {
	var adapter any = profileStore{}
	get, err := core.Require[core.UserGetter](adapter, "the profile page")
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := get.GetUser(context.Background(), "u1")
	fmt.Println(u.Email, err)

	_, err = core.Require[core.SessionAndUserGetter](adapter, "session lookup")
	fmt.Println(err)
	fmt.Println(errors.Is(err, core.ErrMissingAdapterMethod))
	// Output:
	// ada@example.com <nil>
	// adapter core_test.profileStore does not implement getSessionAndUser (needed by session lookup); implement them or choose an adapter that has them
	// true
}

// Role is an application field on users, declared once.
var Role = core.UserField[string]{Name: "role"}

// A UserField reads and writes one application field of a user
// ([core.User.Data]) with its Go type.
func ExampleUserField() {
	u := &core.User{ID: "u1", Email: "ada@example.com"}
	role, ok, err := Role.Get(u)
	fmt.Printf("%q %v %v\n", role, ok, err) // absent

	// An update names the fields it changes; the adapter writes only those.
	up := core.UserUpdate{ID: u.ID}
	if err := Role.Set(&up, "admin"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(up.Data["role"]))

	// On a user read back (here set by hand, as an adapter's read would).
	if err := Role.Put(u, "admin"); err != nil {
		fmt.Println(err)
		return
	}
	role, ok, err = Role.Get(u)
	fmt.Printf("%q %v %v\n", role, ok, err)
	// Output:
	// "" false <nil>
	// "admin"
	// "admin" true <nil>
}
