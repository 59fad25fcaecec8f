package faults

import (
	"context"
	"sync"

	"github.com/authport/authport/core"
)

// writeTrigger is the store the application uses in TestSignInFaults: the
// adapter under test, unchanged, except that when armed it calls fire just
// before its at-th write (counting from 1), so that the toxic the test adds
// there hits the callback at a chosen point: after the reads and the
// earlier writes went through, on the write itself. The fault is the
// network's (toxiproxy); this only times it.
type writeTrigger struct {
	core.Adapter
	mu     sync.Mutex
	at, n  int
	fire   func()
	fired  bool
	writes []string // the writes counted since armed
}

func (w *writeTrigger) arm(at int, fire func()) {
	w.mu.Lock()
	w.at, w.n, w.fire, w.fired, w.writes = at, 0, fire, false, nil
	w.mu.Unlock()
}

// disarm returns whether the trigger fired and the writes it counted.
func (w *writeTrigger) disarm() (bool, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fired, writes := w.fired, w.writes
	w.at, w.fire = 0, nil
	return fired, writes
}

func (w *writeTrigger) write(method string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fire == nil {
		return
	}
	w.n++
	w.writes = append(w.writes, method)
	if w.n == w.at && !w.fired {
		w.fired = true
		w.fire()
	}
}

func (w *writeTrigger) CreateUser(ctx context.Context, u core.User) (*core.User, error) {
	w.write("createUser")
	return w.Adapter.CreateUser(ctx, u)
}

func (w *writeTrigger) UpdateUser(ctx context.Context, u core.UserUpdate) (*core.User, error) {
	w.write("updateUser")
	return w.Adapter.UpdateUser(ctx, u)
}

func (w *writeTrigger) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	w.write("deleteUser")
	return w.Adapter.DeleteUser(ctx, id)
}

func (w *writeTrigger) LinkAccount(ctx context.Context, a core.Account) (*core.Account, error) {
	w.write("linkAccount")
	return w.Adapter.LinkAccount(ctx, a)
}

func (w *writeTrigger) UnlinkAccount(ctx context.Context, k core.AccountKey) (*core.Account, error) {
	w.write("unlinkAccount")
	return w.Adapter.UnlinkAccount(ctx, k)
}

func (w *writeTrigger) CreateSession(ctx context.Context, s core.Session) (*core.Session, error) {
	w.write("createSession")
	return w.Adapter.CreateSession(ctx, s)
}

func (w *writeTrigger) UpdateSession(ctx context.Context, s core.SessionUpdate) (*core.Session, error) {
	w.write("updateSession")
	return w.Adapter.UpdateSession(ctx, s)
}

func (w *writeTrigger) DeleteSession(ctx context.Context, token string) (*core.Session, error) {
	w.write("deleteSession")
	return w.Adapter.DeleteSession(ctx, token)
}

func (w *writeTrigger) UseVerificationToken(ctx context.Context, k core.VerificationTokenKey) (*core.VerificationToken, error) {
	w.write("useVerificationToken")
	return w.Adapter.UseVerificationToken(ctx, k)
}

func (w *writeTrigger) CreateAuthenticator(ctx context.Context, a core.Authenticator) (*core.Authenticator, error) {
	w.write("createAuthenticator")
	return w.Adapter.CreateAuthenticator(ctx, a)
}

func (w *writeTrigger) UpdateAuthenticatorCounter(ctx context.Context, id string, c int64) (*core.Authenticator, error) {
	w.write("updateAuthenticatorCounter")
	return w.Adapter.UpdateAuthenticatorCounter(ctx, id, c)
}

// AdvanceAuthenticatorCounter keeps the adapter's atomic counter check
// (both adapters under test offer it).
func (w *writeTrigger) AdvanceAuthenticatorCounter(ctx context.Context, id string, c int64) (*core.Authenticator, error) {
	w.write("advanceAuthenticatorCounter")
	return w.Adapter.(core.AuthenticatorCounterAdvancer).AdvanceAuthenticatorCounter(ctx, id, c)
}

var _ core.AuthenticatorCounterAdvancer = (*writeTrigger)(nil)
