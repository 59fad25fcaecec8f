package bboltadapter

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// ConsistencyError lists what [Adapter.CheckConsistency] found wrong.
type ConsistencyError struct {
	// Problems describes each dangling index entry, orphan record or
	// undecodable value, one per entry.
	Problems []string
}

// Error lists the first 20 problems and counts the rest.
func (e *ConsistencyError) Error() string {
	const show = 20
	p := e.Problems
	more := ""
	if len(p) > show {
		more = fmt.Sprintf("; and %d more", len(p)-show)
		p = p[:show]
	}
	return fmt.Sprintf("bboltadapter: %d consistency problem(s): %s%s", len(e.Problems), strings.Join(p, "; "), more)
}

// CheckConsistency walks every bucket of the adapter in one read
// transaction and reports, as a [*ConsistencyError], every record that does
// not decode or whose key disagrees with its fields, every index entry that
// points at nothing or at a record that does not match it (dangling), and
// every record that an index should reach but does not (orphan), including
// accounts, sessions, authenticators and factors of a missing user. It returns nil
// for a consistent store. Its cost grows with the size of the store.
func (a *Adapter) CheckConsistency(ctx context.Context) error {
	if err := a.ready(ctx); err != nil {
		return fmt.Errorf("checkConsistency: %w", err)
	}
	var problems []string
	err := a.db.View(func(tx *bolt.Tx) error {
		b, err := openBuckets(tx, a.root)
		if err != nil {
			return err
		}
		problems = check(ctx, b)
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("checkConsistency: %w", err)
	}
	if len(problems) > 0 {
		return &ConsistencyError{Problems: problems}
	}
	return nil
}

func check(ctx context.Context, b *buckets) []string {
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	has := func(bk *bolt.Bucket, k []byte) bool { return bk.Get(k) != nil }
	// owned checks that the record k of kind has its user and its entry in
	// the user's index idx.
	owned := func(kind string, k []byte, userID string, idx *bolt.Bucket) {
		if !has(b.users, []byte(userID)) {
			bad("%s %q: orphan: no user %q", kind, k, userID)
		}
		if !has(idx, ownerKey(userID, k)) {
			bad("%s %q: orphan: missing from user %q's %s index", kind, k, userID, kind)
		}
	}

	// Users and their e-mail and username indexes, both ways: a user has an
	// entry for each value it has, and none for "".
	keys := b.userKeys()
	eachRecord(ctx, b.users, "user", decodeUser, bad, func(k []byte, u *core.User) {
		if u.ID != string(k) {
			bad("user %q: record holds id %q", k, u.ID)
		}
		for _, uk := range keys {
			v := uk.of(u)
			if v == "" {
				continue
			}
			if uk.index == nil {
				bad("user %q: orphan: has %s %q but the file has no %s index", k, uk.what, v, uk.what)
			} else if id := uk.index.Get([]byte(v)); !bytes.Equal(id, k) {
				bad("user %q: orphan: %s index entry %q points at %q", k, uk.what, v, id)
			}
		}
	})
	for _, uk := range keys {
		if uk.index == nil {
			continue // a read-only file from before usernames: no index, no usernames
		}
		_ = uk.index.ForEach(func(k, v []byte) error {
			raw := b.users.Get(v)
			if raw == nil {
				bad("%s index %q: dangling: no user %q", uk.what, k, v)
				return nil
			}
			if u, err := decodeUser(raw); err == nil && uk.of(u) != string(k) {
				bad("%s index %q: points at user %q whose %s is %q", uk.what, k, v, uk.what, uk.of(u))
			}
			return ctx.Err()
		})
	}

	// Accounts and the user → accounts index.
	eachRecord(ctx, b.accounts, "account", decodeAccount, bad, func(k []byte, acc *core.Account) {
		if !bytes.Equal(accountKey(acc.Provider, acc.ProviderAccountID), k) {
			bad("account %q: key disagrees with (provider, providerAccountId) = (%q, %q)", k, acc.Provider, acc.ProviderAccountID)
		}
		owned("account", k, acc.UserID, b.userAccounts)
	})
	ownerIndex(ctx, b.userAccounts, "account", b.accounts, userIDOfAccount, bad)

	// Sessions, the user → sessions index and the expiry index.
	eachRecord(ctx, b.sessions, "session", decodeSession, bad, func(k []byte, s *core.Session) {
		if s.SessionToken != string(k) {
			bad("session %q: record holds token %q", k, s.SessionToken)
		}
		owned("session", k, s.UserID, b.userSessions)
		if !has(b.sessionExpiry, expiryKey(s.Expires.UnixMilli(), k)) {
			bad("session %q: orphan: missing from the expiry index", k)
		}
	})
	ownerIndex(ctx, b.userSessions, "session", b.sessions, field(decodeSession, func(s *core.Session) string { return s.UserID }), bad)
	expiryIndex(ctx, b.sessionExpiry, "session", b.sessions, field(decodeSession, func(s *core.Session) int64 { return s.Expires.UnixMilli() }), bad)

	// Verification tokens and the expiry index.
	eachRecord(ctx, b.tokens, "verification token", decodeVerificationToken, bad, func(k []byte, t *core.VerificationToken) {
		if !bytes.Equal(tokenKey(t.Identifier, t.Token), k) {
			bad("verification token %q: key disagrees with (identifier, token)", k)
		}
		if !has(b.tokenExpiry, expiryKey(t.Expires.UnixMilli(), k)) {
			bad("verification token %q: orphan: missing from the expiry index", k)
		}
	})
	expiryIndex(ctx, b.tokenExpiry, "verification token", b.tokens, field(decodeVerificationToken, func(t *core.VerificationToken) int64 { return t.Expires.UnixMilli() }), bad)

	// Authenticators and the user → authenticators index.
	eachRecord(ctx, b.authenticators, "authenticator", decodeAuthenticator, bad, func(k []byte, au *core.Authenticator) {
		if au.CredentialID != string(k) {
			bad("authenticator %q: record holds credential id %q", k, au.CredentialID)
		}
		owned("authenticator", k, au.UserID, b.userAuthent)
	})
	ownerIndex(ctx, b.userAuthent, "authenticator", b.authenticators, field(decodeAuthenticator, func(au *core.Authenticator) string { return au.UserID }), bad)

	// Factors and the user → factors index (neither in a read-only file
	// from before factors: openBuckets has checked that both or neither are
	// there).
	if b.factors != nil {
		eachRecord(ctx, b.factors, "factor", decodeFactor, bad, func(k []byte, f *core.Factor) {
			if f.ID != string(k) {
				bad("factor %q: record holds id %q", k, f.ID)
			}
			owned("factor", k, f.UserID, b.userFactors)
		})
		ownerIndex(ctx, b.userFactors, "factor", b.factors, field(decodeFactor, func(f *core.Factor) string { return f.UserID }), bad)
	}
	return p
}

// eachRecord decodes each record of recs and checks it; a record that does
// not decode is reported.
func eachRecord[T any](ctx context.Context, recs *bolt.Bucket, kind string, decode func([]byte) (*T, error), bad func(string, ...any), check func(k []byte, x *T)) {
	_ = recs.ForEach(func(k, v []byte) error {
		x, err := decode(v)
		if err != nil {
			bad("%s %q: %v", kind, k, err)
			return nil
		}
		check(k, x)
		return ctx.Err()
	})
}

// field returns a function that decodes a record and returns one field of
// it.
func field[T, F any](decode func([]byte) (*T, error), get func(*T) F) func([]byte) (F, error) {
	return func(v []byte) (F, error) {
		x, err := decode(v)
		if err != nil {
			var zero F
			return zero, err
		}
		return get(x), nil
	}
}

// ownerIndex checks each entry (user id, record key) of a user → records
// index: the record exists and belongs to that user.
func ownerIndex(ctx context.Context, idx *bolt.Bucket, kind string, recs *bolt.Bucket, owner func([]byte) (string, error), bad func(string, ...any)) {
	split := func(k []byte) (string, []byte, error) {
		uid, key, err := splitPairKey(k)
		return string(uid), key, err
	}
	index(ctx, idx, "user → "+kind+" index", kind, recs, split, owner, "belongs to user %q, not %q", bad)
}

// expiryIndex checks each entry (expiry, record key) of an expiry index:
// the record exists and expires then.
func expiryIndex(ctx context.Context, idx *bolt.Bucket, kind string, recs *bolt.Bucket, expires func([]byte) (int64, error), bad func(string, ...any)) {
	index(ctx, idx, kind+" expiry index", kind, recs, splitExpiryKey, expires, "expires at %d ms, not %d", bad)
}

// index checks each entry of the index idx (named what in the reports):
// split gives the value the entry records and the key of its record (of
// kind, in recs), which must exist and give the same value with of
// (differs reports the two values).
func index[V comparable](ctx context.Context, idx *bolt.Bucket, what, kind string, recs *bolt.Bucket, split func([]byte) (V, []byte, error), of func([]byte) (V, error), differs string, bad func(string, ...any)) {
	_ = idx.ForEach(func(k, _ []byte) error {
		want, key, err := split(k)
		if err != nil {
			bad("%s %q: %v", what, k, err)
			return nil
		}
		v := recs.Get(key)
		if v == nil {
			bad("%s %q: dangling: no %s %q", what, k, kind, key)
			return nil
		}
		if got, err := of(v); err == nil && got != want {
			bad("%s %q: %s %q "+differs, what, k, kind, key, got, want)
		}
		return ctx.Err()
	})
}
