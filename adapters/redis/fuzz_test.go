package redisadapter

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/conformance/fuzzrecord"
	"github.com/authport/authport/core"
)

// Fuzz targets of the key escaping and the value encodings; they need no
// server. FuzzDecode (in adapter_test.go) feeds the decoders arbitrary
// bytes.

// FuzzEscape checks the key escaping: escape's output holds only safe bytes
// and %XX escapes (so never ':', '{', '}' or white space), unescape
// reverses it, so escape is injective, and every key built from escaped
// components parses back to its kind and components.
func FuzzEscape(f *testing.F) {
	f.Add("a", "b")
	f.Add("", "%")
	f.Add("user:{1}", "user%3A%7B1%7D")
	f.Add("a:b", "a%3Ab")
	f.Add("\x00\xff é", "@+-._")
	f.Add("%41", "A")
	f.Fuzz(func(t *testing.T, s, r string) {
		e := shared.Escape(s)
		for i := 0; i < len(e); i++ {
			switch c := e[i]; {
			case safeByte(c):
			case c == '%' && i+2 < len(e) && isUpperHex(e[i+1]) && isUpperHex(e[i+2]):
				i += 2
			default:
				t.Fatalf("shared.Escape(%q) = %q: byte %d (%q) is neither safe nor a %%XX escape", s, e, i, c)
			}
		}
		if got, err := shared.Unescape(e); err != nil || got != s {
			t.Fatalf("shared.Unescape(shared.Escape(%q)) = %q, %v", s, got, err)
		}
		if (shared.Escape(r) == e) != (r == s) {
			t.Fatalf("shared.Escape(%q) = shared.Escape(%q) = %q", s, r, e)
		}

		const p = "authport:"
		k := keys{p: p}
		for _, c := range []struct{ kind, key, tag string }{
			{"user", k.user(s), e},
			{"accounts", k.accounts(s), e},
			{"sessions", k.sessions(s), e},
			{"authenticators", k.authenticators(s), e},
			{"email", k.email(s), e},
			{"username", k.unique(fUsername, s), e},
			{"session", k.session(s), e},
			{"moving", k.moving(s), e},
			{"authenticator", k.authenticator(s), e},
			{"account", k.account(accountField(s, r)), accountField(s, r)},
			{"verification", k.verification(s, r), shared.Escape(s) + ":" + shared.Escape(r)},
		} {
			pk, ok := parseKey(p, c.key)
			if !ok || pk.kind != c.kind || pk.tag != c.tag {
				t.Fatalf("parseKey(%q) = %+v, %v; want kind %q, tag %q", c.key, pk, ok, c.kind, c.tag)
			}
			if strings.Count(c.key, "{") != 1 || strings.Count(c.key, "}") != 1 {
				t.Fatalf("key %q has more than one hash tag", c.key)
			}
		}
		if a, b, err := splitPair(accountField(s, r)); err != nil || a != s || b != r {
			t.Fatalf("splitPair(accountField(%q, %q)) = %q, %q, %v", s, r, a, b, err)
		}

		// Whatever unescape accepts, it decodes to something escape
		// encodes to the canonical form of the input.
		if u, err := shared.Unescape(r); err == nil {
			if again, err := shared.Unescape(shared.Escape(u)); err != nil || again != u {
				t.Fatalf("shared.Unescape(%q) = %q does not survive escape: %q, %v", r, u, again, err)
			}
		}
	})
}

// fuzzName maps the first bytes of b onto a username's characters (a
// valid name once b has three bytes).
func fuzzName(b []byte) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	n := make([]byte, min(len(b), core.MaxUsername))
	for i := range n {
		n[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(n)
}

// safeByte reports whether shared.Escape keeps c as it is.
func safeByte(c byte) bool { return len(shared.Escape(string([]byte{c}))) == 1 }

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

// FuzzCodecRoundTrip builds users, accounts and authenticators from fuzzed
// fields, normalised as the adapter stores them, and checks that what is
// written to Redis decodes to the same record, with null and empty kept
// apart. Users go through both decoders: the field/value list scripts see
// and the map HGETALL gives.
func FuzzCodecRoundTrip(f *testing.F) {
	for _, b := range fuzzrecord.Seeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		src := fuzzrecord.New(b)

		u := src.User().Normalize()
		// A username and a password hash from the same bytes: the
		// records of the new contract too (fuzzrecord makes neither).
		if n, err := core.NormalizeUsername(fuzzName(b)); err == nil {
			u.Username = n
		}
		if err := u.Validate(); err == nil && shared.CheckTime(core.MethodCreateUser, "emailVerified", u.EmailVerified) == nil {
			fields := userFields(&u)
			got, err := decodeUserPairs(fields)
			if err != nil || got == nil || !reflect.DeepEqual(*got, u) {
				t.Fatalf("user from its field/value list: %#v, %v\nwant %#v", got, err, u)
			}
			m := map[string]string{}
			for i := 0; i < len(fields); i += 2 {
				m[fields[i].(string)] = fields[i+1].(string)
			}
			got, err = decodeUserMap(m)
			if err != nil || got == nil || !reflect.DeepEqual(*got, u) {
				t.Fatalf("user from its hash: %#v, %v\nwant %#v", got, err, u)
			}
		}

		a := src.Account().Normalize()
		if len(b) > 0 && b[len(b)-1]&1 == 1 {
			h := string(b)
			a.PasswordHash = &h
		}
		enc := encodeAccount(&a)
		if got, err := decodeAccount(enc); err != nil || !reflect.DeepEqual(*got, a) {
			t.Fatalf("account round trip: %#v, %v\nwant %#v", got, err, a)
		}

		// A session's expiry is a sorted-set score (float64) and a
		// millisecond count; a verification token's is the latter. Every
		// time checkTime accepts survives both; every other is refused.
		for _, exp := range []time.Time{src.Session().Normalize().Expires, src.VerificationToken().Normalize().Expires} {
			err := shared.CheckTime(core.MethodCreateSession, "expires", &exp)
			ms := exp.UnixMilli()
			switch exact := shared.MsTime(ms).Equal(exp) && shared.MsTime(int64(float64(ms))).Equal(exp); {
			case err == nil && !exact:
				t.Fatalf("checkTime accepts %v, which is stored as %v", exp, shared.MsTime(int64(float64(ms))))
			case err != nil && exact && -shared.MaxMillis <= ms && ms <= shared.MaxMillis:
				t.Fatalf("checkTime refuses %v, which it could store: %v", exp, err)
			case err != nil && !errors.Is(err, core.ErrInvalidInput):
				t.Fatalf("shared.CheckTime(%v): %v, want an ErrInvalidInput", exp, err)
			}
		}

		au := src.Authenticator().Clone()
		enc = encodeAuthenticator(&au)
		if got, err := decodeAuthenticator(enc); err != nil || !reflect.DeepEqual(*got, au) {
			t.Fatalf("authenticator round trip: %#v, %v\nwant %#v", got, err, au)
		}
	})
}

// FuzzAdapterRoundTrip writes records built from fuzzed fields through the
// adapter into a real Redis server and reads them back (see
// fuzzrecord.RoundTrip), then checks that deleting the user left no key
// behind and the indexes consistent. It needs AUTHPORT_REDIS_URL and skips
// without one, unless AUTHPORT_REQUIRE names
// redis. Each fuzzing worker has its own key prefix.
func FuzzAdapterRoundTrip(f *testing.F) {
	for _, b := range fuzzrecord.Seeds() {
		f.Add(b)
	}
	c := singleNode(f)
	f.Cleanup(func() { _ = c.Close() })
	a, raw := fixture(f, c)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzrecord.RoundTrip(ctx, t, core.NewStore(a), b)
		left, err := raw.snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range left {
			if e.expire == -2 { // expired between SCAN and PEXPIRETIME
				continue
			}
			if e.pk.kind == "used" && e.expire > 0 {
				// A useVerificationToken receipt: it names no record
				// and expires a minute after the call.
				continue
			}
			t.Errorf("left behind: %s", e.key)
		}
		if err := raw.CheckConsistency(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzEscapeLua checks that enc, the Lua twin of escape that the scripts
// use to build key names, escapes every string exactly as escape does, on
// a real Redis server: if they differed, a script would build a key the Go
// code never reads. It needs AUTHPORT_REDIS_URL and
// skips without one, unless AUTHPORT_REQUIRE names redis.
func FuzzEscapeLua(f *testing.F) {
	for _, s := range []string{"", "a", "ada@example.com", "user:{1}", "%41", "\x00\xff é\n", "a.b_c+d-e@f", "[]^$()%*?"} {
		f.Add(s)
	}
	c := singleNode(f)
	f.Cleanup(func() { _ = c.Close() })
	script := luaHeader + "\nreturn enc(ARGV[2])"
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, s string) {
		got, err := c.Eval(ctx, script, nil, "p:", s).Text()
		if err != nil {
			t.Fatalf("enc(%q): %v", s, err)
		}
		if want := shared.Escape(s); got != want {
			t.Fatalf("Lua enc(%q) = %q, Go escape = %q", s, got, want)
		}
	})
}
