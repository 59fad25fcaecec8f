package betterauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

// conformanceGroups are the rule groups the layout serves: sessions,
// verification tokens, and the user writes that reach the sessions. The
// other groups test the primary adapter (the memory adapter here), which
// runs them in its own module.
var conformanceGroups = []string{
	"createSession", "getSessionAndUser", "updateSession", "deleteSession",
	"extendSession", "sessionLifetime", "listSessionsByUserId", "deleteSessionsByUserId", "sessionMetadata",
	"createVerificationToken", "useVerificationToken", "emailSignIn",
	"createUser", "updateUser", "deleteUser", "deleteUserRace",
}

// fixture returns an adapter on a fresh prefix (with a hash tag, so that
// it runs on Redis Cluster too) over a fresh memory adapter, its raw view,
// and the function that opens a second adapter on the same keys and
// primary through a client of its own.
func fixture(t testing.TB, b *redistest.Backend) (*Adapter, rawView, func(t testing.TB) any) {
	t.Helper()
	c := b.Get(t)
	prefix := "{" + redistest.UniqueName(t, "authport-test-ba:") + "}:"
	primary := memory.New()
	a, err := New(context.Background(), c, prefix, primary)
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupPrefix(t, c, prefix)
	peer := func(t testing.TB) any {
		pc := b.Connect(t)
		t.Cleanup(func() { _ = pc.Close() })
		p, err := New(context.Background(), pc, prefix, primary)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return a, rawView{c: c, prefix: prefix, primary: primary}, peer
}

func TestConformance(t *testing.T) {
	for _, b := range redistest.Backends(true) {
		conformance.Run(t, conformance.Harness{
			Name:   b.Name + "-betterauth",
			Groups: conformanceGroups,
			New: func(t testing.TB) conformance.Fixture {
				a, raw, peer := fixture(t, b)
				return conformance.Fixture{Adapter: a, Raw: raw, Peer: peer}
			},
		})
		b.Close()
	}
}

// rawView reads the layout's keys straight from Redis and the primary's
// records from the memory adapter's snapshot. It implements
// conformance.Raw, conformance.RecordsReader, conformance.Mentioner and
// conformance.ConsistencyChecker.
type rawView struct {
	c       redis.UniversalClient
	prefix  string
	primary *memory.Adapter
}

var (
	_ conformance.RecordsReader      = rawView{}
	_ conformance.Mentioner          = rawView{}
	_ conformance.ConsistencyChecker = rawView{}
)

// values returns every key under the prefix (without it) and its value.
func (r rawView) values(ctx context.Context) (map[string]string, error) {
	ks, err := redistest.ScanKeys(ctx, r.c, r.prefix)
	if err != nil || len(ks) == 0 {
		return map[string]string{}, err
	}
	out := make(map[string]string, len(ks))
	for _, k := range ks {
		v, err := r.c.Get(ctx, k).Result()
		if errors.Is(err, redis.Nil) {
			continue // evicted since the scan
		}
		if err != nil {
			return nil, err
		}
		out[strings.TrimPrefix(k, r.prefix)] = v
	}
	return out, nil
}

func (r rawView) Records(ctx context.Context) (conformance.Records, error) {
	snap := r.primary.Snapshot()
	rs := conformance.Records{Users: snap.Users, Accounts: snap.Accounts, Authenticators: snap.Authenticators}
	if len(snap.Sessions)+len(snap.VerificationTokens) > 0 {
		return rs, fmt.Errorf("the primary holds %d sessions and %d tokens; the layout keeps them in Redis", len(snap.Sessions), len(snap.VerificationTokens))
	}
	vals, err := r.values(ctx)
	if err != nil {
		return rs, err
	}
	for k, v := range vals {
		switch {
		case strings.HasPrefix(k, kList), strings.HasPrefix(k, kRevoked):
		case strings.HasPrefix(k, kVerification):
			tok, err := decodeVerification(v)
			if err != nil {
				return rs, fmt.Errorf("%s: %w", k, err)
			}
			if "verification:"+tok.Identifier != k {
				return rs, fmt.Errorf("%s holds the identifier %q", k, tok.Identifier)
			}
			rs.VerificationTokens = append(rs.VerificationTokens, *tok)
		default:
			s, err := decodeSession(v, k)
			if err != nil {
				return rs, fmt.Errorf("%s: %w", k, err)
			}
			rs.Sessions = append(rs.Sessions, *s)
		}
	}
	return rs, nil
}

func (r rawView) Users(ctx context.Context) ([]core.User, error) {
	rs, err := r.Records(ctx)
	return rs.Users, err
}

func (r rawView) Accounts(ctx context.Context) ([]core.Account, error) {
	rs, err := r.Records(ctx)
	return rs.Accounts, err
}

func (r rawView) Sessions(ctx context.Context) ([]core.Session, error) {
	rs, err := r.Records(ctx)
	return rs.Sessions, err
}

func (r rawView) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	rs, err := r.Records(ctx)
	return rs.VerificationTokens, err
}

func (r rawView) Authenticators(ctx context.Context) ([]core.Authenticator, error) {
	rs, err := r.Records(ctx)
	return rs.Authenticators, err
}

// Mentions lists the keys under the prefix whose name or value contains
// s, and the primary's records that do. A user's
// revoked-sessions-before-<userId> key is not listed: deleteUser writes it
// on purpose, as Better Auth does, to end any session of the user a racing
// sign-in wrote, and it expires by itself.
func (r rawView) Mentions(ctx context.Context, s string) ([]string, error) {
	vals, err := r.values(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for k, v := range vals {
		if strings.HasPrefix(k, kRevoked) {
			continue
		}
		if strings.Contains(k, s) || strings.Contains(v, s) {
			out = append(out, "redis key "+r.prefix+k)
		}
	}
	b, err := json.Marshal(r.primary.Snapshot())
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(b), s) {
		out = append(out, "a record of the primary (memory) adapter")
	}
	return out, nil
}

// CheckConsistency checks the lists against the sessions: every unexpired
// session is in its user's list, and every unexpired list entry names an
// unexpired session of that user.
func (r rawView) CheckConsistency(ctx context.Context) error {
	vals, err := r.values(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	var errs []error
	for k, v := range vals {
		switch {
		case strings.HasPrefix(k, kList):
			uid := strings.TrimPrefix(k, kList)
			var l []listEntry
			if err := json.Unmarshal([]byte(v), &l); err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", k, err))
				continue
			}
			if !slices.IsSortedFunc(l, func(x, y listEntry) int { return int(x.ExpiresAt - y.ExpiresAt) }) {
				errs = append(errs, fmt.Errorf("%s is not sorted by expiry: %s", k, v))
			}
			for _, e := range l {
				if time.UnixMilli(int64(e.ExpiresAt)).Before(now.Add(-time.Second)) {
					continue // expired: pruned on the next write
				}
				sv, ok := vals[e.Token]
				if !ok {
					errs = append(errs, fmt.Errorf("%s names %q, which is not stored", k, e.Token))
					continue
				}
				if !ownedBy(sv, uid) {
					errs = append(errs, fmt.Errorf("%s names %q, another user's session", k, e.Token))
				}
			}
		case strings.HasPrefix(k, kRevoked), strings.HasPrefix(k, kVerification):
		default:
			s, err := decodeSession(v, k)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", k, err))
				continue
			}
			if s.Expired(now) {
				continue
			}
			var l []listEntry
			_ = json.Unmarshal([]byte(vals[kList+s.UserID]), &l)
			if !slices.ContainsFunc(l, func(e listEntry) bool {
				return e.Token == k && int64(e.ExpiresAt) == s.Expires.UnixMilli()
			}) {
				errs = append(errs, fmt.Errorf("session %q (expires %s) is not in its user's list %s", k, s.Expires, vals[kList+s.UserID]))
			}
		}
	}
	return errors.Join(errs...)
}

func TestNewRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	if _, err := New(ctx, cc, "better-auth:", memory.New()); !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), "hash tag") {
		t.Errorf("New(cluster client, no hash tag) = %v, want ErrInvalidInput naming the hash tag", err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	if _, err := New(ctx, c, "", nil); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("New(nil primary) = %v, want ErrInvalidInput", err)
	}
	var nilClient *redis.Client
	if _, err := New(ctx, nilClient, "", memory.New()); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("New(nil client) = %v, want ErrInvalidInput", err)
	}
	for p, want := range map[string]bool{"": false, "{a}:": true, "{}:": false, "x{a": false, "{better-auth}:": true} {
		if hasHashTag(p) != want {
			t.Errorf("hasHashTag(%q) = %v, want %v", p, !want, want)
		}
	}
}

// TestTokensOfOtherKinds: a session token whose key would be another
// kind's (Better Auth keys a session by its bare token) is refused, and
// reads, updates and deletes of it find nothing.
func TestTokensOfOtherKinds(t *testing.T) {
	b := redistest.Backends(false)[0]
	t.Cleanup(b.Close) // after the fixture's cleanup
	a, _, _ := fixture(t, b)
	ctx := context.Background()
	if _, err := a.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"verification:x", "active-sessions-u1", "revoked-sessions-before-u1", "203.0.113.7|/sign-in/email"} {
		_, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: "u1", Expires: time.Now().Add(time.Hour)})
		if !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("createSession(%q) = %v, want ErrInvalidInput", tok, err)
		}
		if su, err := a.GetSessionAndUser(ctx, tok); su != nil || err != nil {
			t.Errorf("getSessionAndUser(%q) = %v, %v", tok, su, err)
		}
		if s, err := a.DeleteSession(ctx, tok); s != nil || err != nil {
			t.Errorf("deleteSession(%q) = %v, %v", tok, s, err)
		}
	}
	if ks, _ := redistest.ScanKeys(ctx, a.c, a.Prefix()); len(ks) != 0 {
		t.Errorf("keys written: %v", ks)
	}
}
