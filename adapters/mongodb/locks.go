package mongoadapter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	mrand "math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// lockStripes is the number of in-process locks of a [recordLocks]. Updates
// of two records whose keys share a stripe wait for each other, which only
// costs time; updates of one record always share one.
const lockStripes = 64

// Kinds of record, hashed with the key so that a user, a session and an
// authenticator with the same key usually take different stripes and lock
// documents.
const (
	lockUser byte = iota + 1
	lockSession
	lockAuthenticator
	lockAccount
	lockFactor
)

// Timing of the lock documents: a lock older than lockLease is taken over
// (its holder stopped mid-update), and a caller that finds the lock held
// waits between lockWaitMin and lockWaitMax, doubling, before trying again.
const (
	lockLease   = 3 * time.Second
	lockWaitMin = time.Millisecond
	lockWaitMax = 20 * time.Millisecond
	// lockReleaseTimeout bounds the delete of a lock document, which runs
	// even when the caller's context has ended (in the background: the
	// caller returns at its context's end, see outlive).
	lockReleaseTimeout = 5 * time.Second
)

// recordLocks serialises the updates of each record. The adapter uses it on
// servers whose updates are not atomic (FerretDB v1, see
// [Capabilities.AtomicFindAndModify]): such a server applies an update by
// reading the whole document and writing it back by _id, so two concurrent
// updates of different fields of one record would keep only one of them.
//
// Within the process a striped lock serialises them. Across processes (two
// instances of an application on one server) a lock document does: the
// holder inserts {_id: kind and hash of the key, owner, expires} into coll,
// which succeeds for one caller only (_id is unique, and an insert is
// atomic on every server), and deletes it when its update is done. A lock
// document whose expires has passed was left by a holder that stopped; the
// next caller deletes it (matching its owner, so never a newer one) and
// takes the lock. A nil coll locks within the process only; a nil
// *recordLocks locks nothing.
//
// Each stripe is a channel of capacity 1 rather than a sync.Mutex so that a
// caller waiting for it gives up when its context ends.
type recordLocks struct {
	seed    maphash.Seed
	stripes [lockStripes]chan struct{}
	coll    *mongo.Collection
}

func newRecordLocks(coll *mongo.Collection) *recordLocks {
	l := &recordLocks{seed: maphash.MakeSeed(), coll: coll}
	for i := range l.stripes {
		l.stripes[i] = make(chan struct{}, 1)
	}
	return l
}

// lock takes the lock of the record (kind, key), waiting until it is free
// or ctx ends, and returns the function that releases it.
func (l *recordLocks) lock(ctx context.Context, kind byte, key string) (unlock func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	var h maphash.Hash
	h.SetSeed(l.seed)
	_ = h.WriteByte(kind)
	_, _ = h.WriteString(key)
	stripe := l.stripes[h.Sum64()%lockStripes]
	select {
	case stripe <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if l.coll == nil {
		return func() { <-stripe }, nil
	}
	release, err := l.lockDocument(ctx, kind, key)
	if err != nil {
		<-stripe
		return nil, err
	}
	return func() {
		release()
		<-stripe
	}, nil
}

// lockID is the _id of the lock document of the record (kind, key): the
// kind and a hash of the key, so that no session token is stored in it and
// its length does not depend on the key's.
func lockID(kind byte, key string) string {
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%d:%s", kind, hex.EncodeToString(sum[:16]))
}

// lockDocument inserts the lock document of the record, waiting while
// another holder has it, and returns the function that deletes it.
func (l *recordLocks) lockDocument(ctx context.Context, kind byte, key string) (release func(), err error) {
	id := lockID(kind, key)
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	owner := hex.EncodeToString(nonce[:])
	wait := lockWaitMin
	for {
		_, err := l.coll.InsertOne(ctx, bson.D{
			{Key: fID, Value: id},
			{Key: "owner", Value: owner},
			{Key: fExpires, Value: bson.DateTime(time.Now().Add(lockLease).UnixMilli())},
		})
		if err == nil {
			break
		}
		if !mongo.IsDuplicateKeyError(err) && !isStandInDuplicate(err) {
			return nil, fmt.Errorf("taking the lock of the record: %w", err)
		}
		var held struct {
			Owner   string        `bson:"owner"`
			Expires bson.DateTime `bson:"expires"`
		}
		err = l.coll.FindOne(ctx, bson.D{{Key: fID, Value: id}}).Decode(&held)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			continue // released meanwhile
		case err != nil:
			return nil, fmt.Errorf("reading the lock of the record: %w", err)
		case held.Expires <= bson.DateTime(time.Now().UnixMilli()):
			// Left by a holder that stopped: delete that one, not a
			// newer lock taken over by someone else meanwhile.
			if _, err := l.coll.DeleteOne(ctx, bson.D{{Key: fID, Value: id}, {Key: "owner", Value: held.Owner}}); err != nil {
				return nil, fmt.Errorf("taking over an expired lock of the record: %w", err)
			}
			continue
		}
		t := time.NewTimer(wait/2 + mrand.N(wait/2+1))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		wait = min(2*wait, lockWaitMax)
	}
	return func() {
		// The release waits no longer than the caller's ctx; should the
		// delete fail, or still run then, the lock expires after lockLease.
		_ = outlive(ctx, lockReleaseTimeout, func(ctx context.Context) error {
			_, err := l.coll.DeleteOne(ctx, bson.D{{Key: fID, Value: id}, {Key: "owner", Value: owner}})
			return err
		})
	}, nil
}
