package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// ErrLastSignInMethod is returned, wrapped, by [Auth.UnlinkAccount] when
// the account is the user's last way to sign in: no other linked account
// of a configured provider remains, and no e-mail provider is configured.
// Nothing was changed. Link another account first, or delete the user.
var ErrLastSignInMethod = errors.New("the account is the user's last way to sign in")

// Accounts returns the accounts linked to the user, ordered by provider
// then provider account id, with their tokens; an unknown user has none.
// A password account comes without its hash. It needs the adapter's
// listAccountsByUserId extension ([core.AccountsByUserLister]).
func (a *Auth) Accounts(ctx context.Context, userID string) ([]core.Account, error) {
	list, err := call(a, "account listing", func(l core.AccountsByUserLister) ([]core.Account, error) {
		return l.ListAccountsByUserID(ctx, userID)
	})
	for i := range list {
		list[i].PasswordHash = nil
	}
	return list, err
}

// UnlinkAccount removes the user's account with the key and returns it
// (without a password hash). It
// fails with an error matching [core.ErrNotFound] when the user has no such
// account, and with one matching [ErrLastSignInMethod] when the user could
// not sign in without it (an e-mail provider, when configured, counts as a
// way to sign in for every user who has an address; a password account
// counts when a password provider is configured and the user has an
// address or a username to sign in with). Passkeys are authenticators, not
// accounts: they keep working after their webauthn account is unlinked.
//
// Unlinks of one user are serialised within this process, so that two
// concurrent requests cannot each remove one of the last two ways; across
// processes the check and the removal are two adapter calls.
func (a *Auth) UnlinkAccount(ctx context.Context, userID string, key core.AccountKey) (*core.Account, error) {
	unlock := a.userLocks.lock(userID)
	defer unlock()
	accounts, err := a.Accounts(ctx, userID)
	if err != nil {
		return nil, err
	}
	// The user is read only when needed: a password account is a way in
	// only for a user with an address or a username, e-mail sign-in only
	// for one with an address.
	var user *core.User
	userOf := func() (*core.User, error) {
		if user != nil {
			return user, nil
		}
		u, err := a.User(ctx, userID)
		if err == nil && u == nil {
			u = &core.User{ID: userID}
		}
		user = u
		return u, err
	}
	found, others := false, 0
	for _, acc := range accounts {
		switch {
		case acc.Key() == key:
			found = true
		case a.signsIn(acc) && isPasswordAccount(acc):
			u, err := userOf()
			if err != nil {
				return nil, err
			}
			if u.Email != "" || u.Username != "" {
				others++
			}
		case a.signsIn(acc):
			others++
		}
	}
	if !found {
		return nil, fmt.Errorf("user %q has no %s account %q: %w", userID, key.Provider, key.ProviderAccountID, core.ErrNotFound)
	}
	if others == 0 && a.hasProviderType(provider.TypeEmail) {
		// E-mail sign-in is a way in only for a user with an address.
		u, err := userOf()
		if err != nil {
			return nil, err
		}
		if u.Email == "" {
			return nil, fmt.Errorf("unlinking %s account %q of user %q, who has no e-mail address to sign in with: %w", key.Provider, key.ProviderAccountID, userID, ErrLastSignInMethod)
		}
	}
	if others == 0 && !a.hasProviderType(provider.TypeEmail) {
		return nil, fmt.Errorf("unlinking %s account %q of user %q: %w", key.Provider, key.ProviderAccountID, userID, ErrLastSignInMethod)
	}
	removed, err := call(a, "account unlinking", func(u core.AccountUnlinker) (*core.Account, error) {
		return u.UnlinkAccount(ctx, key)
	})
	return withoutHash(removed), err
}

// UpdateAccount changes the token fields of one account, for the tokens a
// refresh returned, and returns the account as stored afterwards (nil when
// there is no such account). It needs the adapter's updateAccount extension
// ([core.AccountUpdater]). A password account comes without its hash.
func (a *Auth) UpdateAccount(ctx context.Context, update core.AccountUpdate) (*core.Account, error) {
	acc, err := call(a, "token refresh", func(u core.AccountUpdater) (*core.Account, error) {
		return u.UpdateAccount(ctx, update)
	})
	return withoutHash(acc), err
}

// Account returns the account with the key (a password account without
// its hash), or nil when there is none.
func (a *Auth) Account(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	acc, err := call(a, "account lookup", func(g core.AccountGetter) (*core.Account, error) {
		return g.GetAccount(ctx, key.ProviderAccountID, key.Provider)
	})
	return withoutHash(acc), err
}

// signsIn reports whether the account's provider is configured, so that
// the user can still sign in with it.
func (a *Auth) signsIn(acc core.Account) bool {
	if isPasswordAccount(acc) {
		return a.pw != nil
	}
	_, ok := a.providers[acc.Provider]
	return ok
}

// isPasswordAccount reports whether acc is a password account.
func isPasswordAccount(acc core.Account) bool {
	return acc.Provider == core.PasswordProvider && acc.Type == core.AccountTypeCredentials
}

func (a *Auth) hasProviderType(t provider.Type) bool {
	for _, p := range a.list {
		if p.Common().Type == t {
			return true
		}
	}
	return false
}

// keyedLocks serialises work per key (a user id) within the process.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int // holders and waiters; the entry goes when it drops to 0
}

// lock locks the key and returns its unlock.
func (k *keyedLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = make(map[string]*keyedLock)
	}
	l := k.m[key]
	if l == nil {
		l = &keyedLock{}
		k.m[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}

// User returns the user with the id, or nil when there is none.
func (a *Auth) User(ctx context.Context, id string) (*core.User, error) {
	return call(a, "user lookup", func(g core.UserGetter) (*core.User, error) {
		return g.GetUser(ctx, id)
	})
}

// UpdateUser changes the fields of a user the update sets (an
// application field such as a role, through [core.UserField.Set], or the
// name) and returns the user as stored afterwards; [Events] UpdateUser
// runs after it. An e-mail address is normalised as at sign-in
// ([NormalizeEmail]). An unknown user gives an error matching
// [core.ErrNotFound].
func (a *Auth) UpdateUser(ctx context.Context, update core.UserUpdate) (*core.User, error) {
	if update.Email.Set {
		email, err := NormalizeEmail(update.Email.Value)
		if err != nil {
			return nil, err
		}
		update.Email.Value = email
	}
	u, err := call(a, "user update", func(up core.UserUpdater) (*core.User, error) {
		return up.UpdateUser(ctx, update)
	})
	if err != nil {
		return nil, err
	}
	emit(a, ctx, "updateUser", a.events.UpdateUser, *u)
	return u, nil
}
