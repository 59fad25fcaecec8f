package unstorage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/core"
)

// eachServer runs f on a fresh adapter on the single node and through
// Sentinel, and checks that the test left no key behind.
func eachServer(t *testing.T, f func(t *testing.T, a *Adapter, raw rawUView)) {
	for _, b := range redistest.Backends(false) {
		t.Run(b.Name, func(t *testing.T) {
			c := b.Connect(t)
			t.Cleanup(func() { _ = c.Close() })
			a, raw := unstorageFixture(t, c)
			f(t, a, raw)
		})
	}
}

// keysLeft returns the keys under the view's prefix, without it.
func keysLeft(t *testing.T, raw rawUView) []string {
	t.Helper()
	ks, err := redistest.ScanKeys(context.Background(), raw.C, raw.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range ks {
		ks[i] = strings.TrimPrefix(k, raw.Prefix)
	}
	return ks
}

// get returns a key's value under the view's prefix, "" when absent.
func get(t *testing.T, c redis.UniversalClient, key string) string {
	t.Helper()
	v, err := c.Get(context.Background(), key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	return v
}

// TestUsersWithoutEmailKeys checks the unstorage layout's users without an
// e-mail: "email": null in the document as Auth.js writes one, no e-mail
// key, two side by side, users Auth.js wrote without one (null, absent)
// read back, an update to "" frees the address at once, and deleteUser
// also removes the key Auth.js writes for such a user
// (user:email:null) while it names the user.
func TestUsersWithoutEmailKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, a *Adapter, raw rawUView) {
		ctx := context.Background()
		k := ukeys{base: raw.Prefix}
		for _, id := range []string{"u1", "u2"} {
			if _, err := a.CreateUser(ctx, core.User{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		if doc := get(t, raw.C, k.user("u1")); doc != `{"id":"u1","email":null,"emailVerified":null,"name":null,"image":null}` {
			t.Errorf("document of a user without e-mail: %s", doc)
		}
		if left := keysLeft(t, raw); len(left) != 2 {
			t.Errorf("keys of two users without e-mail: %v; want only their documents", left)
		}
		if u, err := a.GetUserByEmail(ctx, ""); u != nil || err != nil {
			t.Errorf(`getUserByEmail("") = %+v, %v`, u, err)
		}
		// As Auth.js writes users whose profile gave no address.
		for id, doc := range map[string]string{
			"js-null":   `{"id":"js-null","email":null,"emailVerified":null,"name":"N"}`,
			"js-absent": `{"id":"js-absent","emailVerified":null,"name":"A"}`,
		} {
			if err := raw.C.Set(ctx, k.user(id), doc, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if err := raw.C.Set(ctx, k.email("null"), id, 0).Err(); err != nil {
				t.Fatal(err)
			}
			u, err := a.GetUser(ctx, id)
			if err != nil || u == nil || u.Email != "" || u.Name == nil {
				t.Errorf("getUser(%s) of Auth.js's document = %+v, %v", id, u, err)
			}
		}
		if u, err := a.GetUserByEmail(ctx, "null"); u != nil || err != nil {
			t.Errorf(`getUserByEmail("null") through Auth.js's key = %+v, %v; want nothing`, u, err)
		}
		// The address "null" is free for a user who has it.
		if _, err := a.CreateUser(ctx, core.User{ID: "u3", Email: "null"}); err != nil {
			t.Errorf("createUser with the address Auth.js's key names: %v", err)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u3", Email: core.Set("")}); err != nil {
			t.Fatal(err)
		}
		if v := get(t, raw.C, k.email("null")); v != "" {
			t.Errorf("the removed address's key holds %q", v)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("a@example.com")}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Email: core.Set("")}); err != nil {
			t.Fatal(err)
		}
		if v := get(t, raw.C, k.email("a@example.com")); v != "" {
			t.Errorf("the removed address's key holds %q", v)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set("a@example.com")}); err != nil {
			t.Errorf("the removed address is not free: %v", err)
		}
		if err := raw.C.Set(ctx, k.email("null"), "js-absent", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"u1", "u2", "u3", "js-null", "js-absent"} {
			if _, err := a.DeleteUser(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if left := keysLeft(t, raw); len(left) != 0 {
			t.Errorf("keys left after deleting every user: %v", left)
		}
	})
}

// TestUsernameKeys checks the username's own key through create, a taken
// name, rename, removal and delete.
func TestUsernameKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, a *Adapter, raw rawUView) {
		ctx := context.Background()
		k := ukeys{base: raw.Prefix}
		if _, err := a.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com", Username: "ada"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateUser(ctx, core.User{ID: "u2", Username: "bob"}); err != nil {
			t.Fatal(err)
		}
		if v := get(t, raw.C, k.username("ada")); v != "u1" || !strings.HasSuffix(k.username("ada"), ":authport:username:ada") {
			t.Errorf("%s = %q, want u1", k.username("ada"), v)
		}
		if doc := get(t, raw.C, k.user("u1")); !strings.Contains(doc, `"username":"ada"`) {
			t.Errorf("user document %s lacks the username", doc)
		}
		if doc := get(t, raw.C, k.user("u2")); !strings.Contains(doc, "username") {
			t.Errorf("user document %s lacks the username", doc)
		}
		if u, err := a.GetUserByUsername(ctx, "ada"); err != nil || u == nil || u.ID != "u1" {
			t.Errorf("getUserByUsername(ada) = %+v, %v", u, err)
		}
		if _, err := a.CreateUser(ctx, core.User{ID: "u3", Email: "u3@example.com", Username: "ada"}); !errors.Is(err, core.ErrAlreadyExists) {
			t.Errorf("createUser with a taken username: %v", err)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Username: core.Set("ada"), Email: core.Set("x@example.com")}); !errors.Is(err, core.ErrAlreadyExists) {
			t.Errorf("rename to a taken username: %v", err)
		}
		if v := get(t, raw.C, k.email("x@example.com")); v != "" {
			t.Errorf("a refused update claimed the e-mail: %q", v)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Username: core.Set("carol")}); err != nil {
			t.Fatal(err)
		}
		if get(t, raw.C, k.username("bob")) != "" || get(t, raw.C, k.username("carol")) != "u2" {
			t.Error("rename did not move the username key")
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Username: core.Set("")}); err != nil {
			t.Fatal(err)
		}
		if doc := get(t, raw.C, k.user("u1")); strings.Contains(doc, "username") || get(t, raw.C, k.username("ada")) != "" {
			t.Errorf("removing the username left %s and its key", doc)
		}
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u1", Username: core.Set("bob")}); err != nil {
			t.Errorf("the old name is not free: %v", err)
		}
		// Auth.js's deleteUser leaves the username key: it does not block
		// the name.
		if err := raw.C.Del(ctx, k.user("u1")).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateUser(ctx, core.User{ID: "u4", Username: "bob"}); err != nil {
			t.Errorf("a name whose user is gone is not free: %v", err)
		}
		for _, id := range []string{"u2", "u4"} {
			if _, err := a.DeleteUser(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if left := keysLeft(t, raw); len(left) != 1 || left[0] != "user:email:u1@example.com" {
			t.Errorf("keys left: %v; want only the e-mail key the raw delete left", left)
		}
	})
}

// TestSwapPasswordHash checks the account document's password field
// (Better Auth's name, present only when set) and the compare-and-set.
func TestSwapPasswordHash(t *testing.T) {
	eachServer(t, func(t *testing.T, a *Adapter, raw rawUView) {
		ctx := context.Background()
		k := ukeys{base: raw.Prefix}
		if _, err := a.CreateUser(ctx, core.User{ID: "p1", Email: "p1@example.com"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.LinkAccount(ctx, core.Account{UserID: "p1", Type: core.AccountTypeOAuth, Provider: "gh", ProviderAccountID: "9"}); err != nil {
			t.Fatal(err)
		}
		if doc := get(t, raw.C, k.account("gh", "9")); strings.Contains(doc, "password") {
			t.Errorf("an account without a hash has a password field: %s", doc)
		}
		h0 := "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaDA"
		key := core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: "p1"}
		if _, err := a.LinkAccount(ctx, core.Account{UserID: "p1", Type: core.AccountTypeCredentials, Provider: key.Provider,
			ProviderAccountID: key.ProviderAccountID, PasswordHash: &h0}); err != nil {
			t.Fatal(err)
		}
		if doc := get(t, raw.C, k.account(key.Provider, key.ProviderAccountID)); !strings.Contains(doc, `"password":"`+h0+`"`) {
			t.Errorf("password account document: %s", doc)
		}
		acc, err := a.SwapPasswordHash(ctx, key, "stale", "h1")
		if !errors.Is(err, core.ErrPasswordHashChanged) || acc == nil || *acc.PasswordHash != h0 {
			t.Errorf("swap from a stale hash = %+v, %v", acc, err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var wins []string
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := "h1-" + string(rune('a'+i))
				_, err := a.SwapPasswordHash(ctx, key, h0, next)
				switch {
				case err == nil:
					mu.Lock()
					wins = append(wins, next)
					mu.Unlock()
				case !errors.Is(err, core.ErrPasswordHashChanged):
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("winning swaps %v; want one", wins)
		}
		got, err := a.GetAccount(ctx, key.ProviderAccountID, key.Provider)
		if err != nil || got == nil || *got.PasswordHash != wins[0] || got.Type != core.AccountTypeCredentials {
			t.Errorf("account after the swaps = %+v, %v; want hash %s", got, err, wins[0])
		}
		if acc, err := a.SwapPasswordHash(ctx, core.AccountKey{Provider: "credential", ProviderAccountID: "nobody"}, "", "h"); acc != nil || err != nil {
			t.Errorf("swap of an unknown account = %+v, %v", acc, err)
		}
		if _, err := a.DeleteUser(ctx, "p1"); err != nil {
			t.Fatal(err)
		}
		if left := keysLeft(t, raw); len(left) != 0 {
			t.Errorf("keys left after deleting the user: %v", left)
		}
	})
}
