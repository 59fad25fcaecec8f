package fuzzrecord

import (
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// Seeds are inputs that reach the interesting record shapes: all zero
// values; an emailVerified near the least int64 milliseconds, with an
// empty name against a null image; NUL and invalid UTF-8 bytes; an
// emailVerified beyond int64 milliseconds; and a full set of ordinary
// records (user, account with authorization details, live session,
// authenticator, verification token). Add them to a fuzz target with f.Add.
func Seeds() [][]byte {
	var full seed
	// User: id, email, emailVerified (2023), name, no image.
	full.str("user1").str("ada@example.com").byte(1).byte(0).int64(1_700_000_000_000).byte(1).str("Ada").byte(0)
	// Account: oauth, access token, two authorization details (the first
	// with an empty and a one-element list), expires_at, id token, scope,
	// token type.
	full.str("user1").str("github").byte(0).str("42").byte(1).str("at").byte(5)
	full.str("payment").byte(1).byte(3).str("read").byte(0).str("id").byte(0)
	full.str("").byte(0).byte(0).byte(0).str("").byte(0)
	full.byte(1).int64(1_900_000_000).byte(0).byte(1).str("x.y.z").byte(0).byte(1).str("openid email").byte(1).str("Bearer").byte(0)
	// Session expiring in 2100.
	full.str("tok").str("user1").byte(0).int64(4_102_444_800_000)
	// Authenticator.
	full.str("cred").str("key").int64(5).byte(1).str("singleDevice").str("acct").str("user1").byte(1).str("usb")
	// Verification token expiring in 2100.
	full.str("ada@example.com").str("hash").byte(0).int64(4_102_444_800_000)
	return [][]byte{
		{},
		{1, 'u', 1, 'e', 1, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0},
		{3, 0, 0xff, 'x', 9, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1},
		[]byte("\x01u\x01e\x01\x02\x7f\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x01"),
		full,
	}
}

// AddSeeds adds [Seeds] to the fuzz target f.
func AddSeeds(f *testing.F) {
	for _, b := range Seeds() {
		f.Add(b)
	}
}

// seed builds Source input: each method appends what the Source method
// of the same kind reads.
type seed []byte

func (s *seed) byte(c byte) *seed { *s = append(*s, c); return s }

func (s *seed) str(v string) *seed { *s = append(append(*s, byte(len(v))), v...); return s }

func (s *seed) int64(v int64) *seed {
	*s = binary.BigEndian.AppendUint64(*s, uint64(v))
	return s
}

// RoundTrip writes records built from b through the adapter a and reads
// them back, failing t on any broken property:
//
//   - each write (createUser, linkAccount, createSession,
//     createAuthenticator, createVerificationToken) either fails with an
//     error matching [core.ErrInvalidInput], and then a failed createUser
//     leaves no user behind, or returns the record as [core] normalises
//     it;
//   - every read (getUser, getUserByEmail, getUserByAccount,
//     getSessionAndUser, getAuthenticator, useVerificationToken) then
//     returns exactly that, nulls and empty values kept apart, except that
//     an expired session or token is never returned, and getUserByEmail("")
//     finds nobody (a user without an address).
//
// The account, session and authenticator belong to the user. Before it
// returns, RoundTrip deletes the user (and so, by the cascade, its
// records) and uses or purges the token, so that the next input starts
// from the same state: a fuzz target can share one store between inputs.
// a must implement every method of [core.Adapter].
func RoundTrip(ctx context.Context, t testing.TB, a core.Adapter, b []byte) {
	t.Helper()
	src := New(b)
	u := src.User()
	created, err := a.CreateUser(ctx, u)
	if err != nil {
		if !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("createUser(%#v): %v, want nil or an ErrInvalidInput", u, err)
		}
		if got, err := a.GetUser(ctx, u.ID); err != nil || got != nil {
			t.Fatalf("createUser(%#v) failed (%v) but getUser finds %#v, %v", u, err, got, err)
		}
		return
	}
	defer func() {
		if _, err := a.DeleteUser(ctx, u.ID); err != nil {
			t.Fatalf("deleteUser(%q): %v", u.ID, err)
		}
	}()
	want := u.Normalize()
	same(t, "createUser", created, nil, &want)
	got, err := a.GetUser(ctx, u.ID)
	same(t, "getUser", got, err, &want)
	got, err = a.GetUserByEmail(ctx, u.Email)
	if u.Email == "" { // a user without an address: "" finds nobody
		if err != nil || got != nil {
			t.Fatalf("getUserByEmail(\"\") = %#v, %v; want nil, nil", got, err)
		}
	} else {
		same(t, "getUserByEmail", got, err, &want)
	}

	acc := src.Account()
	acc.UserID = u.ID
	if linked, err := a.LinkAccount(ctx, acc); err == nil {
		wantAcc := acc.Normalize()
		same(t, "linkAccount", linked, nil, &wantAcc)
		got, err := a.GetUserByAccount(ctx, acc.Key())
		same(t, "getUserByAccount", got, err, &want)
	} else if !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("linkAccount(%#v): %v, want nil or an ErrInvalidInput", acc, err)
	}

	s := src.Session()
	s.UserID = u.ID
	if cs, err := a.CreateSession(ctx, s); err == nil {
		wantS := s.Normalize()
		same(t, "createSession", cs, nil, &wantS)
		before := time.Now()
		su, err := a.GetSessionAndUser(ctx, s.SessionToken)
		if err != nil {
			t.Fatalf("getSessionAndUser(%q): %v", s.SessionToken, err)
		}
		switch { // near the expiry, either answer is right
		case wantS.Expired(before):
			if su != nil {
				t.Fatalf("getSessionAndUser returned a session that expired at %v", wantS.Expires)
			}
		case !wantS.Expired(time.Now()):
			same(t, "getSessionAndUser", su, nil, &core.SessionAndUser{Session: wantS, User: want})
		}
	} else if !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("createSession(%#v): %v, want nil or an ErrInvalidInput", s, err)
	}

	au := src.Authenticator()
	au.UserID = u.ID
	if ca, err := a.CreateAuthenticator(ctx, au); err == nil {
		same(t, "createAuthenticator", ca, nil, &au)
		got, err := a.GetAuthenticator(ctx, au.CredentialID)
		same(t, "getAuthenticator", got, err, &au)
	} else if !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("createAuthenticator(%#v): %v, want nil or an ErrInvalidInput", au, err)
	}

	v := src.VerificationToken()
	if cv, err := a.CreateVerificationToken(ctx, v); err == nil {
		wantV := v.Normalize()
		same(t, "createVerificationToken", cv, nil, &wantV)
		before := time.Now()
		used, err := a.UseVerificationToken(ctx, v.Key())
		if err != nil {
			t.Fatalf("useVerificationToken(%#v): %v", v.Key(), err)
		}
		switch {
		case wantV.Expired(before):
			if used != nil {
				t.Fatalf("useVerificationToken returned a token that expired at %v", wantV.Expires)
			}
		case !wantV.Expired(time.Now()):
			same(t, "useVerificationToken", used, nil, &wantV)
		}
		if p := purger(a); p != nil && used == nil {
			if _, err := p.PurgeExpired(ctx); err != nil {
				t.Fatalf("purgeExpired: %v", err)
			}
		}
	} else if !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("createVerificationToken(%#v): %v, want nil or an ErrInvalidInput", v, err)
	}
}

// purger returns a's purgeExpired, or nil when a has none. Core's checked
// layer (a [core.Store]) has every method whatever its adapter offers, and
// says what the adapter offers by its capabilities (the Redis adapter has
// no purge: Redis expires the records itself).
func purger(a core.Adapter) core.ExpiredPurger {
	if s, ok := a.(interface{ Capabilities() core.Capabilities }); ok && !s.Capabilities().HasExtension(core.ExtensionPurgeExpired) {
		return nil
	}
	p, _ := a.(core.ExpiredPurger)
	return p
}

// same fails t unless err is nil and got equals *want.
func same[T any](t testing.TB, what string, got *T, err error, want *T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got == nil || !reflect.DeepEqual(*got, *want) {
		t.Fatalf("%s\n got %#v\nwant %#v", what, got, want)
	}
}
