package bboltadapter

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Bucket layout (see README "Bucket layout"). Every bucket of the adapter is
// nested in one root bucket ("authport" unless WithRootBucket names another),
// so the adapter can share a file with the application's own buckets.
var (
	bucketUsers          = []byte("users")               // user id → user
	bucketUsersByEmail   = []byte("users_by_email")      // e-mail → user id (users with one)
	bucketUsersByName    = []byte("users_by_username")   // username → user id (users with one)
	bucketAccounts       = []byte("accounts")            // accountKey → account
	bucketUserAccounts   = []byte("user_accounts")       // ownerKey(user id, accountKey) → marker
	bucketSessions       = []byte("sessions")            // session token → session
	bucketUserSessions   = []byte("user_sessions")       // ownerKey(user id, token) → marker
	bucketSessionExpiry  = []byte("sessions_by_expiry")  // expiryKey(expires, token) → marker
	bucketTokens         = []byte("verification_tokens") // tokenKey(identifier, token) → token
	bucketTokenExpiry    = []byte("tokens_by_expiry")    // expiryKey(expires, tokenKey) → marker
	bucketAuthenticators = []byte("authenticators")      // credential id → authenticator
	bucketUserAuths      = []byte("user_authenticators") // ownerKey(user id, credential id) → marker
	bucketFactors        = []byte("factors")             // factor id → factor
	bucketUserFactors    = []byte("user_factors")        // ownerKey(user id, factor id) → marker

	keyLayout = []byte("layout") // in the root bucket: the layout version
)

// ErrLayout is matched (with errors.Is) by the error [New] and [Open] return
// when the root bucket holds a layout version this build does not read,
// such as a file written by a later version of the adapter. Such a file is
// refused rather than misread, also when the *bbolt.DB is read-only.
var ErrLayout = errors.New("unsupported bucket layout version")

// layoutVersion is the bucket layout version stored under keyLayout.
const layoutVersion = 1

var allBuckets = [][]byte{
	bucketUsers, bucketUsersByEmail, bucketUsersByName, bucketAccounts, bucketUserAccounts,
	bucketSessions, bucketUserSessions, bucketSessionExpiry,
	bucketTokens, bucketTokenExpiry,
	bucketAuthenticators, bucketUserAuths,
	bucketFactors, bucketUserFactors,
}

// marker is the value of every index entry whose key says it all.
var marker = []byte{1}

// buckets are the adapter's buckets within one transaction.
type buckets struct {
	root                                             *bolt.Bucket
	users, usersByEmail, accounts, userAccounts      *bolt.Bucket
	usersByName                                      *bolt.Bucket // nil in a read transaction of a file from before usernames (see laterBucket)
	sessions, userSessions, sessionExpiry            *bolt.Bucket
	tokens, tokenExpiry, authenticators, userAuthent *bolt.Bucket
	factors, userFactors                             *bolt.Bucket // nil in a read transaction of a file from before factors (see laterBucket)
}

// laterBucket reports whether the bucket name was added to layout 1 after
// files were written without it: users_by_username, added with usernames,
// and factors and user_factors, added with second factors. New creates
// them on a writable database, so a file from before them gains them when
// it is first opened writable; a read-only database of such a file lacks
// them, and its reads take them as empty (no user of such a file has a
// username or a factor). A write transaction requires them like every
// other bucket.
func laterBucket(name []byte) bool {
	return bytes.Equal(name, bucketUsersByName) || bytes.Equal(name, bucketFactors) || bytes.Equal(name, bucketUserFactors)
}

// open fetches the buckets of root in tx. It fails when the root bucket or
// one of its buckets is missing (someone deleted them behind the adapter),
// except a later bucket (laterBucket) in a read transaction, left nil.
func openBuckets(tx *bolt.Tx, root []byte) (*buckets, error) {
	r := tx.Bucket(root)
	if r == nil {
		return nil, fmt.Errorf("%w: root bucket %q is missing", ErrCorrupt, root)
	}
	b := &buckets{root: r,
		users: r.Bucket(bucketUsers), usersByEmail: r.Bucket(bucketUsersByEmail), usersByName: r.Bucket(bucketUsersByName),
		accounts: r.Bucket(bucketAccounts), userAccounts: r.Bucket(bucketUserAccounts),
		sessions: r.Bucket(bucketSessions), userSessions: r.Bucket(bucketUserSessions),
		sessionExpiry: r.Bucket(bucketSessionExpiry),
		tokens:        r.Bucket(bucketTokens), tokenExpiry: r.Bucket(bucketTokenExpiry),
		authenticators: r.Bucket(bucketAuthenticators), userAuthent: r.Bucket(bucketUserAuths),
		factors: r.Bucket(bucketFactors), userFactors: r.Bucket(bucketUserFactors),
	}
	required := []*bolt.Bucket{b.users, b.usersByEmail, b.accounts, b.userAccounts,
		b.sessions, b.userSessions, b.sessionExpiry, b.tokens, b.tokenExpiry,
		b.authenticators, b.userAuthent}
	if tx.Writable() {
		required = append(required, b.usersByName, b.factors, b.userFactors)
	} else if (b.factors == nil) != (b.userFactors == nil) {
		return nil, fmt.Errorf("%w: one of the buckets %q and %q under %q is missing", ErrCorrupt, bucketFactors, bucketUserFactors, root)
	}
	for _, x := range required {
		if x == nil {
			return nil, fmt.Errorf("%w: a bucket under %q is missing", ErrCorrupt, root)
		}
	}
	return b, nil
}

// bucket fetches one bucket of root in tx, for the read paths that need
// only one (cheaper than openBuckets: a read transaction does not cache
// bucket lookups).
func bucket(tx *bolt.Tx, root, name []byte) (*bolt.Bucket, error) {
	b, _, err := bucket2(tx, root, name, nil)
	return b, err
}

// bucket2 fetches two buckets of root in tx (the second only if name2 is
// not nil), for reads: a missing later bucket (laterBucket) is returned as
// nil, which the caller takes as empty.
func bucket2(tx *bolt.Tx, root, name1, name2 []byte) (b1, b2 *bolt.Bucket, err error) {
	r := tx.Bucket(root)
	if r == nil {
		return nil, nil, fmt.Errorf("%w: root bucket %q is missing", ErrCorrupt, root)
	}
	if b1 = r.Bucket(name1); b1 == nil && !laterBucket(name1) {
		return nil, nil, fmt.Errorf("%w: bucket %q under %q is missing", ErrCorrupt, name1, root)
	}
	if name2 != nil {
		if b2 = r.Bucket(name2); b2 == nil && !laterBucket(name2) {
			return nil, nil, fmt.Errorf("%w: bucket %q under %q is missing", ErrCorrupt, name2, root)
		}
	}
	return b1, b2, nil
}

// createBuckets creates the root bucket and every bucket in it, and checks
// or writes the layout version.
func createBuckets(tx *bolt.Tx, root []byte) error {
	r, err := tx.CreateBucketIfNotExists(root)
	if err != nil {
		return err
	}
	if r.Get(keyLayout) != nil {
		if err := checkLayout(r, root); err != nil {
			return err
		}
	} else if err := r.Put(keyLayout, []byte{layoutVersion}); err != nil {
		return err
	}
	for _, name := range allBuckets {
		if _, err := r.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("bucket %q: %w", name, err)
		}
	}
	return nil
}

// checkBuckets is createBuckets for a read-only database: it checks the
// layout version and that every bucket exists. A root bucket with no layout
// key is taken as version 1, as createBuckets would stamp it.
func checkBuckets(tx *bolt.Tx, root []byte) error {
	r := tx.Bucket(root)
	if r == nil {
		return fmt.Errorf("%w: root bucket %q is missing", ErrCorrupt, root)
	}
	if err := checkLayout(r, root); err != nil {
		return err
	}
	_, err := openBuckets(tx, root)
	return err
}

// checkLayout checks the layout version stored in the root bucket r, if
// any, and returns an error matching ErrLayout if this build does not read
// it.
func checkLayout(r *bolt.Bucket, root []byte) error {
	switch v := r.Get(keyLayout); {
	case v == nil || len(v) == 1 && v[0] == layoutVersion:
		return nil
	case len(v) == 1:
		return fmt.Errorf("bucket %q holds layout version %d; this build reads version %d: %w", root, v[0], layoutVersion, ErrLayout)
	default:
		return fmt.Errorf("bucket %q holds layout value %x; this build reads version %d: %w", root, v, layoutVersion, ErrLayout)
	}
}

// prefixed returns every key of b that starts with prefix (copied), in
// key order, so that the caller may delete them.
func prefixed(b *bolt.Bucket, prefix []byte) [][]byte {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	return keys
}

// deletePrefix deletes every key of b that starts with prefix and returns
// the deleted keys' suffixes after the prefix (copied).
func deletePrefix(b *bolt.Bucket, prefix []byte) ([][]byte, error) {
	keys := prefixed(b, prefix)
	rests := make([][]byte, len(keys))
	for i, k := range keys {
		if err := b.Delete(k); err != nil {
			return nil, err
		}
		rests[i] = k[len(prefix):]
	}
	return rests, nil
}
