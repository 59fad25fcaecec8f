package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/quick"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// eachBackend runs f against a fresh adapter on a single node and on a
// cluster.
func eachBackend(t *testing.T, f func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView)) {
	for _, b := range []struct {
		name    string
		connect func(testing.TB) redis.UniversalClient
	}{{"redis", singleNode}, {"redis-cluster", cluster}} {
		t.Run(b.name, func(t *testing.T) {
			c := b.connect(t)
			t.Cleanup(func() { _ = c.Close() })
			a, raw := fixture(t, c)
			f(t, c, a, raw)
			if err := raw.CheckConsistency(context.Background()); err != nil {
				t.Errorf("inconsistent after the test: %v", err)
			}
		})
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	var nilClient *redis.Client
	for name, tc := range map[string]struct {
		c    redis.UniversalClient
		opts []Option
	}{
		"nil client":       {nil, nil},
		"typed nil client": {nilClient, nil},
		"open brace":       {c, []Option{WithPrefix("a{b:")}},
		"close brace":      {c, []Option{WithPrefix("a}b:")}},
		"zero claim TTL":   {c, []Option{WithClaimTTL(0)}},
	} {
		if a, err := New(context.Background(), tc.c, tc.opts...); !errors.Is(err, core.ErrInvalidInput) || a != nil {
			t.Errorf("%s: New = %v, %v; want nil and ErrInvalidInput", name, a, err)
		}
	}
	// New loads the scripts: an unreachable server is an error of its
	// own, not bad input.
	if a, err := New(context.Background(), c); err == nil || errors.Is(err, core.ErrInvalidInput) || a != nil ||
		!strings.HasPrefix(err.Error(), "redisadapter: ") {
		t.Errorf("New on an unreachable server = %v, %v; want nil and a redisadapter error", a, err)
	}
	a, err := New(context.Background(), singleNodeOrSkip(t), nil, WithClusterMode(true))
	if err != nil || a.Prefix() != DefaultPrefix || !a.ClusterMode() {
		t.Errorf("New with defaults = %+v, %v", a, err)
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"alice@example.com": "alice@example.com",
		"a:b{c}d e":         "a%3Ab%7Bc%7Dd%20e",
		"%":                 "%25",
		"\x00\xff":          "%00%FF",
	} {
		if got := shared.Escape(in); got != want {
			t.Errorf("shared.Escape(%q) = %q, want %q", in, got, want)
		}
		if back, err := shared.Unescape(want); err != nil || back != in {
			t.Errorf("shared.Unescape(%q) = %q, %v", want, back, err)
		}
	}
	for _, bad := range []string{"%", "%4", "%zz", "a%4g"} {
		if _, err := shared.Unescape(bad); err == nil {
			t.Errorf("shared.Unescape(%q) succeeded", bad)
		}
	}
	// Round trip, and nothing that could end a key component or a hash tag.
	if err := quick.Check(func(s string) bool {
		e := shared.Escape(s)
		back, err := shared.Unescape(e)
		return err == nil && back == s && !strings.ContainsAny(e, ":{} \t\r\n*?[]\\")
	}, nil); err != nil {
		t.Error(err)
	}
}

// TestKeysNeverCollide builds keys from values that contain the layout's
// own separators and checks that each parses back to exactly its kind and
// components, and that distinct records get distinct keys.
func TestKeysNeverCollide(t *testing.T) {
	k := keys{p: "p:"}
	nasty := []string{"a", "a:b", "a}b", "{a}", "}{", "a b", "user:{x}", "x}:accounts", "%41", "\x00\xff", ":", ""}
	seen := map[string]string{}
	add := func(kind, key, desc string) {
		if other, ok := seen[key]; ok {
			t.Errorf("%s and %s share key %q", desc, other, key)
		}
		seen[key] = desc
		pk, ok := parseKey(k.p, key)
		if !ok || pk.kind != kind || strings.Count(key, "{") != 1 || strings.Count(key, "}") != 1 {
			t.Errorf("%s: key %q parses as %+v, %v", desc, key, pk, ok)
		}
	}
	for _, x := range nasty {
		add("user", k.user(x), "user "+x)
		add("accounts", k.accounts(x), "accounts "+x)
		add("sessions", k.sessions(x), "sessions "+x)
		add("authenticators", k.authenticators(x), "authenticators "+x)
		add("email", k.email(x), "email "+x)
		add("username", k.unique(fUsername, x), "username "+x)
		add("session", k.session(x), "session "+x)
		add("moving", k.moving(x), "move marker "+x)
		add("authenticator", k.authenticator(x), "authenticator "+x)
		add("factors", k.factors(x), "factors "+x)
		add("factor", k.factor(x), "factor "+x)
		for _, y := range nasty {
			add("account", k.account(accountField(x, y)), fmt.Sprintf("account %q/%q", x, y))
			add("verification", k.verification(x, y), fmt.Sprintf("verification %q/%q", x, y))
			a, b, err := splitPair(strings.TrimSuffix(strings.TrimPrefix(k.verification(x, y), "p:verification:{"), "}"))
			if err != nil || a != x || b != y {
				t.Errorf("verification %q/%q splits to %q/%q, %v", x, y, a, b, err)
			}
		}
	}
	for _, bad := range []string{"p:user:{a}:other", "p:nope:{a}", "p:user:a", "q:user:{a}", "p:email:{a}x"} {
		if pk, ok := parseKey(k.p, bad); ok {
			t.Errorf("parseKey(%q) = %+v, want not of the layout", bad, pk)
		}
	}
}

// TestUserSlot checks on the cluster that all of a user's keys share one
// hash slot whatever braces the user id holds, and that the slot is the
// one of the escaped id, not of a brace-delimited part of it.
func TestUserSlot(t *testing.T) {
	c := cluster(t)
	defer c.Close()
	ctx := context.Background()
	k := keys{p: "p:"}
	slot := func(key string) int64 {
		n, err := c.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, uid := range []string{"{a}", "x{a}", "y{a}", "a}b{c", "}{", "plain"} {
		want := slot("{" + shared.Escape(uid) + "}")
		for _, key := range []string{k.user(uid), k.accounts(uid), k.sessions(uid), k.authenticators(uid), k.factors(uid)} {
			if got := slot(key); got != want {
				t.Errorf("user %q: key %q is in slot %d, want %d", uid, key, got, want)
			}
		}
	}
	if slot(k.user("x{a}")) == slot(k.user("y{a}")) && slot(k.user("x{a}")) == slot("a") {
		t.Error("a brace in the user id chose the slot")
	}
}

func TestCodecRoundTripAndCorruption(t *testing.T) {
	acc := core.Account{UserID: "u\xff", Provider: "p:{x}", Type: core.AccountTypeOIDC, ProviderAccountID: "",
		AccessToken: ptr(""), AuthorizationDetails: []core.AuthorizationDetail{{Type: "t", Locations: []string{}, Actions: nil}},
		ExpiresAt: ptr(int64(-5)), ExpiresIn: ptr(int64(0)), TokenType: ptr("bearer")}
	enc := encodeAccount(&acc)
	got, err := decodeAccount(enc)
	if err != nil || !reflect.DeepEqual(*got, acc) {
		t.Errorf("account round trip: %#v, %v", got, err)
	}
	au := core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", Counter: 1 << 62, CredentialBackedUp: true, UserID: "u", Transports: ptr("")}
	aenc := encodeAuthenticator(&au)
	gotAu, err := decodeAuthenticator(aenc)
	if err != nil || !reflect.DeepEqual(*gotAu, au) {
		t.Errorf("authenticator round trip: %#v, %v", gotAu, err)
	}
	// Every truncation and a few bit flips fail cleanly, never panic.
	for i := 0; i < len(enc); i++ {
		if _, err := decodeAccount(enc[:i]); err == nil {
			t.Errorf("truncated account (%d bytes) decoded", i)
		}
		flipped := []byte(enc)
		flipped[i] ^= 0xff
		_, _ = decodeAccount(string(flipped))
	}
	for i := 0; i < len(aenc); i++ {
		if _, err := decodeAuthenticator(aenc[:i]); err == nil {
			t.Errorf("truncated authenticator (%d bytes) decoded", i)
		}
	}
	for _, s := range []core.Session{{}, {CreatedAt: soon(-time.Hour), UpdatedAt: soon(0), IPAddress: "2001:db8::1", UserAgent: "ua \xff ü"}} {
		menc := encodeSessionMeta(&s)
		var got core.Session
		if err := decodeSessionMeta(menc, &got); err != nil || got != s {
			t.Errorf("session metadata round trip: %#v, %v; want %#v", got, err, s)
		}
		for i := 0; i < len(menc); i++ {
			if err := decodeSessionMeta(menc[:i], &got); err == nil {
				t.Errorf("truncated session metadata (%d bytes) decoded", i)
			}
		}
	}
	if u, err := decodeUserMap(map[string]string{fID: "x"}); err != nil || u == nil || u.Email != "" || u.Username != "" {
		t.Errorf("user without e-mail or username: %+v, %v", u, err)
	}
	if u, err := decodeUserMap(map[string]string{fID: "x", fUsername: "ada"}); err != nil || u == nil || u.Username != "ada" {
		t.Errorf("user with a username: %+v, %v", u, err)
	}
	if _, err := decodeUserMap(map[string]string{fEmail: "e"}); err == nil {
		t.Error("user without id decoded")
	}
	if _, err := decodeUserPairs([]any{fEmail, "e"}); err == nil {
		t.Error("user pairs without id decoded")
	}
	if _, err := decodeUserMap(map[string]string{fID: "x", fEmail: "e", fEmailVerified: "soon"}); err == nil {
		t.Error("user with a bad emailVerified decoded")
	}
}

func FuzzDecode(f *testing.F) {
	acc := core.Account{UserID: "u", Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "x",
		AuthorizationDetails: []core.AuthorizationDetail{{Type: "t", Locations: []string{"l"}}}}
	f.Add(encodeAccount(&acc))
	f.Add(encodeAuthenticator(&core.Authenticator{CredentialID: "c", Transports: ptr("usb")}))
	f.Add("\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")
	f.Add(encodeSessionMeta(&core.Session{UpdatedAt: time.UnixMilli(1).UTC(), CreatedAt: time.UnixMilli(2).UTC(), IPAddress: "ip", UserAgent: "ua"}))
	f.Add(encodeFactor(&core.Factor{ID: "f", UserID: "u", Type: core.FactorTOTP, Secret: []byte{0, 0xff}, Step: 1 << 40,
		CreatedAt: time.UnixMilli(1).UTC(), LastUsedAt: time.UnixMilli(2).UTC()}))
	f.Fuzz(func(t *testing.T, s string) {
		if fa, err := decodeFactor(s); err == nil {
			if again := encodeFactor(fa); again != s {
				t.Errorf("factor %q re-encodes as %q", s, again)
			}
		}
		if a, err := decodeAccount(s); err == nil {
			if again := encodeAccount(a); again != s {
				t.Errorf("account %q re-encodes as %q", s, again)
			}
		}
		_, _ = decodeAuthenticator(s)
		var meta core.Session
		if decodeSessionMeta(s, &meta) == nil {
			if again := encodeSessionMeta(&meta); again != s {
				t.Errorf("session metadata %q re-encodes as %q", s, again)
			}
		}
		_, _ = shared.Unescape(s)
		_, _ = parseKey("p:", s)
	})
}

// TestExpiryIsRedisJob checks that session keys, the sessions set and
// verification-token keys expire exactly at the record's expiry, that
// updateSession moves those expiries, and that a record past its expiry
// is never returned even while its keys are still there.
func TestExpiryIsRedisJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		expireTime := func(key string) int64 {
			t.Helper()
			n, err := c.Do(ctx, "pexpiretime", key).Int64()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		u := core.User{ID: "u", Email: "u@example.com"}
		must[any](t)(a.CreateUser(ctx, u))
		exp := core.NormalizeTime(time.Now().Add(time.Hour))
		must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: exp}))
		if got := expireTime(a.k.session("s")); got != exp.UnixMilli() {
			t.Errorf("session key expires at %d, want %d", got, exp.UnixMilli())
		}
		if got := expireTime(a.k.sessions("u")); got != exp.UnixMilli() {
			t.Errorf("sessions set expires at %d, want %d", got, exp.UnixMilli())
		}
		for _, d := range []time.Duration{3 * time.Hour, 30 * time.Minute} {
			exp = core.NormalizeTime(time.Now().Add(d))
			must[any](t)(a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", Expires: core.Set(exp)}))
			if got := expireTime(a.k.session("s")); got != exp.UnixMilli() {
				t.Errorf("after updateSession(+%v) the session key expires at %d, want %d", d, got, exp.UnixMilli())
			}
			if got := expireTime(a.k.sessions("u")); got != exp.UnixMilli() {
				t.Errorf("after updateSession(+%v) the sessions set expires at %d, want %d", d, got, exp.UnixMilli())
			}
		}
		vexp := core.NormalizeTime(time.Now().Add(time.Hour))
		must[any](t)(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: vexp}))
		if got := expireTime(a.k.verification("i", "t")); got != vexp.UnixMilli() {
			t.Errorf("verification key expires at %d, want %d", got, vexp.UnixMilli())
		}

		// Redis evicts a session at its expiry.
		must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "short", UserID: "u", Expires: time.Now().Add(100 * time.Millisecond)}))
		time.Sleep(250 * time.Millisecond)
		if n := c.Exists(ctx, a.k.session("short")).Val(); n != 0 {
			t.Error("an expired session key is still there")
		}
		if su, err := a.GetSessionAndUser(ctx, "short"); su != nil || err != nil {
			t.Errorf("getSessionAndUser of an evicted session = %v, %v", su, err)
		}

		// A session whose expiry has passed but whose key Redis has not
		// evicted (here: made permanent by hand) is never returned.
		must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "stale", UserID: "u", Expires: time.Now().Add(time.Hour)}))
		past := time.Now().Add(-time.Minute).UnixMilli()
		if err := c.ZAdd(ctx, a.k.sessions("u"), redis.Z{Score: float64(past), Member: "stale"}).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Persist(ctx, a.k.session("stale")).Err(); err != nil {
			t.Fatal(err)
		}
		if su, err := a.GetSessionAndUser(ctx, "stale"); su != nil || err != nil {
			t.Errorf("getSessionAndUser of an expired, unevicted session = %v, %v", su, err)
		}
		if s, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "stale", Expires: core.Set(time.Now().Add(time.Hour))}); s != nil || err != nil {
			t.Errorf("updateSession of an expired, unevicted session = %v, %v", s, err)
		}
		if s, err := a.DeleteSession(ctx, "stale"); s != nil || err != nil {
			t.Errorf("deleteSession of an expired, unevicted session = %v, %v", s, err)
		}
		if n := c.Exists(ctx, a.k.session("stale")).Val(); n != 0 {
			t.Error("deleteSession left the expired session's key")
		}

		// Likewise a verification token.
		if err := c.Set(ctx, a.k.verification("i", "old"), past, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "i", Token: "old"}); v != nil || err != nil {
			t.Errorf("useVerificationToken of an expired, unevicted token = %v, %v", v, err)
		}
	})
}

// TestRawViewDetects checks that the raw probes used by the conformance
// suite can fail: Mentions finds escaped and unescaped mentions, and
// CheckConsistency reports planted faults.
func TestRawViewDetects(t *testing.T) {
	c := singleNode(t)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	a, raw := fixture(t, c)
	u := core.User{ID: "id with space", Email: "odd{mail}@example.com"}
	must[any](t)(a.CreateUser(ctx, u))
	must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "tok", UserID: u.ID, Expires: time.Now().Add(time.Hour)}))
	must[any](t)(a.CreateFactor(ctx, testFactor("fac", u.ID)))
	for _, needle := range []string{u.ID, u.Email, "tok", "fac"} {
		found, err := raw.Mentions(ctx, needle)
		if err != nil || len(found) == 0 {
			t.Errorf("Mentions(%q) = %v, %v; want the keys that hold it", needle, found, err)
		}
	}
	if found, _ := raw.Mentions(ctx, "nowhere"); len(found) != 0 {
		t.Errorf("Mentions(nowhere) = %v", found)
	}
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Fatalf("consistent storage reported: %v", err)
	}
	for name, plant := range map[string]struct{ do, undo func() error }{
		"dangling e-mail key": {
			func() error { return c.Set(ctx, a.k.email("ghost@example.com"), "ghost", 0).Err() },
			func() error { return c.Del(ctx, a.k.email("ghost@example.com")).Err() },
		},
		"missing session key": {
			func() error { return c.Rename(ctx, a.k.session("tok"), a.k.p+"stash").Err() },
			func() error { return c.Rename(ctx, a.k.p+"stash", a.k.session("tok")).Err() },
		},
		"provisional e-mail key": {
			func() error { return c.Expire(ctx, a.k.email(u.Email), time.Hour).Err() },
			func() error { return c.Persist(ctx, a.k.email(u.Email)).Err() },
		},
		"metadata of no session": {
			func() error {
				return c.HSet(ctx, a.k.sessionMeta(u.ID), "ghost", encodeSessionMeta(&core.Session{})).Err()
			},
			func() error { return c.HDel(ctx, a.k.sessionMeta(u.ID), "ghost").Err() },
		},
		"session without metadata": {
			func() error { return c.HDel(ctx, a.k.sessionMeta(u.ID), "tok").Err() },
			func() error {
				return c.HSet(ctx, a.k.sessionMeta(u.ID), "tok", encodeSessionMeta(&core.Session{})).Err()
			},
		},
		"metadata outliving its sessions set": {
			func() error { return c.Persist(ctx, a.k.sessionMeta(u.ID)).Err() },
			func() error {
				at, err := c.PExpireTime(ctx, a.k.sessions(u.ID)).Result()
				if err != nil {
					return err
				}
				return c.PExpireAt(ctx, a.k.sessionMeta(u.ID), time.UnixMilli(at.Milliseconds())).Err()
			},
		},
		"factor without its index key": {
			func() error { return c.Del(ctx, a.k.factor("fac")).Err() },
			func() error { return c.Set(ctx, a.k.factor("fac"), shared.Escape(u.ID), 0).Err() },
		},
		"factor index key of no factor": {
			func() error { return c.Set(ctx, a.k.factor("ghost"), shared.Escape(u.ID), 0).Err() },
			func() error { return c.Del(ctx, a.k.factor("ghost")).Err() },
		},
		"factor record under another id": {
			func() error {
				f := testFactor("other", u.ID)
				return c.HSet(ctx, a.k.factors(u.ID), "fac", encodeFactor(&f)).Err()
			},
			func() error {
				f := testFactor("fac", u.ID)
				return c.HSet(ctx, a.k.factors(u.ID), "fac", encodeFactor(&f)).Err()
			},
		},
		"session key TTL not moved": {
			func() error { return c.Expire(ctx, a.k.session("tok"), 2*time.Hour).Err() },
			func() error {
				return c.ZAdd(ctx, a.k.sessions(u.ID), redis.Z{Score: float64(time.Now().Add(2 * time.Hour).UnixMilli()), Member: "tok"}).Err()
			},
		},
	} {
		if err := plant.do(); err != nil {
			t.Fatal(err)
		}
		if err := raw.CheckConsistency(ctx); err == nil {
			t.Errorf("%s: CheckConsistency found nothing", name)
		}
		if err := plant.undo(); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Expire(ctx, a.k.session("tok"), time.Hour) // leave it consistent
	must[any](t)(a.DeleteUser(ctx, u.ID))
	if err := raw.CheckConsistency(ctx); err != nil {
		t.Errorf("after deleteUser: %v", err)
	}
}

// TestRaces runs writes that touch the same index keys concurrently and
// checks the outcome and the consistency of what is stored. On a cluster
// these are the multi-step protocols of README.md.
func TestRaces(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		ctx := context.Background()
		const n = 8
		run := func(f func(i int) error) []error {
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = f(i) }()
			}
			wg.Wait()
			return errs
		}
		wins := func(what string, errs []error) {
			t.Helper()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, core.ErrAlreadyExists):
					t.Errorf("%s: unexpected error %v", what, err)
				}
			}
			if ok != 1 {
				t.Errorf("%s: %d calls succeeded, want exactly 1", what, ok)
			}
		}
		for i := range n {
			must[any](t)(a.CreateUser(ctx, core.User{ID: fmt.Sprint("u", i), Email: fmt.Sprint("u", i, "@x")}))
		}
		wins("updateUser to one e-mail", run(func(i int) error {
			_, err := a.UpdateUser(ctx, core.UserUpdate{ID: fmt.Sprint("u", i), Email: core.Set("taken@x")})
			return err
		}))
		wins("linkAccount of one account", run(func(i int) error {
			_, err := a.LinkAccount(ctx, core.Account{UserID: fmt.Sprint("u", i), Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "one"})
			return err
		}))
		wins("createAuthenticator of one credential", run(func(i int) error {
			_, err := a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "one", CredentialPublicKey: "k", UserID: fmt.Sprint("u", i), ProviderAccountID: "p"})
			return err
		}))
		wins("createSession of one token", run(func(i int) error {
			_, err := a.CreateSession(ctx, core.Session{SessionToken: "one", UserID: fmt.Sprint("u", i), Expires: time.Now().Add(time.Hour)})
			return err
		}))
		if err := raw.CheckConsistency(ctx); err != nil {
			t.Fatalf("after the uniqueness races: %v", err)
		}

		// One user's e-mail changed back and forth concurrently: the index
		// ends up with exactly the user's final e-mail.
		for round := range 5 {
			run(func(i int) error {
				_, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u2", Email: core.Set(fmt.Sprint("flip", (i+round)%2, "@x"))})
				return err
			})
			u, err := a.GetUser(ctx, "u2")
			if err != nil || u == nil {
				t.Fatalf("getUser after e-mail flips: %v, %v", u, err)
			}
			if got, err := a.GetUserByEmail(ctx, u.Email); err != nil || got == nil || got.ID != "u2" {
				t.Errorf("after e-mail flips the user has %q but getUserByEmail finds %v, %v", u.Email, got, err)
			}
			if err := raw.CheckConsistency(ctx); err != nil {
				t.Fatalf("after e-mail flips: %v", err)
			}
		}

		// deleteUser against writes for the same user: each write either
		// lands before the delete (and is deleted with the user) or fails
		// with ErrNotFound; nothing of the user survives.
		for round := range 5 {
			uid := fmt.Sprint("victim", round)
			must[any](t)(a.CreateUser(ctx, core.User{ID: uid, Email: uid + "@x"}))
			errs := run(func(i int) error {
				var err error
				switch i % 4 {
				case 0:
					_, err = a.DeleteUser(ctx, uid)
				case 1:
					_, err = a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprint(uid, "s", i), UserID: uid, Expires: time.Now().Add(time.Hour)})
				case 2:
					_, err = a.LinkAccount(ctx, core.Account{UserID: uid, Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: fmt.Sprint(uid, "a", i)})
				case 3:
					_, err = a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: fmt.Sprint(uid, "c", i), CredentialPublicKey: "k", UserID: uid, ProviderAccountID: "p"})
				}
				return err
			})
			for _, err := range errs {
				if err != nil && !errors.Is(err, core.ErrNotFound) {
					t.Errorf("write racing deleteUser: %v", err)
				}
			}
			if found, err := raw.Mentions(ctx, uid); err != nil || len(found) != 0 {
				t.Errorf("after deleteUser(%s) raced with writes: %v, %v", uid, found, err)
			}
			if err := raw.CheckConsistency(ctx); err != nil {
				t.Fatalf("after deleteUser raced with writes: %v", err)
			}
		}

		// Moving one session between users while it is deleted: whatever
		// the interleaving, at most one copy remains and nothing dangles.
		// (On a single node the session is always gone; on a cluster a move
		// that deleted it first recreates it, see README.md.)
		for round := range 10 {
			tok := fmt.Sprint("mv", round)
			must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u1", Expires: time.Now().Add(time.Hour)}))
			for _, err := range run(func(i int) error {
				if i == 0 {
					_, err := a.DeleteSession(ctx, tok)
					return err
				}
				_, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: tok, UserID: core.Set(fmt.Sprint("u", i)),
					Expires: core.Set(time.Now().Add(time.Duration(i) * time.Hour))})
				return err
			}) {
				if err != nil {
					t.Errorf("racing deleteSession and updateSession: %v", err)
				}
			}
			su, err := a.GetSessionAndUser(ctx, tok)
			if err != nil || (su != nil && !a.ClusterMode()) {
				t.Errorf("session survived deleteSession: %v, %v", su, err)
			}
			copies := 0
			ss, err := raw.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ss {
				if s.SessionToken == tok {
					copies++
				}
			}
			if copies > 1 || (copies == 1) != (su != nil) {
				t.Errorf("%d stored copies of the session, lookup %v", copies, su)
			}
			if err := raw.CheckConsistency(ctx); err != nil {
				t.Fatalf("after deleteSession raced with moves: %v", err)
			}
		}
	})
}

// TestExtendSession checks extendSession's single write under concurrent
// callers (redistest.ExtendSession) and that the session key and the
// user's sessions set then expire at the new expiry.
func TestExtendSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, c redis.UniversalClient, a *Adapter, raw rawView) {
		redistest.ExtendSession(t, a)
		ctx := context.Background()
		su, err := a.GetSessionAndUser(ctx, "tok")
		if err != nil || su == nil {
			t.Fatalf("getSessionAndUser = %v, %v", su, err)
		}
		want := su.Session.Expires.UnixMilli()
		for _, key := range []string{a.k.session("tok"), a.k.sessions(su.User.ID)} {
			if got, err := c.PExpireTime(ctx, key).Result(); err != nil || got.Milliseconds() != want {
				t.Errorf("%s expires at %v (%v); want %d", key, got.Milliseconds(), err, want)
			}
		}
	})
}
