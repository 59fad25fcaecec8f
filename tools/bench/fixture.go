package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/authport/authport/core"
)

// The data set every backend gets: users u0…u(N-1), each with the account
// (bench, a<i>) and the session s<i>, valid for a day. The operations read
// them round-robin; the writes make records of their own.
const provider = "bench"

func userID(i int) string       { return "u" + strconv.Itoa(i) }
func accountID(i int) string    { return "a" + strconv.Itoa(i) }
func sessionToken(i int) string { return "s" + strconv.Itoa(i) }

func benchUser(id string) core.User {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return core.User{ID: id, Email: id + "@bench.example", EmailVerified: &now, Name: ptr("Ada Lovelace"),
		Image: ptr("https://bench.example/" + id + ".png")}
}

func ptr[T any](v T) *T { return &v }

// fullAdapter is what the bench calls on an adapter.
type fullAdapter interface {
	core.UserCreator
	core.AccountLinker
	core.SessionCreator
	core.SessionAndUserGetter
	core.UserByAccountGetter
	core.SessionUpdater
	core.VerificationTokenCreator
	core.VerificationTokenUser
	core.UserDeleter
	core.SessionsByUserLister
	core.SessionExtender
}

// createChain creates user id with its account and session through a.
func createChain(ctx context.Context, a fullAdapter, id, acct, token string, expires time.Time) error {
	if _, err := a.CreateUser(ctx, benchUser(id)); err != nil {
		return fmt.Errorf("createUser %s: %w", id, err)
	}
	if _, err := a.LinkAccount(ctx, core.Account{UserID: id, Provider: provider, Type: core.AccountTypeOAuth,
		ProviderAccountID: acct, AccessToken: ptr("at-" + acct), TokenType: ptr("bearer")}); err != nil {
		return fmt.Errorf("linkAccount %s: %w", id, err)
	}
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: token, UserID: id, Expires: expires}); err != nil {
		return fmt.Errorf("createSession %s: %w", id, err)
	}
	return nil
}

// parallel runs f(0…n-1) on w workers and returns the first error.
func parallel(n, w int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, w)
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || errs[k] != nil {
					return
				}
				errs[k] = f(i)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// seed creates the data set through the adapter.
func seed(ctx context.Context, a fullAdapter, users int) error {
	exp := time.Now().Add(24 * time.Hour)
	return parallel(users, 8, func(i int) error {
		return createChain(ctx, a, userID(i), accountID(i), sessionToken(i), exp)
	})
}

// The listing data set, beside the chains: users m0…m(L-1), L =
// listedUsers(users), each with listedSessions sessions m<i>s0…, with
// metadata (created and last seen at seeding, an IP address and a user
// agent), valid for a day. listSessionsByUserId lists them; the refresh
// rotation rotates session 0 of a user on the adapter's side and session
// 1 on the raw baseline's, so that the two sides never race one
// compare-and-set. L is at least the calls of a phase (the full run's 640
// at concurrency 32, TestShort's 32; the rotation's rounds are not
// lengthened, see operation.keepCalls), so that no two calls of a phase
// rotate the same session.
const listedSessions = 4

// listedUsers is how many users of the listing data set a backend seeded
// with users users has.
func listedUsers(users int) int { return min(users, 1000) }

func listedUserID(i int) string   { return "m" + strconv.Itoa(i) }
func listedToken(i, j int) string { return "m" + strconv.Itoa(i) + "s" + strconv.Itoa(j) }

// benchUserAgent is the user agent of a listed user's session j, a
// browser's of the usual length.
func benchUserAgent(i int) string {
	return "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0." + strconv.Itoa(i) + " Safari/537.36"
}

// seedListed creates the listing data set of a backend seeded with users
// users, through the adapter.
func seedListed(ctx context.Context, a fullAdapter, users int) error {
	now := time.Now().UTC().Truncate(time.Millisecond)
	exp := now.Add(24 * time.Hour)
	return parallel(listedUsers(users), 8, func(i int) error {
		id := listedUserID(i)
		if _, err := a.CreateUser(ctx, benchUser(id)); err != nil {
			return fmt.Errorf("createUser %s: %w", id, err)
		}
		for j := range listedSessions {
			s := core.Session{SessionToken: listedToken(i, j), UserID: id, Expires: exp, CreatedAt: now, UpdatedAt: now,
				IPAddress: "192.0.2." + strconv.Itoa((i*listedSessions+j)%254+1), UserAgent: benchUserAgent(j)}
			if _, err := a.CreateSession(ctx, s); err != nil {
				return fmt.Errorf("createSession %s: %w", s.SessionToken, err)
			}
		}
		return nil
	})
}

// nextExpiry is the expiry a refresh rotation moves a session to from
// from, as a token family's rotation does (core/auth: MaxAge from now, the
// generation in the milliseconds): a day from now, at the stored
// precision, and always after from.
func nextExpiry(from time.Time) time.Time {
	next := core.NormalizeTime(time.Now().Add(24 * time.Hour))
	if !next.After(from) {
		next = from.Add(core.TimePrecision)
	}
	return next
}

// victims are the users a deleteUser phase deletes: prepare makes them
// (through the adapter, untimed) and the phase's call i deletes ids[i].
type victims struct {
	mu  sync.Mutex
	ids map[string][]string // by side
}

func (v *victims) prepare(a fullAdapter) func(ctx context.Context, side string, round, n int) error {
	return func(ctx context.Context, side string, round, n int) error {
		ids := make([]string, n)
		exp := time.Now().Add(24 * time.Hour)
		// The victims' names decide their keys' hash slots, and so, on a
		// cluster, how many nodes a deleteUser's pointer releases reach:
		// the sides swap name sets every other round, and the warm-up and
		// round-trip phases (negative rounds, one side after the other)
		// delete the same users, so that neither side keeps the luckier
		// placement.
		label := side
		switch {
		case round < 0:
			label = "w"
		case round%2 == 1 && side == "adapter":
			label = "raw"
		case round%2 == 1 && side == "raw":
			label = "adapter"
		}
		tag := label + strconv.Itoa(round+1) + "-"
		err := parallel(n, 8, func(i int) error {
			id := "d" + tag + strconv.Itoa(i)
			ids[i] = id
			return createChain(ctx, a, id, "d"+tag+"a"+strconv.Itoa(i), "d"+tag+"s"+strconv.Itoa(i), exp)
		})
		v.mu.Lock()
		if v.ids == nil {
			v.ids = map[string][]string{}
		}
		v.ids[side] = ids
		v.mu.Unlock()
		return err
	}
}

func (v *victims) get(side string, i int) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ids[side][i]
}

// rawOps are a backend's raw baselines, in the order of adapterOps.
type rawOps struct {
	getSessionAndUser func(ctx context.Context, token, wantUser string) error
	getUserByAccount  func(ctx context.Context, acct, wantUser string) error
	updateSession     func(ctx context.Context, token string, expires time.Time) error
	createAndUseToken func(ctx context.Context, identifier, token string, expires time.Time) error
	createSession     func(ctx context.Context, token, user string, expires time.Time) error
	deleteUser        func(ctx context.Context, id string) error
	// listSessions lists the user's sessions and checks that they are
	// the ones whose tokens are want (in any order).
	listSessions func(ctx context.Context, user string, want []string) error
	// refresh is a refresh rotation: it reads the session with the token
	// and its user (wantUser), then moves the session's expiry from the
	// one read to nextExpiry's only if it is still the one read, and
	// checks that it wrote.
	refresh func(ctx context.Context, token, wantUser string) error
}

// operations builds the eight rows of a backend from its adapter and, when
// raw is not nil, its raw baselines.
func operations(a fullAdapter, raw *rawOps, users int) []operation {
	var seq atomic.Int64 // unique names for the records the writes make
	uniq := func(kind, side string) string { return kind + side + strconv.FormatInt(seq.Add(1), 36) }
	v := &victims{}
	pick := func(i int) int { return (i * 7919) % users } // spread over the data set
	listed := listedUsers(users)
	pickListed := func(i int) int { return (i * 7919) % listed } // distinct over any listed consecutive calls
	tokens := make([][]string, listed)                           // each listed user's tokens, in order
	for k := range tokens {
		for j := range listedSessions {
			tokens[k] = append(tokens[k], listedToken(k, j))
		}
	}
	ops := []operation{
		{name: "getSessionAndUser", adapter: func(ctx context.Context, i int) error {
			k := pick(i)
			su, err := a.GetSessionAndUser(ctx, sessionToken(k))
			if err != nil {
				return err
			}
			if su == nil || su.User.ID != userID(k) || su.Session.UserID != userID(k) {
				return fmt.Errorf("getSessionAndUser(%s) = %+v, want user %s", sessionToken(k), su, userID(k))
			}
			return nil
		}},
		{name: "getUserByAccount", adapter: func(ctx context.Context, i int) error {
			k := pick(i)
			u, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: provider, ProviderAccountID: accountID(k)})
			if err != nil {
				return err
			}
			if u == nil || u.ID != userID(k) {
				return fmt.Errorf("getUserByAccount(%s) = %+v, want user %s", accountID(k), u, userID(k))
			}
			return nil
		}},
		{name: "updateSession", adapter: func(ctx context.Context, i int) error {
			k := pick(i)
			s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: sessionToken(k),
				Expires: core.Set(time.Now().Add(24*time.Hour + time.Duration(i)*time.Millisecond))})
			if err != nil {
				return err
			}
			if s == nil || s.UserID != userID(k) {
				return fmt.Errorf("updateSession(%s) = %+v, want user %s", sessionToken(k), s, userID(k))
			}
			return nil
		}},
		{name: "createVerificationToken+useVerificationToken", adapter: func(ctx context.Context, i int) error {
			t := core.VerificationToken{Identifier: uniq("v", "A") + "@bench.example", Token: "hashed-token", Expires: time.Now().Add(time.Hour)}
			if _, err := a.CreateVerificationToken(ctx, t); err != nil {
				return err
			}
			got, err := a.UseVerificationToken(ctx, t.Key())
			if err != nil {
				return err
			}
			if got == nil || got.Identifier != t.Identifier {
				return fmt.Errorf("useVerificationToken(%s) = %+v", t.Identifier, got)
			}
			return nil
		}},
		{name: "createSession", keepCalls: true, adapter: func(ctx context.Context, i int) error {
			_, err := a.CreateSession(ctx, core.Session{SessionToken: uniq("c", "A"), UserID: userID(pick(i)), Expires: time.Now().Add(time.Hour)})
			return err
		}},
		{name: "deleteUser", prepare: v.prepare(a), adapter: func(ctx context.Context, i int) error {
			id := v.get("adapter", i)
			u, err := a.DeleteUser(ctx, id)
			if err != nil {
				return err
			}
			if u == nil || u.ID != id {
				return fmt.Errorf("deleteUser(%s) = %+v", id, u)
			}
			return nil
		}},
		{name: "listSessionsByUserId", adapter: func(ctx context.Context, i int) error {
			k := pickListed(i)
			list, err := a.ListSessionsByUserID(ctx, listedUserID(k))
			if err != nil {
				return err
			}
			return checkListed(listedUserID(k), tokens[k], list)
		}},
		{name: "refresh rotation", keepCalls: true, adapter: func(ctx context.Context, i int) error {
			k := pickListed(i)
			return rotate(ctx, a, listedToken(k, 0), listedUserID(k))
		}},
	}
	if raw == nil {
		return ops
	}
	if raw.getSessionAndUser != nil {
		ops[0].raw = func(ctx context.Context, i int) error {
			k := pick(i)
			return raw.getSessionAndUser(ctx, sessionToken(k), userID(k))
		}
	}
	if raw.getUserByAccount != nil {
		ops[1].raw = func(ctx context.Context, i int) error {
			k := pick(i)
			return raw.getUserByAccount(ctx, accountID(k), userID(k))
		}
	}
	if raw.updateSession != nil {
		ops[2].raw = func(ctx context.Context, i int) error {
			return raw.updateSession(ctx, sessionToken(pick(i)), time.Now().Add(24*time.Hour+time.Duration(i)*time.Millisecond))
		}
	}
	if raw.createAndUseToken != nil {
		ops[3].raw = func(ctx context.Context, i int) error {
			return raw.createAndUseToken(ctx, uniq("v", "R")+"@bench.example", "hashed-token", time.Now().Add(time.Hour))
		}
	}
	if raw.createSession != nil {
		ops[4].raw = func(ctx context.Context, i int) error {
			return raw.createSession(ctx, uniq("c", "R"), userID(pick(i)), time.Now().Add(time.Hour))
		}
	}
	if raw.deleteUser != nil {
		ops[5].raw = func(ctx context.Context, i int) error { return raw.deleteUser(ctx, v.get("raw", i)) }
	}
	if raw.listSessions != nil {
		ops[6].raw = func(ctx context.Context, i int) error {
			k := pickListed(i)
			return raw.listSessions(ctx, listedUserID(k), tokens[k])
		}
	}
	if raw.refresh != nil {
		ops[7].raw = func(ctx context.Context, i int) error {
			k := pickListed(i)
			return raw.refresh(ctx, listedToken(k, 1), listedUserID(k))
		}
	}
	return ops
}

// checkListed checks a listSessionsByUserId of user: the sessions with the
// tokens want, in that order (the tokens' byte order), the user's and
// unexpired.
func checkListed(user string, want []string, list []core.Session) error {
	now := time.Now()
	ok := len(list) == len(want)
	for j := 0; ok && j < len(list); j++ {
		ok = list[j].SessionToken == want[j] && list[j].UserID == user && !list[j].Expired(now)
	}
	if !ok {
		return fmt.Errorf("listSessionsByUserId(%s) = %+v, want the sessions %v", user, list, want)
	}
	return nil
}

// checkTokens checks a raw listing of user's sessions: n sessions, the
// token of the j-th tok(j), each one of want.
func checkTokens(user string, want []string, n int, tok func(j int) string) error {
	ok := n == len(want)
	for j := 0; ok && j < n; j++ {
		ok = slices.Contains(want, tok(j))
	}
	if !ok {
		return fmt.Errorf("the sessions of %s: %d, want %v", user, n, want)
	}
	return nil
}

// rotate is a refresh rotation of the session with the token through a,
// made as a refresh of module tokens makes it (Issuer.Refresh, through
// core/auth's Edge.RotateFamily): getSessionAndUser, then
// extendSession from the expiry read to the next, seen now. It checks that
// the session is user's and that the extension wrote.
func rotate(ctx context.Context, a fullAdapter, token, user string) error {
	su, err := a.GetSessionAndUser(ctx, token)
	if err != nil {
		return err
	}
	now := time.Now()
	if su == nil || su.User.ID != user || su.Session.Expired(now) {
		return fmt.Errorf("getSessionAndUser(%s) = %+v, want user %s", token, su, user)
	}
	from := core.NormalizeTime(su.Session.Expires)
	next := nextExpiry(from)
	s, wrote, err := a.ExtendSession(ctx, token, from, next, now)
	if err != nil {
		return err
	}
	if !wrote || s == nil || !s.Expires.Equal(next) {
		return fmt.Errorf("extendSession(%s, %v → %v) = %+v, %v: want it written", token, from, next, s, wrote)
	}
	return nil
}
