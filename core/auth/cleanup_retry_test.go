package auth_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// flakyStore is a first OAuth sign-in's adapter whose createUser may store
// the user and still fail (its answer lost), whose linkAccount fails, and
// whose deleteUser fails its first failDeletes calls (the store still
// down). It is safe for the background removal's goroutine.
type flakyStore struct {
	mu          sync.Mutex
	createFails bool
	failDeletes int
	users       map[string]bool
	deletes     int
}

func (s *flakyStore) GetUserByAccount(context.Context, core.AccountKey) (*core.User, error) {
	return nil, nil
}
func (s *flakyStore) GetUserByEmail(context.Context, string) (*core.User, error) { return nil, nil }
func (s *flakyStore) CreateUser(_ context.Context, u core.User) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = true
	if s.createFails {
		return nil, errDown
	}
	return &u, nil
}
func (s *flakyStore) LinkAccount(context.Context, core.Account) (*core.Account, error) {
	return nil, errDown
}
func (s *flakyStore) DeleteUser(_ context.Context, id string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes++
	if s.deletes <= s.failDeletes {
		return nil, errors.New("store still down")
	}
	delete(s.users, id)
	return nil, nil
}

func (s *flakyStore) left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.users)
}

// A createUser that stored the user but failed (its answer lost) must not
// leave the user: the same person's next OAuth sign-in would find the
// address taken and be refused (OAuthAccountNotLinked). Without the
// removal by the new id the user stays.
func TestFailedCreateUserRemovesTheUser(t *testing.T) {
	s := &flakyStore{createFails: true, users: map[string]bool{}}
	if err := firstSignIn(context.Background(), newOAuthJWT(t, s)); !errors.Is(err, errDown) {
		t.Fatalf("sign-in whose createUser fails: %v, want its error", err)
	}
	if n := s.left(); n != 0 {
		t.Errorf("%d user(s) left by a failed createUser, want 0", n)
	}
}

// A removal that fails (the store is still failing) is retried in the
// background until the store answers.
func TestFailedRemovalIsRetried(t *testing.T) {
	s := &flakyStore{failDeletes: 3, users: map[string]bool{}}
	if err := firstSignIn(context.Background(), newOAuthJWT(t, s)); !errors.Is(err, errDown) {
		t.Fatalf("sign-in whose link fails: %v, want its error", err)
	}
	for end := time.Now().Add(10 * time.Second); s.left() != 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if n := s.left(); n != 0 {
		t.Errorf("%d user(s) left 10 s after a failed removal, want the background retry to remove it", n)
	}
}
