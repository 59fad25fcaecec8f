package bboltadapter_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// Example opens a store, signs a user in with a database session, looks the
// session up, purges expired records and takes a consistent backup.
func Example() {
	dir, err := os.MkdirTemp("", "authport-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	// Open waits at most a second for another process's lock.
	store, err := bboltadapter.Open(ctx, filepath.Join(dir, "auth.db"), bboltadapter.WithLockTimeout(time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	go store.Sweep(ctx, 10*time.Minute, nil) // purge expired sessions and tokens in the background

	name := "Ada"
	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com", Name: &name}); err != nil {
		log.Fatal(err)
	}
	if _, err := store.CreateSession(ctx, core.Session{SessionToken: "tok", UserID: "u1", Expires: time.Now().Add(24 * time.Hour)}); err != nil {
		log.Fatal(err)
	}
	su, err := store.GetSessionAndUser(ctx, "tok")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(su.User.Email, *su.User.Name)

	// A missing record is nil, not an error.
	missing, err := store.GetSessionAndUser(ctx, "no-such-token")
	fmt.Println(missing == nil, err)

	// Backup: tx.WriteTo copies a consistent snapshot while writers go on.
	var backup bytes.Buffer
	err = store.DB().View(func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(&backup)
		return err
	})
	fmt.Println(err == nil && backup.Len() > 0, store.CheckConsistency(ctx))
	// Output:
	// ada@example.com Ada
	// true <nil>
	// true <nil>
}

// ExampleAdapter_SwapFactor keeps a second factor and accepts a use of it
// once: of two swaps from the same stored value, the second finds it changed.
func ExampleAdapter_SwapFactor() {
	dir, err := os.MkdirTemp("", "authport-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := bboltadapter.Open(ctx, filepath.Join(dir, "auth.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	if _, err := store.CreateUser(ctx, core.User{ID: "u1", Email: "ada@example.com"}); err != nil {
		log.Fatal(err)
	}
	// The library seals a TOTP key before it stores it; the adapter keeps
	// the bytes as given.
	totp, err := store.CreateFactor(ctx, core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP,
		Name: "Phone", Secret: []byte("sealed key"), CreatedAt: time.Now()})
	if err != nil {
		log.Fatal(err)
	}

	// A code of time step 58000000 accepted: the step moves on, once.
	used := *totp
	used.Step, used.LastUsedAt = 58_000_000, time.Now()
	first, err := store.SwapFactor(ctx, *totp, used)
	fmt.Println(first.Step, err)
	_, err = store.SwapFactor(ctx, *totp, used) // the same code again
	fmt.Println(errors.Is(err, core.ErrFactorChanged))

	list, err := store.ListFactorsByUserID(ctx, "u1")
	fmt.Println(len(list), list[0].Name, err)
	// Output:
	// 58000000 <nil>
	// true
	// 1 Phone <nil>
}
