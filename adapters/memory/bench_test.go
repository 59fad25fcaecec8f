package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
)

// BenchmarkDeleteUser measures DeleteUser on a store of 10,000 users, each
// with an account, a session and an authenticator. Every 100 deletions the
// store is topped up to 10,000 users again, untimed, so a deletion always
// runs on a store of 9,901 to 10,000 users.
func BenchmarkDeleteUser(b *testing.B) {
	const users, batch = 10_000, 100
	ctx := context.Background()
	a := memory.New()
	expires := time.Now().Add(24 * time.Hour)
	var queue []string // ids of the stored users, oldest first
	made := 0
	add := func() {
		id := fmt.Sprintf("u%d", made)
		made++
		if _, err := a.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"}); err != nil {
			b.Fatal(err)
		}
		if _, err := a.LinkAccount(ctx, core.Account{UserID: id, Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: id}); err != nil {
			b.Fatal(err)
		}
		if _, err := a.CreateSession(ctx, core.Session{SessionToken: "s-" + id, UserID: id, Expires: expires}); err != nil {
			b.Fatal(err)
		}
		if _, err := a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c-" + id, CredentialPublicKey: "key",
			CredentialDeviceType: "singleDevice", ProviderAccountID: id, UserID: id}); err != nil {
			b.Fatal(err)
		}
		queue = append(queue, id)
	}
	for range users {
		add()
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(queue) == users-batch {
			b.StopTimer()
			for len(queue) < users {
				add()
			}
			b.StartTimer()
		}
		id := queue[0]
		queue = queue[1:]
		if u, err := a.DeleteUser(ctx, id); err != nil || u == nil || u.ID != id {
			b.Fatal(u, err)
		}
	}
	b.StopTimer()
	if s := a.Snapshot(); len(s.Users) != len(queue) || len(s.Accounts) != len(queue) || len(s.Sessions) != len(queue) ||
		len(s.Authenticators) != len(queue) {
		b.Fatalf("after the deletions the store holds %d users, %d accounts, %d sessions, %d authenticators; want %d of each",
			len(s.Users), len(s.Accounts), len(s.Sessions), len(s.Authenticators), len(queue))
	}
}
