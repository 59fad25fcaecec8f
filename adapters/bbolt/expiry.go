package bboltadapter

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// purgeChunk bounds the records one purge transaction deletes, so that a
// large purge does not hold the single writer lock for long.
const purgeChunk = 1000

// PurgeExpired implements core.ExpiredPurger: it deletes every session and
// verification token whose expiry is not after now, with their index
// entries. It walks the expiry indexes, so its cost grows with the number
// of expired records, not with the size of the file. It deletes in
// transactions of at most 1000 records each; a cancelled ctx stops it
// between two of them, reporting what was deleted so far.
func (a *Adapter) PurgeExpired(ctx context.Context) (core.PurgeResult, error) {
	var res core.PurgeResult
	if err := a.ready(ctx); err != nil {
		return res, err
	}
	now := a.now().UnixMilli()
	for {
		var ns, nt int
		err := a.update(ctx, func(tx *bolt.Tx) error {
			ns, nt = 0, 0
			b, err := openBuckets(tx, a.root)
			if err != nil {
				return err
			}
			if ns, err = purge(b.sessionExpiry, now, purgeChunk, func(key []byte) error {
				s, err := getSession(b.sessions, string(key))
				if err != nil || s == nil {
					return err
				}
				return b.userSessions.Delete(ownerKey(s.UserID, key))
			}, b.sessions); err != nil {
				return err
			}
			nt, err = purge(b.tokenExpiry, now, purgeChunk-ns, nil, b.tokens)
			return err
		})
		if err != nil {
			return res, err
		}
		res.Sessions += ns
		res.VerificationTokens += nt
		if ns+nt < purgeChunk {
			return res, nil
		}
	}
}

// purge deletes up to limit entries of the expiry index idx that expire at
// or before now, together with their records in recs; before each record
// is deleted, also runs (when non-nil) to delete its other index entries.
func purge(idx *bolt.Bucket, now int64, limit int, also func(key []byte) error, recs *bolt.Bucket) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	end := expiryUpTo(now)
	var keys [][]byte
	c := idx.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k, end) < 0 && len(keys) < limit; k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		_, key, err := splitExpiryKey(k)
		if err != nil {
			return 0, err
		}
		if also != nil {
			if err := also(key); err != nil {
				return 0, err
			}
		}
		if err := recs.Delete(key); err != nil {
			return 0, err
		}
		if err := idx.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// Sweep calls PurgeExpired every interval until ctx is done, then returns
// ctx's error. After each purge it calls report, when not nil, with the
// result and error (a failed purge does not stop the sweeper). Run it in its
// own goroutine, as the package's Example does:
//
//	go store.Sweep(ctx, 10*time.Minute, nil)
func (a *Adapter) Sweep(ctx context.Context, interval time.Duration, report func(core.PurgeResult, error)) error {
	if err := a.ready(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if interval <= 0 {
		return fmt.Errorf("sweep: interval must be positive: %w", core.ErrInvalidInput)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			res, err := a.PurgeExpired(ctx)
			if report != nil && ctx.Err() == nil {
				report(res, err)
			}
		}
	}
}
