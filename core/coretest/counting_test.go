package coretest_test

import (
	"context"
	"maps"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// users stores users by id, for a Store to observe.
type users map[string]core.User

func (u users) CreateUser(_ context.Context, user core.User) (*core.User, error) {
	u[user.ID] = user
	return &user, nil
}

func (u users) GetUser(_ context.Context, id string) (*core.User, error) {
	if user, ok := u[id]; ok {
		return &user, nil
	}
	return nil, nil
}

func TestCountingObservesTheStore(t *testing.T) {
	ctx := context.Background()
	c := coretest.NewCounting()
	s := core.NewStore(users{}, core.WithObserver(c))
	if _, err := s.CreateUser(ctx, core.User{ID: "u1", Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	_, _ = s.GetUser(ctx, "u1")
	_, _ = s.GetUser(ctx, "u2")
	_, _ = s.PurgeExpired(ctx) // an extension the adapter lacks: counted too
	want := map[core.Method]int{core.MethodCreateUser: 1, core.MethodGetUser: 2, core.Method(core.ExtensionPurgeExpired): 1}
	if got := c.Calls(); !maps.Equal(got, want) {
		t.Errorf("Calls = %v, want %v", got, want)
	}
	wantWrites := map[core.Method]int{core.MethodCreateUser: 1, core.Method(core.ExtensionPurgeExpired): 1}
	if got := c.Writes(); !maps.Equal(got, wantWrites) {
		t.Errorf("Writes = %v, want %v", got, wantWrites)
	}
	wantOthers := map[core.Method]int{core.Method(core.ExtensionPurgeExpired): 1}
	if got := c.WritesExcept(core.MethodCreateUser, core.MethodGetUser); !maps.Equal(got, wantOthers) {
		t.Errorf("WritesExcept(createUser, getUser) = %v, want %v", got, wantOthers)
	}
	if got := c.WritesExcept(); !maps.Equal(got, wantWrites) {
		t.Errorf("WritesExcept() = %v, want all the writes %v", got, wantWrites)
	}
	c.Reset()
	if got := c.Calls(); len(got) != 0 {
		t.Errorf("Calls after Reset = %v, want none", got)
	}
	for m, read := range map[core.Method]bool{core.MethodGetSessionAndUser: true, core.MethodListAccountsByUserID: true,
		core.MethodUpdateSession: false, core.MethodExtendSession: false, core.MethodUseVerificationToken: false} {
		if coretest.IsRead(m) != read {
			t.Errorf("IsRead(%s) = %v, want %v", m, !read, read)
		}
	}
}
