package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	"github.com/authport/authport/adapters/memory"
)

// boltStore is the bbolt adapter on a file of its own (removed at close),
// and the raw bbolt transactions beside it on the same *bolt.DB.
type boltStore struct {
	db      *bolt.DB
	adapter *bboltadapter.Adapter
	dir     string
}

func openBolt(dir string) (*boltStore, error) {
	d, err := os.MkdirTemp(dir, "authport-bench-bbolt-")
	if err != nil {
		return nil, err
	}
	db, err := bolt.Open(filepath.Join(d, "auth.db"), 0o600, nil)
	if err != nil {
		_ = os.RemoveAll(d)
		return nil, err
	}
	a, err := bboltadapter.New(context.Background(), db)
	if err != nil {
		_ = db.Close()
		_ = os.RemoveAll(d)
		return nil, err
	}
	return &boltStore{db: db, adapter: a, dir: d}, nil
}

func (s *boltStore) close() {
	_ = s.db.Close()
	_ = os.RemoveAll(s.dir)
}

// Names from the bucket layout of adapters/bbolt/README.md.
var (
	boltRoot     = []byte(bboltadapter.DefaultRootBucket)
	boltUsers    = []byte("users")
	boltSessions = []byte("sessions")
	boltAccounts = []byte("accounts")
)

// pairKey is uvarint(len(a)) || a || b, the layout's composite key.
func pairKey(a, b string) []byte {
	k := binary.AppendUvarint(make([]byte, 0, 2+len(a)+len(b)), uint64(len(a)))
	return append(append(k, a...), b...)
}

// strAt reads the length-prefixed string that starts at b[off:] and
// returns it and the offset after it.
func strAt(b []byte, off int) ([]byte, int, error) {
	n, w := binary.Uvarint(b[off:])
	if w <= 0 || uint64(len(b)-off-w) < n {
		return nil, 0, errors.New("malformed record")
	}
	start := off + w
	return b[start : start+int(n)], start + int(n), nil
}

// rawBolt is the raw baseline of the two reads: one read transaction that
// gets the record, finds the user id in it (after the version byte; a
// session record starts with its token, an account record with its user
// id) and gets the user, copying both records out of the transaction. It
// decodes nothing else, so it is less than any program could do with the
// data: the adapter also decodes both records into Go values.
func (s *boltStore) rawBolt() *rawOps {
	read := func(bucket, key []byte, skip int, want string) error {
		var recCopy, userCopy []byte
		err := s.db.View(func(tx *bolt.Tx) error {
			root := tx.Bucket(boltRoot)
			rec := root.Bucket(bucket).Get(key)
			if rec == nil {
				return fmt.Errorf("no record %q", key)
			}
			off := 1
			var uid []byte
			var err error
			for range skip + 1 {
				if uid, off, err = strAt(rec, off); err != nil {
					return err
				}
			}
			user := root.Bucket(boltUsers).Get(uid)
			if user == nil || string(uid) != want {
				return fmt.Errorf("record %q: user %q, want %s", key, uid, want)
			}
			recCopy, userCopy = bytes.Clone(rec), bytes.Clone(user)
			return nil
		})
		if err == nil && (len(recCopy) == 0 || len(userCopy) == 0) {
			err = errors.New("empty record")
		}
		return err
	}
	return &rawOps{
		getSessionAndUser: func(_ context.Context, token, want string) error {
			return read(boltSessions, []byte(token), 1, want)
		},
		getUserByAccount: func(_ context.Context, acct, want string) error {
			return read(boltAccounts, pairKey(provider, acct), 0, want)
		},
	}
}

func newMemory() *memory.Adapter { return memory.New() }
