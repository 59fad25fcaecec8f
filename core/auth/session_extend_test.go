package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// sessionStore keeps one session in memory.
type sessionStore struct {
	s       core.Session
	updates int
}

func (m *sessionStore) GetSessionAndUser(_ context.Context, token string) (*core.SessionAndUser, error) {
	if token != m.s.SessionToken {
		return nil, nil
	}
	return &core.SessionAndUser{Session: m.s, User: core.User{ID: m.s.UserID, Email: "a@example.com"}}, nil
}

func (m *sessionStore) UpdateSession(_ context.Context, u core.SessionUpdate) (*core.Session, error) {
	m.updates++
	u.Expires.Apply(&m.s.Expires)
	return &m.s, nil
}

func (m *sessionStore) DeleteSession(context.Context, string) (*core.Session, error) { return nil, nil }

// Auth.Session reports whether it extended the session, so that the HTTP
// layer re-sends the cookie exactly then (no guessing from timestamps).
func TestSessionReportsExtension(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &sessionStore{s: core.Session{SessionToken: "tok", UserID: "u1", Expires: now.Add(auth.DefaultMaxAge)}}
	a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{"a-secret-of-at-least-32-bytes-0123456789"},
		Session: auth.SessionOptions{Strategy: auth.StrategyJWT}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	su, extended, err := a.Session(context.Background(), "tok")
	if err != nil || su == nil || extended || store.updates != 0 {
		t.Fatalf("a fresh session: %v extended=%v updates=%d err=%v; want found, not extended", su, extended, store.updates, err)
	}
	now = now.Add(auth.DefaultUpdateAge + time.Second)
	su, extended, err = a.Session(context.Background(), "tok")
	if err != nil || su == nil || !extended || store.updates != 1 || !su.Session.Expires.Equal(now.Add(auth.DefaultMaxAge)) {
		t.Fatalf("a session due for extension: %v extended=%v updates=%d err=%v; want extended to MaxAge from now", su, extended, store.updates, err)
	}
	if _, extended, _ := a.Session(context.Background(), "unknown"); extended {
		t.Error("an unknown token reported an extension")
	}
}
