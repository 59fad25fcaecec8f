package unstorage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/conformance"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// uniqueBase returns an unstorage base no other test run uses, and the
// key prefix it gives.
func uniqueBase(t testing.TB) (string, string) {
	base := redistest.UniqueName(t, "authport-test:")
	return base, base + ":"
}

// unstorageFixture returns an adapter on a fresh base whose keys are
// deleted when t ends.
func unstorageFixture(t testing.TB, c redis.UniversalClient) (*Adapter, rawUView) {
	t.Helper()
	base, prefix := uniqueBase(t)
	a, err := New(context.Background(), c, base)
	if err != nil {
		t.Fatal(err)
	}
	if a.Prefix() != prefix {
		t.Fatalf("Prefix() = %q, want %q", a.Prefix(), prefix)
	}
	redistest.CleanupPrefix(t, c, prefix)
	return a, newRawUView(c, prefix)
}

func TestConformance(t *testing.T) {
	redistest.Conformance(t, "-unstorage", redistest.Backends(false), func(t testing.TB, b *redistest.Backend) (any, conformance.Raw, string) {
		a, raw := unstorageFixture(t, b.Get(t))
		return a, raw, raw.Prefix
	}, func(c redis.UniversalClient, prefix string) (any, error) {
		return New(context.Background(), c, strings.TrimSuffix(prefix, ":"))
	})
}

func TestNewRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	if _, err := New(ctx, cc, "app"); !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), "CROSSSLOT") ||
		!strings.HasPrefix(err.Error(), "unstorage: ") {
		t.Errorf("New(cluster client) = %v, want ErrInvalidInput naming CROSSSLOT", err)
	}
	var nilClient *redis.Client
	if _, err := New(ctx, nilClient, "app"); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("New(nil client) = %v, want ErrInvalidInput", err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	if _, err := New(ctx, c, "app", WithReplicaAck(1, -time.Second)); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("negative replica-ack timeout: %v, want ErrInvalidInput", err)
	}
	if a, err := New(ctx, c, "app"); err == nil || errors.Is(err, core.ErrInvalidInput) || a != nil {
		t.Errorf("New on an unreachable server = %v, %v; want nil and the connection's error", a, err)
	}
}

// TestUseVerificationTokenLostReply: see redistest.LostTokenReply.
func TestUseVerificationTokenLostReply(t *testing.T) {
	drop := &redistest.ConnDropper{}
	opt, err := redis.ParseURL(provision.Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	opt.Dialer = drop.Dial
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	a, raw := unstorageFixture(t, c)
	redistest.LostTokenReply(t, drop, a, raw)
}

func TestUnstorageKeyNormalization(t *testing.T) {
	// Expected values as unstorage 1.17's normalizeKey and its Redis
	// driver's base handling compute them.
	for _, c := range []struct {
		name  string
		f     func(string) string
		cases map[string]string
	}{{"unstorageKey", unstorageKey, map[string]string{
		"user:abc":             "user:abc",
		"user:email:a/b@x":     "user:email:a:b@x",
		`user:email:a\b@x`:     "user:email:a:b@x",
		"user:email:a::b@x":    "user:email:a:b@x",
		"user:email:a?b@x":     "user:email:a",
		"user:token:x@y:":      "user:token:x@y",
		"user:session:/t":      "user:session:t",
		"user:account:gh:1234": "user:account:gh:1234",
	}}, {"unstorageBase", unstorageBase, map[string]string{"": "", "app": "app:", "app:": "app:", "/a/b/": "a:b:", ":": ""}}} {
		for in, want := range c.cases {
			if got := c.f(in); got != want {
				t.Errorf("%s(%q) = %q, want %q", c.name, in, got, want)
			}
		}
	}
}

// rawUView reads the unstorage layout's keys straight from Redis, telling
// the records apart by their JSON fields. It implements conformance.Raw,
// conformance.Mentioner and conformance.RawWriter.
type rawUView struct{ redistest.View }

// newRawUView returns the raw view of the keys under prefix.
func newRawUView(c redis.UniversalClient, prefix string) rawUView {
	return rawUView{redistest.NewView(c, prefix, func(v redistest.View) redistest.ReadRecords {
		return redistest.ReadEach(rawUView{v}.values, addDoc)
	})}
}

var (
	_ conformance.Mentioner      = rawUView{}
	_ conformance.FactorRaw      = rawUView{}
	_ conformance.RawWriter      = rawUView{}
	_ conformance.UserDataWriter = rawUView{}
)

// WriteAccount stores the account as @auth/unstorage-adapter's linkAccount
// does: the document and the by-user-id key, with plain SETs.
func (r rawUView) WriteAccount(ctx context.Context, acc core.Account) error {
	k := ukeys{base: r.Prefix}
	doc, err := encodeUAccount(&acc)
	if err != nil {
		return err
	}
	logical := k.accountLogical(acc.Provider, acc.ProviderAccountID)
	if err := r.C.Set(ctx, k.redis(logical), doc, 0).Err(); err != nil {
		return err
	}
	return r.C.Set(ctx, k.accountByUser(acc.UserID), logical, 0).Err()
}

// WriteUserData sets top-level fields of a stored user document as
// another application sharing the keys would: read, set, write back.
func (r rawUView) WriteUserData(ctx context.Context, userID string, data map[string]json.RawMessage) error {
	k := ukeys{base: r.Prefix}.user(userID)
	raw, err := r.C.Get(ctx, k).Result()
	if err != nil {
		return err
	}
	doc, ok := object(raw)
	if !ok {
		return fmt.Errorf("user %q: not a JSON object: %q", userID, raw)
	}
	for name, v := range data {
		doc[name] = v
	}
	s, err := marshalJSON(doc)
	if err != nil {
		return err
	}
	return r.C.Set(ctx, k, s, 0).Err()
}

// values returns every key under the prefix with its value (a set's
// members joined by newlines): a SCAN, then two pipelines.
func (r rawUView) values(ctx context.Context) (iter.Seq2[string, string], error) {
	ks, err := redistest.ScanKeys(ctx, r.C, r.Prefix)
	if err != nil {
		return nil, err
	}
	types := make([]*redis.StatusCmd, len(ks))
	if _, err := r.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range ks {
			types[i] = p.Type(ctx, k)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	gets := make([]*redis.StringCmd, len(ks))
	sets := make([]*redis.StringSliceCmd, len(ks))
	if _, err := r.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range ks {
			if types[i].Val() == "set" {
				sets[i] = p.SMembers(ctx, k)
			} else {
				gets[i] = p.Get(ctx, k)
			}
		}
		return nil
	}); err != nil && !shared.IsNil(err) {
		return nil, err
	}
	out := map[string]string{}
	for i, k := range ks {
		if sets[i] != nil {
			out[k] = strings.Join(sets[i].Val(), "\n")
			continue
		}
		v, err := gets[i].Result()
		if shared.IsNil(err) {
			continue // expired meanwhile
		}
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return maps.All(out), nil
}

// addDoc files the record of one key into rs (see newRawUView), telling
// the records apart by their JSON fields.
func addDoc(rs *conformance.Records, k, v string) error {
	m, ok := object(v)
	if !ok {
		return nil // an index key
	}
	has := func(f string) bool { _, ok := m[f]; return ok }
	str := func(f string) string { s, _ := stringField(m, f); return s }
	var err error
	switch {
	case has("factorType"):
		// A factor: read by Factors.
	case has("credentialID"):
		err = redistest.Append(&rs.Authenticators)(decodeUAuth(v, str("credentialID")))
	case has("sessionToken"):
		err = redistest.Append(&rs.Sessions)(decodeUSession(v, str("sessionToken")))
	case has("identifier"):
		err = redistest.Append(&rs.VerificationTokens)(decodeUToken(v))
	case has("provider"):
		err = redistest.Append(&rs.Accounts)(decodeUAccount(v, str("provider"), str("providerAccountId")))
	default:
		err = redistest.Append(&rs.Users)(decodeUUser(v, str("id")))
	}
	if err != nil {
		return errors.Join(errors.New(k), err)
	}
	return nil
}

// Factors returns every stored factor: the documents at the factor keys
// (conformance.FactorRaw).
func (r rawUView) Factors(ctx context.Context) ([]core.Factor, error) {
	vals, err := r.values(ctx)
	if err != nil {
		return nil, err
	}
	k := ukeys{base: r.Prefix}
	out := []core.Factor{}
	for key, v := range vals {
		if !strings.HasPrefix(key, k.base+uOwnFactor) {
			continue
		}
		m, _ := object(v)
		id, _ := stringField(m, "id")
		f, err := decodeUFactor(v, id)
		if err != nil || f == nil || k.factor(id) != key {
			return nil, fmt.Errorf("%s: not a factor document: %v", key, err)
		}
		out = append(out, *f)
	}
	return out, nil
}

// Mentions returns the keys whose name (after the prefix) or value holds s.
func (r rawUView) Mentions(ctx context.Context, s string) ([]string, error) {
	vals, err := r.values(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for k, v := range vals {
		if strings.Contains(strings.TrimPrefix(k, r.Prefix), s) || strings.Contains(v, s) {
			out = append(out, k)
		}
	}
	return out, nil
}

// FuzzUnstorageDecode feeds the unstorage layout's decoders and key
// normalization arbitrary input: they never panic, a record read back is
// the one asked for, and normalization is idempotent and yields no empty
// segment, no leading or trailing ':' and no '/', '\' or '?'.
func FuzzUnstorageDecode(f *testing.F) {
	f.Add(`{"id":"u","email":"a@b","emailVerified":"2024-01-02T03:04:05.678Z","name":null}`, "u")
	f.Add(`{"provider":"p","providerAccountId":"u","userId":"x","type":"oauth","expires_at":1.5}`, "u")
	f.Add(`{"sessionToken":"u","userId":"x","expires":"2024-01-02T03:04Z"}`, "u")
	f.Add(`{"sessionToken":"u","userId":"x","expires":"2024-01-02T03:04:05.000Z","createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"","ipAddress":"::1","userAgent":7}`, "u")
	f.Add(`{"credentialID":"u","counter":-1}`, "u")
	f.Add(`{"id":"u","email":null,"username":"ada","emailVerified":null}`, "u")
	f.Add(`{"id":"u","username":7}`, "u")
	f.Add(`{"provider":"p","providerAccountId":"u","userId":"x","type":"credentials","password":"$argon2id$v=19$m=1,t=1,p=1$c2FsdA$aGFzaA"}`, "u")
	f.Add(`{"provider":"p","providerAccountId":"u","userId":"x","type":"credentials","password":null}`, "u")
	f.Add(`{"identifier":"i","token":"t","expires":"+012345-01-01T00:00:00.000Z"}`, "a//b::c?d")
	f.Add(`{"id":"u","userId":"x","factorType":"totp","name":"","secret":"AP8=","step":9007199254740993,"createdAt":"2024-01-02T03:04:05.678Z"}`, "u")
	f.Fuzz(func(t *testing.T, doc, id string) {
		if fa, err := decodeUFactor(doc, id); err == nil && fa != nil {
			// What decodes re-encodes and decodes to the same factor.
			enc, err := encodeUFactor(fa)
			if err != nil {
				t.Fatalf("encodeUFactor(%+v): %v", fa, err)
			}
			if again, err := decodeUFactor(enc, id); err != nil || again == nil || !reflect.DeepEqual(again, fa) || fa.ID != id {
				t.Fatalf("factor %+v re-encodes as %s, which decodes as %+v, %v", fa, enc, again, err)
			}
		}
		if u, err := decodeUUser(doc, id); err == nil && u != nil && u.ID != id {
			t.Fatalf("decodeUUser returned user %q for %q", u.ID, id)
		} else if err == nil && u != nil {
			// What decodes re-encodes and decodes to the same user.
			enc, err := encodeUUser(u)
			if err != nil {
				t.Fatalf("encodeUUser(%+v): %v", u, err)
			}
			// (Application fields come back compacted: compare the rest.)
			again, err := decodeUUser(enc, id)
			if err == nil && again != nil {
				again.Data, u.Data = nil, nil
			}
			if err != nil || again == nil || !reflect.DeepEqual(again, u) {
				t.Fatalf("user %+v re-encodes as %s, which decodes as %+v, %v", u, enc, again, err)
			}
		}
		if a, err := decodeUAccount(doc, "p", id); err == nil && a != nil && (a.Provider != "p" || a.ProviderAccountID != id) {
			t.Fatalf("decodeUAccount returned %+v", a)
		} else if err == nil && a != nil && a.PasswordHash != nil {
			// The password hash survives a re-encoding.
			enc, err := encodeUAccount(a)
			if err != nil {
				t.Fatalf("encodeUAccount(%+v): %v", a, err)
			}
			if again, err := decodeUAccount(enc, "p", id); err != nil || again == nil || again.PasswordHash == nil || *again.PasswordHash != *a.PasswordHash {
				t.Fatalf("account %+v re-encodes as %s, which decodes as %+v, %v", a, enc, again, err)
			}
		}
		if s, err := decodeUSession(doc, id); err == nil && s != nil && s.SessionToken != id {
			t.Fatalf("decodeUSession returned %+v", s)
		} else if err == nil && s != nil {
			// What decodes re-encodes and decodes to the same session.
			enc, err := encodeUSession(s)
			if err != nil {
				t.Fatalf("encodeUSession(%+v): %v", s, err)
			}
			if again, err := decodeUSession(enc, id); err != nil || again == nil || *again != *s {
				t.Fatalf("session %+v re-encodes as %s, which decodes as %+v, %v", s, enc, again, err)
			}
		}
		if a, err := decodeUAuth(doc, id); err == nil && a != nil && (a.CredentialID != id || a.Counter < 0) {
			t.Fatalf("decodeUAuth returned %+v", a)
		}
		_, _ = decodeUToken(doc)
		_ = credList(doc)
		n := unstorageKey(id)
		if unstorageKey(n) != n || strings.ContainsAny(n, `/\?`) || strings.Contains(n, "::") ||
			strings.HasPrefix(n, ":") || strings.HasSuffix(n, ":") {
			t.Fatalf("unstorageKey(%q) = %q", id, n)
		}
		_ = unstorageBase(id)
		_ = checkKey(core.MethodCreateUser, "id", uUser, uUser+id)
	})
}

// TestExtendSession checks extendSession's single write under concurrent
// callers (redistest.ExtendSession), and that the stored document stays
// in unstorage's format with the new expiry and, beside it, the time seen
// (updatedAt).
func TestExtendSession(t *testing.T) {
	c := redistest.SingleNode(t)
	t.Cleanup(func() { _ = c.Close() })
	a, _ := unstorageFixture(t, c)
	redistest.ExtendSession(t, a)
	ctx := context.Background()
	su, err := a.GetSessionAndUser(ctx, "tok")
	if err != nil || su == nil {
		t.Fatalf("getSessionAndUser = %v, %v", su, err)
	}
	doc, err := c.Get(ctx, a.k.session("tok")).Result()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatalf("stored session %s: %v", doc, err)
	}
	if su.Session.UpdatedAt.IsZero() {
		t.Errorf("getSessionAndUser after the extensions: no updatedAt (%+v)", su.Session)
	}
	want := map[string]any{"sessionToken": "tok", "userId": "extender", "expires": su.Session.Expires.Format(isoLayout),
		"updatedAt": su.Session.UpdatedAt.Format(isoLayout)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored session %s; want the fields %v", doc, want)
	}
	if got, err := c.PExpireTime(ctx, a.k.session("tok")).Result(); err != nil || got.Milliseconds() != su.Session.Expires.UnixMilli() {
		t.Errorf("the session key expires at %v (%v); want %v", got, err, su.Session.Expires.UnixMilli())
	}
}

// TestFactorDocument: a factor is stored as the README says: its JSON
// document at authport:factor:<id> with the secret in standard base64,
// its key in the user's authport:factors-by-user:<id> set; deleteUser
// removes both.
func TestFactorDocument(t *testing.T) {
	c := redistest.SingleNode(t)
	t.Cleanup(func() { _ = c.Close() })
	a, raw := unstorageFixture(t, c)
	ctx := context.Background()
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	f := core.Factor{ID: "f:1/x", UserID: "u", Type: core.FactorTOTP, Name: "Phone", Secret: []byte{0, 0xff, 'k'}, Step: 1<<53 + 1,
		CreatedAt: time.UnixMilli(1_700_000_000_123).UTC()}
	if _, err := a.CreateFactor(ctx, f); err != nil {
		t.Fatal(err)
	}
	key := raw.Prefix + "authport:factor:f%3A1%2Fx"
	doc, err := c.Get(ctx, key).Result()
	want := `{"id":"f:1/x","userId":"u","factorType":"totp","name":"Phone","secret":"AP9r","step":9007199254740993,"createdAt":"2023-11-14T22:13:20.123Z"}`
	if err != nil || doc != want {
		t.Errorf("document = %s, %v; want %s", doc, err, want)
	}
	if m, err := c.SMembers(ctx, raw.Prefix+"authport:factors-by-user:u").Result(); err != nil || len(m) != 1 || m[0] != key {
		t.Errorf("the user's factor set = %q, %v", m, err)
	}
	if got, err := a.ListFactorsByUserID(ctx, "u"); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], f) {
		t.Errorf("list = %+v, %v", got, err)
	}
	if _, err := a.DeleteUser(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	if left, err := raw.Mentions(ctx, "u"); err != nil || len(left) > 0 {
		t.Errorf("after deleteUser: %v still mention u (%v)", left, err)
	}
	if n, err := c.Exists(ctx, key).Result(); err != nil || n != 0 {
		t.Errorf("factor document left after deleteUser: %d, %v", n, err)
	}
}
