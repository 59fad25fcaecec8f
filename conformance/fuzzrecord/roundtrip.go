package fuzzrecord

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// Seeds are inputs that reach the interesting record shapes: all zero
// values; an emailVerified near the least int64 milliseconds, with an
// empty name against a null image; NUL and invalid UTF-8 bytes; an
// emailVerified beyond int64 milliseconds; a full set of ordinary records
// (user, account with authorization details, live session,
// authenticator, verification token); then that set with what the
// optional extensions keep, as [RoundTrip] reads it after the records:
// ordinary (a username, a password hash swapped for another, session
// metadata, a TOTP factor swapped to its next step); edge shapes (an
// empty secret swapped to none, the greatest step, times in a non-UTC
// zone and before 1970, a last use a millisecond after the Unix epoch);
// a factor type the library refuses; a username that is not normalised;
// and bytes beyond ASCII (the longest username, 4-byte characters in a
// name, NUL and 0xff in a secret). Add them to a fuzz target with f.Add.
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
	// What the optional extensions keep: an ordinary username, password
	// hash, session metadata and TOTP factor, swapped to its next step
	// with a new secret and a last use, and the account's hash swapped.
	ordinary := append(seed(nil), full...)
	ordinary.username("ada.lovelace").byte(1).str("$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$a2V5")
	ordinary.byte(1).byte(0).int64(1_700_000_000_000).byte(1).byte(0).int64(1_700_000_360_000).str("203.0.113.7").str("Mozilla/5.0 (X11)")
	ordinary.str("factor1").str("user1").byte(0).str("Phone").byte(1).str("sealed-key").int64(56_666_666).byte(0).int64(1_700_000_000_000).byte(0)
	ordinary.str("").str("").byte(0).str("Phone").byte(1).str("sealed-key-2").int64(56_666_667).byte(0).int64(0).byte(1).byte(0).int64(1_700_000_010_000)
	ordinary.str("$argon2id$v=19$m=65536,t=3,p=4$c2FsdDI$a2V5Mg")
	// Edge shapes: no username or hash; metadata times in a non-UTC zone
	// (nanoseconds) and before 1970, an empty address; a recovery-codes
	// factor with an empty name and an empty (not nil) secret, the
	// greatest step and a creation time in a non-UTC zone, swapped to no
	// secret, step 0 and a last use a millisecond after the Unix epoch.
	edge := append(seed(nil), full...)
	edge.byte(0).byte(0)
	edge.byte(1).byte(1).int64(1_700_000_000_123_456_789).byte(1).byte(0).int64(-1).str("").str("curl/8.5.0")
	edge.str("factor2").str("user1").byte(1).str("").byte(1).str("").int64(math.MaxInt64).byte(1).int64(1_700_000_000_123_456_789).byte(0)
	edge.str("").str("").byte(1).str("").byte(0).int64(0).byte(0).int64(0).byte(1).byte(0).int64(1)
	// A factor type the library refuses (uppercase), then a last use
	// before 1970.
	badType := append(seed(nil), full...)
	badType.byte(0).byte(0).byte(0).byte(0).str("").str("")
	badType.str("factor3").str("user1").byte(0xf0).str("TOTP").str("").byte(0).int64(0).byte(0).int64(1_700_000_000_000).byte(1).byte(0).int64(-1000)
	// Bytes beyond ASCII: the longest username, a non-ASCII user agent, a
	// passkey factor named with a 4-byte character whose secret holds NUL,
	// 0x80 and 0xff, swapped to a secret of every byte value's neighbour.
	wide := append(seed(nil), full...)
	wide.username("a0123456789.abcdefghij_klmnop-z9").byte(0)
	wide.byte(0).byte(0).str("2001:db8::1").str("Mozilla/5.0 ü 漢字")
	wide.str("factor4").str("user1").byte(3).str("YubiKey 🔑").byte(1).str("\x00\x80\xff\x00").int64(0).byte(0).int64(1_700_000_000_000).byte(0)
	wide.str("").str("").byte(3).str("🔑").byte(1).str("\x01\x7f\xfe").int64(1).byte(0).int64(0).byte(1).byte(0).int64(1_700_000_000_001)
	// A username that is not normalised (uppercase), as it is.
	rawName := append(seed(nil), full...)
	rawName.byte(0xf1).str("Ada")
	return [][]byte{
		{},
		{1, 'u', 1, 'e', 1, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0},
		{3, 0, 0xff, 'x', 9, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1},
		[]byte("\x01u\x01e\x01\x02\x7f\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x01"),
		full,
		ordinary,
		edge,
		badType,
		rawName,
		wide,
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

// username appends what [Source.Username] reads to spell v, which holds
// only usernameChars.
func (s *seed) username(v string) *seed {
	*s = append(*s, 1, byte(len(v)))
	for i := 0; i < len(v); i++ {
		*s = append(*s, byte(strings.IndexByte(usernameChars, v[i])))
	}
	return s
}

func (s *seed) int64(v int64) *seed {
	*s = binary.BigEndian.AppendUint64(*s, uint64(v))
	return s
}

// input is what [RoundTrip] reads from its bytes, in the order it reads
// them. The spec's records come first; what the optional extensions keep
// comes after them, so that an input written before RoundTrip read it
// keeps its meaning (the same records, with no username, password hash,
// session metadata or factor).
type input struct {
	user          core.User
	account       core.Account
	session       core.Session // its metadata read after the token
	authenticator core.Authenticator
	token         core.VerificationToken
	// username is the user's and passwordHash the account's, where the
	// adapter keeps them.
	username     string
	passwordHash *string
	// factor is created for the user, then swapped to next's Name,
	// Secret, Step and LastUsedAt.
	factor, next core.Factor
	// newHash is what the account's password hash is swapped to.
	newHash string
}

// read reads an input from src.
func read(src *Source) input {
	var in input
	in.user = src.User()
	in.account = src.Account()
	in.session = src.Session()
	in.authenticator = src.Authenticator()
	in.token = src.VerificationToken()
	in.username = src.Username()
	in.passwordHash = src.OptStr()
	src.SessionMetadata(&in.session)
	in.factor = src.Factor()
	in.next = src.Factor()
	in.newHash = src.Str()
	return in
}

// RoundTrip writes records built from b through the adapter a and reads
// them back, failing t on any broken property:
//
//   - each write (createUser, linkAccount, createSession,
//     createAuthenticator, createVerificationToken, and where a offers
//     them createFactor, swapFactor and swapPasswordHash) either fails
//     with an error matching [core.ErrInvalidInput], and then leaves
//     nothing written (checked for createUser, createFactor, swapFactor
//     and swapPasswordHash), or returns the record as [core] normalises
//     it;
//   - every read (getUser, getUserByEmail, getUserByUsername,
//     getUserByAccount, getAccount, getSessionAndUser, getAuthenticator,
//     useVerificationToken, and where a offers them
//     listSessionsByUserId and listFactorsByUserId) then returns exactly
//     that, nulls and empty values kept apart, except that an expired
//     session or token is never returned, getUserByEmail("") and
//     getUserByUsername("") find nobody, a session's metadata is checked
//     only in listSessionsByUserId (the other methods may leave it out;
//     an adapter that keeps none lists none), and an empty list inside
//     an authorization details object may read back as null (their JSON
//     form omits it).
//
// The user has a username only where a offers getUserByUsername, and the
// account a password hash only where a offers swapPasswordHash (a
// [core.Store] refuses them elsewhere, which would leave the rest of the
// input untried); the session always has metadata. The account, session,
// authenticator and factor belong to the user. Before it returns,
// RoundTrip deletes the factor, then the user (and so, by the cascade, its
// records) and uses or purges the token, so that the next input starts
// from the same state: a fuzz target can share one store between inputs.
// a must implement every method of [core.Adapter].
func RoundTrip(ctx context.Context, t testing.TB, a core.Adapter, b []byte) {
	t.Helper()
	in := read(New(b))
	caps := core.Probe(a)
	usernames, _ := offered[core.UserByUsernameGetter](caps, a, core.ExtensionGetUserByUsername)
	u := in.user
	if usernames != nil {
		u.Username = in.username
	}
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
	if usernames != nil {
		got, err = usernames.GetUserByUsername(ctx, u.Username)
		if u.Username == "" {
			if err != nil || got != nil {
				t.Fatalf("getUserByUsername(\"\") = %#v, %v; want nil, nil", got, err)
			}
		} else {
			same(t, "getUserByUsername", got, err, &want)
		}
	}

	acc := in.account
	acc.UserID = u.ID
	swapper, _ := offered[core.PasswordHashSwapper](caps, a, core.ExtensionSwapPasswordHash)
	if swapper != nil {
		acc.PasswordHash = in.passwordHash
	}
	if linked, err := a.LinkAccount(ctx, acc); err == nil {
		wantAcc := acc.Normalize()
		same(t, "linkAccount", linked, nil, &wantAcc)
		stored, err := a.GetAccount(ctx, acc.ProviderAccountID, acc.Provider)
		sameAccount(t, "getAccount", stored, err, &wantAcc)
		got, err := a.GetUserByAccount(ctx, acc.Key())
		same(t, "getUserByAccount", got, err, &want)
		if swapper != nil && in.newHash != "" {
			swapHash(ctx, t, a, swapper, wantAcc, in.newHash)
		}
	} else if !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("linkAccount(%#v): %v, want nil or an ErrInvalidInput", acc, err)
	}

	s := in.session
	s.UserID = u.ID
	if cs, err := a.CreateSession(ctx, s); err == nil {
		wantS := s.Normalize()
		if !core.KeepsSessionMetadata(a) {
			wantS = wantS.WithoutMetadata()
		}
		// Only listSessionsByUserId must return the metadata; the other
		// methods may leave it out.
		bare := wantS.WithoutMetadata()
		if cs != nil {
			cs.CreatedAt, cs.UpdatedAt, cs.IPAddress, cs.UserAgent = time.Time{}, time.Time{}, "", ""
		}
		same(t, "createSession", cs, nil, &bare)
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
			if su != nil {
				su.Session = su.Session.WithoutMetadata()
			}
			same(t, "getSessionAndUser", su, nil, &core.SessionAndUser{Session: bare, User: want})
		}
		if l, ok := offered[core.SessionsByUserLister](caps, a, core.ExtensionListSessionsByUserID); ok {
			before := time.Now()
			list, err := l.ListSessionsByUserID(ctx, u.ID)
			if err != nil {
				t.Fatalf("listSessionsByUserId(%q): %v", u.ID, err)
			}
			switch {
			case wantS.Expired(before):
				if len(list) != 0 {
					t.Fatalf("listSessionsByUserId listed a session that expired at %v: %#v", wantS.Expires, list)
				}
			case !wantS.Expired(time.Now()):
				if len(list) != 1 || !reflect.DeepEqual(list[0], wantS) {
					t.Fatalf("listSessionsByUserId\n got %#v\nwant %#v", list, wantS)
				}
			}
		}
	} else if !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("createSession(%#v): %v, want nil or an ErrInvalidInput", s, err)
	}

	au := in.authenticator
	au.UserID = u.ID
	if ca, err := a.CreateAuthenticator(ctx, au); err == nil {
		same(t, "createAuthenticator", ca, nil, &au)
		got, err := a.GetAuthenticator(ctx, au.CredentialID)
		same(t, "getAuthenticator", got, err, &au)
	} else if !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("createAuthenticator(%#v): %v, want nil or an ErrInvalidInput", au, err)
	}

	v := in.token
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

	if fs, ok := offered[factorStore](caps, a, core.ExtensionCreateFactor, core.ExtensionListFactorsByUserID,
		core.ExtensionSwapFactor, core.ExtensionDeleteFactor); ok {
		f := in.factor
		f.UserID = u.ID
		roundTripFactor(ctx, t, fs, f, in.next)
	}
}

// factorStore is the factors extension: all four of its methods.
type factorStore interface {
	core.FactorCreator
	core.FactorsByUserLister
	core.FactorSwapper
	core.FactorDeleter
}

// offered returns a as an I, and true, when a offers every one of the
// extensions by caps (a [core.Store] has every method, whatever its
// adapter offers, and says what that adapter offers by its capabilities);
// else the zero I and false.
func offered[I any](caps core.Capabilities, a core.Adapter, exts ...core.Extension) (I, bool) {
	var none I
	for _, x := range exts {
		if !caps.HasExtension(x) {
			return none, false
		}
	}
	i, ok := a.(I)
	if !ok {
		return none, false
	}
	return i, true
}

// swapHash swaps the password hash of the stored account acc (as
// linkAccount returned it) to newHash and checks the outcome: the account
// with the new hash, or an error matching [core.ErrInvalidInput] and the
// account unchanged.
func swapHash(ctx context.Context, t testing.TB, a core.Adapter, sw core.PasswordHashSwapper, acc core.Account, newHash string) {
	t.Helper()
	var old string
	if acc.PasswordHash != nil {
		old = *acc.PasswordHash
	}
	got, err := sw.SwapPasswordHash(ctx, acc.Key(), old, newHash)
	switch {
	case err == nil:
		acc.PasswordHash = &newHash
		sameAccount(t, "swapPasswordHash", got, nil, &acc)
	case !errors.Is(err, core.ErrInvalidInput):
		t.Fatalf("swapPasswordHash(%q to %q): %v, want nil or an ErrInvalidInput", old, newHash, err)
	}
	stored, err := a.GetAccount(ctx, acc.ProviderAccountID, acc.Provider)
	sameAccount(t, "getAccount after swapPasswordHash", stored, err, &acc)
}

// roundTripFactor creates f, lists the user's factors, swaps f to next's
// Name, Secret, Step and LastUsedAt, lists them again and deletes f,
// checking each step (see [RoundTrip]). It leaves the user without
// factors.
func roundTripFactor(ctx context.Context, t testing.TB, fs factorStore, f, next core.Factor) {
	t.Helper()
	list := func(what string, want ...core.Factor) {
		t.Helper()
		got, err := fs.ListFactorsByUserID(ctx, f.UserID)
		if err != nil {
			t.Fatalf("%s: listFactorsByUserId(%q): %v", what, f.UserID, err)
		}
		if want == nil {
			want = []core.Factor{}
		}
		if got == nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: listFactorsByUserId(%q)\n got %#v\nwant %#v", what, f.UserID, got, want)
		}
	}
	created, err := fs.CreateFactor(ctx, f)
	if err != nil {
		if !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("createFactor(%#v): %v, want nil or an ErrInvalidInput", f, err)
		}
		list("after a refused createFactor")
		return
	}
	want := f.Normalize()
	same(t, "createFactor", created, nil, &want)
	list("after createFactor", want)

	swapped, err := fs.SwapFactor(ctx, want, next)
	switch {
	case err == nil:
		n := next.Normalize()
		want.Name, want.Secret, want.Step, want.LastUsedAt = n.Name, n.Secret, n.Step, n.LastUsedAt
		same(t, "swapFactor", swapped, nil, &want)
	case !errors.Is(err, core.ErrInvalidInput):
		t.Fatalf("swapFactor(%#v to %#v): %v, want nil or an ErrInvalidInput", want, next, err)
	}
	list("after swapFactor", want)

	deleted, err := fs.DeleteFactor(ctx, f.UserID, f.ID)
	same(t, "deleteFactor", deleted, err, &want)
	list("after deleteFactor")
}

// purger returns a's purgeExpired, or nil when a has none (the Redis
// adapter has no purge: Redis expires the records itself).
func purger(a core.Adapter) core.ExpiredPurger {
	p, _ := offered[core.ExpiredPurger](core.Probe(a), a, core.ExtensionPurgeExpired)
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

// sameAccount is [same] for accounts, except that an empty list inside an
// authorization details object may read back as null: the details' JSON
// form ([core.AuthorizationDetail]'s, as Auth.js writes it) omits it.
func sameAccount(t testing.TB, what string, got *core.Account, err error, want *core.Account) {
	t.Helper()
	if got != nil && want != nil {
		g, w := got.Clone(), want.Clone()
		g.AuthorizationDetails, w.AuthorizationDetails = WithoutEmptyLists(g.AuthorizationDetails), WithoutEmptyLists(w.AuthorizationDetails)
		got, want = &g, &w
	}
	same(t, what, got, err, want)
}

// WithoutEmptyLists returns ds with every empty list inside a details
// object made nil (ds is changed): the JSON form of
// core.AuthorizationDetail omits them, as Auth.js's does, so a store that
// keeps the details as JSON reads them back nil.
func WithoutEmptyLists(ds []core.AuthorizationDetail) []core.AuthorizationDetail {
	for i := range ds {
		d := &ds[i]
		for _, l := range []*[]string{&d.Locations, &d.Actions, &d.Datatypes, &d.Privileges} {
			if len(*l) == 0 {
				*l = nil
			}
		}
	}
	return ds
}
