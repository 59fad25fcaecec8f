package bboltadapter

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// checkFactorTimes refuses a factor time the millisecond encoding cannot
// hold (the factor must already be normalised).
func checkFactorTimes(m core.Method, f *core.Factor) error {
	if !timeOK(f.CreatedAt) {
		return invalidTime(m, "createdAt")
	}
	return checkLastUsed(m, f.LastUsedAt)
}

// checkLastUsed refuses a LastUsedAt the factor layout cannot hold: one
// beyond Unix milliseconds, and the Unix epoch itself, which the layout
// stores as 0, its "never" (zero is never, and stored as such).
func checkLastUsed(m core.Method, t time.Time) error {
	switch {
	case t.IsZero():
		return nil
	case !timeOK(t):
		return invalidTime(m, "lastUsedAt")
	case t.UnixMilli() == 0:
		return &core.InputError{Method: string(m), Field: "lastUsedAt", Reason: "is the Unix epoch, which the record layout keeps for never"}
	}
	return nil
}

// CreateFactor implements [core.FactorCreator]: the factor and its user
// index entry are written in one transaction, after checking that the user
// exists (else an error matching core.ErrNotFound) and that no factor of
// any user has the id (else one matching core.ErrAlreadyExists).
func (a *Adapter) CreateFactor(ctx context.Context, factor core.Factor) (*core.Factor, error) {
	const m = core.MethodCreateFactor
	f := factor.Normalize()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := checkFactorTimes(m, &f); err != nil {
		return nil, err
	}
	return createOwned(ctx, a, f.Clone(), f.UserID, []byte(f.ID), encodeFactor(&f),
		bucketFactors, bucketUserFactors, "factor id already taken")
}

// ListFactorsByUserID implements [core.FactorsByUserLister]: one prefix
// scan of the user's entries in user_factors, which are ordered by factor
// id, in a read transaction. An unknown user, or a read-only file from
// before factors, gives an empty, non-nil list.
func (a *Adapter) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	return listOwned(ctx, a, bucketUserFactors, bucketFactors, userID, decodeFactor, nil)
}

// getFactor reads the factor id in the write transaction's buckets; nil
// when there is none or it is another user's.
func getFactor(b *buckets, userID, id string) (*core.Factor, error) {
	f, err := getRecord(b.factors, []byte(id), decodeFactor)
	if err != nil || f == nil || f.UserID != userID {
		return nil, err
	}
	return f, nil
}

// SwapFactor implements [core.FactorSwapper]: in one write transaction it
// reads the factor (old.UserID, old.ID), compares its stored Secret (in
// constant time) and Step with old's and, when both are equal, stores
// next's Name, Secret, Step and LastUsedAt. When they differ it writes
// nothing and returns the stored factor and an error matching
// [core.ErrFactorChanged]; when the user has no factor with that id it
// returns nil, nil. bbolt runs one write transaction at a time, so of
// several swaps from one value exactly one succeeds, across every adapter
// on the file.
func (a *Adapter) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	const m = core.MethodSwapFactor
	next = next.Normalize()
	if err := checkLastUsed(m, next.LastUsedAt); err != nil {
		return nil, err
	}
	type swapped struct {
		f       *core.Factor
		changed bool // the stored factor was not old: nothing written
	}
	// A mismatch is a result, not an error of the transaction, so that the
	// stored factor comes back (and a group commit does not rerun it).
	out, err := writeFound(ctx, a, func(b *buckets) (*core.Factor, error) { return getFactor(b, old.UserID, old.ID) },
		func(b *buckets, f *core.Factor) (swapped, error) {
			if subtle.ConstantTimeCompare(f.Secret, old.Secret) != 1 || f.Step != old.Step {
				return swapped{f, true}, nil
			}
			f.Name, f.Secret, f.Step, f.LastUsedAt = next.Name, next.Secret, next.Step, next.LastUsedAt
			if err := b.factors.Put([]byte(f.ID), encodeFactor(f)); err != nil {
				return swapped{}, err
			}
			return swapped{f, false}, nil
		})
	if err != nil || out.f == nil {
		return nil, err
	}
	if out.changed {
		return out.f, fmt.Errorf("the stored factor is not the one expected: read it again: %w", core.ErrFactorChanged)
	}
	return out.f, nil
}

// DeleteFactor implements [core.FactorDeleter]: the factor and its user
// index entry go in one write transaction. It returns nil, nil when the
// user has no factor with the id (another user's factor is left in place).
func (a *Adapter) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	return writeFound(ctx, a, func(b *buckets) (*core.Factor, error) { return getFactor(b, userID, id) },
		func(b *buckets, f *core.Factor) (*core.Factor, error) {
			if err := b.factors.Delete([]byte(id)); err != nil {
				return nil, err
			}
			if err := b.userFactors.Delete(ownerKey(userID, []byte(id))); err != nil {
				return nil, err
			}
			return f, nil
		})
}
