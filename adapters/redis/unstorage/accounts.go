package unstorage

import (
	"context"
	"fmt"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// checkAccount refuses what the layout cannot store: numbers beyond what
// a JSON number holds exactly, and keys unstorage would refuse or merge.
func (a *Adapter) checkAccount(m core.Method, acc *core.Account) error {
	for name, n := range map[string]*int64{"expires_at": acc.ExpiresAt, "expires_in": acc.ExpiresIn} {
		if n != nil && (*n > maxSafeCounter || *n < -maxSafeCounter) {
			return shared.Invalid(m, name, "is beyond the integers a JSON number holds exactly")
		}
	}
	return checkKey(m, "provider", uAccount, a.k.accountLogical(acc.Provider, acc.ProviderAccountID))
}

func (a *Adapter) readAccount(ctx context.Context, provider, paid string) (string, *core.Account, error) {
	return readDoc(ctx, a, a.k.account(provider, paid), func(raw string) (*core.Account, error) { return decodeUAccount(raw, provider, paid) })
}

// attach runs the attach script until the by-user key it read has not
// changed meanwhile. It returns "ok", "exists" or "notfound".
func (a *Adapter) attach(ctx context.Context, uid, key, byUser, own, doc, logical string, pxat int64) (string, error) {
	return shared.CAS(ctx, func() (string, bool, error) {
		prev, ok, err := shared.Get(ctx, a.c, byUser)
		if err != nil {
			return "", false, err
		}
		prevKey := ""
		if ok {
			prevKey = a.k.redis(prev)
		}
		res, err := a.s.attach.Run(ctx, a.c, []string{a.k.user(uid), key, byUser, own}, uid, doc, logical, key, pxat, shared.Enc(prev, ok), prevKey).Text()
		return res, err == nil && res != "retry", err
	})
}

// LinkAccount implements [core.AccountLinker].
func (a *Adapter) LinkAccount(ctx context.Context, acc core.Account) (*core.Account, error) {
	doc, err := checkedDoc(&acc, encodeUAccount, a.checkAccount(core.MethodLinkAccount, &acc))
	if err != nil {
		return nil, err
	}
	logical := a.k.accountLogical(acc.Provider, acc.ProviderAccountID)
	res, err := a.attach(ctx, acc.UserID, a.k.redis(logical), a.k.accountByUser(acc.UserID), a.k.ownAccounts(acc.UserID), doc, logical, 0)
	if err == nil {
		err = replyErr(res, acc.UserID, fmt.Sprintf("account (%q, %q)", acc.Provider, acc.ProviderAccountID))
	}
	if err != nil {
		return nil, err
	}
	return &acc, nil
}

// UnlinkAccount implements [core.AccountUnlinker].
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	logical := a.k.accountLogical(key.Provider, key.ProviderAccountID)
	rk := a.k.redis(logical)
	return shared.CAS(ctx, func() (*core.Account, bool, error) {
		raw, acc, err := a.readAccount(ctx, key.Provider, key.ProviderAccountID)
		if err != nil || acc == nil {
			return nil, true, err
		}
		res, err := a.s.detach.Run(ctx, a.c, []string{rk, a.k.ownAccounts(acc.UserID), a.k.accountByUser(acc.UserID)}, raw, rk, logical).Text()
		if err != nil || res != "ok" {
			return nil, false, err
		}
		return acc, true, nil
	})
}

// GetAccount implements [core.AccountGetter].
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	_, acc, err := a.readAccount(ctx, provider, providerAccountID)
	return acc, err
}

// ListAccountsByUserID implements [core.AccountsByUserLister]: the
// accounts in authport's set of the user's account keys and the one
// unstorage's by-user key names (Auth.js keeps only the latest there),
// each confirmed to belong to the user.
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	keys, err := a.c.SMembers(ctx, a.k.ownAccounts(userID)).Result()
	if err != nil {
		return nil, err
	}
	latest, ok, err := shared.Get(ctx, a.c, a.k.accountByUser(userID))
	if err != nil {
		return nil, err
	}
	if ok {
		keys = append(keys, a.k.redis(latest))
	}
	return listDocs(ctx, a, keys, func(k, raw string) (*core.Account, error) {
		doc, _ := object(raw)
		p, _ := stringField(doc, "provider")
		paid, _ := stringField(doc, "providerAccountId")
		if a.k.account(p, paid) != k {
			return nil, nil
		}
		acc, err := decodeUAccount(raw, p, paid)
		if err != nil || acc == nil || acc.UserID != userID {
			return nil, err
		}
		return acc, nil
	}, core.CompareAccounts)
}

// UpdateAccount implements [core.AccountUpdater] as a compare-and-set of
// the account document; fields the update does not set, and fields
// authport does not know, are left as stored.
func (a *Adapter) UpdateAccount(ctx context.Context, up core.AccountUpdate) (*core.Account, error) {
	return a.changeAccount(ctx, core.MethodUpdateAccount, up.Provider, up.ProviderAccountID, func(cur *core.Account) (*core.Account, []string, error) {
		next := up.Apply(*cur)
		// Token fields set to null are left out of the document, as
		// Auth.js leaves out what it does not have.
		var unset []string
		for name, f := range map[string]bool{
			"access_token": up.AccessToken.Set && next.AccessToken == nil, "authorization_details": up.AuthorizationDetails.Set && next.AuthorizationDetails == nil,
			"expires_at": up.ExpiresAt.Set && next.ExpiresAt == nil, "expires_in": up.ExpiresIn.Set && next.ExpiresIn == nil,
			"id_token": up.IDToken.Set && next.IDToken == nil, "refresh_token": up.RefreshToken.Set && next.RefreshToken == nil,
			"scope": up.Scope.Set && next.Scope == nil, "token_type": up.TokenType.Set && next.TokenType == nil,
			"session_state": up.SessionState.Set && next.SessionState == nil,
		} {
			if f {
				unset = append(unset, name)
			}
		}
		return &next, unset, nil
	})
}

// SwapPasswordHash implements [core.PasswordHashSwapper]: the account
// document's password field is replaced by one script that writes only if
// the document is still the one read (the compare-and-set of
// UpdateAccount), so the compare of the hash and the write are atomic.
func (a *Adapter) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	return a.changeAccount(ctx, core.MethodSwapPasswordHash, key.Provider, key.ProviderAccountID, func(cur *core.Account) (*core.Account, []string, error) {
		next, err := shared.SwapHash(cur, oldHash, newHash)
		return next, nil, err
	})
}

// changeAccount is the compare-and-set of an account document: read it,
// compute the next account with change (and the fields to leave out of
// the document; an error stops it, nothing written), write the merged
// document only if the stored one is still as read, and repeat if another
// writer changed it meanwhile. No account gives nil, nil.
func (a *Adapter) changeAccount(ctx context.Context, m core.Method, provider, paid string, change func(*core.Account) (*core.Account, []string, error)) (*core.Account, error) {
	key := a.k.account(provider, paid)
	return shared.CAS(ctx, func() (*core.Account, bool, error) {
		raw, cur, err := a.readAccount(ctx, provider, paid)
		if err != nil || cur == nil {
			return nil, true, err
		}
		next, unset, err := change(cur)
		if err != nil {
			return next, true, err
		}
		doc, err := checkedDoc(next, encodeUAccount, a.checkAccount(m, next))
		if err != nil {
			return nil, false, err
		}
		s, err := mergeDoc(raw, doc, unset...)
		if err != nil {
			return nil, false, err
		}
		res, err := a.s.replace.Run(ctx, a.c, []string{key}, raw, s).Text()
		if err != nil || res != "ok" {
			return nil, false, err
		}
		return next, true, nil
	})
}
