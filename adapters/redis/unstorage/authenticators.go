package unstorage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateAuthenticator implements [core.AuthenticatorCreator]: the new
// credential goes first in unstorage's list of the user's credentials, as
// @auth/unstorage-adapter puts it.
func (a *Adapter) CreateAuthenticator(ctx context.Context, au core.Authenticator) (*core.Authenticator, error) {
	const m = core.MethodCreateAuthenticator
	var big error
	if au.Counter > maxSafeCounter {
		big = shared.Invalid(m, "counter", "is beyond the integers a JSON number holds exactly")
	}
	doc, err := checkedDoc(&au, encodeUAuth, checkKey(m, "credentialID", uAuth, uAuth+au.CredentialID), big)
	if err != nil {
		return nil, err
	}
	listKey := a.k.authByUser(au.UserID)
	return shared.CAS(ctx, func() (*core.Authenticator, bool, error) {
		old, ok, err := shared.Get(ctx, a.c, listKey)
		if err != nil {
			return nil, false, err
		}
		list := []string{au.CredentialID}
		for _, c := range credList(old) {
			if !slices.Contains(list, c) {
				list = append(list, c)
			}
		}
		newList, err := marshalJSON(list)
		if err != nil {
			return nil, false, err
		}
		res, err := a.s.createAuth.Run(ctx, a.c, []string{a.k.user(au.UserID), a.k.auth(au.CredentialID), listKey, a.k.ownAuths(au.UserID)},
			au.UserID, doc, shared.Enc(old, ok), newList, a.k.auth(au.CredentialID)).Text()
		if err != nil || res == "retry" {
			return nil, false, err
		}
		if err := replyErr(res, au.UserID, fmt.Sprintf("credential id %q", au.CredentialID)); err != nil {
			return nil, false, err
		}
		return &au, true, nil
	})
}

func (a *Adapter) readAuth(ctx context.Context, cred string) (string, *core.Authenticator, error) {
	return readDoc(ctx, a, a.k.auth(cred), func(raw string) (*core.Authenticator, error) { return decodeUAuth(raw, cred) })
}

// GetAuthenticator implements [core.AuthenticatorGetter].
func (a *Adapter) GetAuthenticator(ctx context.Context, cred string) (*core.Authenticator, error) {
	_, au, err := a.readAuth(ctx, cred)
	return au, err
}

// ListAuthenticatorsByUserID implements [core.AuthenticatorsByUserLister].
// authport's own set of the user's authenticator keys complements
// unstorage's list, which @auth/unstorage-adapter's
// updateAuthenticatorCounter can truncate.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	list, _, err := shared.Get(ctx, a.c, a.k.authByUser(userID))
	if err != nil {
		return nil, err
	}
	own, err := a.c.SMembers(ctx, a.k.ownAuths(userID)).Result()
	if err != nil {
		return nil, err
	}
	keys := []string{}
	for _, cred := range credList(list) {
		keys = append(keys, a.k.auth(cred))
	}
	return listDocs(ctx, a, append(keys, own...), func(k, raw string) (*core.Authenticator, error) {
		doc, _ := object(raw)
		cred, _ := stringField(doc, "credentialID")
		au, err := decodeUAuth(raw, cred)
		if err != nil || au == nil || au.UserID != userID || a.k.auth(cred) != k {
			return nil, err
		}
		return au, nil
	}, core.CompareAuthenticators)
}

// UpdateAuthenticatorCounter implements [core.AuthenticatorCounterUpdater].
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(ctx, core.MethodUpdateAuthenticatorCounter, credentialID, newCounter, false)
}

// AdvanceAuthenticatorCounter implements
// [core.AuthenticatorCounterAdvancer]: it sets the counter only if
// newCounter is above the stored one (both 0 passes and changes nothing),
// else it fails with an error matching [core.ErrCounterNotIncreased].
func (a *Adapter) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(ctx, core.Method(core.ExtensionAdvanceAuthenticatorCounter), credentialID, newCounter, true)
}

// setCounter sets the counter of the authenticator document by
// compare-and-set; with increaseOnly only when it advances.
func (a *Adapter) setCounter(ctx context.Context, m core.Method, cred string, n int64, increaseOnly bool) (*core.Authenticator, error) {
	if n > maxSafeCounter {
		return nil, shared.Invalid(m, "counter", "is beyond the integers a JSON number holds exactly")
	}
	return shared.CAS(ctx, func() (*core.Authenticator, bool, error) {
		raw, au, err := a.readAuth(ctx, cred)
		if err != nil {
			return nil, false, err
		}
		if au == nil {
			return nil, false, fmt.Errorf("credential id %q: %w", cred, core.ErrNotFound)
		}
		if increaseOnly && !core.CounterAdvances(au.Counter, n) {
			return nil, false, fmt.Errorf("stored %d, reported %d: %w", au.Counter, n, core.ErrCounterNotIncreased)
		}
		doc, _ := object(raw)
		doc["counter"] = json.RawMessage(strconv.FormatInt(n, 10))
		s, err := marshalJSON(doc)
		if err != nil {
			return nil, false, err
		}
		res, err := a.s.replace.Run(ctx, a.c, []string{a.k.auth(cred)}, raw, s).Text()
		if err != nil || res != "ok" {
			return nil, false, err
		}
		au.Counter = n
		return au, true, nil
	})
}
