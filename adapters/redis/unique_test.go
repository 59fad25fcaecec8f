package redisadapter

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/core"
)

// eachTopology is eachBackend on the single node, the cluster and
// Sentinel (a failover client takes the single-node path).
func eachTopology(t *testing.T, f func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView)) {
	eachBackend(t, f)
	t.Run("redis-sentinel", func(t *testing.T) {
		c := redistest.Sentinel(t)
		t.Cleanup(func() { _ = c.Close() })
		a, raw := fixture(t, c)
		f(t, c, a, raw)
		if err := raw.CheckConsistency(context.Background()); err != nil {
			t.Errorf("inconsistent after the test: %v", err)
		}
	})
}

// indexKeys returns the index keys of kind (email, username) under the
// raw view's prefix, each with its value and TTL (PEXPIRETIME).
func indexKeys(t *testing.T, raw rawView, kind string) map[string]*entry {
	t.Helper()
	es, err := raw.snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*entry{}
	for _, e := range es {
		if e.pk.kind == kind {
			out[e.key] = e
		}
	}
	return out
}

// wantIndex checks that the index keys of kind are exactly want (key →
// escaped user id), each confirmed (no TTL).
func wantIndex(t *testing.T, raw rawView, kind string, want map[string]string) {
	t.Helper()
	got := indexKeys(t, raw, kind)
	for k, e := range got {
		if w, ok := want[k]; !ok || e.str != w || e.expire != -1 {
			t.Errorf("%s key %s = %q (PEXPIRETIME %d); want %q, no TTL (listed: %v)", kind, k, e.str, e.expire, w, ok)
		}
	}
	for k := range want {
		if got[k] == nil {
			t.Errorf("no %s key %s", kind, k)
		}
	}
}

// TestUsersWithoutEmailKeys checks the keys of users without an e-mail
// address: no index key for "", two such users side by side, an update
// to "" releases the old address's key at once (another user can take
// it), and a delete leaves no key at all.
func TestUsersWithoutEmailKeys(t *testing.T) {
	eachTopology(t, func(t *testing.T, _ redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		k := keys{p: raw.Prefix}
		for _, id := range []string{"u1", "u2"} {
			if _, err := a.CreateUser(ctx, core.User{ID: id}); err != nil {
				t.Fatalf("createUser %s without e-mail: %v", id, err)
			}
		}
		wantIndex(t, raw, "email", nil)
		if u, err := a.GetUserByEmail(ctx, ""); u != nil || err != nil {
			t.Errorf(`getUserByEmail("") = %+v, %v; want nothing`, u, err)
		}
		if u, err := a.GetUser(ctx, "u1"); err != nil || u == nil || u.Email != "" {
			t.Errorf("getUser(u1) = %+v, %v; want a user without e-mail", u, err)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("a@example.com")}); err != nil {
			t.Fatal(err)
		}
		wantIndex(t, raw, "email", map[string]string{k.email("a@example.com"): "u1"})
		if u, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("")}); err != nil || u.Email != "" {
			t.Fatalf("updateUser to no e-mail = %+v, %v", u, err)
		}
		wantIndex(t, raw, "email", nil)
		if h, _ := raw.C.HGetAll(ctx, k.user("u1")).Result(); h[fEmail] != "" || len(h) == 0 {
			t.Errorf("user hash after removing the e-mail: %v; want no email field", h)
		}
		if u, err := a.GetUserByEmail(ctx, "a@example.com"); u != nil || err != nil {
			t.Errorf("getUserByEmail of the removed address = %+v, %v", u, err)
		}
		// The address is free again at once.
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set("a@example.com")}); err != nil {
			t.Fatalf("the removed address is not free: %v", err)
		}
		wantIndex(t, raw, "email", map[string]string{k.email("a@example.com"): "u2"})
		for _, id := range []string{"u1", "u2"} {
			if _, err := a.DeleteUser(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if ks, err := redistest.ScanKeys(ctx, raw.C, raw.Prefix); err != nil || len(ks) != 0 {
			t.Errorf("keys left after deleting both users: %v, %v", ks, err)
		}
	})
}

// TestUsernameKeys checks the username's index key through create,
// refusals, renames, removal and delete: exactly one key per username,
// naming its user, confirmed (no TTL), and none left over.
func TestUsernameKeys(t *testing.T) {
	eachTopology(t, func(t *testing.T, _ redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		k := keys{p: raw.Prefix}
		uk := func(name string) string { return k.unique(fUsername, name) }
		if _, err := a.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com", Username: "ada"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateUser(ctx, core.User{ID: "u2", Username: "bob"}); err != nil {
			t.Fatal(err)
		}
		wantIndex(t, raw, "username", map[string]string{uk("ada"): "u1", uk("bob"): "u2"})
		if u, err := a.GetUserByUsername(ctx, "ada"); err != nil || u == nil || u.ID != "u1" || u.Username != "ada" {
			t.Errorf("getUserByUsername(ada) = %+v, %v", u, err)
		}
		if u, err := a.GetUserByUsername(ctx, ""); u != nil || err != nil {
			t.Errorf(`getUserByUsername("") = %+v, %v`, u, err)
		}
		// A taken username refuses the create whole: no user, no e-mail key.
		if _, err := a.CreateUser(ctx, core.User{ID: "u3", Email: "u3@example.com", Username: "ada"}); !errors.Is(err, core.ErrAlreadyExists) {
			t.Errorf("createUser with a taken username: %v", err)
		}
		if n, _ := raw.C.Exists(ctx, k.user("u3"), k.email("u3@example.com")).Result(); n != 0 {
			t.Errorf("a refused create left %d keys", n)
		}
		// A taken e-mail refuses the create whole: no username key.
		if _, err := a.CreateUser(ctx, core.User{ID: "u3", Email: "u1@example.com", Username: "cat"}); !errors.Is(err, core.ErrAlreadyExists) {
			t.Errorf("createUser with a taken e-mail: %v", err)
		}
		// A rename to a taken name changes nothing, e-mail included.
		_, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Username: core.Set("ada"), Email: core.Set("new@example.com")})
		if !errors.Is(err, core.ErrAlreadyExists) {
			t.Errorf("rename to a taken username: %v", err)
		}
		if u, _ := a.GetUser(ctx, "u2"); u == nil || u.Username != "bob" || u.Email != "" {
			t.Errorf("after a refused rename: %+v", u)
		}
		wantIndex(t, raw, "username", map[string]string{uk("ada"): "u1", uk("bob"): "u2"})
		wantIndex(t, raw, "email", map[string]string{k.email("u1@example.com"): "u1"})
		// Rename and new e-mail in one update.
		u, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Username: core.Set("carol"), Email: core.Set("c@example.com")})
		if err != nil || u.Username != "carol" || u.Email != "c@example.com" {
			t.Fatalf("rename = %+v, %v", u, err)
		}
		wantIndex(t, raw, "username", map[string]string{uk("ada"): "u1", uk("carol"): "u2"})
		if u, err := a.GetUserByUsername(ctx, "bob"); u != nil || err != nil {
			t.Errorf("the old name still finds %+v, %v", u, err)
		}
		// The old name is free at once.
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Username: core.Set("bob")}); err != nil {
			t.Fatalf("the old name is not free: %v", err)
		}
		wantIndex(t, raw, "username", map[string]string{uk("bob"): "u1", uk("carol"): "u2"})
		// "" removes it; an update that keeps it touches nothing.
		if u, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Username: core.Set("")}); err != nil || u.Username != "" {
			t.Fatalf("remove the username = %+v, %v", u, err)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Username: core.Set("carol")}); err != nil {
			t.Fatal(err)
		}
		wantIndex(t, raw, "username", map[string]string{uk("carol"): "u2"})
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "nobody", Username: core.Set("dan")}); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("rename of an unknown user: %v", err)
		}
		for _, id := range []string{"u1", "u2"} {
			if _, err := a.DeleteUser(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if ks, err := redistest.ScanKeys(ctx, raw.C, raw.Prefix); err != nil || len(ks) != 0 {
			t.Errorf("keys left after deleting the users: %v, %v", ks, err)
		}
		if _, err := a.CreateUser(ctx, core.User{ID: "u4", Username: "carol"}); err != nil {
			t.Errorf("the deleted user's name is not free: %v", err)
		}
	})
}

// TestUsernameRace creates users with one username from 8 goroutines and
// renames others to it: exactly one holds it, its key names that user.
func TestUsernameRace(t *testing.T) {
	eachTopology(t, func(t *testing.T, _ redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		for i := range 4 {
			if _, err := a.CreateUser(ctx, core.User{ID: "r" + string(rune('0'+i))}); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []string
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				id := "c" + string(rune('0'+i))
				if i < 4 {
					_, err = a.CreateUser(ctx, core.User{ID: id, Username: "same"})
				} else {
					id = "r" + string(rune('0'+i-4))
					_, err = a.UpdateUser(ctx, core.UserUpdate{ID: id, Username: core.Set("same")})
				}
				switch {
				case err == nil:
					mu.Lock()
					won = append(won, id)
					mu.Unlock()
				case !errors.Is(err, core.ErrAlreadyExists):
					t.Errorf("%s: %v", id, err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("winners: %v; want exactly one", won)
		}
		wantIndex(t, raw, "username", map[string]string{keys{p: raw.Prefix}.unique(fUsername, "same"): won[0]})
	})
}

// TestSwapPasswordHashRaw checks the password hash in the stored account
// record and the compare-and-set: a stale hash changes nothing, and of
// concurrent swaps from one hash exactly one wins.
func TestSwapPasswordHashRaw(t *testing.T) {
	eachTopology(t, func(t *testing.T, _ redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		k := keys{p: raw.Prefix}
		if _, err := a.CreateUser(ctx, core.User{ID: "p1", Email: "p1@example.com"}); err != nil {
			t.Fatal(err)
		}
		key := core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "p1"}
		h0 := "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaDA"
		if _, err := a.LinkAccount(ctx, core.Account{UserID: "p1", Type: core.AccountTypeCredentials, Provider: key.Provider,
			ProviderAccountID: key.ProviderAccountID, PasswordHash: &h0}); err != nil {
			t.Fatal(err)
		}
		stored := func() string {
			v, err := raw.C.HGet(ctx, k.accounts("p1"), accountField(key.Provider, key.ProviderAccountID)).Result()
			if err != nil {
				t.Fatal(err)
			}
			acc, err := decodeAccount(v)
			if err != nil || acc.PasswordHash == nil {
				t.Fatalf("stored account %+v, %v; want one with a hash", acc, err)
			}
			return *acc.PasswordHash
		}
		if got := stored(); got != h0 {
			t.Errorf("stored hash %q, want %q", got, h0)
		}
		acc, err := a.SwapPasswordHash(ctx, key, "wrong", "h1")
		if !errors.Is(err, core.ErrPasswordHashChanged) || acc == nil || acc.PasswordHash == nil || *acc.PasswordHash != h0 {
			t.Errorf("swap from a stale hash = %+v, %v; want the stored account and ErrPasswordHashChanged", acc, err)
		}
		if got := stored(); got != h0 {
			t.Errorf("a refused swap wrote %q", got)
		}
		if acc, err := a.SwapPasswordHash(ctx, core.AccountKey{Provider: "credential", ProviderAccountID: "nobody"}, "", "h"); acc != nil || err != nil {
			t.Errorf("swap of an unknown account = %+v, %v; want nil, nil", acc, err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := map[string]bool{}
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := "h1-" + string(rune('a'+i))
				acc, err := a.SwapPasswordHash(ctx, key, h0, next)
				switch {
				case err == nil && acc != nil && *acc.PasswordHash == next:
					mu.Lock()
					wins[next] = true
					mu.Unlock()
				case !errors.Is(err, core.ErrPasswordHashChanged):
					t.Errorf("swap %s: %+v, %v", next, acc, err)
				}
			}()
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("winning swaps %v; want exactly one", wins)
		}
		for w := range wins {
			if got := stored(); got != w {
				t.Errorf("stored %q, the winner wrote %q", got, w)
			}
		}
		// A swap keeps the rest of the account, and an account without a
		// hash matches "".
		if _, err := a.LinkAccount(ctx, core.Account{UserID: "p1", Type: core.AccountTypeOAuth, Provider: "gh", ProviderAccountID: "9"}); err != nil {
			t.Fatal(err)
		}
		acc, err = a.SwapPasswordHash(ctx, core.AccountKey{Provider: "gh", ProviderAccountID: "9"}, "", "h2")
		if err != nil || acc.Type != core.AccountTypeOAuth || acc.UserID != "p1" || *acc.PasswordHash != "h2" {
			t.Errorf("swap on an account without a hash = %+v, %v", acc, err)
		}
		if _, err := a.DeleteUser(ctx, "p1"); err != nil {
			t.Fatal(err)
		}
		if ks, err := redistest.ScanKeys(ctx, raw.C, raw.Prefix); err != nil || len(ks) != 0 {
			t.Errorf("keys left after deleting the user: %v, %v", ks, err)
		}
	})
}
