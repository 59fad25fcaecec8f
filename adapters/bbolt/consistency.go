package bboltadapter

import (
	"bytes"
	"context"
	"fmt"
	"strings"

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
// accounts, sessions and authenticators of a missing user. It returns nil
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

	// Users and the e-mail index, both ways.
	_ = b.users.ForEach(func(k, v []byte) error {
		u, err := decodeUser(v)
		if err != nil {
			bad("user %q: %v", k, err)
			return nil
		}
		if u.ID != string(k) {
			bad("user %q: record holds id %q", k, u.ID)
		}
		if id := b.usersByEmail.Get([]byte(u.Email)); !bytes.Equal(id, k) {
			bad("user %q: orphan: e-mail index entry %q points at %q", k, u.Email, id)
		}
		return ctx.Err()
	})
	_ = b.usersByEmail.ForEach(func(k, v []byte) error {
		raw := b.users.Get(v)
		if raw == nil {
			bad("e-mail index %q: dangling: no user %q", k, v)
			return nil
		}
		if u, err := decodeUser(raw); err == nil && u.Email != string(k) {
			bad("e-mail index %q: points at user %q whose e-mail is %q", k, v, u.Email)
		}
		return ctx.Err()
	})

	// Accounts and the user → accounts index.
	_ = b.accounts.ForEach(func(k, v []byte) error {
		acc, err := decodeAccount(v)
		if err != nil {
			bad("account %q: %v", k, err)
			return nil
		}
		if !bytes.Equal(accountKey(acc.Provider, acc.ProviderAccountID), k) {
			bad("account %q: key disagrees with (provider, providerAccountId) = (%q, %q)", k, acc.Provider, acc.ProviderAccountID)
		}
		if !has(b.users, []byte(acc.UserID)) {
			bad("account %q: orphan: no user %q", k, acc.UserID)
		}
		if !has(b.userAccounts, ownerKey(acc.UserID, k)) {
			bad("account %q: orphan: missing from user %q's account index", k, acc.UserID)
		}
		return ctx.Err()
	})
	ownerIndex(ctx, b.userAccounts, "account", b.accounts, func(v []byte) (string, error) {
		return userIDOfAccount(v)
	}, bad)

	// Sessions, the user → sessions index and the expiry index.
	_ = b.sessions.ForEach(func(k, v []byte) error {
		s, err := decodeSession(v)
		if err != nil {
			bad("session %q: %v", k, err)
			return nil
		}
		if s.SessionToken != string(k) {
			bad("session %q: record holds token %q", k, s.SessionToken)
		}
		if !has(b.users, []byte(s.UserID)) {
			bad("session %q: orphan: no user %q", k, s.UserID)
		}
		if !has(b.userSessions, ownerKey(s.UserID, k)) {
			bad("session %q: orphan: missing from user %q's session index", k, s.UserID)
		}
		if !has(b.sessionExpiry, expiryKey(s.Expires.UnixMilli(), k)) {
			bad("session %q: orphan: missing from the expiry index", k)
		}
		return ctx.Err()
	})
	ownerIndex(ctx, b.userSessions, "session", b.sessions, func(v []byte) (string, error) {
		s, err := decodeSession(v)
		if err != nil {
			return "", err
		}
		return s.UserID, nil
	}, bad)
	expiryIndex(ctx, b.sessionExpiry, "session", b.sessions, func(v []byte) (int64, error) {
		s, err := decodeSession(v)
		if err != nil {
			return 0, err
		}
		return s.Expires.UnixMilli(), nil
	}, bad)

	// Verification tokens and the expiry index.
	_ = b.tokens.ForEach(func(k, v []byte) error {
		t, err := decodeVerificationToken(v)
		if err != nil {
			bad("verification token %q: %v", k, err)
			return nil
		}
		if !bytes.Equal(tokenKey(t.Identifier, t.Token), k) {
			bad("verification token %q: key disagrees with (identifier, token)", k)
		}
		if !has(b.tokenExpiry, expiryKey(t.Expires.UnixMilli(), k)) {
			bad("verification token %q: orphan: missing from the expiry index", k)
		}
		return ctx.Err()
	})
	expiryIndex(ctx, b.tokenExpiry, "verification token", b.tokens, func(v []byte) (int64, error) {
		t, err := decodeVerificationToken(v)
		if err != nil {
			return 0, err
		}
		return t.Expires.UnixMilli(), nil
	}, bad)

	// Authenticators and the user → authenticators index.
	_ = b.authenticators.ForEach(func(k, v []byte) error {
		au, err := decodeAuthenticator(v)
		if err != nil {
			bad("authenticator %q: %v", k, err)
			return nil
		}
		if au.CredentialID != string(k) {
			bad("authenticator %q: record holds credential id %q", k, au.CredentialID)
		}
		if !has(b.users, []byte(au.UserID)) {
			bad("authenticator %q: orphan: no user %q", k, au.UserID)
		}
		if !has(b.userAuthent, ownerKey(au.UserID, k)) {
			bad("authenticator %q: orphan: missing from user %q's authenticator index", k, au.UserID)
		}
		return ctx.Err()
	})
	ownerIndex(ctx, b.userAuthent, "authenticator", b.authenticators, func(v []byte) (string, error) {
		au, err := decodeAuthenticator(v)
		if err != nil {
			return "", err
		}
		return au.UserID, nil
	}, bad)
	return p
}

// ownerIndex checks each entry (user id, record key) of a user → records
// index: the record exists and belongs to that user.
func ownerIndex(ctx context.Context, idx *bolt.Bucket, kind string, recs *bolt.Bucket, owner func([]byte) (string, error), bad func(string, ...any)) {
	_ = idx.ForEach(func(k, _ []byte) error {
		uid, key, err := splitPairKey(k)
		if err != nil {
			bad("user → %s index %q: %v", kind, k, err)
			return nil
		}
		v := recs.Get(key)
		if v == nil {
			bad("user → %s index %q: dangling: no %s %q", kind, k, kind, key)
			return nil
		}
		if got, err := owner(v); err == nil && got != string(uid) {
			bad("user → %s index %q: %s %q belongs to user %q, not %q", kind, k, kind, key, got, uid)
		}
		return ctx.Err()
	})
}

// expiryIndex checks each entry (expiry, record key) of an expiry index:
// the record exists and expires then.
func expiryIndex(ctx context.Context, idx *bolt.Bucket, kind string, recs *bolt.Bucket, expires func([]byte) (int64, error), bad func(string, ...any)) {
	_ = idx.ForEach(func(k, _ []byte) error {
		ms, key, err := splitExpiryKey(k)
		if err != nil {
			bad("%s expiry index %q: %v", kind, k, err)
			return nil
		}
		v := recs.Get(key)
		if v == nil {
			bad("%s expiry index %q: dangling: no %s %q", kind, k, kind, key)
			return nil
		}
		if got, err := expires(v); err == nil && got != ms {
			bad("%s expiry index %q: %s %q expires at %d ms, not %d", kind, k, kind, key, got, ms)
		}
		return ctx.Err()
	})
}
