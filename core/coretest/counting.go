// Package coretest holds helpers for tests of code that calls an adapter:
// [Counting] counts the calls of each method, e.g. to show that a request
// costs one read and no write. It uses only the standard library and core.
package coretest

import (
	"context"
	"strings"
	"sync"

	"github.com/authport/authport/core"
)

// Counting wraps an adapter that implements every method ([core.Adapter])
// and counts the calls of each method, e.g. to show that a request costs
// one read and no write. It is safe for concurrent use.
type Counting struct {
	core.Adapter
	mu    sync.Mutex
	calls map[core.Method]int
}

// NewCounting returns a Counting wrapper around a.
func NewCounting(a core.Adapter) *Counting {
	return &Counting{Adapter: a, calls: map[core.Method]int{}}
}

func (c *Counting) count(m core.Method) {
	c.mu.Lock()
	c.calls[m]++
	c.mu.Unlock()
}

// Calls returns how often each method was called since the last Reset.
func (c *Counting) Calls() map[core.Method]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[core.Method]int, len(c.calls))
	for m, n := range c.calls {
		out[m] = n
	}
	return out
}

// Reset forgets the calls counted so far.
func (c *Counting) Reset() {
	c.mu.Lock()
	clear(c.calls)
	c.mu.Unlock()
}

// Writes returns the calls counted since the last Reset of methods that
// may change the store: every method but the get and list ones.
func (c *Counting) Writes() map[core.Method]int {
	out := map[core.Method]int{}
	for m, n := range c.Calls() {
		if !IsRead(m) {
			out[m] = n
		}
	}
	return out
}

// IsRead reports whether the method only reads the store (get and list
// methods).
func IsRead(m core.Method) bool {
	return strings.HasPrefix(string(m), "get") || strings.HasPrefix(string(m), "list")
}

// CreateUser counts the call and calls the wrapped adapter.
func (c *Counting) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	c.count(core.MethodCreateUser)
	return c.Adapter.CreateUser(ctx, user)
}

// GetUser counts the call and calls the wrapped adapter.
func (c *Counting) GetUser(ctx context.Context, id string) (*core.User, error) {
	c.count(core.MethodGetUser)
	return c.Adapter.GetUser(ctx, id)
}

// GetUserByEmail counts the call and calls the wrapped adapter.
func (c *Counting) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	c.count(core.MethodGetUserByEmail)
	return c.Adapter.GetUserByEmail(ctx, email)
}

// GetUserByAccount counts the call and calls the wrapped adapter.
func (c *Counting) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	c.count(core.MethodGetUserByAccount)
	return c.Adapter.GetUserByAccount(ctx, key)
}

// UpdateUser counts the call and calls the wrapped adapter.
func (c *Counting) UpdateUser(ctx context.Context, update core.UserUpdate) (*core.User, error) {
	c.count(core.MethodUpdateUser)
	return c.Adapter.UpdateUser(ctx, update)
}

// DeleteUser counts the call and calls the wrapped adapter.
func (c *Counting) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	c.count(core.MethodDeleteUser)
	return c.Adapter.DeleteUser(ctx, id)
}

// LinkAccount counts the call and calls the wrapped adapter.
func (c *Counting) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	c.count(core.MethodLinkAccount)
	return c.Adapter.LinkAccount(ctx, account)
}

// UnlinkAccount counts the call and calls the wrapped adapter.
func (c *Counting) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	c.count(core.MethodUnlinkAccount)
	return c.Adapter.UnlinkAccount(ctx, key)
}

// GetAccount counts the call and calls the wrapped adapter.
func (c *Counting) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	c.count(core.MethodGetAccount)
	return c.Adapter.GetAccount(ctx, providerAccountID, provider)
}

// CreateSession counts the call and calls the wrapped adapter.
func (c *Counting) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	c.count(core.MethodCreateSession)
	return c.Adapter.CreateSession(ctx, session)
}

// GetSessionAndUser counts the call and calls the wrapped adapter.
func (c *Counting) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	c.count(core.MethodGetSessionAndUser)
	return c.Adapter.GetSessionAndUser(ctx, sessionToken)
}

// UpdateSession counts the call and calls the wrapped adapter.
func (c *Counting) UpdateSession(ctx context.Context, update core.SessionUpdate) (*core.Session, error) {
	c.count(core.MethodUpdateSession)
	return c.Adapter.UpdateSession(ctx, update)
}

// DeleteSession counts the call and calls the wrapped adapter.
func (c *Counting) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	c.count(core.MethodDeleteSession)
	return c.Adapter.DeleteSession(ctx, sessionToken)
}

// CreateVerificationToken counts the call and calls the wrapped adapter.
func (c *Counting) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	c.count(core.MethodCreateVerificationToken)
	return c.Adapter.CreateVerificationToken(ctx, token)
}

// UseVerificationToken counts the call and calls the wrapped adapter.
func (c *Counting) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	c.count(core.MethodUseVerificationToken)
	return c.Adapter.UseVerificationToken(ctx, key)
}

// CreateAuthenticator counts the call and calls the wrapped adapter.
func (c *Counting) CreateAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	c.count(core.MethodCreateAuthenticator)
	return c.Adapter.CreateAuthenticator(ctx, authenticator)
}

// GetAuthenticator counts the call and calls the wrapped adapter.
func (c *Counting) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	c.count(core.MethodGetAuthenticator)
	return c.Adapter.GetAuthenticator(ctx, credentialID)
}

// ListAuthenticatorsByUserID counts the call and calls the wrapped adapter.
func (c *Counting) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	c.count(core.MethodListAuthenticatorsByUserID)
	return c.Adapter.ListAuthenticatorsByUserID(ctx, userID)
}

// UpdateAuthenticatorCounter counts the call and calls the wrapped adapter.
func (c *Counting) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	c.count(core.MethodUpdateAuthenticatorCounter)
	return c.Adapter.UpdateAuthenticatorCounter(ctx, credentialID, newCounter)
}
