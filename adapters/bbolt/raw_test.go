package bboltadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// rawView reads the adapter's buckets straight from the file, decoding the
// record format, without calling any adapter method. It implements
// conformance.Raw, conformance.Mentioner and conformance.ConsistencyChecker.
type rawView struct {
	db   *bolt.DB
	root []byte
	// check is the adapter's consistency walk (a file-level check, not an
	// adapter method of the contract).
	check func(context.Context) error
}

func (r rawView) each(name []byte, fn func(k, v []byte) error) error {
	return r.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(r.root)
		if root == nil {
			return fmt.Errorf("no root bucket %q", r.root)
		}
		b := root.Bucket(name)
		if b == nil {
			return fmt.Errorf("no bucket %q", name)
		}
		return b.ForEach(fn)
	})
}

func rawAll[T any](r rawView, name []byte, decode func([]byte) (*T, error)) ([]T, error) {
	var out []T
	err := r.each(name, func(_, v []byte) error {
		x, err := decode(v)
		if err != nil {
			return err
		}
		out = append(out, *x)
		return nil
	})
	return out, err
}

func (r rawView) Users(context.Context) ([]core.User, error) {
	return rawAll(r, bucketUsers, decodeUser)
}

func (r rawView) Accounts(context.Context) ([]core.Account, error) {
	return rawAll(r, bucketAccounts, decodeAccount)
}

func (r rawView) Sessions(context.Context) ([]core.Session, error) {
	return rawAll(r, bucketSessions, decodeSession)
}

func (r rawView) VerificationTokens(context.Context) ([]core.VerificationToken, error) {
	return rawAll(r, bucketTokens, decodeVerificationToken)
}

func (r rawView) Authenticators(context.Context) ([]core.Authenticator, error) {
	return rawAll(r, bucketAuthenticators, decodeAuthenticator)
}

// Mentions lists every key or value under the root bucket, in any bucket,
// that contains s.
func (r rawView) Mentions(_ context.Context, s string) ([]string, error) {
	var found []string
	needle := []byte(s)
	err := r.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(r.root)
		if root == nil {
			return fmt.Errorf("no root bucket %q", r.root)
		}
		return root.ForEachBucket(func(name []byte) error {
			return root.Bucket(name).ForEach(func(k, v []byte) error {
				if bytes.Contains(k, needle) || bytes.Contains(v, needle) {
					found = append(found, fmt.Sprintf("%s/%q", name, k))
				}
				return nil
			})
		})
	})
	return found, err
}

func (r rawView) CheckConsistency(ctx context.Context) error { return r.check(ctx) }

// WriteAccount stores the account exactly as given (not normalized), with
// its user index entry, as another program writing the file would.
func (r rawView) WriteAccount(_ context.Context, acc core.Account) error {
	return r.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(r.root)
		if root == nil {
			return fmt.Errorf("no root bucket %q", r.root)
		}
		key := accountKey(acc.Provider, acc.ProviderAccountID)
		if err := root.Bucket(bucketAccounts).Put(key, encodeAccount(&acc)); err != nil {
			return err
		}
		return root.Bucket(bucketUserAccounts).Put(ownerKey(acc.UserID, key), marker)
	})
}

// newTestAdapter opens a fresh file in t.TempDir() and returns the adapter
// and its raw view; the file is closed at cleanup (TempDir removes it).
func newTestAdapter(t testing.TB, opts ...Option) (*Adapter, rawView) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "auth.db")
	a, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return a, rawView{db: a.DB(), root: a.root, check: a.CheckConsistency}
}

// WriteUserData sets application fields in the stored user record, as
// another program sharing the file would (conformance.UserDataWriter).
func (r rawView) WriteUserData(_ context.Context, userID string, data map[string]json.RawMessage) error {
	return r.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(r.root)
		if root == nil {
			return fmt.Errorf("no root bucket %q", r.root)
		}
		users := root.Bucket(bucketUsers)
		v := users.Get([]byte(userID))
		if v == nil {
			return fmt.Errorf("no user %q", userID)
		}
		u, err := decodeUser(v)
		if err != nil {
			return err
		}
		u.Data = core.MergeData(u.Data, data)
		return users.Put([]byte(userID), encodeUser(u))
	})
}
