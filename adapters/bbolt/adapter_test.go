package bboltadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

func TestPairKeyNeverCollides(t *testing.T) {
	// Pairs that a separator-joined key ("a" + "/" + "b") would confuse, and
	// pairs that look like length prefixes.
	pairs := [][2]string{
		{"a/b", "c"}, {"a", "b/c"}, {"a", "/b/c"}, {"a/", "b/c"},
		{"", "ab"}, {"a", "b"}, {"ab", ""}, {"\x01a", "b"}, {"\x01", "ab"},
		{"\x02ab", ""}, {"\x00", ""}, {"", "\x00"}, {"x\x00", "y"}, {"x", "\x00y"},
		{strings.Repeat("a", 200), "b"}, {strings.Repeat("a", 199), "ab"},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := string(pairKey(p[0], p[1]))
		if q, dup := seen[k]; dup {
			t.Errorf("pairKey(%q, %q) == pairKey(%q, %q)", p[0], p[1], q[0], q[1])
		}
		seen[k] = p
		a, b, err := splitPairKey([]byte(k))
		if err != nil || string(a) != p[0] || string(b) != p[1] {
			t.Errorf("splitPairKey(pairKey(%q, %q)) = %q, %q, %v", p[0], p[1], a, b, err)
		}
		// The owner prefix of one user never matches another user's keys.
		for _, o := range pairs {
			if o[0] != p[0] && bytes.HasPrefix([]byte(k), ownerPrefix(o[0])) {
				t.Errorf("ownerPrefix(%q) is a prefix of pairKey(%q, %q)", o[0], p[0], p[1])
			}
		}
	}
}

func TestExpiryKeyOrder(t *testing.T) {
	ms := []int64{-1 << 62, -86400000, -1, 0, 1, 1700000000000, 1 << 62}
	for i := 1; i < len(ms); i++ {
		if bytes.Compare(expiryKey(ms[i-1], []byte("zzz")), expiryKey(ms[i], []byte("a"))) >= 0 {
			t.Errorf("expiryKey(%d) sorts after expiryKey(%d)", ms[i-1], ms[i])
		}
		got, key, err := splitExpiryKey(expiryKey(ms[i], []byte("k")))
		if err != nil || got != ms[i] || string(key) != "k" {
			t.Errorf("splitExpiryKey round trip of %d = %d, %q, %v", ms[i], got, key, err)
		}
	}
}

// TestCollidingInputsStayApart stores records whose fields would collide
// under a separator-joined key and checks each stays separately reachable.
func TestCollidingInputsStayApart(t *testing.T) {
	ctx := context.Background()
	a, raw := newTestAdapter(t)
	for _, id := range []string{"u", "u/x", "u\x00"} {
		if _, err := a.CreateUser(ctx, core.User{ID: id, Email: id + "@e"}); err != nil {
			t.Fatal(err)
		}
	}
	accs := []core.Account{
		{UserID: "u", Provider: "a/b", ProviderAccountID: "c", Type: core.AccountTypeOAuth},
		{UserID: "u/x", Provider: "a", ProviderAccountID: "b/c", Type: core.AccountTypeOAuth},
		{UserID: "u\x00", Provider: "", ProviderAccountID: "x", Type: core.AccountTypeOAuth},
	}
	accs[2].Provider = "\x01"
	for _, acc := range accs {
		if _, err := a.LinkAccount(ctx, acc); err != nil {
			t.Fatalf("LinkAccount(%q, %q): %v", acc.Provider, acc.ProviderAccountID, err)
		}
	}
	for _, acc := range accs {
		u, err := a.GetUserByAccount(ctx, acc.Key())
		if err != nil || u == nil || u.ID != acc.UserID {
			t.Errorf("GetUserByAccount(%q, %q) = %v, %v; want user %q", acc.Provider, acc.ProviderAccountID, u, err, acc.UserID)
		}
	}
	for _, v := range []core.VerificationToken{
		{Identifier: "a/b", Token: "c"}, {Identifier: "a", Token: "b/c"}, {Identifier: "a/", Token: "b/c"},
	} {
		v.Expires = time.Now().Add(time.Hour)
		if _, err := a.CreateVerificationToken(ctx, v); err != nil {
			t.Fatalf("CreateVerificationToken(%q, %q): %v", v.Identifier, v.Token, err)
		}
	}
	if got, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "a", Token: "b/c"}); err != nil || got == nil || got.Identifier != "a" {
		t.Errorf("UseVerificationToken(a, b/c) = %v, %v", got, err)
	}
	// Deleting user "u" leaves "u/x"'s account alone.
	if _, err := a.DeleteUser(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	if acc, _ := a.GetAccount(ctx, "b/c", "a"); acc == nil {
		t.Error("deleting user u removed user u/x's account")
	}
	toks, _ := raw.VerificationTokens(ctx)
	if len(toks) != 2 {
		t.Errorf("%d tokens stored, want 2", len(toks))
	}
	if err := a.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}

// plant writes raw bytes into one of the adapter's buckets, bypassing it.
func plant(t *testing.T, a *Adapter, name []byte, fn func(b *bolt.Bucket) error) {
	t.Helper()
	if err := a.DB().Update(func(tx *bolt.Tx) error { return fn(tx.Bucket(a.root).Bucket(name)) }); err != nil {
		t.Fatal(err)
	}
}

func TestCheckConsistencyFindsPlantedFaults(t *testing.T) {
	ctx := context.Background()
	future := time.Now().Add(time.Hour)
	type fault struct {
		name   string
		plant  func(t *testing.T, a *Adapter)
		expect string
	}
	faults := []fault{
		{"dangling e-mail index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUsersByEmail, func(b *bolt.Bucket) error { return b.Put([]byte("ghost@e"), []byte("ghost")) })
		}, "dangling: no user"},
		{"user missing from e-mail index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUsersByEmail, func(b *bolt.Bucket) error { return b.Delete([]byte("u1@e")) })
		}, "orphan: e-mail index"},
		{"dangling username index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUsersByName, func(b *bolt.Bucket) error { return b.Put([]byte("ghost"), []byte("ghost")) })
		}, "username index \"ghost\": dangling: no user"},
		{"user missing from username index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUsersByName, func(b *bolt.Bucket) error { return b.Delete([]byte("name-u1")) })
		}, "orphan: username index"},
		{"username index pointing at another user", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUsersByName, func(b *bolt.Bucket) error { return b.Put([]byte("name-u1"), []byte("u2")) })
		}, "whose username is"},
		{"e-mail index entry of a user without one", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUsersByEmail, func(b *bolt.Bucket) error { return b.Put([]byte("x@e"), []byte("u3")) })
		}, "points at user \"u3\" whose e-mail is \"\""},
		{"account of a missing user", func(t *testing.T, a *Adapter) {
			acc := core.Account{UserID: "ghost", Provider: "p", ProviderAccountID: "9", Type: core.AccountTypeOAuth}
			plant(t, a, bucketAccounts, func(b *bolt.Bucket) error { return b.Put(accountKey("p", "9"), encodeAccount(&acc)) })
		}, "orphan: no user"},
		{"dangling user → account index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUserAccounts, func(b *bolt.Bucket) error { return b.Put(ownerKey("u1", accountKey("p", "404")), marker) })
		}, "dangling: no account"},
		{"session missing from expiry index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketSessionExpiry, func(b *bolt.Bucket) error {
				c := b.Cursor()
				k, _ := c.First()
				return b.Delete(k)
			})
		}, "missing from the expiry index"},
		{"dangling session index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUserSessions, func(b *bolt.Bucket) error { return b.Put(ownerKey("u1", []byte("gone")), marker) })
		}, "dangling: no session"},
		{"dangling token expiry index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketTokenExpiry, func(b *bolt.Bucket) error { return b.Put(expiryKey(5, tokenKey("x", "y")), marker) })
		}, "dangling: no verification token"},
		{"authenticator index pointing at another user's", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUserAuths, func(b *bolt.Bucket) error { return b.Put(ownerKey("u2", []byte("cred1")), marker) })
		}, "belongs to user"},
		{"factor of a missing user", func(t *testing.T, a *Adapter) {
			f := core.Factor{ID: "f9", UserID: "ghost", Type: core.FactorTOTP, CreatedAt: future}
			plant(t, a, bucketFactors, func(b *bolt.Bucket) error { return b.Put([]byte("f9"), encodeFactor(&f)) })
		}, "factor \"f9\": orphan: no user"},
		{"factor missing from the user → factor index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUserFactors, func(b *bolt.Bucket) error { return b.Delete(ownerKey("u1", []byte("f1"))) })
		}, "missing from user \"u1\"'s factor index"},
		{"factor index pointing at another user's", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUserFactors, func(b *bolt.Bucket) error { return b.Put(ownerKey("u2", []byte("f1")), marker) })
		}, "factor \"f1\" belongs to user \"u1\", not \"u2\""},
		{"dangling factor index", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUserFactors, func(b *bolt.Bucket) error { return b.Put(ownerKey("u1", []byte("gone")), marker) })
		}, "dangling: no factor"},
		{"factor under another id", func(t *testing.T, a *Adapter) {
			f := core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP, CreatedAt: future}
			plant(t, a, bucketFactors, func(b *bolt.Bucket) error { return b.Put([]byte("f2"), encodeFactor(&f)) })
		}, "factor \"f2\": record holds id \"f1\""},
		{"undecodable factor", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketFactors, func(b *bolt.Bucket) error { return b.Put([]byte("f1"), []byte{1, 2, 'u'}) })
		}, "factor \"f1\": corrupt record"},
		{"undecodable record", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUsers, func(b *bolt.Bucket) error { return b.Put([]byte("u1"), []byte{9, 9}) })
		}, "unsupported record version 9"},
		{"malformed composite key", func(t *testing.T, a *Adapter) {
			plant(t, a, bucketUserAccounts, func(b *bolt.Bucket) error { return b.Put([]byte{0x7f, 'a'}, marker) })
		}, "malformed composite key"},
	}
	for _, f := range faults {
		t.Run(strings.ReplaceAll(f.name, " ", "_"), func(t *testing.T) {
			a, _ := newTestAdapter(t)
			for _, id := range []string{"u1", "u2"} {
				if _, err := a.CreateUser(ctx, core.User{ID: id, Email: id + "@e", Username: "name-" + id}); err != nil {
					t.Fatal(err)
				}
			}
			must(t)(a.CreateUser(ctx, core.User{ID: "u3"})) // no e-mail, no username
			must(t)(a.LinkAccount(ctx, core.Account{UserID: "u1", Provider: "p", ProviderAccountID: "1", Type: core.AccountTypeOIDC}))
			must(t)(a.CreateSession(ctx, core.Session{SessionToken: "s1", UserID: "u1", Expires: future}))
			must(t)(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: future}))
			must(t)(a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "cred1", CredentialPublicKey: "k", UserID: "u1", ProviderAccountID: "1"}))
			must(t)(a.CreateFactor(ctx, core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP, Secret: []byte{0, 1}, CreatedAt: future}))
			if err := a.CheckConsistency(ctx); err != nil {
				t.Fatalf("before planting: %v", err)
			}
			f.plant(t, a)
			err := a.CheckConsistency(ctx)
			var ce *ConsistencyError
			if !errors.As(err, &ce) {
				t.Fatalf("CheckConsistency = %v, want a *ConsistencyError", err)
			}
			if !strings.Contains(err.Error(), f.expect) {
				t.Errorf("CheckConsistency = %v, want a problem mentioning %q", err, f.expect)
			}
		})
	}
}

func must(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPurgeExpiredUsesClockAndIndexes(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	clock := func() time.Time { return time.UnixMilli(now.Load()) }
	a, raw := newTestAdapter(t, WithClock(clock))
	must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
	base := clock()
	// 1200 expired sessions (more than one purge chunk), 3 live ones, and
	// tokens on both sides of now.
	for i := range 1200 {
		must(t)(a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprintf("old%04d", i), UserID: "u", Expires: base.Add(-time.Duration(i+1) * time.Second)}))
	}
	for i := range 3 {
		must(t)(a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprintf("live%d", i), UserID: "u", Expires: base.Add(time.Duration(i+1) * time.Millisecond)}))
	}
	must(t)(a.CreateSession(ctx, core.Session{SessionToken: "edge", UserID: "u", Expires: base})) // expires at the instant now
	must(t)(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "old", Expires: base.Add(-time.Hour)}))
	must(t)(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "live", Expires: base.Add(time.Hour)}))

	res, err := a.PurgeExpired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 1201 || res.VerificationTokens != 1 {
		t.Errorf("PurgeExpired = %+v, want 1201 sessions and 1 token", res)
	}
	ss, _ := raw.Sessions(ctx)
	if len(ss) != 3 {
		t.Errorf("%d sessions left, want the 3 live ones", len(ss))
	}
	if err := a.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
	// Moving the clock expires the rest.
	now.Add(int64(time.Hour / time.Millisecond))
	if res, err := a.PurgeExpired(ctx); err != nil || res.Sessions != 3 || res.VerificationTokens != 1 {
		t.Errorf("second PurgeExpired = %+v, %v; want 3 sessions and 1 token", res, err)
	}
	if res, err := a.PurgeExpired(ctx); err != nil || res != (core.PurgeResult{}) {
		t.Errorf("third PurgeExpired = %+v, %v; want nothing", res, err)
	}
}

func TestSweepPurgesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a, raw := newTestAdapter(t)
	must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
	must(t)(a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: time.Now().Add(30 * time.Millisecond)}))
	reports := make(chan core.PurgeResult, 100)
	done := make(chan error, 1)
	go func() {
		done <- a.Sweep(ctx, 10*time.Millisecond, func(r core.PurgeResult, err error) {
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			if r.Sessions > 0 {
				reports <- r
			}
		})
	}()
	select {
	case r := <-reports:
		if r.Sessions != 1 {
			t.Errorf("sweep purged %+v, want 1 session", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sweeper did not purge the expired session")
	}
	if ss, _ := raw.Sessions(ctx); len(ss) != 0 {
		t.Errorf("%d sessions left after the sweep", len(ss))
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Sweep returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Sweep did not stop when its context was cancelled")
	}
	if err := a.Sweep(context.Background(), 0, nil); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("Sweep with interval 0 = %v, want ErrInvalidInput", err)
	}
}

// TestWriteModesUnderConcurrency runs racing writers in every write mode:
// uniqueness and single use hold, a failing write in a group fails alone,
// and the store stays consistent. In the group mode the first writes of all
// writers are queued behind a held write (holdLeader), so that they share
// one group whatever the scheduler does, also at GOMAXPROCS=1.
func TestWriteModesUnderConcurrency(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			a, raw := newTestAdapter(t, WithWriteMode(mode))
			const n = 32
			var wg sync.WaitGroup
			var created, used, dup atomic.Int64
			must(t)(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: time.Now().Add(time.Hour)}))
			release := func() {}
			if mode == WriteGroup {
				release = holdLeader(t, a)
			}
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Every writer tries the same e-mail: exactly one wins.
					_, err := a.CreateUser(ctx, core.User{ID: fmt.Sprintf("u%d", i), Email: "same@e"})
					switch {
					case err == nil:
						created.Add(1)
					case errors.Is(err, core.ErrAlreadyExists):
						dup.Add(1)
					default:
						t.Errorf("CreateUser: %v", err)
					}
					// And its own e-mail, which always succeeds even when
					// it shares a group with failing writes.
					if _, err := a.CreateUser(ctx, core.User{ID: fmt.Sprintf("v%d", i), Email: fmt.Sprintf("v%d@e", i)}); err != nil {
						t.Errorf("CreateUser(v%d): %v", i, err)
					}
					v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "i", Token: "t"})
					if err != nil {
						t.Errorf("UseVerificationToken: %v", err)
					}
					if v != nil {
						used.Add(1)
					}
				}()
			}
			if mode == WriteGroup {
				waitQueued(t, a, n) // every writer's first CreateUser
			}
			release()
			wg.Wait()
			if created.Load() != 1 || dup.Load() != n-1 {
				t.Errorf("%d created, %d ErrAlreadyExists; want 1 and %d", created.Load(), dup.Load(), n-1)
			}
			if used.Load() != 1 {
				t.Errorf("token used %d times, want once", used.Load())
			}
			if us, _ := raw.Users(ctx); len(us) != n+1 {
				t.Errorf("%d users stored, want %d", len(us), n+1)
			}
			if err := a.CheckConsistency(ctx); err != nil {
				t.Error(err)
			}
			if mode == WriteGroup {
				// The n queued first writes were taken as one group, and
				// the n-1 that failed were taken out of it and rerun alone.
				if g, s := a.grouper.maxGroup.Load(), a.grouper.solo.Load(); g < n || s < n-1 {
					t.Errorf("largest group %d, %d solo reruns; want at least %d and %d", g, s, n, n-1)
				} else {
					t.Logf("largest group %d, %d solo reruns", g, s)
				}
			}
		})
	}
}

func TestOptionsAndConstructors(t *testing.T) {
	if _, err := New(context.Background(), nil); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("New(context.Background(), nil) = %v, want ErrInvalidInput", err)
	}
	a, _ := newTestAdapter(t)
	for name, opt := range map[string]Option{
		"empty root":  WithRootBucket(""),
		"nil clock":   WithClock(nil),
		"bad mode":    WithWriteMode(WriteMode(9)),
		"zero lock":   WithLockTimeout(0),
		"negative to": WithLockTimeout(-time.Second),
	} {
		if _, err := New(context.Background(), a.DB(), opt); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("New with %s = %v, want ErrInvalidInput", name, err)
		}
	}
	// Two root buckets in one file are two independent stores.
	ctx := context.Background()
	b, err := New(context.Background(), a.DB(), WithRootBucket("other"))
	if err != nil {
		t.Fatal(err)
	}
	must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
	if u, err := b.GetUser(ctx, "u"); err != nil || u != nil {
		t.Errorf("user leaked across root buckets: %v, %v", u, err)
	}
	if err := b.Close(); err != nil { // not owned: must not close the file
		t.Fatal(err)
	}
	if u, err := a.GetUser(ctx, "u"); err != nil || u == nil {
		t.Errorf("after closing an adapter from New, GetUser = %v, %v", u, err)
	}
	// A layout version from the future is refused, not misread.
	if err := a.DB().Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("other")).Put(keyLayout, []byte{99}) }); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), a.DB(), WithRootBucket("other")); !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "layout version") {
		t.Errorf("New on a future layout = %v, want a layout version error matching ErrLayout", err)
	}
}

// TestNewChecksLayoutReadOnly checks that New refuses a layout version it
// does not read also on a read-only *bbolt.DB (where it cannot create
// buckets and only opens them), and accepts its own.
func TestNewChecksLayoutReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	a, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	ro := &bolt.Options{ReadOnly: true}
	b, err := Open(context.Background(), path, WithBoltOptions(ro))
	if err != nil {
		t.Fatalf("read-only Open of a layout-1 file: %v", err)
	}
	if u, err := b.GetUser(ctx, "u"); err != nil || u == nil {
		t.Errorf("read-only GetUser = %v, %v", u, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(DefaultRootBucket)).Put(keyLayout, []byte{2})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), db); !errors.Is(err, ErrLayout) {
		t.Errorf("read-write New on layout 2 = %v, want ErrLayout", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path, WithBoltOptions(ro)); !errors.Is(err, ErrLayout) {
		t.Errorf("read-only Open on layout 2 = %v, want ErrLayout", err)
	}
	db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := New(context.Background(), db); !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "layout version 2") {
		t.Errorf("New on a read-only *bbolt.DB with layout 2 = %v, want ErrLayout", err)
	}
}

func TestCancelledContextAndBadInput(t *testing.T) {
	a, raw := newTestAdapter(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "e"}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateUser with a cancelled ctx = %v", err)
	}
	if _, err := a.GetSessionAndUser(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("GetSessionAndUser with a cancelled ctx = %v", err)
	}
	bg := context.Background()
	// A key longer than bbolt's limit is invalid input, and nothing is stored.
	long := strings.Repeat("x", bolt.MaxKeySize+1)
	if _, err := a.CreateUser(bg, core.User{ID: long, Email: "e"}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("CreateUser with a too-long id = %v, want ErrInvalidInput", err)
	}
	must(t)(a.CreateUser(bg, core.User{ID: "u", Email: "e"}))
	if _, err := a.UpdateUser(bg, core.UserUpdate{ID: "u", Email: core.Set(long)}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("UpdateUser to a too-long e-mail = %v, want ErrInvalidInput", err)
	}
	far := time.Date(300000000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := a.CreateSession(bg, core.Session{SessionToken: "s", UserID: "u", Expires: far}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("CreateSession expiring in year 300000000 = %v, want ErrInvalidInput", err)
	}
	if us, _ := raw.Users(bg); len(us) != 1 || us[0].Email != "e" {
		t.Errorf("failed writes changed the store: %+v", us)
	}
	if ss, _ := raw.Sessions(bg); len(ss) != 0 {
		t.Errorf("failed writes changed the store: %+v", ss)
	}
	if err := a.CheckConsistency(bg); err != nil {
		t.Error(err)
	}
}

// TestBackupRestores copies the store with tx.WriteTo while it is open and
// checks the copy opens as a consistent store with the same records.
func TestBackupRestores(t *testing.T) {
	ctx := context.Background()
	a, _ := newTestAdapter(t)
	must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
	must(t)(a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: time.Now().Add(time.Hour)}))
	path := filepath.Join(t.TempDir(), "backup.db")
	err := a.DB().View(func(tx *bolt.Tx) error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if _, err := tx.WriteTo(f); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	// The original stays usable, and changes after the backup stay out of it.
	must(t)(a.DeleteSession(ctx, "s"))
	b, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
	su, err := b.GetSessionAndUser(ctx, "s")
	if err != nil || su == nil || su.User.Email != "u@e" {
		t.Errorf("restored GetSessionAndUser = %+v, %v", su, err)
	}
}

// TestZeroAdapterErrs checks that a nil or zero Adapter, and a nil context,
// give errors rather than panics, from every method.
func TestZeroAdapterErrs(t *testing.T) {
	ctx := context.Background()
	a, _ := newTestAdapter(t)
	for name, ad := range map[string]*Adapter{"nil": nil, "zero": {}, "nil ctx": a} {
		c := ctx
		if name == "nil ctx" {
			c = nil //nolint:staticcheck // the point of the test
		}
		errs := []error{
			func() error { _, err := ad.CreateUser(c, core.User{ID: "u", Email: "e"}); return err }(),
			func() error { _, err := ad.GetUser(c, "u"); return err }(),
			func() error { _, err := ad.GetUserByEmail(c, "e"); return err }(),
			func() error {
				_, err := ad.GetUserByAccount(c, core.AccountKey{Provider: "p", ProviderAccountID: "x"})
				return err
			}(),
			func() error { _, err := ad.UpdateUser(c, core.UserUpdate{ID: "u"}); return err }(),
			func() error { _, err := ad.DeleteUser(c, "u"); return err }(),
			func() error {
				_, err := ad.LinkAccount(c, core.Account{UserID: "u", Provider: "p", ProviderAccountID: "x", Type: core.AccountTypeOAuth})
				return err
			}(),
			func() error {
				_, err := ad.UnlinkAccount(c, core.AccountKey{Provider: "p", ProviderAccountID: "x"})
				return err
			}(),
			func() error { _, err := ad.GetAccount(c, "x", "p"); return err }(),
			func() error {
				_, err := ad.CreateSession(c, core.Session{SessionToken: "s", UserID: "u", Expires: time.Now()})
				return err
			}(),
			func() error { _, err := ad.GetSessionAndUser(c, "s"); return err }(),
			func() error { _, err := ad.UpdateSession(c, core.SessionUpdate{SessionToken: "s"}); return err }(),
			func() error { _, err := ad.DeleteSession(c, "s"); return err }(),
			func() error {
				_, err := ad.CreateVerificationToken(c, core.VerificationToken{Identifier: "i", Token: "t", Expires: time.Now()})
				return err
			}(),
			func() error {
				_, err := ad.UseVerificationToken(c, core.VerificationTokenKey{Identifier: "i", Token: "t"})
				return err
			}(),
			func() error {
				_, err := ad.CreateAuthenticator(c, core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", UserID: "u", ProviderAccountID: "x"})
				return err
			}(),
			func() error { _, err := ad.GetAuthenticator(c, "c"); return err }(),
			func() error { _, err := ad.ListAuthenticatorsByUserID(c, "u"); return err }(),
			func() error { _, err := ad.UpdateAuthenticatorCounter(c, "c", 1); return err }(),
			func() error { _, err := ad.PurgeExpired(c); return err }(),
			func() error { return ad.CheckConsistency(c) }(),
			func() error { return ad.Sweep(c, time.Second, nil) }(),
		}
		for i, err := range errs {
			if err == nil {
				t.Errorf("%s adapter: call %d returned no error", name, i)
			}
		}
	}
	var nilAdapter *Adapter
	if nilAdapter.DB() != nil || nilAdapter.Close() != nil {
		t.Error("nil adapter: DB or Close misbehaves")
	}
}
