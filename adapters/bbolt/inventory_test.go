package bboltadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
	rc "github.com/authport/authport/core/recordcodec"
)

// The session inventory's tests: the metadata section of the session
// record, listSessionsByUserId and deleteSessionsByUserId, and their races.

// inventoryBase is the tests' clock's start.
var inventoryBase = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// newClockedAdapter is newTestAdapter with a clock the test moves.
func newClockedAdapter(t *testing.T, opts ...Option) (*Adapter, rawView, *atomic.Int64) {
	t.Helper()
	var clock atomic.Int64
	clock.Store(inventoryBase.UnixMilli())
	a, raw := newTestAdapter(t, append(opts, WithClock(func() time.Time { return time.UnixMilli(clock.Load()).UTC() }))...)
	return a, raw, &clock
}

// withMetadata returns s with every metadata field set.
func withMetadata(s core.Session, ip, ua string) core.Session {
	s.CreatedAt = inventoryBase.Add(-time.Hour)
	s.UpdatedAt = inventoryBase.Add(-time.Minute)
	s.IPAddress, s.UserAgent = ip, ua
	return s
}

// TestSessionMetadataEncoding: a session without metadata has the bytes
// sessions had before the metadata section (so those records read back
// with zero metadata); one with metadata round-trips, with unknown times
// and strings kept apart from known ones; a section with nothing in it, a
// present zero time, a truncated section and trailing bytes are corrupt;
// getSessionAndUser's read of a session ignores the section.
func TestSessionMetadataEncoding(t *testing.T) {
	plain := core.Session{SessionToken: "tok", UserID: "u", Expires: time.UnixMilli(1_900_000_000_000).UTC()}
	// Version 1, "tok", "u", then the zig-zag varint of the expiry.
	old := append([]byte{1, 3, 't', 'o', 'k', 1, 'u'}, encodeVarint(1_900_000_000_000)...)
	if b := encodeSession(&plain); !bytes.Equal(b, old) {
		t.Fatalf("a session without metadata encodes as\n% x\nwant the bytes of before the metadata section\n% x", b, old)
	}
	if s, err := decodeSession(old); err != nil || !reflect.DeepEqual(*s, plain) {
		t.Fatalf("decodeSession of a record written before the metadata section = %+v, %v; want %+v", s, err, plain)
	}

	cases := map[string]core.Session{
		"full":            withMetadata(plain, "2001:db8::1", "Mozilla/5.0"),
		"created only":    {SessionToken: "t", UserID: "u", Expires: plain.Expires, CreatedAt: inventoryBase},
		"updated only":    {SessionToken: "t", UserID: "u", Expires: plain.Expires, UpdatedAt: inventoryBase},
		"ip only":         {SessionToken: "t", UserID: "u", Expires: plain.Expires, IPAddress: "192.0.2.1"},
		"user agent only": {SessionToken: "t", UserID: "u", Expires: plain.Expires, UserAgent: "curl/8"},
		"pre-1970 times":  {SessionToken: "t", UserID: "u", Expires: plain.Expires, CreatedAt: time.UnixMilli(-1).UTC(), UpdatedAt: time.Unix(0, 0).UTC()},
	}
	for name, s := range cases {
		b := roundTrip(t, "session "+name, s, encodeSession, decodeSession)
		uid, expires, err := decodeSessionRef(b)
		if err != nil || string(uid) != s.UserID || !expires.Equal(s.Expires) {
			t.Errorf("%s: decodeSessionRef = %q, %v, %v", name, uid, expires, err)
		}
	}

	fullSession := cases["full"]
	full := encodeSession(&fullSession)
	for name, bad := range map[string][]byte{
		"empty section":     append(bytes.Clone(old), 0, 0, 0, 0),
		"present zero time": append(append(append(bytes.Clone(old), 1), encodeVarint(time.Time{}.UnixMilli())...), 0, 0, 0),
		"truncated section": full[:len(full)-1],
		"trailing bytes":    append(bytes.Clone(full), 0),
		"lone flag":         append(bytes.Clone(old), 0),
	} {
		if _, err := decodeSession(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decodeSession(%s): err = %v, want ErrCorrupt", name, err)
		}
	}
}

func encodeVarint(v int64) []byte { return rc.AppendVarint(nil, v) }

// TestSessionMetadataKept: createSession stores the metadata it is given;
// listSessionsByUserId and the raw view return it; getSessionAndUser
// leaves it out and allocates no more for a session with metadata than for
// one without; extendSession sets UpdatedAt to seen in its write and keeps
// the rest; updateSession sets UpdatedAt when told to and keeps it when
// not; a time outside Unix milliseconds is refused.
func TestSessionMetadataKept(t *testing.T) {
	ctx := context.Background()
	a, raw, _ := newClockedAdapter(t)
	if !core.KeepsSessionMetadata(a) || !core.KeepsSessionMetadata(core.NewStore(a)) {
		t.Fatal("KeepsSessionMetadata = false")
	}
	must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
	expires := inventoryBase.Add(time.Hour)
	s := withMetadata(core.Session{SessionToken: "s", UserID: "u", Expires: expires}, "192.0.2.7", "agent")
	if got, err := a.CreateSession(ctx, s); err != nil || !reflect.DeepEqual(*got, s) {
		t.Fatalf("CreateSession = %+v, %v; want %+v", got, err, s)
	}
	plain := core.Session{SessionToken: "p", UserID: "u", Expires: expires}
	must(t)(a.CreateSession(ctx, plain))
	wantList(t, a, "u", plain, s)
	if stored, err := raw.Sessions(ctx); err != nil || !sameSessions(stored, []core.Session{s, plain}) {
		t.Errorf("raw sessions = %+v, %v", stored, err)
	}

	su, err := a.GetSessionAndUser(ctx, "s")
	if err != nil || su == nil || su.Session != s.WithoutMetadata() {
		t.Errorf("GetSessionAndUser = %+v, %v; want the session without metadata", su, err)
	}
	withMeta := testing.AllocsPerRun(50, func() { _, _ = a.GetSessionAndUser(ctx, "s") })
	without := testing.AllocsPerRun(50, func() { _, _ = a.GetSessionAndUser(ctx, "p") })
	if withMeta != without {
		t.Errorf("GetSessionAndUser: %v allocations with metadata, %v without", withMeta, without)
	}

	seen := inventoryBase.Add(30 * time.Minute)
	got, wrote, err := a.ExtendSession(ctx, "s", expires, expires.Add(time.Hour), seen)
	want := s
	want.Expires, want.UpdatedAt = expires.Add(time.Hour), seen
	if err != nil || !wrote || !reflect.DeepEqual(*got, want) {
		t.Errorf("ExtendSession = %+v, %v, %v; want %+v, true", got, wrote, err, want)
	}
	wantList(t, a, "u", plain, want)

	// updateSession: the expiry alone keeps UpdatedAt; UpdatedAt alone
	// rewrites the record in place.
	want.Expires = want.Expires.Add(time.Hour)
	must(t)(a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", Expires: core.Set(want.Expires)}))
	wantList(t, a, "u", plain, want)
	want.UpdatedAt = seen.Add(time.Minute)
	must(t)(a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", UpdatedAt: core.Set(want.UpdatedAt)}))
	wantList(t, a, "u", plain, want)

	far := time.Date(300000000, 1, 1, 0, 0, 0, 0, time.UTC)
	bad := core.Session{SessionToken: "x", UserID: "u", Expires: expires, CreatedAt: far}
	if _, err := a.CreateSession(ctx, bad); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("CreateSession with createdAt %v: %v, want ErrInvalidInput", far, err)
	}
	bad.CreatedAt, bad.UpdatedAt = time.Time{}, far
	if _, err := a.CreateSession(ctx, bad); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("CreateSession with updatedAt %v: %v, want ErrInvalidInput", far, err)
	}
	if _, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", UpdatedAt: core.Set(far)}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("UpdateSession with updatedAt %v: %v, want ErrInvalidInput", far, err)
	}
	if _, _, err := a.ExtendSession(ctx, "s", want.Expires, want.Expires.Add(time.Hour), far); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("ExtendSession with seen %v: %v, want ErrInvalidInput", far, err)
	}
	wantList(t, a, "u", plain, want)
	checkConsistent(t, a)
}

// TestListSessionsByUserID: the user's sessions, ordered by token, none of
// another user's (also one whose id is a prefix of the user's); an
// unknown user gets an empty, non-nil list; a session that has expired by
// the adapter's clock is not listed and is gone afterwards, record and
// index entries, while one an extension moved on stays.
func TestListSessionsByUserID(t *testing.T) {
	ctx := context.Background()
	a, raw, clock := newClockedAdapter(t)
	for _, id := range []string{"u", "u2", "v"} {
		must(t)(a.CreateUser(ctx, core.User{ID: id, Email: id + "@e"}))
	}
	soon, later := inventoryBase.Add(time.Minute), inventoryBase.Add(time.Hour)
	mine := []core.Session{
		{SessionToken: "tok-c", UserID: "u", Expires: later},
		{SessionToken: "tok-a", UserID: "u", Expires: soon},
		{SessionToken: "tok-b\x00", UserID: "u", Expires: later},
		{SessionToken: "tok-b", UserID: "u", Expires: soon},
	}
	for _, s := range mine {
		must(t)(a.CreateSession(ctx, s))
	}
	must(t)(a.CreateSession(ctx, core.Session{SessionToken: "other", UserID: "u2", Expires: later}))
	must(t)(a.CreateSession(ctx, core.Session{SessionToken: "v1", UserID: "v", Expires: soon}))

	wantList(t, a, "u", mine[1], mine[3], mine[2], mine[0])
	wantList(t, a, "u2", core.Session{SessionToken: "other", UserID: "u2", Expires: later})
	if got, err := a.ListSessionsByUserID(ctx, "nobody"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ListSessionsByUserID(unknown) = %#v, %v; want an empty, non-nil list", got, err)
	}

	// tok-b is extended before the expiry; tok-a expires.
	must(t)(a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "tok-b", Expires: core.Set(later)}))
	clock.Store(soon.UnixMilli()) // a session expires at the instant of its expiry
	b := mine[3]
	b.Expires = later
	wantList(t, a, "u", b, mine[2], mine[0])
	if left, err := raw.Mentions(ctx, "tok-a"); err != nil || len(left) != 0 {
		t.Errorf("after listing, the expired session is still mentioned: %q, %v", left, err)
	}
	if n := countSessions(t, raw); n != 5 {
		t.Errorf("%d sessions stored after the expired one was listed; want 5 (v's expired one is left for the purge)", n)
	}
	checkConsistent(t, a)
}

// TestDeleteSessionsByUserID: "" deletes all of the user's sessions; an
// except keeps that one; expired ones are deleted but not counted, also
// when except names one; an except naming another user's session keeps
// nothing of the user's and leaves the other user's alone; an unknown user
// gives 0; every index entry goes with its session.
func TestDeleteSessionsByUserID(t *testing.T) {
	ctx := context.Background()
	a, raw, clock := newClockedAdapter(t)
	for _, id := range []string{"u", "v"} {
		must(t)(a.CreateUser(ctx, core.User{ID: id, Email: id + "@e"}))
	}
	soon, later := inventoryBase.Add(time.Minute), inventoryBase.Add(time.Hour)
	create := func(token, user string, expires time.Time) core.Session {
		s := withMetadata(core.Session{SessionToken: token, UserID: user, Expires: expires}, "ip", "ua")
		must(t)(a.CreateSession(ctx, s))
		return s
	}
	for _, tok := range []string{"u1", "u2", "u3"} {
		create(tok, "u", later)
	}
	create("u-old", "u", soon)
	v1 := create("v1", "v", later)
	clock.Store(soon.UnixMilli())

	deleteSessions(t, a, "u", "u2", 2)
	wantList(t, a, "u", withMetadata(core.Session{SessionToken: "u2", UserID: "u", Expires: later}, "ip", "ua"))
	deleteSessions(t, a, "u", "v1", 1) // another user's session: keeps nothing of u's
	wantList(t, a, "u")
	wantList(t, a, "v", v1)
	deleteSessions(t, a, "nobody", "", 0)
	deleteSessions(t, a, "u", "", 0)

	create("u-exp", "u", soon.Add(time.Second))
	clock.Store(soon.Add(time.Second).UnixMilli())
	deleteSessions(t, a, "u", "u-exp", 0) // expired: deleted though named, not counted
	if n := countSessions(t, raw); n != 1 {
		t.Errorf("%d sessions stored; want only v's", n)
	}
	deleteSessions(t, a, "v", "", 1)
	if n := a.countForTest(t); n != 4 {
		t.Errorf("%d entries left in the buckets; want the two users' records and e-mail entries, 4", n)
	}
	checkConsistent(t, a)
}

// TestDeleteSessionsRacesCreate: in every write mode, 50 createSession
// calls for a user race one deleteSessionsByUserId keeping one session;
// afterwards every created session is either readable and listed (created
// after the delete) or neither, the count is the number of those deleted,
// and the store is consistent.
func TestDeleteSessionsRacesCreate(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			a, _, _ := newClockedAdapter(t, WithWriteMode(mode))
			must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
			keep := core.Session{SessionToken: "keep", UserID: "u", Expires: inventoryBase.Add(time.Hour)}
			must(t)(a.CreateSession(ctx, keep))
			const n = 50
			var deleted int
			var delErr error
			errs := make([]error, n)
			coretest.Concurrently(n+1, func(i int) {
				if i == n {
					deleted, delErr = a.DeleteSessionsByUserID(ctx, "u", "keep")
					return
				}
				_, errs[i] = a.CreateSession(ctx, core.Session{SessionToken: fmt.Sprintf("s%02d", i), UserID: "u", Expires: inventoryBase.Add(time.Hour)})
			})
			if err := errors.Join(append(errs, delErr)...); err != nil {
				t.Fatal(err)
			}
			listed, err := a.ListSessionsByUserID(ctx, "u")
			if err != nil {
				t.Fatal(err)
			}
			inList := map[string]bool{}
			for _, s := range listed {
				inList[s.SessionToken] = true
			}
			if !inList["keep"] {
				t.Error("the kept session is not listed")
			}
			gone := 0
			for i := range n {
				tok := fmt.Sprintf("s%02d", i)
				su, err := a.GetSessionAndUser(ctx, tok)
				if err != nil {
					t.Fatal(err)
				}
				if (su != nil) != inList[tok] {
					t.Errorf("session %s: readable %v, listed %v", tok, su != nil, inList[tok])
				}
				if su == nil {
					gone++
				}
			}
			if gone != deleted {
				t.Errorf("deleteSessionsByUserId reported %d, but %d sessions are gone", deleted, gone)
			}
			t.Logf("%d of %d created sessions were deleted", gone, n)
			checkConsistent(t, a)
		})
	}
}

// TestDeleteSessionsRacesExtension: in every write mode, extensions and
// updates of each of a user's sessions race deleteSessionsByUserId (none
// kept), over several trials; no session is readable or listed afterwards,
// so none was brought back.
func TestDeleteSessionsRacesExtension(t *testing.T) {
	for _, mode := range []WriteMode{WriteGroup, WriteUpdate, WriteBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			a, _, _ := newClockedAdapter(t, WithWriteMode(mode))
			must(t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@e"}))
			from := inventoryBase.Add(time.Hour)
			const sessions, trials = 10, 5
			for trial := range trials {
				tokens := make([]string, sessions)
				for i := range tokens {
					tokens[i] = fmt.Sprintf("t%d-%d", trial, i)
					must(t)(a.CreateSession(ctx, core.Session{SessionToken: tokens[i], UserID: "u", Expires: from}))
				}
				errs := make(chan error, 2*sessions+1)
				coretest.Concurrently(2*sessions+1, func(i int) {
					var err error
					switch {
					case i == 2*sessions:
						_, err = a.DeleteSessionsByUserID(ctx, "u", "")
					case i%2 == 0:
						_, _, err = a.ExtendSession(ctx, tokens[i/2], from, from.Add(time.Hour), inventoryBase)
					default:
						_, err = a.UpdateSession(ctx, core.SessionUpdate{SessionToken: tokens[i/2], Expires: core.Set(from.Add(2 * time.Hour)), UpdatedAt: core.Set(inventoryBase)})
					}
					errs <- err
				})
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
				wantList(t, a, "u")
				for _, tok := range tokens {
					if su, err := a.GetSessionAndUser(ctx, tok); su != nil || err != nil {
						t.Errorf("trial %d: session %s readable after deleteSessionsByUserId: %+v, %v", trial, tok, su, err)
					}
				}
			}
			checkConsistent(t, a)
		})
	}
}

// wantList checks ListSessionsByUserID against want, in order.
func wantList(t *testing.T, a *Adapter, userID string, want ...core.Session) {
	t.Helper()
	got, err := a.ListSessionsByUserID(context.Background(), userID)
	if err != nil || got == nil {
		t.Fatalf("ListSessionsByUserID(%q) = %v, %v", userID, got, err)
	}
	if want == nil {
		want = []core.Session{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListSessionsByUserID(%q)\n got %+v\nwant %+v", userID, got, want)
	}
}

// deleteSessions checks DeleteSessionsByUserID's count.
func deleteSessions(t *testing.T, a *Adapter, userID, except string, want int) {
	t.Helper()
	if n, err := a.DeleteSessionsByUserID(context.Background(), userID, except); err != nil || n != want {
		t.Errorf("DeleteSessionsByUserID(%q, %q) = %d, %v; want %d", userID, except, n, err, want)
	}
}

func sameSessions(got, want []core.Session) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, core.CompareSessions)
	slices.SortFunc(want, core.CompareSessions)
	return reflect.DeepEqual(got, want)
}

func countSessions(t *testing.T, raw rawView) int {
	t.Helper()
	s, err := raw.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(s)
}

func checkConsistent(t *testing.T, a *Adapter) {
	t.Helper()
	if err := a.CheckConsistency(context.Background()); err != nil {
		t.Error(err)
	}
}
