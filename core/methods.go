package core

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Method is the spec name of an adapter method, e.g. "getSessionAndUser".
type Method string

// The 19 adapter methods of SPEC §4, by their spec names.
const (
	MethodCreateUser                 Method = "createUser"
	MethodGetUser                    Method = "getUser"
	MethodGetUserByEmail             Method = "getUserByEmail"
	MethodGetUserByAccount           Method = "getUserByAccount"
	MethodUpdateUser                 Method = "updateUser"
	MethodDeleteUser                 Method = "deleteUser"
	MethodLinkAccount                Method = "linkAccount"
	MethodUnlinkAccount              Method = "unlinkAccount"
	MethodGetAccount                 Method = "getAccount"
	MethodCreateSession              Method = "createSession"
	MethodGetSessionAndUser          Method = "getSessionAndUser"
	MethodUpdateSession              Method = "updateSession"
	MethodDeleteSession              Method = "deleteSession"
	MethodCreateVerificationToken    Method = "createVerificationToken"
	MethodUseVerificationToken       Method = "useVerificationToken"
	MethodCreateAuthenticator        Method = "createAuthenticator"
	MethodGetAuthenticator           Method = "getAuthenticator"
	MethodListAuthenticatorsByUserID Method = "listAuthenticatorsByUserId"
	MethodUpdateAuthenticatorCounter Method = "updateAuthenticatorCounter"
)

// methodEntry pairs a method with the interface that implements it.
type methodEntry struct {
	method Method
	iface  reflect.Type
}

// methodTable maps each method to the interface that implements it, in the
// order of SPEC §4.
func methodTable() []methodEntry {
	return []methodEntry{
		{MethodCreateUser, reflect.TypeFor[UserCreator]()},
		{MethodGetUser, reflect.TypeFor[UserGetter]()},
		{MethodGetUserByEmail, reflect.TypeFor[UserByEmailGetter]()},
		{MethodGetUserByAccount, reflect.TypeFor[UserByAccountGetter]()},
		{MethodUpdateUser, reflect.TypeFor[UserUpdater]()},
		{MethodDeleteUser, reflect.TypeFor[UserDeleter]()},
		{MethodLinkAccount, reflect.TypeFor[AccountLinker]()},
		{MethodUnlinkAccount, reflect.TypeFor[AccountUnlinker]()},
		{MethodGetAccount, reflect.TypeFor[AccountGetter]()},
		{MethodCreateSession, reflect.TypeFor[SessionCreator]()},
		{MethodGetSessionAndUser, reflect.TypeFor[SessionAndUserGetter]()},
		{MethodUpdateSession, reflect.TypeFor[SessionUpdater]()},
		{MethodDeleteSession, reflect.TypeFor[SessionDeleter]()},
		{MethodCreateVerificationToken, reflect.TypeFor[VerificationTokenCreator]()},
		{MethodUseVerificationToken, reflect.TypeFor[VerificationTokenUser]()},
		{MethodCreateAuthenticator, reflect.TypeFor[AuthenticatorCreator]()},
		{MethodGetAuthenticator, reflect.TypeFor[AuthenticatorGetter]()},
		{MethodListAuthenticatorsByUserID, reflect.TypeFor[AuthenticatorsByUserLister]()},
		{MethodUpdateAuthenticatorCounter, reflect.TypeFor[AuthenticatorCounterUpdater]()},
	}
}

// Methods returns the 19 adapter methods in the order of SPEC §4.
func Methods() []Method {
	table := methodTable()
	ms := make([]Method, len(table))
	for i, e := range table {
		ms[i] = e.method
	}
	return ms
}

// Capabilities is the set of adapter methods an adapter implements, as
// reported by [Probe].
type Capabilities struct {
	adapter    string
	has        map[Method]bool
	extensions []Extension
}

// Probe reports which of the adapter methods a implements. It looks at a's
// method set once; a nil a implements nothing.
//
// A [*Store] is looked through: Probe reports the adapter it wraps. Methods
// an adapter names in [MethodOmitter.OmittedMethods] are not reported.
func Probe(a any) Capabilities {
	if s, ok := a.(*Store); ok {
		return s.caps
	}
	table := methodTable()
	c := Capabilities{adapter: adapterName(a), has: make(map[Method]bool, len(table))}
	if a == nil {
		return c
	}
	var omitted []Method
	if o, ok := a.(MethodOmitter); ok {
		omitted = o.OmittedMethods()
	}
	t := reflect.TypeOf(a)
	for _, e := range table {
		if t.Implements(e.iface) && !slices.Contains(omitted, e.method) {
			c.has[e.method] = true
		}
	}
	for _, e := range extensionTable() {
		if t.Implements(e.iface) && !slices.Contains(omitted, Method(e.ext)) {
			c.extensions = append(c.extensions, e.ext)
		}
	}
	return c
}

// Extension is the name of an optional adapter interface that is not one of
// the 19 spec methods, e.g. "purgeExpired".
type Extension string

// The extensions [Probe] reports.
const (
	// ExtensionPurgeExpired is [ExpiredPurger].
	ExtensionPurgeExpired Extension = "purgeExpired"
	// ExtensionAdvanceAuthenticatorCounter is [AuthenticatorCounterAdvancer].
	ExtensionAdvanceAuthenticatorCounter Extension = "advanceAuthenticatorCounter"
	// ExtensionListAccountsByUserID is [AccountsByUserLister].
	ExtensionListAccountsByUserID Extension = Extension(MethodListAccountsByUserID)
	// ExtensionUpdateAccount is [AccountUpdater].
	ExtensionUpdateAccount Extension = Extension(MethodUpdateAccount)
	// ExtensionExtendSession is [SessionExtender].
	ExtensionExtendSession Extension = Extension(MethodExtendSession)
	// ExtensionListSessionsByUserID is [SessionsByUserLister].
	ExtensionListSessionsByUserID Extension = Extension(MethodListSessionsByUserID)
	// ExtensionDeleteSessionsByUserID is [SessionsByUserDeleter].
	ExtensionDeleteSessionsByUserID Extension = Extension(MethodDeleteSessionsByUserID)
	// ExtensionGetUserByUsername is [UserByUsernameGetter].
	ExtensionGetUserByUsername Extension = Extension(MethodGetUserByUsername)
	// ExtensionSwapPasswordHash is [PasswordHashSwapper].
	ExtensionSwapPasswordHash Extension = Extension(MethodSwapPasswordHash)
	// ExtensionCreateFactor is [FactorCreator].
	ExtensionCreateFactor Extension = Extension(MethodCreateFactor)
	// ExtensionListFactorsByUserID is [FactorsByUserLister].
	ExtensionListFactorsByUserID Extension = Extension(MethodListFactorsByUserID)
	// ExtensionSwapFactor is [FactorSwapper].
	ExtensionSwapFactor Extension = Extension(MethodSwapFactor)
	// ExtensionDeleteFactor is [FactorDeleter].
	ExtensionDeleteFactor Extension = Extension(MethodDeleteFactor)
)

// The names of the extension methods that are called like spec methods,
// for errors ([InputError.Method], [MethodError.Method]).
const (
	MethodListAccountsByUserID   Method = "listAccountsByUserId"
	MethodUpdateAccount          Method = "updateAccount"
	MethodExtendSession          Method = "extendSession"
	MethodListSessionsByUserID   Method = "listSessionsByUserId"
	MethodDeleteSessionsByUserID Method = "deleteSessionsByUserId"
	MethodGetUserByUsername      Method = "getUserByUsername"
	MethodSwapPasswordHash       Method = "swapPasswordHash"
	MethodCreateFactor           Method = "createFactor"
	MethodListFactorsByUserID    Method = "listFactorsByUserId"
	MethodSwapFactor             Method = "swapFactor"
	MethodDeleteFactor           Method = "deleteFactor"
)

// FactorMethods are the four methods that keep second factors
// ([FactorCreator]); an adapter offers all of them or none.
func FactorMethods() []Method {
	return []Method{MethodCreateFactor, MethodListFactorsByUserID, MethodSwapFactor, MethodDeleteFactor}
}

// extensionTable maps each extension to its interface.
func extensionTable() []struct {
	ext   Extension
	iface reflect.Type
} {
	return []struct {
		ext   Extension
		iface reflect.Type
	}{
		{ExtensionPurgeExpired, reflect.TypeFor[ExpiredPurger]()},
		{ExtensionAdvanceAuthenticatorCounter, reflect.TypeFor[AuthenticatorCounterAdvancer]()},
		{ExtensionListAccountsByUserID, reflect.TypeFor[AccountsByUserLister]()},
		{ExtensionUpdateAccount, reflect.TypeFor[AccountUpdater]()},
		{ExtensionExtendSession, reflect.TypeFor[SessionExtender]()},
		{ExtensionListSessionsByUserID, reflect.TypeFor[SessionsByUserLister]()},
		{ExtensionDeleteSessionsByUserID, reflect.TypeFor[SessionsByUserDeleter]()},
		{ExtensionGetUserByUsername, reflect.TypeFor[UserByUsernameGetter]()},
		{ExtensionSwapPasswordHash, reflect.TypeFor[PasswordHashSwapper]()},
		{ExtensionCreateFactor, reflect.TypeFor[FactorCreator]()},
		{ExtensionListFactorsByUserID, reflect.TypeFor[FactorsByUserLister]()},
		{ExtensionSwapFactor, reflect.TypeFor[FactorSwapper]()},
		{ExtensionDeleteFactor, reflect.TypeFor[FactorDeleter]()},
	}
}

// Extensions returns the extensions the adapter offers ([ExpiredPurger],
// [AuthenticatorCounterAdvancer], [AccountsByUserLister], [AccountUpdater],
// [SessionExtender], [SessionsByUserLister], [SessionsByUserDeleter],
// [UserByUsernameGetter], [PasswordHashSwapper], [FactorCreator],
// [FactorsByUserLister], [FactorSwapper], [FactorDeleter]), in a fixed
// order.
func (c Capabilities) Extensions() []Extension { return slices.Clone(c.extensions) }

// HasExtension reports whether the adapter offers the extension x.
func (c Capabilities) HasExtension(x Extension) bool { return slices.Contains(c.extensions, x) }

// Adapter returns the Go type name of the probed adapter, e.g. "*memory.Adapter".
func (c Capabilities) Adapter() string { return c.adapter }

// Has reports whether the adapter implements m.
func (c Capabilities) Has(m Method) bool { return c.has[m] }

// Implemented returns the methods the adapter implements, in spec order.
func (c Capabilities) Implemented() []Method {
	var ms []Method
	for _, e := range methodTable() {
		if c.has[e.method] {
			ms = append(ms, e.method)
		}
	}
	return ms
}

// Missing returns those of the methods that the adapter does not implement,
// in the order given, without repeats. An extension method named like a
// spec method ([MethodCreateFactor], [MethodSwapPasswordHash], …) counts as
// implemented when the adapter offers the extension.
func (c Capabilities) Missing(methods ...Method) []Method {
	var ms []Method
	for _, m := range methods {
		if !c.has[m] && !c.HasExtension(Extension(m)) && !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	return ms
}

// Require returns nil when the adapter implements every method of methods,
// and otherwise a [*MissingMethodsError] naming each missing one as needed by
// neededBy (for example "e-mail sign-in").
func (c Capabilities) Require(neededBy string, methods ...Method) error {
	missing := c.Missing(methods...)
	if len(missing) == 0 {
		return nil
	}
	e := &MissingMethodsError{Adapter: c.adapter}
	for _, m := range missing {
		e.Missing = append(e.Missing, MissingMethod{Method: m, NeededBy: neededBy})
	}
	return e
}

// String lists the implemented methods, then the extensions in brackets,
// e.g. "*memory.Adapter: createUser, getUser [purgeExpired]".
func (c Capabilities) String() string {
	ms := c.Implemented()
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = string(m)
	}
	s := c.adapter + ": " + strings.Join(names, ", ")
	if len(c.extensions) > 0 {
		xs := make([]string, len(c.extensions))
		for i, x := range c.extensions {
			xs[i] = string(x)
		}
		s += " [" + strings.Join(xs, ", ") + "]"
	}
	return s
}

// Require returns a as the method interface I, or, when a does not
// implement it, the zero I and a [*MissingMethodsError] naming the method and
// neededBy. I must be one of the 19 method interfaces of this package, as
// in core.Require[core.SessionAndUserGetter](adapter, "session lookup");
// ExampleRequire runs one.
//
// A [*Store] is looked through: Require succeeds, returning the Store, when
// the adapter it wraps implements the method. An adapter's
// [MethodOmitter.OmittedMethods] count as missing.
func Require[I any](a any, neededBy string) (I, error) {
	var zero I
	m := MethodOf[I]()
	if s, ok := a.(*Store); ok {
		if s.has(m) {
			return any(s).(I), nil
		}
		return zero, &MissingMethodsError{Adapter: s.caps.adapter, Missing: []MissingMethod{{Method: m, NeededBy: neededBy}}}
	}
	if i, ok := a.(I); ok {
		if o, ok := a.(MethodOmitter); !ok || !slices.Contains(o.OmittedMethods(), m) {
			return i, nil
		}
	}
	return zero, &MissingMethodsError{
		Adapter: adapterName(a),
		Missing: []MissingMethod{{Method: m, NeededBy: neededBy}},
	}
}

// MethodOf returns the spec name of the method interface I (or the name of
// the extension interface I), or "" when I is neither.
func MethodOf[I any]() Method {
	// The spec methods by a type switch, which costs no reflection: the
	// read path asks for its method on every request. methodTable has
	// the same pairs (TestMethodOfMatchesTable).
	switch any((*I)(nil)).(type) {
	case *UserCreator:
		return MethodCreateUser
	case *UserGetter:
		return MethodGetUser
	case *UserByEmailGetter:
		return MethodGetUserByEmail
	case *UserByAccountGetter:
		return MethodGetUserByAccount
	case *UserUpdater:
		return MethodUpdateUser
	case *UserDeleter:
		return MethodDeleteUser
	case *AccountLinker:
		return MethodLinkAccount
	case *AccountUnlinker:
		return MethodUnlinkAccount
	case *AccountGetter:
		return MethodGetAccount
	case *SessionCreator:
		return MethodCreateSession
	case *SessionAndUserGetter:
		return MethodGetSessionAndUser
	case *SessionUpdater:
		return MethodUpdateSession
	case *SessionDeleter:
		return MethodDeleteSession
	case *VerificationTokenCreator:
		return MethodCreateVerificationToken
	case *VerificationTokenUser:
		return MethodUseVerificationToken
	case *AuthenticatorCreator:
		return MethodCreateAuthenticator
	case *AuthenticatorGetter:
		return MethodGetAuthenticator
	case *AuthenticatorsByUserLister:
		return MethodListAuthenticatorsByUserID
	case *AuthenticatorCounterUpdater:
		return MethodUpdateAuthenticatorCounter
	}
	t := reflect.TypeFor[I]()
	for _, e := range methodTable() {
		if e.iface == t {
			return e.method
		}
	}
	for _, e := range extensionTable() {
		if e.iface == t {
			return Method(e.ext)
		}
	}
	return ""
}

func adapterName(a any) string {
	if a == nil {
		return "<nil>"
	}
	return reflect.TypeOf(a).String()
}

// PurgeResult counts the records a purge removed.
type PurgeResult struct {
	Sessions           int
	VerificationTokens int
}

// ExpiredPurger is not a spec method: adapters whose store does not expire
// records by itself offer it to remove expired sessions and verification
// tokens. Applications call it periodically; the library never needs it.
type ExpiredPurger interface {
	// PurgeExpired deletes every session and verification token whose
	// expiry is not after now and reports how many it deleted.
	PurgeExpired(ctx context.Context) (PurgeResult, error)
}

// AuthenticatorCounterAdvancer is not a spec method: adapters whose store
// can compare and set in one step offer it, and core/auth uses it instead of
// getAuthenticator followed by updateAuthenticatorCounter, so that of two
// assertions racing with the same counter only one passes.
type AuthenticatorCounterAdvancer interface {
	// AdvanceAuthenticatorCounter sets the authenticator's counter to
	// newCounter only if newCounter is above the stored counter, atomically,
	// and returns the authenticator as stored afterwards. When both are 0
	// (an authenticator that keeps no counter) it changes nothing and
	// returns the authenticator. Otherwise, when the stored counter is not
	// below newCounter, it changes nothing and returns an error matching
	// [ErrCounterNotIncreased]. An unknown credential id gives an error
	// matching [ErrNotFound], a negative counter one matching
	// [ErrInvalidInput].
	AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*Authenticator, error)
}

// CounterAdvances reports whether an authenticator whose stored signature
// counter is stored may accept an assertion reporting reported: reported is
// above stored, or both are 0 (an authenticator without a counter). It is
// the rule [AuthenticatorCounterAdvancer] applies.
func CounterAdvances(stored, reported int64) bool {
	return reported > stored || (reported == 0 && stored == 0)
}

// AccountsByUserLister is not a spec method: it lists the accounts linked to
// a user, so that an application can show them and unlink one, and the
// library can refuse to unlink the last way to sign in.
type AccountsByUserLister interface {
	// ListAccountsByUserID returns every account of the user, ordered by
	// provider then provider account id. For an unknown user it returns an
	// empty, non-nil list and no error.
	ListAccountsByUserID(ctx context.Context, userID string) ([]Account, error)
}

// AccountUpdater is not a spec method: it changes the token fields of one
// account, so that the library can store the tokens a refresh returned.
type AccountUpdater interface {
	// UpdateAccount applies the update to the account it names and returns
	// the account as stored afterwards, or nil, nil when there is no such
	// account. Fields the update does not set are left as stored, even
	// when another instance changes them concurrently.
	UpdateAccount(ctx context.Context, update AccountUpdate) (*Account, error)
}

// SessionExtender is not a spec method: adapters whose store can compare and
// set in one step offer it, and core/auth extends sessions with it instead
// of updateSession, so that of several instances (or processes) that find
// the same session due for extension at once, only one writes.
type SessionExtender interface {
	// ExtendSession sets the session's expiry to expires if, atomically,
	// its stored expiry is not after from (the expiry the caller read), and
	// returns the session as stored afterwards and whether it wrote. When
	// another caller has moved the expiry past from, it changes nothing and
	// returns the stored session and false. When there is no such session
	// it returns nil, false, nil. expires is after from. An adapter that
	// keeps session metadata ([SessionMetadataKeeper]) sets UpdatedAt to
	// seen in the same write.
	ExtendSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*Session, bool, error)
}

// SessionsByUserLister is not a spec method: it lists a user's sessions,
// for "where am I signed in?". The listing is exact: a session that was
// deleted, or has expired (whether or not the store has evicted it yet), is
// never listed, and leaves no index entry behind once the adapter has seen
// it expired.
type SessionsByUserLister interface {
	// ListSessionsByUserID returns the user's unexpired sessions, ordered
	// by session token ([CompareSessions]), with their metadata where the
	// adapter keeps it (the other methods may leave the metadata out: the
	// read of every request has no use for it). For an unknown user it
	// returns an empty, non-nil list and no error. It reads one index; it
	// writes no session (it may prune index entries of expired ones).
	ListSessionsByUserID(ctx context.Context, userID string) ([]Session, error)
}

// SessionsByUserDeleter is not a spec method: it ends a user's sessions,
// for "sign out everywhere" and "sign out my other devices".
type SessionsByUserDeleter interface {
	// DeleteSessionsByUserID deletes every session of the user except the
	// one whose token is except ("" keeps none), and reports how many
	// unexpired sessions it deleted. A session created for the user while
	// it runs is either deleted or left whole, never half-deleted; a
	// session deleted by it never becomes readable again, even when an
	// extension of it races the delete. except naming another user's
	// session keeps nothing of that user's. For an unknown user it returns
	// 0 and no error.
	DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error)
}

// UserByUsernameGetter is not a spec method: an adapter that keeps
// usernames ([User.Username]) offers it, and only such an adapter accepts a
// user with one. An instance without room for them (a SQL preset whose
// table has no username column) names it in
// [MethodOmitter.OmittedMethods]; the [Store] then refuses a username with
// an error matching [ErrInvalidInput].
//
// Usernames are unique among the users that have one: createUser and
// updateUser with a username another user has give an error matching
// [ErrAlreadyExists] and change nothing, as they do for e-mail addresses;
// deleteUser and an update to another name (or to "") free it at once.
type UserByUsernameGetter interface {
	// GetUserByUsername returns the user with the username, compared
	// exactly (the library normalises before it writes or looks up), or
	// nil, nil when there is none.
	GetUserByUsername(ctx context.Context, username string) (*User, error)
}

// PasswordHashSwapper is not a spec method: an adapter that keeps password
// hashes on accounts ([Account.PasswordHash]) offers it, and only such an
// adapter accepts an account with one. An instance without room for them
// names it in [MethodOmitter.OmittedMethods]; the [Store] then refuses a
// password hash with an error matching [ErrInvalidInput].
//
// The library changes a password only through it, so that a change, a
// reset and the re-hash a sign-in does when the hasher's parameters change
// never undo each other: each replaces the hash it read, or nothing.
type PasswordHashSwapper interface {
	// SwapPasswordHash sets the password hash of the account named by key
	// to newHash if, atomically, its stored hash is oldHash ("" matches an
	// account without one), and returns the account as stored afterwards.
	// When the stored hash is another, it changes nothing and returns the
	// stored account and an error matching [ErrPasswordHashChanged]. When
	// there is no such account it returns nil, nil. newHash is not "".
	SwapPasswordHash(ctx context.Context, key AccountKey, oldHash, newHash string) (*Account, error)
}

// SessionMetadataKeeper is implemented by an adapter that can keep session
// metadata ([Session.CreatedAt], UpdatedAt, IPAddress, UserAgent). An
// adapter that does not implement it, or whose KeepsSessionMetadata
// returns false (a SQL table without the columns, say), returns those
// fields as zero values.
type SessionMetadataKeeper interface {
	// KeepsSessionMetadata reports whether this configured instance
	// stores session metadata.
	KeepsSessionMetadata() bool
}

// KeepsSessionMetadata reports whether the adapter a (or the adapter behind
// a [*Store]) keeps session metadata.
func KeepsSessionMetadata(a any) bool {
	if s, ok := a.(*Store); ok {
		a = s.adapter
	}
	k, ok := a.(SessionMetadataKeeper)
	return ok && k.KeepsSessionMetadata()
}
