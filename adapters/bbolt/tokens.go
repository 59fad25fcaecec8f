package bboltadapter

import (
	"context"
	"fmt"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// CreateVerificationToken implements createVerificationToken: the token and
// its expiry index entry are written in one transaction.
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	const m = core.MethodCreateVerificationToken
	v := token.Normalize()
	if !timeOK(v.Expires) {
		return nil, invalidTime(m, "expires")
	}
	key := tokenKey(v.Identifier, v.Token)
	val := encodeVerificationToken(&v)
	err := a.update(ctx, func(tx *bolt.Tx) error {
		b, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		if b.tokens.Get(key) != nil {
			return fmt.Errorf("verification token (identifier, token) already exists: %w", core.ErrAlreadyExists)
		}
		if err := b.tokens.Put(key, val); err != nil {
			return err
		}
		return b.tokenExpiry.Put(expiryKey(v.Expires.UnixMilli(), key), marker)
	})
	if err != nil {
		return nil, storeErr(err)
	}
	return &v, nil
}

// UseVerificationToken implements useVerificationToken: it reads and deletes
// the token in one write transaction, so of concurrent calls exactly one
// gets it. An expired token is deleted too, and not returned.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	k := tokenKey(key.Identifier, key.Token)
	return writeFound(ctx, a,
		func(b *buckets) (*core.VerificationToken, error) {
			return getRecord(b.tokens, k, decodeVerificationToken)
		},
		func(b *buckets, v *core.VerificationToken) (*core.VerificationToken, error) {
			if err := b.tokenExpiry.Delete(expiryKey(v.Expires.UnixMilli(), k)); err != nil {
				return nil, err
			}
			if err := b.tokens.Delete(k); err != nil {
				return nil, err
			}
			if v.Expired(a.now()) {
				return nil, nil
			}
			return v, nil
		})
}
