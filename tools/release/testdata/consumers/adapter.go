//go:build authport_consumer

// The check of an adapter module: with main.go and the adapter's own file
// (testdata/consumer.go in the adapter's directory, whose func open opens
// it), a program of a module outside the repository, built by the consumer
// check (see consumer.go).
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// check creates a user and a database session, reads both back through
// core/auth, deletes the user and checks that the session went with it.
func check(ctx context.Context) (msg string, err error) {
	store, closeStore, err := open(ctx)
	if err != nil {
		return "", fmt.Errorf("opening the adapter: %w", err)
	}
	defer func() {
		if cerr := closeStore(); err == nil && cerr != nil {
			err = fmt.Errorf("closing the adapter: %w", cerr)
		}
	}()
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{"consumer-check-secret-0123456789"}})
	if err != nil {
		return "", err
	}
	create, err := core.Require[core.UserCreator](store, "the consumer check")
	if err != nil {
		return "", err
	}
	remove, err := core.Require[core.UserDeleter](store, "the consumer check")
	if err != nil {
		return "", err
	}
	id := fmt.Sprintf("consumer-%d", time.Now().UnixNano())
	user, err := create.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"})
	if err != nil {
		return "", fmt.Errorf("createUser: %w", err)
	}
	session, err := a.CreateSession(ctx, user.ID)
	if err != nil {
		return "", err
	}
	got, _, err := a.Session(ctx, session.SessionToken)
	if err != nil {
		return "", err
	}
	if got == nil || got.User.ID != id || got.User.Email != user.Email || got.Session.SessionToken != session.SessionToken {
		return "", fmt.Errorf("the session read back is %+v, want user %s and the session just created", got, id)
	}
	if _, err := remove.DeleteUser(ctx, id); err != nil {
		return "", fmt.Errorf("deleteUser: %w", err)
	}
	if got, _, err := a.Session(ctx, session.SessionToken); err != nil || got != nil {
		return "", fmt.Errorf("after deleteUser the session lookup gave %+v, %v; want nothing", got, err)
	}
	return fmt.Sprintf("created user %s and a session, read them back and deleted them through %T", id, store), nil
}
