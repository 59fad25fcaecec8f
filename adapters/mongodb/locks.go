package mongoadapter

import (
	"context"
	"hash/maphash"
)

// lockStripes is the number of locks of a [recordLocks]. Updates of two
// records whose keys share a stripe wait for each other, which only costs
// time; updates of one record always share one.
const lockStripes = 64

// Kinds of record, hashed with the key so that a user, a session and an
// authenticator with the same key usually take different stripes.
const (
	lockUser byte = iota + 1
	lockSession
	lockAuthenticator
)

// recordLocks serialises the updates of each record within this process.
// The adapter uses it on servers whose updates are not atomic (FerretDB v1,
// see [Capabilities.AtomicFindAndModify]): such a server applies an update by
// reading the whole document and writing it back, so two concurrent updates
// of different fields of one record would keep only one of them. Writers in
// other processes are not serialised. A nil *recordLocks locks nothing.
//
// Each stripe is a channel of capacity 1 rather than a sync.Mutex so that a
// caller waiting for it gives up when its context ends.
type recordLocks struct {
	seed    maphash.Seed
	stripes [lockStripes]chan struct{}
}

func newRecordLocks() *recordLocks {
	l := &recordLocks{seed: maphash.MakeSeed()}
	for i := range l.stripes {
		l.stripes[i] = make(chan struct{}, 1)
	}
	return l
}

// lock takes the stripe of the record (kind, key), waiting until it is free
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
		return func() { <-stripe }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
