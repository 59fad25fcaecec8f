package bboltadapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
)

// The tests of optional e-mail addresses, usernames and password hashes
// that look at the file itself, where the conformance suite cannot see.

// indexEntries returns the entries of one of the user indexes (value →
// user id), read straight from the file.
func indexEntries(t *testing.T, raw rawView, name []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := raw.each(name, func(k, v []byte) error {
		out[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return out
}

// wantIndexes checks both user indexes against what they should hold, and
// the store's consistency.
func wantIndexes(t *testing.T, a *Adapter, raw rawView, step string, byEmail, byName map[string]string) {
	t.Helper()
	if got := indexEntries(t, raw, bucketUsersByEmail); !maps.Equal(got, byEmail) {
		t.Errorf("%s: users_by_email = %q, want %q", step, got, byEmail)
	}
	if got := indexEntries(t, raw, bucketUsersByName); !maps.Equal(got, byName) {
		t.Errorf("%s: users_by_username = %q, want %q", step, got, byName)
	}
	if err := a.CheckConsistency(context.Background()); err != nil {
		t.Errorf("%s: %v", step, err)
	}
}

// TestUserIndexesExact follows the e-mail and username indexes through
// create, update (set, change, remove) and delete: a user without an
// e-mail address or username has no entry for it, a refused write leaves
// both indexes as they were, and a value given up is free at once.
func TestUserIndexesExact(t *testing.T) {
	ctx := context.Background()
	a, raw := newTestAdapter(t)
	email, name := map[string]string{}, map[string]string{}
	wantIndexes(t, a, raw, "empty store", email, name)

	// Two users without an e-mail address, one with a username.
	must(t)(a.CreateUser(ctx, core.User{ID: "u1", Username: "ada"}))
	must(t)(a.CreateUser(ctx, core.User{ID: "u2"}))
	name["ada"] = "u1"
	wantIndexes(t, a, raw, "users without e-mail", email, name)
	for _, lookup := range []func(context.Context, string) (*core.User, error){a.GetUserByEmail, a.GetUserByUsername} {
		if u, err := lookup(ctx, ""); u != nil || err != nil {
			t.Errorf("lookup of \"\" = %+v, %v; want nil, nil", u, err)
		}
	}
	if u, err := a.GetUserByUsername(ctx, "ada"); err != nil || u == nil || u.ID != "u1" || u.Username != "ada" || u.Email != "" {
		t.Errorf("GetUserByUsername(ada) = %+v, %v", u, err)
	}
	if u, err := a.GetUserByUsername(ctx, "Ada"); u != nil || err != nil {
		t.Errorf("GetUserByUsername(Ada) = %+v, %v; want nil (compared exactly)", u, err)
	}

	// A taken username refuses the whole user, its free e-mail included.
	if _, err := a.CreateUser(ctx, core.User{ID: "u3", Email: "c@e", Username: "ada"}); !errors.Is(err, core.ErrAlreadyExists) {
		t.Errorf("CreateUser with a taken username = %v, want ErrAlreadyExists", err)
	}
	if u, _ := a.GetUser(ctx, "u3"); u != nil {
		t.Errorf("refused CreateUser stored %+v", u)
	}
	wantIndexes(t, a, raw, "refused create", email, name)

	// A rename frees the old name at once.
	must(t)(a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Username: core.Set("bob")}))
	delete(name, "ada")
	name["bob"] = "u1"
	wantIndexes(t, a, raw, "rename", email, name)
	must(t)(a.CreateUser(ctx, core.User{ID: "u3", Email: "c@e", Username: "ada"}))
	email["c@e"], name["ada"] = "u3", "u3"
	wantIndexes(t, a, raw, "old name taken", email, name)

	// Adding and removing an e-mail address; the removed one is free.
	must(t)(a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("x@e")}))
	email["x@e"] = "u1"
	wantIndexes(t, a, raw, "e-mail added", email, name)
	if u := must2[*core.User](t)(a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("")})); u.Email != "" || u.Username != "bob" {
		t.Errorf("UpdateUser(e-mail \"\") = %+v", u)
	}
	delete(email, "x@e")
	wantIndexes(t, a, raw, "e-mail removed", email, name)
	if u, err := a.GetUserByEmail(ctx, "x@e"); u != nil || err != nil {
		t.Errorf("GetUserByEmail of a removed address = %+v, %v", u, err)
	}
	must(t)(a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set("x@e")}))
	email["x@e"] = "u2"
	wantIndexes(t, a, raw, "removed e-mail taken", email, name)

	// An update with a free e-mail and a taken username changes nothing.
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set("new@e"), Username: core.Set("bob")}); !errors.Is(err, core.ErrAlreadyExists) {
		t.Errorf("UpdateUser to a taken username = %v, want ErrAlreadyExists", err)
	}
	if u := must2[*core.User](t)(a.GetUser(ctx, "u2")); u.Email != "x@e" || u.Username != "" {
		t.Errorf("refused UpdateUser left %+v", u)
	}
	wantIndexes(t, a, raw, "refused update", email, name)
	// And one with a free username and a taken e-mail.
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set("c@e"), Username: core.Set("carol")}); !errors.Is(err, core.ErrAlreadyExists) {
		t.Errorf("UpdateUser to a taken e-mail = %v, want ErrAlreadyExists", err)
	}
	wantIndexes(t, a, raw, "refused update (e-mail)", email, name)

	// Setting the values a user has already is no conflict with itself.
	must(t)(a.UpdateUser(ctx, core.UserUpdate{ID: "u3", Email: core.Set("c@e"), Username: core.Set("ada")}))
	wantIndexes(t, a, raw, "unchanged values", email, name)

	// Removing the username; deleting users releases every entry.
	must(t)(a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Username: core.Set("")}))
	delete(name, "bob")
	wantIndexes(t, a, raw, "username removed", email, name)
	for _, id := range []string{"u1", "u2", "u3"} {
		must(t)(a.DeleteUser(ctx, id))
	}
	wantIndexes(t, a, raw, "all deleted", map[string]string{}, map[string]string{})
	for _, s := range []string{"ada", "bob", "c@e", "x@e"} {
		if m, err := raw.Mentions(ctx, s); err != nil || len(m) != 0 {
			t.Errorf("after deleteUser, %q is still in %q (%v)", s, m, err)
		}
	}
}

// must2 is must for a call whose result the test uses.
func must2[T any](t *testing.T) func(T, error) T {
	return func(x T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
}

// TestUsernameRacesInEveryWriteMode: of many users created at once with
// one username, exactly one is stored, in every write mode (in the group
// mode they share one commit, and the refused ones are rerun alone).
func TestUsernameRacesInEveryWriteMode(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			a, raw := newTestAdapter(t, WithWriteMode(mode))
			const n = 16
			release := func() {}
			if mode == WriteGroup {
				release = holdLeader(t, a)
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					_, errs[i] = a.CreateUser(ctx, core.User{ID: fmt.Sprintf("u%d", i), Username: "same"})
				})
			}
			if mode == WriteGroup {
				waitQueued(t, a, n)
			}
			release()
			wg.Wait()
			won := ""
			for i, err := range errs {
				switch {
				case err == nil && won == "":
					won = fmt.Sprintf("u%d", i)
				case err == nil:
					t.Errorf("u%d and %s both got the username", i, won)
				case !errors.Is(err, core.ErrAlreadyExists):
					t.Errorf("CreateUser(u%d): %v", i, err)
				}
			}
			if won == "" {
				t.Fatal("no user got the username")
			}
			wantIndexes(t, a, raw, "after the race", map[string]string{}, map[string]string{"same": won})
			if us, _ := raw.Users(ctx); len(us) != 1 {
				t.Errorf("%d users stored, want 1", len(us))
			}
		})
	}
}

// TestSwapPasswordHash: the compare-and-set of a password account's hash,
// the hash kept by linkAccount, updateAccount and listAccountsByUserId, and
// the file holding exactly what swapPasswordHash reported.
func TestSwapPasswordHash(t *testing.T) {
	ctx := context.Background()
	a, raw := newTestAdapter(t)
	must(t)(a.CreateUser(ctx, core.User{ID: "u1", Email: "a@e"}))
	key := core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "u1"}
	pw := core.Account{UserID: "u1", Provider: key.Provider, ProviderAccountID: key.ProviderAccountID, Type: core.AccountTypeCredentials, PasswordHash: sp("h1")}
	must(t)(a.LinkAccount(ctx, pw))
	oauth := core.Account{UserID: "u1", Provider: "github", ProviderAccountID: "7", Type: core.AccountTypeOAuth, AccessToken: sp("at")}
	must(t)(a.LinkAccount(ctx, oauth))

	stored := func(want *string) {
		t.Helper()
		accs, err := raw.Accounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, acc := range accs {
			if acc.Provider == key.Provider && !reflect.DeepEqual(acc.PasswordHash, want) {
				t.Errorf("stored hash %v, want %v", ptrStr(acc.PasswordHash), ptrStr(want))
			}
		}
	}

	got, err := a.SwapPasswordHash(ctx, key, "h1", "h2")
	if err != nil || got == nil || !reflect.DeepEqual(got.PasswordHash, sp("h2")) || got.Type != core.AccountTypeCredentials || got.UserID != "u1" {
		t.Fatalf("SwapPasswordHash(h1 → h2) = %+v, %v", got, err)
	}
	stored(sp("h2"))

	// A stale expected hash (and "", which matches only no hash) changes
	// nothing and returns the stored account.
	for _, old := range []string{"h1", "", "h2x", "h"} {
		got, err = a.SwapPasswordHash(ctx, key, old, "h3")
		if !errors.Is(err, core.ErrPasswordHashChanged) || got == nil || !reflect.DeepEqual(got.PasswordHash, sp("h2")) {
			t.Errorf("SwapPasswordHash(%q → h3) = %+v, %v; want the stored account and ErrPasswordHashChanged", old, got, err)
		}
	}
	stored(sp("h2"))

	// An account without a hash matches "".
	if got, err = a.SwapPasswordHash(ctx, oauth.Key(), "x", "h9"); !errors.Is(err, core.ErrPasswordHashChanged) || got == nil || got.PasswordHash != nil {
		t.Errorf("SwapPasswordHash on an account without a hash, expecting one = %+v, %v", got, err)
	}
	if got, err = a.SwapPasswordHash(ctx, oauth.Key(), "", "h9"); err != nil || !reflect.DeepEqual(got.PasswordHash, sp("h9")) || !reflect.DeepEqual(got.AccessToken, sp("at")) {
		t.Errorf("SwapPasswordHash(\"\" → h9) on an account without a hash = %+v, %v", got, err)
	}

	// No such account.
	if got, err = a.SwapPasswordHash(ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "nobody"}, "", "h"); got != nil || err != nil {
		t.Errorf("SwapPasswordHash of no account = %+v, %v; want nil, nil", got, err)
	}

	// updateAccount keeps the hash; the listing and getAccount return it.
	must(t)(a.UpdateAccount(ctx, core.AccountUpdate{Provider: key.Provider, ProviderAccountID: key.ProviderAccountID, Scope: core.Set(sp("s"))}))
	stored(sp("h2"))
	if acc := must2[*core.Account](t)(a.GetAccount(ctx, key.ProviderAccountID, key.Provider)); !reflect.DeepEqual(acc.PasswordHash, sp("h2")) || !reflect.DeepEqual(acc.Scope, sp("s")) {
		t.Errorf("GetAccount = %+v", acc)
	}
	accs := must2[[]core.Account](t)(a.ListAccountsByUserID(ctx, "u1"))
	if len(accs) != 2 || !reflect.DeepEqual(accs[0].PasswordHash, sp("h2")) || !reflect.DeepEqual(accs[1].PasswordHash, sp("h9")) {
		t.Errorf("ListAccountsByUserID = %+v", accs)
	}
	if err := a.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
	// deleteUser takes the password account with it.
	must(t)(a.DeleteUser(ctx, "u1"))
	if m, err := raw.Mentions(ctx, "h2"); err != nil || len(m) != 0 {
		t.Errorf("after deleteUser the hash is still in %q (%v)", m, err)
	}
}

func ptrStr(p *string) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", *p)
}

// TestSwapPasswordHashRaces: of many swaps from one hash at once, exactly
// one succeeds and the others get ErrPasswordHashChanged with the winner's
// hash, in every write mode (in the group mode they share one commit: a
// mismatch is no failure of the group).
func TestSwapPasswordHashRaces(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			a, raw := newTestAdapter(t, WithWriteMode(mode))
			must(t)(a.CreateUser(ctx, core.User{ID: "u1"}))
			key := core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "u1"}
			must(t)(a.LinkAccount(ctx, core.Account{UserID: "u1", Provider: key.Provider, ProviderAccountID: "u1", Type: core.AccountTypeCredentials, PasswordHash: sp("h0")}))
			const n = 16
			release := func() {}
			if mode == WriteGroup {
				release = holdLeader(t, a)
			}
			accs := make([]*core.Account, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { accs[i], errs[i] = a.SwapPasswordHash(ctx, key, "h0", fmt.Sprintf("h%d", i+1)) })
			}
			if mode == WriteGroup {
				waitQueued(t, a, n)
			}
			release()
			wg.Wait()
			winner := ""
			for i, err := range errs {
				if err == nil {
					if winner != "" {
						t.Errorf("two swaps from h0 succeeded: %s and h%d", winner, i+1)
					}
					winner = *accs[i].PasswordHash
				} else if !errors.Is(err, core.ErrPasswordHashChanged) {
					t.Errorf("swap %d: %v", i, err)
				}
			}
			if winner == "" {
				t.Fatal("no swap succeeded")
			}
			for i, err := range errs {
				if err != nil && (accs[i] == nil || *accs[i].PasswordHash != winner) {
					t.Errorf("swap %d lost but returned %+v, want the winner's hash %q", i, accs[i], winner)
				}
			}
			stored, err := raw.Accounts(ctx)
			if err != nil || len(stored) != 1 || *stored[0].PasswordHash != winner {
				t.Errorf("stored %+v, %v; want hash %q", stored, err, winner)
			}
		})
	}
}

// TestFileFromBeforeUsernames opens a file as the builds before usernames,
// password hashes and factors wrote it (layout 1 without users_by_username,
// factors and user_factors, a version-1 user record, an account record
// without the password_hash field): read-only, it reads back as it was and
// has no usernames and no factors; writable, New adds the buckets and the
// new fields and factors can be set.
func TestFileFromBeforeUsernames(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	accKey := accountKey("p", "x")
	err = db.Update(func(tx *bolt.Tx) error {
		r, err := tx.CreateBucket([]byte(DefaultRootBucket))
		if err != nil {
			return err
		}
		if err := r.Put(keyLayout, []byte{1}); err != nil {
			return err
		}
		for _, name := range allBuckets {
			if !laterBucket(name) {
				if _, err := r.CreateBucket(name); err != nil {
					return err
				}
			}
		}
		puts := []struct {
			bucket, k, v []byte
		}{
			// id "u1", e-mail "a@e", emailVerified null, name "A", image null.
			{bucketUsers, []byte("u1"), []byte{1, 2, 'u', '1', 3, 'a', '@', 'e', 0, 1, 1, 'A', 0}},
			{bucketUsersByEmail, []byte("a@e"), []byte("u1")},
			// userId "u1", provider "p", type "oidc", providerAccountId "x",
			// then nine null token fields.
			{bucketAccounts, accKey, []byte{1, 2, 'u', '1', 1, 'p', 4, 'o', 'i', 'd', 'c', 1, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0}},
			{bucketUserAccounts, ownerKey("u1", accKey), marker},
		}
		for _, p := range puts {
			if err := r.Bucket(p.bucket).Put(p.k, p.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	user := core.User{ID: "u1", Email: "a@e", Name: sp("A")}
	acc := core.Account{UserID: "u1", Provider: "p", Type: core.AccountTypeOIDC, ProviderAccountID: "x"}
	factor := core.Factor{ID: "f1", UserID: "u1", Type: core.FactorTOTP, Secret: []byte{0}, CreatedAt: core.NormalizeTime(time.Now())}
	readsBack := func(t *testing.T, a *Adapter) {
		t.Helper()
		if u, err := a.GetUserByEmail(ctx, "a@e"); err != nil || u == nil || !reflect.DeepEqual(*u, user) {
			t.Errorf("GetUserByEmail = %+v, %v; want %+v", u, err, user)
		}
		if got, err := a.GetAccount(ctx, "x", "p"); err != nil || got == nil || !reflect.DeepEqual(*got, acc) {
			t.Errorf("GetAccount = %+v, %v; want %+v", got, err, acc)
		}
		if got, err := a.ListAccountsByUserID(ctx, "u1"); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], acc) {
			t.Errorf("ListAccountsByUserID = %+v, %v", got, err)
		}
		if err := a.CheckConsistency(ctx); err != nil {
			t.Error(err)
		}
	}

	t.Run("read-only", func(t *testing.T) {
		a, err := Open(ctx, path, WithBoltOptions(&bolt.Options{ReadOnly: true}))
		if err != nil {
			t.Fatalf("read-only Open of a file from before usernames: %v", err)
		}
		defer a.Close()
		readsBack(t, a)
		if u, err := a.GetUserByUsername(ctx, "ada"); u != nil || err != nil {
			t.Errorf("GetUserByUsername on a file without the bucket = %+v, %v; want nil, nil", u, err)
		}
		if got, err := a.ListFactorsByUserID(ctx, "u1"); err != nil || got == nil || len(got) != 0 {
			t.Errorf("ListFactorsByUserID on a file without the buckets = %#v, %v; want an empty, non-nil list", got, err)
		}
	})

	t.Run("writable", func(t *testing.T) {
		a, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		readsBack(t, a)
		must(t)(a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Username: core.Set("ada")}))
		if got, err := a.SwapPasswordHash(ctx, acc.Key(), "", "h1"); err != nil || !reflect.DeepEqual(got.PasswordHash, sp("h1")) {
			t.Errorf("SwapPasswordHash on an old account = %+v, %v", got, err)
		}
		must(t)(a.CreateFactor(ctx, factor))
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		// Read-only again: the bucket is there now, with the username.
		a, err = Open(ctx, path, WithBoltOptions(&bolt.Options{ReadOnly: true}))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if u, err := a.GetUserByUsername(ctx, "ada"); err != nil || u == nil || u.ID != "u1" || u.Email != "a@e" {
			t.Errorf("GetUserByUsername after the upgrade = %+v, %v", u, err)
		}
		if got, err := a.ListFactorsByUserID(ctx, "u1"); err != nil || !reflect.DeepEqual(got, []core.Factor{factor}) {
			t.Errorf("ListFactorsByUserID after the upgrade = %+v, %v; want %+v", got, err, factor)
		}
		if err := a.CheckConsistency(ctx); err != nil {
			t.Error(err)
		}
	})
}
