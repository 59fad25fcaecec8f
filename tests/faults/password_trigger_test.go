package faults

import (
	"context"
	"sync"

	"github.com/authport/authport/core"
)

// killTrigger is the store core/auth uses in TestPasswordFaults: the
// adapter under test, unchanged, except that when armed it calls kill
// just before the first call of the method it is armed for, so that the
// server dies between that write and the ones before it: the earlier
// writes are committed, this one finds no server. It records the writes
// it saw since armed. It offers the extensions password sign-in needs
// (swapPasswordHash, deleteSessionsByUserId) and passes them through.
type killTrigger struct {
	core.Adapter
	mu     sync.Mutex
	before string
	nth    int // kill before the nth call of before since armed
	seen   int // calls of before since armed
	kill   func()
	fired  bool
	writes []string
}

// arm makes the trigger call kill before the next call of method.
func (k *killTrigger) arm(method string, kill func()) { k.armNth(method, 1, kill) }

// armNth makes the trigger call kill before the nth call of method from
// now (a flow that makes two writes of one method, such as two
// createFactor calls).
func (k *killTrigger) armNth(method string, nth int, kill func()) {
	k.mu.Lock()
	k.before, k.nth, k.seen, k.kill, k.fired, k.writes = method, nth, 0, kill, false, nil
	k.mu.Unlock()
}

// disarm returns whether the kill ran and the writes seen since armed.
func (k *killTrigger) disarm() (bool, []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fired, writes := k.fired, k.writes
	k.before, k.kill = "", nil
	return fired, writes
}

func (k *killTrigger) write(method string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kill == nil {
		return
	}
	k.writes = append(k.writes, method)
	if method != k.before || k.fired {
		return
	}
	if k.seen++; k.seen == k.nth {
		k.fired = true
		k.kill()
	}
}

func (k *killTrigger) CreateUser(ctx context.Context, u core.User) (*core.User, error) {
	k.write(string(core.MethodCreateUser))
	return k.Adapter.CreateUser(ctx, u)
}

func (k *killTrigger) UpdateUser(ctx context.Context, u core.UserUpdate) (*core.User, error) {
	k.write(string(core.MethodUpdateUser))
	return k.Adapter.UpdateUser(ctx, u)
}

func (k *killTrigger) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	k.write(string(core.MethodDeleteUser))
	return k.Adapter.DeleteUser(ctx, id)
}

func (k *killTrigger) LinkAccount(ctx context.Context, a core.Account) (*core.Account, error) {
	k.write(string(core.MethodLinkAccount))
	return k.Adapter.LinkAccount(ctx, a)
}

func (k *killTrigger) CreateSession(ctx context.Context, s core.Session) (*core.Session, error) {
	k.write(string(core.MethodCreateSession))
	return k.Adapter.CreateSession(ctx, s)
}

func (k *killTrigger) CreateVerificationToken(ctx context.Context, v core.VerificationToken) (*core.VerificationToken, error) {
	k.write(string(core.MethodCreateVerificationToken))
	return k.Adapter.CreateVerificationToken(ctx, v)
}

func (k *killTrigger) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	k.write(string(core.MethodUseVerificationToken))
	return k.Adapter.UseVerificationToken(ctx, key)
}

// SwapPasswordHash is the adapter's (the SQL adapter offers it).
func (k *killTrigger) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	k.write(string(core.MethodSwapPasswordHash))
	return k.Adapter.(core.PasswordHashSwapper).SwapPasswordHash(ctx, key, oldHash, newHash)
}

// DeleteSessionsByUserID is the adapter's (the SQL adapter offers it).
func (k *killTrigger) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	k.write(string(core.MethodDeleteSessionsByUserID))
	return k.Adapter.(core.SessionsByUserDeleter).DeleteSessionsByUserID(ctx, userID, except)
}

var (
	_ core.PasswordHashSwapper   = (*killTrigger)(nil)
	_ core.SessionsByUserDeleter = (*killTrigger)(nil)
)
