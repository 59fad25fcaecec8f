package betterauth

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
)

// The methods below hand users, accounts and authenticators to the
// primary adapter as they are; UpdateUser and DeleteUser (users.go) also
// keep the sessions in Redis in step.

// CreateUser implements [core.UserCreator] on the primary adapter.
func (a *Adapter) CreateUser(ctx context.Context, u core.User) (*core.User, error) {
	return a.primary.CreateUser(ctx, u)
}

// GetUser implements [core.UserGetter] on the primary adapter.
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	return a.primary.GetUser(ctx, id)
}

// GetUserByEmail implements [core.UserByEmailGetter] on the primary adapter.
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	return a.primary.GetUserByEmail(ctx, email)
}

// GetUserByAccount implements [core.UserByAccountGetter] on the primary
// adapter.
func (a *Adapter) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	return a.primary.GetUserByAccount(ctx, key)
}

// LinkAccount implements [core.AccountLinker] on the primary adapter.
func (a *Adapter) LinkAccount(ctx context.Context, acc core.Account) (*core.Account, error) {
	return a.primary.LinkAccount(ctx, acc)
}

// UnlinkAccount implements [core.AccountUnlinker] on the primary adapter.
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	return a.primary.UnlinkAccount(ctx, key)
}

// GetAccount implements [core.AccountGetter] on the primary adapter.
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	return a.primary.GetAccount(ctx, providerAccountID, provider)
}

// CreateAuthenticator implements [core.AuthenticatorCreator] on the
// primary adapter.
func (a *Adapter) CreateAuthenticator(ctx context.Context, au core.Authenticator) (*core.Authenticator, error) {
	return a.primary.CreateAuthenticator(ctx, au)
}

// GetAuthenticator implements [core.AuthenticatorGetter] on the primary
// adapter.
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	return a.primary.GetAuthenticator(ctx, credentialID)
}

// ListAuthenticatorsByUserID implements [core.AuthenticatorsByUserLister]
// on the primary adapter.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	return a.primary.ListAuthenticatorsByUserID(ctx, userID)
}

// UpdateAuthenticatorCounter implements [core.AuthenticatorCounterUpdater]
// on the primary adapter.
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, n int64) (*core.Authenticator, error) {
	return a.primary.UpdateAuthenticatorCounter(ctx, credentialID, n)
}

// The extensions of the primary adapter: the Adapter has each method and
// names those the primary lacks (or omits) in OmittedMethods, so that
// [core.Probe] reports exactly the primary's.

// delegated are the extensions handed to the primary adapter.
var delegated = []struct {
	m   core.Method
	has func(p any) bool
}{
	{core.Method(core.ExtensionAdvanceAuthenticatorCounter), func(p any) bool { _, ok := p.(core.AuthenticatorCounterAdvancer); return ok }},
	{core.MethodListAccountsByUserID, func(p any) bool { _, ok := p.(core.AccountsByUserLister); return ok }},
	{core.MethodUpdateAccount, func(p any) bool { _, ok := p.(core.AccountUpdater); return ok }},
	{core.MethodGetUserByUsername, func(p any) bool { _, ok := p.(core.UserByUsernameGetter); return ok }},
	{core.MethodSwapPasswordHash, func(p any) bool { _, ok := p.(core.PasswordHashSwapper); return ok }},
}

// omittedBy returns the delegated extensions the primary does not offer.
func omittedBy(p core.Adapter) []core.Method {
	caps := core.Probe(p)
	var out []core.Method
	for _, d := range delegated {
		if !d.has(p) || !caps.HasExtension(core.Extension(d.m)) {
			out = append(out, d.m)
		}
	}
	return out
}

// OmittedMethods implements [core.MethodOmitter]: the extensions the
// primary adapter does not offer.
func (a *Adapter) OmittedMethods() []core.Method { return append([]core.Method(nil), a.omitted...) }

// primaryAs returns the primary adapter as the extension interface I, or
// an error naming the method when it does not offer it.
func primaryAs[I any](a *Adapter, m core.Method) (I, error) {
	i, err := core.Require[I](a.primary, "the Better Auth Redis layout's delegation")
	if err != nil {
		var zero I
		return zero, fmt.Errorf("%s: the primary adapter %T does not offer it: %w", m, a.primary, err)
	}
	return i, nil
}

// AdvanceAuthenticatorCounter implements
// [core.AuthenticatorCounterAdvancer] on the primary adapter.
func (a *Adapter) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, n int64) (*core.Authenticator, error) {
	p, err := primaryAs[core.AuthenticatorCounterAdvancer](a, core.Method(core.ExtensionAdvanceAuthenticatorCounter))
	if err != nil {
		return nil, err
	}
	return p.AdvanceAuthenticatorCounter(ctx, credentialID, n)
}

// ListAccountsByUserID implements [core.AccountsByUserLister] on the
// primary adapter.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	p, err := primaryAs[core.AccountsByUserLister](a, core.MethodListAccountsByUserID)
	if err != nil {
		return nil, err
	}
	return p.ListAccountsByUserID(ctx, userID)
}

// UpdateAccount implements [core.AccountUpdater] on the primary adapter.
func (a *Adapter) UpdateAccount(ctx context.Context, up core.AccountUpdate) (*core.Account, error) {
	p, err := primaryAs[core.AccountUpdater](a, core.MethodUpdateAccount)
	if err != nil {
		return nil, err
	}
	return p.UpdateAccount(ctx, up)
}

// GetUserByUsername implements [core.UserByUsernameGetter] on the primary
// adapter.
func (a *Adapter) GetUserByUsername(ctx context.Context, username string) (*core.User, error) {
	p, err := primaryAs[core.UserByUsernameGetter](a, core.MethodGetUserByUsername)
	if err != nil {
		return nil, err
	}
	return p.GetUserByUsername(ctx, username)
}

// SwapPasswordHash implements [core.PasswordHashSwapper] on the primary
// adapter.
func (a *Adapter) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	p, err := primaryAs[core.PasswordHashSwapper](a, core.MethodSwapPasswordHash)
	if err != nil {
		return nil, err
	}
	return p.SwapPasswordHash(ctx, key, oldHash, newHash)
}
