package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// env is what one rule works with: the adapter, its raw view and helpers
// that fail the test on an unexpected error. Helpers that call an adapter
// method assume the rule declared the method in its needs.
type env struct {
	ctx context.Context
	// a is the adapter under test behind core's checked layer (a
	// *core.Store): rules call methods through it, as core/auth does.
	a *core.Store
	// adapter is the adapter itself, for rules that wrap it.
	adapter any
	raw     Raw
	purger  core.ExpiredPurger
	// peer is a second adapter instance on the same store, behind the
	// checked layer, for the rules with needsPeer; nil otherwise.
	peer *core.Store
	// lossy is the instance of [Fixture.LossyPeer], behind the checked
	// layer, and loser what makes it lose replies, for the rules with
	// needsLossyPeer; nil otherwise.
	lossy *core.Store
	loser ReplyLoser
	seq   atomic.Int64
}

// id returns a fresh id with the prefix, unique within the test. The
// number has a fixed width, so that no id is a substring of another.
func (e *env) id(prefix string) string {
	return fmt.Sprintf("%s-%06d", prefix, e.seq.Add(1))
}

func ptr[T any](v T) *T { return &v }

// at is a fixed instant with sub-millisecond digits in a non-UTC zone, so
// that a round trip shows both the truncation and the conversion to UTC.
func at(offset time.Duration) time.Time {
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	return time.Date(2031, time.March, 14, 15, 9, 26, 535897932, zone).Add(offset)
}

// future returns a time well after now, with sub-millisecond digits.
func future() time.Time { return time.Now().Add(240*time.Hour + 123456*time.Nanosecond) }

// newUser returns a user with every field set and a fresh id and e-mail.
func (e *env) newUser() core.User {
	id := e.id("user")
	return core.User{
		ID:            id,
		Email:         id + "@example.com",
		EmailVerified: ptr(at(0)),
		Name:          ptr("Ada " + id),
		Image:         ptr("https://example.com/" + id + ".png"),
	}
}

// newAccount returns an OAuth account of the user with every field set.
func (e *env) newAccount(userID string) core.Account {
	id := e.id("acct")
	return core.Account{
		UserID:            userID,
		Provider:          "github",
		Type:              core.AccountTypeOAuth,
		ProviderAccountID: id,
		AccessToken:       ptr("access-" + id),
		AuthorizationDetails: []core.AuthorizationDetail{{
			Type:       "payment_initiation",
			Locations:  []string{"https://bank.example.com/payments"},
			Actions:    []string{"initiate", "status"},
			Datatypes:  []string{"account"},
			Identifier: "acct-" + id,
			Privileges: []string{"read"},
		}},
		ExpiresAt:    ptr(int64(1931234567)),
		ExpiresIn:    ptr(int64(3600)),
		IDToken:      ptr("id-token-" + id),
		RefreshToken: ptr("refresh-" + id),
		Scope:        ptr("read:user user:email"),
		TokenType:    ptr("Bearer"),
		SessionState: ptr("state-" + id),
	}
}

func (e *env) newSession(userID string) core.Session {
	return core.Session{SessionToken: e.id("session-token"), UserID: userID, Expires: future()}
}

func (e *env) newToken() core.VerificationToken {
	id := e.id("vt")
	return core.VerificationToken{Identifier: id + "@example.com", Token: "hash-" + id, Expires: future()}
}

func (e *env) newAuthenticator(userID, providerAccountID string) core.Authenticator {
	id := e.id("cred")
	return core.Authenticator{
		CredentialID:         "Y3JlZC" + id,
		CredentialPublicKey:  "cHVibGljLWtleQ-" + id,
		Counter:              7,
		CredentialBackedUp:   true,
		CredentialDeviceType: "multiDevice",
		ProviderAccountID:    providerAccountID,
		UserID:               userID,
		Transports:           ptr("usb,nfc"),
	}
}

// Typed access to the adapter's methods: each fails the test on an error.

// must fails the test when err is set, naming the call, and returns v.
func must[T any](t *testing.T, call string, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", call, err)
	}
	return v
}

// created is must for a create method, which must return the record.
func created[T any](t *testing.T, call string, v *T, err error) T {
	t.Helper()
	if must(t, call, v, err) == nil {
		t.Fatalf("%s returned nil and no error", call)
	}
	return *v
}

// storedUser creates a new user ([env.newUser]) and returns it as given.
func (e *env) storedUser(t *testing.T) core.User {
	t.Helper()
	u := e.newUser()
	e.createUser(t, u)
	return u
}

func (e *env) createUser(t *testing.T, u core.User) core.User {
	t.Helper()
	return insert(t, e, "createUser", e.a.CreateUser, u)
}

func (e *env) getUser(t *testing.T, id string) *core.User {
	t.Helper()
	return lookup(t, e, "getUser", e.a.GetUser, id)
}

func (e *env) getUserByEmail(t *testing.T, email string) *core.User {
	t.Helper()
	return lookup(t, e, "getUserByEmail", e.a.GetUserByEmail, email)
}

func (e *env) linkAccount(t *testing.T, acc core.Account) core.Account {
	t.Helper()
	got, err := e.a.LinkAccount(e.ctx, acc)
	if must(t, "linkAccount("+show(acc)+")", got, err) == nil {
		// The spec lets linkAccount return nothing; the stored record is
		// checked through getAccount and the raw view instead.
		return acc.Normalize()
	}
	return *got
}

func (e *env) getAccount(t *testing.T, providerAccountID, provider string) *core.Account {
	t.Helper()
	acc, err := e.a.GetAccount(e.ctx, providerAccountID, provider)
	return must(t, fmt.Sprintf("getAccount(%q, %q)", providerAccountID, provider), acc, err)
}

func (e *env) createSession(t *testing.T, s core.Session) core.Session {
	t.Helper()
	return insert(t, e, "createSession", e.a.CreateSession, s)
}

// getSessionAndUser calls getSessionAndUser, with the session's metadata
// cleared: the method may leave it out ([core.SessionsByUserLister] is
// where it must come back, and the metadata rules check it there).
func (e *env) getSessionAndUser(t *testing.T, token string) *core.SessionAndUser {
	t.Helper()
	su := lookup(t, e, "getSessionAndUser", e.a.GetSessionAndUser, token)
	if su != nil {
		su.Session = su.Session.WithoutMetadata()
	}
	return su
}

func (e *env) createToken(t *testing.T, v core.VerificationToken) {
	t.Helper()
	_, err := e.a.CreateVerificationToken(e.ctx, v)
	must(t, "createVerificationToken("+show(v)+")", 0, err)
}

func (e *env) useToken(t *testing.T, identifier, token string) *core.VerificationToken {
	t.Helper()
	v, err := e.a.UseVerificationToken(e.ctx, core.VerificationTokenKey{Identifier: identifier, Token: token})
	return must(t, fmt.Sprintf("useVerificationToken(%q, %q)", identifier, token), v, err)
}

func (e *env) createAuthenticator(t *testing.T, au core.Authenticator) core.Authenticator {
	t.Helper()
	return insert(t, e, "createAuthenticator", e.a.CreateAuthenticator, au)
}

func (e *env) getAuthenticator(t *testing.T, id string) *core.Authenticator {
	t.Helper()
	return lookup(t, e, "getAuthenticator", e.a.GetAuthenticator, id)
}

// insert calls the create method named name with the record and returns
// what it stored, failing the test on an error or a nil result ([created]).
func insert[T any](t *testing.T, e *env, name string, create func(context.Context, T) (*T, error), rec T) T {
	t.Helper()
	got, err := create(e.ctx, rec)
	return created(t, name+"("+show(rec)+")", got, err)
}

// lookup calls the method named name that reads a record by one string key
// and returns what it found (nil for nothing), failing the test on an error.
func lookup[R any](t *testing.T, e *env, name string, get func(context.Context, string) (R, error), key string) R {
	t.Helper()
	got, err := get(e.ctx, key)
	return must(t, fmt.Sprintf("%s(%q)", name, key), got, err)
}

// state is everything the raw view shows, sorted, with times in UTC.
type state struct {
	Users              []core.User
	Accounts           []core.Account
	Sessions           []core.Session
	VerificationTokens []core.VerificationToken
	Authenticators     []core.Authenticator
	// Factors are the stored second factors, read only when the raw view
	// is a [FactorRaw] (nil otherwise).
	Factors []core.Factor
}

// state reads everything stored through the raw view, sorted and in
// canonical form.
func (e *env) state(t *testing.T) state {
	t.Helper()
	s := e.readState(t)
	for i := range s.Users {
		s.Users[i] = canonUser(s.Users[i])
	}
	for i := range s.Sessions {
		s.Sessions[i] = s.Sessions[i].Normalize()
	}
	for i := range s.VerificationTokens {
		s.VerificationTokens[i].Expires = canonTime(s.VerificationTokens[i].Expires)
	}
	slices.SortFunc(s.Users, byUserID)
	slices.SortFunc(s.Accounts, byAccountKey)
	slices.SortFunc(s.Sessions, bySessionToken)
	slices.SortFunc(s.VerificationTokens, byTokenKey)
	slices.SortFunc(s.Authenticators, byCredentialID)
	for i := range s.Factors {
		s.Factors[i] = canonFactor(s.Factors[i])
	}
	slices.SortFunc(s.Factors, core.CompareFactors)
	return s
}

// readState reads everything stored through the raw view: in one read
// when it is a [RecordsReader], else kind by kind; the factors too when it
// is a [FactorRaw].
func (e *env) readState(t *testing.T) state {
	t.Helper()
	var s state
	var err error
	if fr, ok := e.raw.(FactorRaw); ok {
		if s.Factors, err = fr.Factors(e.ctx); err != nil {
			t.Fatalf("raw factors: %v", err)
		}
	}
	if rr, ok := e.raw.(RecordsReader); ok {
		rs, err := rr.Records(e.ctx)
		if err != nil {
			t.Fatalf("raw records: %v", err)
		}
		s.Users, s.Accounts, s.Sessions, s.VerificationTokens, s.Authenticators = rs.Users, rs.Accounts, rs.Sessions, rs.VerificationTokens, rs.Authenticators
		return s
	}
	if s.Users, err = e.raw.Users(e.ctx); err != nil {
		t.Fatalf("raw users: %v", err)
	}
	if s.Accounts, err = e.raw.Accounts(e.ctx); err != nil {
		t.Fatalf("raw accounts: %v", err)
	}
	if s.Sessions, err = e.raw.Sessions(e.ctx); err != nil {
		t.Fatalf("raw sessions: %v", err)
	}
	if s.VerificationTokens, err = e.raw.VerificationTokens(e.ctx); err != nil {
		t.Fatalf("raw verification tokens: %v", err)
	}
	if s.Authenticators, err = e.raw.Authenticators(e.ctx); err != nil {
		t.Fatalf("raw authenticators: %v", err)
	}
	return s
}

// The orders of a state's records, also used to build expected states.
func byUserID(a, b core.User) int { return cmp.Compare(a.ID, b.ID) }

func byAccountKey(a, b core.Account) int {
	return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ProviderAccountID, b.ProviderAccountID))
}

func bySessionToken(a, b core.Session) int { return cmp.Compare(a.SessionToken, b.SessionToken) }

func byTokenKey(a, b core.VerificationToken) int {
	return cmp.Or(cmp.Compare(a.Identifier, b.Identifier), cmp.Compare(a.Token, b.Token))
}

func byCredentialID(a, b core.Authenticator) int { return cmp.Compare(a.CredentialID, b.CredentialID) }

// expectUnchanged fails the test if the stored state differs from before.
func (e *env) expectUnchanged(t *testing.T, before state, what string) {
	t.Helper()
	after := e.state(t)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed what is stored:\nbefore: %s\nafter:  %s", what, show(before), show(after))
	}
}

// expectRefused runs call, a write the adapter must refuse, and fails the
// test unless its error matches target and what is stored is as it was
// before: what names the call in the message about the error, rejected in
// the message about the stored state.
func (e *env) expectRefused(t *testing.T, what, rejected string, target error, call func() error) {
	t.Helper()
	before := e.state(t)
	expectErr(t, what, call(), target)
	e.expectUnchanged(t, before, rejected)
}

// expectNothing runs call, which names a record that is not stored, and
// fails the test unless it returns nil and no error and leaves what is
// stored as it was; what names the call.
func expectNothing[T any](t *testing.T, e *env, what string, call func() (*T, error)) {
	t.Helper()
	before := e.state(t)
	if got, err := call(); err != nil || got != nil {
		t.Errorf("%s = %s, %v; want nil, nil", what, show(got), err)
	}
	e.expectUnchanged(t, before, what)
}

// expectInvalid calls the create method named name with each of records and
// fails the test unless every call is refused with core.ErrInvalidInput and
// nothing is stored; a record's name says what is wrong with it.
func expectInvalid[T any](t *testing.T, e *env, name string, create func(context.Context, T) (*T, error), records map[string]T) {
	t.Helper()
	before := e.state(t)
	for what, rec := range records {
		_, err := create(e.ctx, rec)
		expectErr(t, name+" with "+what, err, core.ErrInvalidInput)
	}
	e.expectUnchanged(t, before, "the rejected "+name+" calls")
}

// spoiled returns, under each name of bad, a record made by fresh and then
// changed by the function under that name.
func spoiled[T any](fresh func() T, bad map[string]func(*T)) map[string]T {
	out := make(map[string]T, len(bad))
	for name, spoil := range bad {
		rec := fresh()
		spoil(&rec)
		out[name] = rec
	}
	return out
}

// errOf returns the error of a method's results, for a call whose result
// does not matter.
func errOf[T any](_ T, err error) error { return err }

// canonTime strips the monotonic reading and the location so that equal
// instants compare equal with reflect.DeepEqual. It keeps the precision.
func canonTime(t time.Time) time.Time { return t.Round(0).UTC() }

func canonUser(u core.User) core.User {
	if u.EmailVerified != nil {
		u.EmailVerified = ptr(canonTime(*u.EmailVerified))
	}
	u.Data = canonData(u.Data)
	return u
}

// canonData rewrites each application field in one canonical JSON form, so
// that equal values compare equal whatever the store's spelling (3 and 3.0,
// spacing, key order); an empty map becomes nil.
func canonData(data map[string]json.RawMessage) map[string]json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(data))
	for k, v := range data {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			out[k] = v // left as it is, so that the comparison shows it
			continue
		}
		b, _ := json.Marshal(x)
		out[k] = b
	}
	return out
}

// expectUTC fails the test unless the adapter returned tm in UTC.
func expectUTC(t *testing.T, what string, tm time.Time) {
	t.Helper()
	if tm.Location() != time.UTC {
		t.Errorf("%s is in %q; adapters return times in UTC", what, tm.Location())
	}
}

// expectEqual fails the test unless got and want are deeply equal.
func expectEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got: %s\nwant: %s", what, show(got), show(want))
	}
}

// found returns the record a read found, failing the test at once, naming
// what, when it found nothing.
func found[T any](t *testing.T, what string, got *T) T {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = nil", what)
	}
	return *got
}

// returned reports whether the adapter returned a record, failing the test
// with what and want when it returned nil.
func returned[T any](t *testing.T, what string, got *T, want T) bool {
	t.Helper()
	if got == nil {
		t.Errorf("%s: got nil, want %s", what, show(want))
	}
	return got != nil
}

// expectUser compares a user the adapter returned with the one expected.
func expectUser(t *testing.T, what string, got *core.User, want core.User) {
	t.Helper()
	if !returned(t, what, got, want) {
		return
	}
	if got.EmailVerified != nil {
		expectUTC(t, what+".EmailVerified", *got.EmailVerified)
	}
	expectEqual(t, what, canonUser(*got), canonUser(want))
}

// expectAccount compares an account the adapter returned with the one
// expected.
func expectAccount(t *testing.T, what string, got *core.Account, want core.Account) {
	t.Helper()
	if returned(t, what, got, want) {
		expectEqual(t, what, *got, want)
	}
}

// expectOptional fails the test on err, the error of a write that the spec
// lets return nothing, and, when the write returned a record, compares it
// with want through expect (expectUser, expectAccount...).
func expectOptional[T any](t *testing.T, err error, what string, got *T, want T, expect func(*testing.T, string, *T, T)) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if got != nil {
		expect(t, what, got, want)
	}
}

func expectSession(t *testing.T, what string, got *core.Session, want core.Session) {
	t.Helper()
	expectExpiring(t, what, got, want, func(s *core.Session) *time.Time { return &s.Expires })
}

func expectToken(t *testing.T, what string, got *core.VerificationToken, want core.VerificationToken) {
	t.Helper()
	expectExpiring(t, what, got, want, func(v *core.VerificationToken) *time.Time { return &v.Expires })
}

// expectExpiring compares a record with an expiry (at expires) that the
// adapter returned with the one expected: the expiry must be in UTC, and it
// is compared as an instant.
func expectExpiring[T any](t *testing.T, what string, got *T, want T, expires func(*T) *time.Time) {
	t.Helper()
	if !returned(t, what, got, want) {
		return
	}
	expectUTC(t, what+".Expires", *expires(got))
	g := *got
	*expires(&g) = canonTime(*expires(&g))
	*expires(&want) = canonTime(*expires(&want))
	expectEqual(t, what, g, want)
}

// expectErr fails the test unless err matches target.
func expectErr(t *testing.T, what string, err, target error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want one matching %v", what, target)
	case !errors.Is(err, target):
		t.Errorf("%s: error %q does not match %v (errors.Is)", what, err, target)
	}
}

// show renders v for a failure message: JSON, which shows what pointers
// point at, with long strings cut short.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	s := string(b)
	if len(s) > 600 {
		s = s[:600] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// contextCancelled returns a context that is already cancelled.
func contextCancelled(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	cancel()
	return ctx, cancel
}
