package redisadapter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// CreateAuthenticator implements [core.AuthenticatorCreator]: one script
// on a single node; claim, write, confirm on a cluster.
func (a *Adapter) CreateAuthenticator(ctx context.Context, au core.Authenticator) (*core.Authenticator, error) {
	err := a.attach(ctx, au.UserID, a.k.authenticator(au.CredentialID), a.k.authenticators,
		shared.Escape(au.CredentialID), encodeAuthenticator(&au), fmt.Sprintf("credential id %q", au.CredentialID))
	if err != nil {
		return nil, err
	}
	return &au, nil
}

// GetAuthenticator implements [core.AuthenticatorGetter].
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	s, _, err := a.followRecord(ctx, a.s.getAuthenticator, a.k.authenticator(credentialID), shared.Escape(credentialID))
	if err != nil || s == "" {
		return nil, err
	}
	return decodeAuthenticator(s)
}

// ListAuthenticatorsByUserID implements [core.AuthenticatorsByUserLister]
// with one HVALS of the user's authenticators hash.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	if userID == "" {
		return []core.Authenticator{}, nil
	}
	return listHash(ctx, a, a.k.authenticators(userID), decodeAuthenticator, core.CompareAuthenticators)
}

// UpdateAuthenticatorCounter implements [core.AuthenticatorCounterUpdater].
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(ctx, credentialID, newCounter, false)
}

// AdvanceAuthenticatorCounter implements
// [core.AuthenticatorCounterAdvancer] with one script in the user's slot: it
// sets the counter only if newCounter is above the stored one (both 0
// passes and changes nothing), else it fails with an error matching
// [core.ErrCounterNotIncreased].
func (a *Adapter) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(ctx, credentialID, newCounter, true)
}

// setCounter runs the counter script: with increaseOnly the
// advance script, which replies {flag, authenticator} and sets the counter
// only when it increases ("ok"), else the update script, which replies the
// updated authenticator.
func (a *Adapter) setCounter(ctx context.Context, credentialID string, newCounter int64, increaseOnly bool) (*core.Authenticator, error) {
	script := a.s.updateCounter
	if increaseOnly {
		script = a.s.advanceCounter
	}
	v, _, err := a.follow(ctx, script, a.k.authenticator(credentialID), shared.Escape(credentialID),
		strconv.FormatInt(newCounter, 10))
	if shared.IsNil(err) {
		return nil, fmt.Errorf("credential id %q: %w", credentialID, core.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	flag := "ok"
	if increaseOnly {
		res, ok := v.([]any)
		if !ok || len(res) != 2 {
			return nil, shared.ErrCorrupt
		}
		flag, _ = res[0].(string)
		v = res[1]
	}
	s, ok := v.(string)
	if !ok {
		return nil, shared.ErrCorrupt
	}
	au, err := decodeAuthenticator(s)
	if err != nil {
		return nil, err
	}
	if flag != "ok" {
		return nil, fmt.Errorf("stored %d, reported %d: %w", au.Counter, newCounter, core.ErrCounterNotIncreased)
	}
	return au, nil
}
