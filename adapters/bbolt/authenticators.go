package bboltadapter

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// CreateAuthenticator implements createAuthenticator: the authenticator and
// its user index entry are written in one transaction, after checking that
// the user exists.
func (a *Adapter) CreateAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	au := authenticator.Clone()
	return createOwned(ctx, a, au.Clone(), au.UserID, []byte(au.CredentialID), encodeAuthenticator(&au),
		bucketAuthenticators, bucketUserAuths, "credential id already registered")
}

func getAuthenticator(b *bolt.Bucket, credentialID string) (*core.Authenticator, error) {
	return getRecord(b, []byte(credentialID), decodeAuthenticator)
}

// GetAuthenticator implements getAuthenticator.
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	return getOne(ctx, a, bucketAuthenticators, []byte(credentialID), decodeAuthenticator)
}

// ListAuthenticatorsByUserID implements listAuthenticatorsByUserId: one
// prefix scan of the user's index entries, which are ordered by credential
// id. An unknown user gives an empty, non-nil list.
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	return listOwned(ctx, a, bucketUserAuths, bucketAuthenticators, userID, decodeAuthenticator, nil)
}

// UpdateAuthenticatorCounter implements updateAuthenticatorCounter. An
// unknown credential id gives an error matching core.ErrNotFound and a
// negative counter (through core.Store) one matching core.ErrInvalidInput.
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(ctx, credentialID, newCounter, false)
}

// AdvanceAuthenticatorCounter implements core.AuthenticatorCounterAdvancer:
// in one write transaction it sets the counter only if newCounter is above
// the stored one (both 0 passes and changes nothing), else it fails with an
// error matching core.ErrCounterNotIncreased. An unknown credential id gives
// an error matching core.ErrNotFound.
func (a *Adapter) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(ctx, credentialID, newCounter, true)
}

// setCounter sets the authenticator's counter in one write transaction.
// With increaseOnly it fails with core.ErrCounterNotIncreased
// unless newCounter is above the stored one (both 0 passes), and writes only
// when the counter changes; without, it always writes.
func (a *Adapter) setCounter(ctx context.Context, credentialID string, newCounter int64, increaseOnly bool) (*core.Authenticator, error) {
	return write(ctx, a, func(b *buckets) (*core.Authenticator, error) {
		au, err := getAuthenticator(b.authenticators, credentialID)
		if err != nil {
			return nil, err
		}
		if au == nil {
			return nil, fmt.Errorf("no authenticator with this credential id: %w", core.ErrNotFound)
		}
		if increaseOnly && !core.CounterAdvances(au.Counter, newCounter) {
			return nil, fmt.Errorf("stored %d, reported %d: %w", au.Counter, newCounter, core.ErrCounterNotIncreased)
		}
		if !increaseOnly || newCounter != au.Counter {
			au.Counter = newCounter
			if err := b.authenticators.Put([]byte(credentialID), encodeAuthenticator(au)); err != nil {
				return nil, err
			}
		}
		return au, nil
	})
}
