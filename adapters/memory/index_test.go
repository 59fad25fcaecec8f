package memory

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// TestIndexesFollowRecords runs random mixes of every write the adapter has
// (creates, updates that move a session to another user, factor swaps,
// deletes, purges,
// expiries found by lookups, imports that move records between users or
// give them users that do not exist) on a small key space, and after each
// one checks that each table's index is the one rebuilt from its rows, and
// that the by-user listers and DeleteUser give what a scan of the whole
// store gives.
func TestIndexesFollowRecords(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x6d656d6964780000))
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			a := New(WithClock(func() time.Time { return now }))
			ctx := context.Background()
			pick := func(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, r.IntN(n)) }
			user := func() string { return pick("u", 6) } // u5 is never created: records imported for it have no user
			accountKey := func() core.AccountKey {
				return core.AccountKey{Provider: pick("p", 2), ProviderAccountID: pick("a", 5)}
			}
			account := func() core.Account {
				k := accountKey()
				return core.Account{UserID: user(), Provider: k.Provider, Type: core.AccountTypeOAuth, ProviderAccountID: k.ProviderAccountID}
			}
			session := func() core.Session {
				return core.Session{SessionToken: pick("s", 10), UserID: user(), Expires: now.Add(time.Duration(r.IntN(120)-30) * time.Minute)}
			}
			// userKey returns "" (no key) or one of a few keys, so that
			// users collide on them and go without them.
			userKey := func(prefix string) string {
				if r.IntN(3) == 0 {
					return ""
				}
				return pick(prefix, 3)
			}
			authenticator := func() core.Authenticator {
				return core.Authenticator{CredentialID: pick("c", 8), CredentialPublicKey: "key", CredentialDeviceType: "singleDevice",
					ProviderAccountID: pick("a", 5), UserID: user()}
			}
			factor := func() core.Factor {
				return core.Factor{ID: pick("f", 8), UserID: user(), Type: core.FactorTOTP, Secret: []byte{byte(r.IntN(2))},
					Step: int64(r.IntN(2)), CreatedAt: now}
			}
			for step := range 1500 {
				var op string
				switch r.IntN(20) {
				case 0:
					u := core.User{ID: pick("u", 5), Email: userKey("e"), Username: userKey("name")}
					op = fmt.Sprintf("CreateUser %+v", u)
					_, _ = a.CreateUser(ctx, u)
				case 1:
					id := user()
					op = "DeleteUser " + id
					before := a.Snapshot()
					u, _ := a.DeleteUser(ctx, id)
					checkDeleted(t, op, before, a.Snapshot(), id, u != nil)
				case 2:
					acc := account()
					op = fmt.Sprintf("LinkAccount %+v", acc.Key())
					_, _ = a.LinkAccount(ctx, acc)
				case 3:
					k := accountKey()
					op = fmt.Sprintf("UnlinkAccount %+v", k)
					_, _ = a.UnlinkAccount(ctx, k)
				case 4:
					k := accountKey()
					op = fmt.Sprintf("UpdateAccount %+v", k)
					_, _ = a.UpdateAccount(ctx, core.AccountUpdate{Provider: k.Provider, ProviderAccountID: k.ProviderAccountID,
						AccessToken: core.Set(new("at"))})
				case 5:
					s := session()
					op = "CreateSession " + s.SessionToken + " for " + s.UserID
					_, _ = a.CreateSession(ctx, s)
				case 6:
					s := session()
					op = "UpdateSession " + s.SessionToken + " to " + s.UserID
					up := core.SessionUpdate{SessionToken: s.SessionToken, UserID: core.Set(s.UserID)}
					if r.IntN(2) == 0 {
						up.Expires = core.Set(s.Expires)
					}
					_, _ = a.UpdateSession(ctx, up)
				case 7:
					s := session()
					op = "ExtendSession " + s.SessionToken
					_, _, _ = a.ExtendSession(ctx, s.SessionToken, now, now.Add(time.Hour), now)
				case 8:
					token := pick("s", 10)
					op = "DeleteSession " + token
					_, _ = a.DeleteSession(ctx, token)
				case 9:
					token := pick("s", 10)
					op = "GetSessionAndUser " + token
					_, _ = a.GetSessionAndUser(ctx, token)
				case 10:
					au := authenticator()
					op = "CreateAuthenticator " + au.CredentialID + " for " + au.UserID
					_, _ = a.CreateAuthenticator(ctx, au)
				case 11:
					id := pick("c", 8)
					op = "AdvanceAuthenticatorCounter " + id
					_, _ = a.AdvanceAuthenticatorCounter(ctx, id, int64(r.IntN(10)))
				case 12:
					op = "PurgeExpired"
					_, _ = a.PurgeExpired(ctx)
				case 13:
					var s Snapshot
					for range r.IntN(3) {
						s.Accounts = append(s.Accounts, account())
					}
					for range r.IntN(3) {
						s.Sessions = append(s.Sessions, session())
					}
					for range r.IntN(3) {
						s.Authenticators = append(s.Authenticators, authenticator())
					}
					for range r.IntN(3) {
						s.Factors = append(s.Factors, factor())
					}
					op = fmt.Sprintf("Import %+v", s)
					_ = a.Import(ctx, s)
				case 14:
					op = "Import of a snapshot into a new adapter"
					b := New(WithClock(func() time.Time { return now }))
					_ = b.Import(ctx, a.Snapshot())
					a = b
				case 15:
					up := core.UserUpdate{ID: user(), Name: core.Set(new("n"))}
					if r.IntN(2) == 0 {
						up.Email = core.Set(userKey("e"))
					}
					if r.IntN(2) == 0 {
						up.Username = core.Set(userKey("name"))
					}
					op = fmt.Sprintf("UpdateUser %+v", up)
					_, _ = a.UpdateUser(ctx, up)
				case 16:
					now = now.Add(time.Duration(r.IntN(20)) * time.Minute)
					op = "clock now " + now.String()
				case 17:
					f := factor()
					op = "CreateFactor " + f.ID + " for " + f.UserID
					_, _ = a.CreateFactor(ctx, f)
				case 18:
					old, next := factor(), factor()
					op = fmt.Sprintf("SwapFactor %s of %s from %v/%d", old.ID, old.UserID, old.Secret, old.Step)
					_, _ = a.SwapFactor(ctx, old, next)
				case 19:
					f := factor()
					op = "DeleteFactor " + f.ID + " of " + f.UserID
					_, _ = a.DeleteFactor(ctx, f.UserID, f.ID)
				}
				if err := checkIndexes(a); err != nil {
					t.Fatalf("step %d, after %s: %v", step, op, err)
				}
				checkListers(t, fmt.Sprintf("step %d, after %s", step, op), a)
			}
		})
	}
}

// checkIndexes reports the first table of a whose index differs from the
// one rebuilt from its rows, the users' indexes by e-mail and username
// included.
func checkIndexes(a *Adapter) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, x := range a.userIndexes() {
		want := make(map[string]string)
		for id, u := range a.users {
			if k := x.key(&u); k != "" {
				want[k] = id
			}
		}
		if !reflect.DeepEqual(x.ids, want) {
			return fmt.Errorf("users by %s: index %v, rebuilt from the users %v", x.what, x.ids, want)
		}
	}
	if err := checkIndex("accounts", a.accounts); err != nil {
		return err
	}
	if err := checkIndex("sessions", a.sessions); err != nil {
		return err
	}
	if err := checkIndex("authenticators", a.authenticators); err != nil {
		return err
	}
	return checkIndex("factors", a.factors)
}

// checkIndex rebuilds the index of t from its rows and reports how the
// stored one differs.
func checkIndex[K comparable, R any](name string, t table[K, R]) error {
	want := make(map[string]map[K]struct{})
	for key, r := range t.rows {
		u := t.user(&r)
		if want[u] == nil {
			want[u] = make(map[K]struct{})
		}
		want[u][key] = struct{}{}
	}
	if !reflect.DeepEqual(t.byUser, want) {
		return fmt.Errorf("%s: index %v, rebuilt from the rows %v", name, t.byUser, want)
	}
	return nil
}

// checkListers compares, for every user id the test uses, what
// ListAccountsByUserID, ListAuthenticatorsByUserID and ListFactorsByUserID
// return with the
// records of a snapshot that hold that user id, sorted.
func checkListers(t *testing.T, when string, a *Adapter) {
	t.Helper()
	ctx := context.Background()
	s := a.Snapshot()
	for i := range 6 {
		id := fmt.Sprintf("u%d", i)
		accounts, _ := a.ListAccountsByUserID(ctx, id)
		want := []core.Account{}
		for _, acc := range s.Accounts {
			if acc.UserID == id {
				want = append(want, acc.Normalize())
			}
		}
		slices.SortFunc(want, core.CompareAccounts)
		if !reflect.DeepEqual(accounts, want) {
			t.Fatalf("%s: ListAccountsByUserID(%s) = %+v, the store holds %+v", when, id, accounts, want)
		}
		authenticators, _ := a.ListAuthenticatorsByUserID(ctx, id)
		wantAu := []core.Authenticator{}
		for _, au := range s.Authenticators {
			if au.UserID == id {
				wantAu = append(wantAu, au)
			}
		}
		slices.SortFunc(wantAu, core.CompareAuthenticators)
		if !reflect.DeepEqual(authenticators, wantAu) {
			t.Fatalf("%s: ListAuthenticatorsByUserID(%s) = %+v, the store holds %+v", when, id, authenticators, wantAu)
		}
		factors, _ := a.ListFactorsByUserID(ctx, id)
		wantF := []core.Factor{}
		for _, f := range s.Factors {
			if f.UserID == id {
				wantF = append(wantF, f.Normalize())
			}
		}
		slices.SortFunc(wantF, core.CompareFactors)
		if !reflect.DeepEqual(factors, wantF) {
			t.Fatalf("%s: ListFactorsByUserID(%s) = %+v, the store holds %+v", when, id, factors, wantF)
		}
	}
}

// checkDeleted checks that DeleteUser(id), which found the user when
// found, removed exactly the user and its accounts, sessions,
// authenticators and factors from before, leaving after; or, when the user
// was not found, nothing.
func checkDeleted(t *testing.T, op string, before, after Snapshot, id string, found bool) {
	t.Helper()
	want := before
	if found {
		want.Users = slices.DeleteFunc(want.Users, func(u core.User) bool { return u.ID == id })
		want.Accounts = slices.DeleteFunc(want.Accounts, func(acc core.Account) bool { return acc.UserID == id })
		want.Sessions = slices.DeleteFunc(want.Sessions, func(s core.Session) bool { return s.UserID == id })
		want.Authenticators = slices.DeleteFunc(want.Authenticators, func(au core.Authenticator) bool { return au.UserID == id })
		want.Factors = slices.DeleteFunc(want.Factors, func(f core.Factor) bool { return f.UserID == id })
	}
	canonical(&want)
	canonical(&after)
	if !reflect.DeepEqual(after, want) {
		t.Fatalf("%s: the store holds %+v, want %+v", op, after, want)
	}
}

// canonical puts s in a form that reflect.DeepEqual can compare: the
// slices, which Snapshot returns in no particular order, sorted by key,
// and empty ones nil, as Snapshot returns them.
func canonical(s *Snapshot) {
	slices.SortFunc(s.Users, func(x, y core.User) int { return strings.Compare(x.ID, y.ID) })
	slices.SortFunc(s.Accounts, core.CompareAccounts)
	slices.SortFunc(s.Sessions, func(x, y core.Session) int { return strings.Compare(x.SessionToken, y.SessionToken) })
	slices.SortFunc(s.Authenticators, core.CompareAuthenticators)
	slices.SortFunc(s.Factors, core.CompareFactors)
	slices.SortFunc(s.VerificationTokens, func(x, y core.VerificationToken) int {
		return cmp.Or(strings.Compare(x.Identifier, y.Identifier), strings.Compare(x.Token, y.Token))
	})
	*s = Snapshot{Users: nilIfEmpty(s.Users), Accounts: nilIfEmpty(s.Accounts), Sessions: nilIfEmpty(s.Sessions),
		VerificationTokens: nilIfEmpty(s.VerificationTokens), Authenticators: nilIfEmpty(s.Authenticators), Factors: nilIfEmpty(s.Factors)}
}

// nilIfEmpty returns list, or nil when it is empty.
func nilIfEmpty[R any](list []R) []R {
	if len(list) == 0 {
		return nil
	}
	return list
}
