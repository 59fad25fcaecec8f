// Package mapstore is the template of a new backend: users, accounts and
// database sessions in Go maps, guarded by one mutex. It implements the
// eleven methods core/auth needs for database sessions (createUser,
// getUser, getUserByEmail, getUserByAccount, updateUser, deleteUser,
// linkAccount, createSession, getSessionAndUser, updateSession,
// deleteSession); the conformance suite skips, by name, the rules of every
// other method.
//
// tests/newbackend copies it into adapters/mapstore of a copy of the
// repository, following CONTRIBUTING.md's "Adding a backend" step by step.
package mapstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/authport/authport/core"
)

// Store is a map-backed adapter. Create one with [New].
type Store struct {
	mu       sync.Mutex
	users    map[string]core.User             // by id
	emails   map[string]string                // e-mail → user id
	accounts map[core.AccountKey]core.Account // by provider and provider account id
	sessions map[string]core.Session          // by session token
}

// New returns an empty store.
func New() *Store {
	return &Store{
		users: map[string]core.User{}, emails: map[string]string{},
		accounts: map[core.AccountKey]core.Account{}, sessions: map[string]core.Session{},
	}
}

// CreateUser implements [core.UserCreator].
func (s *Store) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[user.ID]; ok {
		return nil, fmt.Errorf("createUser: id %q: %w", user.ID, core.ErrAlreadyExists)
	}
	// A user without an address ("") has no index entry: any number of
	// users can be without one.
	if _, ok := s.emails[user.Email]; ok && user.Email != "" {
		return nil, fmt.Errorf("createUser: e-mail %q: %w", user.Email, core.ErrAlreadyExists)
	}
	u := user.Normalize()
	s.users[u.ID] = u
	if u.Email != "" {
		s.emails[u.Email] = u.ID
	}
	out := u.Clone()
	return &out, nil
}

// GetUser implements [core.UserGetter].
func (s *Store) GetUser(ctx context.Context, id string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user(id), nil
}

// GetUserByEmail implements [core.UserByEmailGetter].
func (s *Store) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user(s.emails[email]), nil
}

// GetUserByAccount implements [core.UserByAccountGetter].
func (s *Store) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	account, ok := s.accounts[key]
	if !ok {
		return nil, nil
	}
	return s.user(account.UserID), nil
}

// UpdateUser implements [core.UserUpdater].
func (s *Store) UpdateUser(ctx context.Context, update core.UserUpdate) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.users[update.ID]
	if !ok {
		return nil, fmt.Errorf("updateUser: user %q: %w", update.ID, core.ErrNotFound)
	}
	u := update.Apply(old)
	if u.Email != old.Email {
		if _, taken := s.emails[u.Email]; taken && u.Email != "" {
			return nil, fmt.Errorf("updateUser: e-mail %q: %w", u.Email, core.ErrAlreadyExists)
		}
		delete(s.emails, old.Email)
		if u.Email != "" {
			s.emails[u.Email] = u.ID
		}
	}
	s.users[u.ID] = u
	out := u.Clone()
	return &out, nil
}

// LinkAccount implements [core.AccountLinker].
func (s *Store) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[account.UserID]; !ok {
		return nil, fmt.Errorf("linkAccount: user %q: %w", account.UserID, core.ErrNotFound)
	}
	if _, ok := s.accounts[account.Key()]; ok {
		return nil, fmt.Errorf("linkAccount: account %q/%q: %w", account.Provider, account.ProviderAccountID, core.ErrAlreadyExists)
	}
	stored := account.Normalize()
	s.accounts[stored.Key()] = stored
	out := stored.Clone()
	return &out, nil
}

// user returns a copy of the user with the id, or nil; s.mu is held.
func (s *Store) user(id string) *core.User {
	u, ok := s.users[id]
	if !ok {
		return nil
	}
	out := u.Clone()
	return &out
}

// DeleteUser implements [core.UserDeleter]: the user's accounts and
// sessions go with it.
func (s *Store) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[id]
	if !ok {
		return nil, nil
	}
	for key, account := range s.accounts {
		if account.UserID == id {
			delete(s.accounts, key)
		}
	}
	for token, session := range s.sessions {
		if session.UserID == id {
			delete(s.sessions, token)
		}
	}
	delete(s.emails, u.Email)
	delete(s.users, id)
	return &u, nil
}

// CreateSession implements [core.SessionCreator].
func (s *Store) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[session.UserID]; !ok {
		return nil, fmt.Errorf("createSession: user %q: %w", session.UserID, core.ErrNotFound)
	}
	if _, ok := s.sessions[session.SessionToken]; ok {
		return nil, fmt.Errorf("createSession: session token: %w", core.ErrAlreadyExists)
	}
	stored := session.Normalize()
	s.sessions[stored.SessionToken] = stored
	return &stored, nil
}

// GetSessionAndUser implements [core.SessionAndUserGetter]. An expired
// session is deleted and not returned.
func (s *Store) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	session, ok := s.sessions[sessionToken]
	if !ok {
		return nil, nil
	}
	if session.Expired(time.Now()) {
		delete(s.sessions, sessionToken)
		return nil, nil
	}
	u := s.user(session.UserID)
	if u == nil {
		return nil, nil
	}
	return &core.SessionAndUser{Session: session, User: *u}, nil
}

// UpdateSession implements [core.SessionUpdater].
func (s *Store) UpdateSession(ctx context.Context, update core.SessionUpdate) (*core.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.sessions[update.SessionToken]
	if !ok {
		return nil, nil
	}
	session := update.Apply(old)
	if _, ok := s.users[session.UserID]; !ok {
		return nil, fmt.Errorf("updateSession: user %q: %w", session.UserID, core.ErrNotFound)
	}
	s.sessions[session.SessionToken] = session
	return &session, nil
}

// DeleteSession implements [core.SessionDeleter].
func (s *Store) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	session, ok := s.sessions[sessionToken]
	if !ok {
		return nil, nil
	}
	delete(s.sessions, sessionToken)
	return &session, nil
}

// Dump returns copies of everything stored, expired sessions included: the
// raw view of the conformance suite.
func (s *Store) Dump() ([]core.User, []core.Account, []core.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	users := make([]core.User, 0, len(s.users))
	for _, u := range s.users {
		users = append(users, u.Clone())
	}
	accounts := make([]core.Account, 0, len(s.accounts))
	for _, account := range s.accounts {
		accounts = append(accounts, account.Clone())
	}
	sessions := make([]core.Session, 0, len(s.sessions))
	for _, session := range s.sessions {
		sessions = append(sessions, session)
	}
	return users, accounts, sessions
}
