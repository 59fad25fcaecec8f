package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Store is an adapter behind the checked layer: the rules every adapter
// method shares are applied here once, so that adapters hold only storage.
// For each call, in order:
//
//   - a method the adapter does not implement (or says it omits, see
//     [MethodOmitter]) returns a [*MissingMethodsError];
//   - a done context returns its error without calling the adapter;
//   - input the contract rejects returns an [*InputError] without calling
//     the adapter: empty ids and keys on writes, strings that are not valid
//     UTF-8 or hold a NUL byte, a negative counter, bad application fields;
//   - a lookup by an empty key, or by a key no write could have stored,
//     finds nothing without calling the adapter;
//   - records are normalised on the way in (times truncated to
//     [TimePrecision] in UTC, token types lowercased) and on the way out;
//   - the adapter's error comes back as a [*MethodError] naming the method.
//
// Observers (see [WithObserver]) are told of every call once it returned.
//
// core/auth and the conformance suite call adapters only through a Store.
// A Store implements every method interface of this package; [Probe] and
// [Require] look through it at the adapter it wraps.
type Store struct {
	adapter   any
	caps      Capabilities
	observers []Observer
}

// NewStore puts the checked layer in front of adapter a, configured by
// opts (see [WithObserver]). It probes a once. Given a Store and no
// option, it returns that Store unchanged; given a Store and options, a
// new Store in front of the same adapter, with that Store's observers and
// the options applied after them.
func NewStore(a any, opts ...StoreOption) *Store {
	s, ok := a.(*Store)
	switch {
	case ok && len(opts) == 0:
		return s
	case ok:
		c := *s
		s = &c
	default:
		s = &Store{adapter: a, caps: Probe(a)}
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Adapter returns the adapter behind the layer.
func (s *Store) Adapter() any { return s.adapter }

// Capabilities reports what the adapter behind the layer implements.
func (s *Store) Capabilities() Capabilities { return s.caps }

// MethodOmitter is implemented by an adapter whose Go type has methods that
// the configured instance does not support, e.g. a SQL adapter told to leave
// out the authenticator table. [Probe] does not report them, and a [Store]
// answers them with a [*MissingMethodsError].
type MethodOmitter interface {
	// OmittedMethods returns the spec names of the methods (and the names
	// of the extensions) the instance does not support.
	OmittedMethods() []Method
}

// MethodError is an adapter method's failure, with the method's spec name.
// errors.Is and errors.As see through it to the adapter's error.
type MethodError struct {
	Method Method
	Err    error
}

// Error gives the method's name, then the adapter's error.
func (e *MethodError) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, string(e.Method)+": ") {
		return msg
	}
	return string(e.Method) + ": " + msg
}

// Unwrap returns the adapter's error.
func (e *MethodError) Unwrap() error { return e.Err }

// call runs one method through the layer: the missing-method and context
// checks, then f with the adapter as I, wrapping f's error; the Store's
// observers are told of the call.
func call[I, R any](ctx context.Context, s *Store, m Method, f func(I) (R, error)) (R, error) {
	return observed(ctx, s, m, func() (R, error) {
		var zero R
		impl, ok := s.adapter.(I)
		if !ok || !s.has(m) {
			return zero, &MissingMethodsError{Adapter: s.caps.adapter, Missing: []MissingMethod{{Method: m}}}
		}
		if err := ctx.Err(); err != nil {
			return zero, &MethodError{Method: m, Err: err}
		}
		r, err := f(impl)
		if err != nil {
			if _, ok := err.(*InputError); ok {
				return zero, err
			}
			return zero, &MethodError{Method: m, Err: err}
		}
		return r, nil
	})
}

// lookup is a call by key: when a key part is empty or could not have been
// stored (see [storable]), it returns none without calling the adapter.
func lookup[I, R any](ctx context.Context, s *Store, m Method, none R, keys []string, f func(I) (R, error)) (R, error) {
	return call(ctx, s, m, func(a I) (R, error) {
		if !lookupKey(keys...) {
			return none, nil
		}
		return f(a)
	})
}

func (s *Store) has(m Method) bool { return s.caps.Has(m) || s.caps.HasExtension(Extension(m)) }

// storable reports whether a string can be a stored key: valid UTF-8
// without NUL bytes. A lookup by any other key finds nothing.
func storable(v string) bool { return utf8.ValidString(v) && strings.IndexByte(v, 0) < 0 }

// lookupKey reports whether a lookup by these key parts can find anything.
func lookupKey(parts ...string) bool {
	for _, p := range parts {
		if p == "" || !storable(p) {
			return false
		}
	}
	return true
}

// field is a string field of a record the layer checks: its name in the
// contract and its value (nil: an optional field that is not set).
type field struct {
	name  string
	value *string
}

// checkStrings returns an [*InputError] for the first field whose value is
// not valid UTF-8 or holds a NUL byte.
func checkStrings(m Method, fields ...field) error {
	for _, f := range fields {
		switch {
		case f.value == nil:
		case !utf8.ValidString(*f.value):
			return invalid(string(m), f.name, "must be valid UTF-8")
		case strings.IndexByte(*f.value, 0) >= 0:
			return invalid(string(m), f.name, "must not contain a NUL byte")
		}
	}
	return nil
}

// checkData returns an [*InputError] for application field values that are
// not valid UTF-8.
func checkData(m Method, data map[string]json.RawMessage) error {
	for name, v := range data {
		if !utf8.Valid(v) {
			return invalid(string(m), "data."+name, "must be valid UTF-8")
		}
	}
	return nil
}

func checkUser(m Method, u *User) error {
	if err := checkStrings(m, field{"id", &u.ID}, field{"email", &u.Email}, field{"username", &u.Username}, field{"name", u.Name}, field{"image", u.Image}); err != nil {
		return err
	}
	return checkData(m, u.Data)
}

// keepsUsernames returns an [*InputError] when name is set and the adapter
// keeps no usernames (it does not offer getUserByUsername).
func (s *Store) keepsUsernames(m Method, name string) error {
	if name != "" && !s.has(MethodGetUserByUsername) {
		return invalid(string(m), "username", "this adapter keeps no usernames (it does not offer getUserByUsername)")
	}
	return nil
}

func checkAccount(m Method, a *Account) error {
	err := checkStrings(m, field{"userId", &a.UserID}, field{"provider", &a.Provider}, field{"providerAccountId", &a.ProviderAccountID},
		field{"access_token", a.AccessToken}, field{"id_token", a.IDToken}, field{"refresh_token", a.RefreshToken},
		field{"scope", a.Scope}, field{"token_type", a.TokenType}, field{"session_state", a.SessionState}, field{"passwordHash", a.PasswordHash})
	if err != nil {
		return err
	}
	for _, d := range a.AuthorizationDetails {
		fields := []field{{"authorization_details", &d.Type}, {"authorization_details", &d.Identifier}}
		for _, list := range [][]string{d.Locations, d.Actions, d.Datatypes, d.Privileges} {
			for i := range list {
				fields = append(fields, field{"authorization_details", &list[i]})
			}
		}
		if err := checkStrings(m, fields...); err != nil {
			return err
		}
	}
	return nil
}

// normUser normalises a user the adapter returned, in place, and passes
// err on.
func normUser(u *User, err error) (*User, error) {
	if u != nil && u.EmailVerified != nil {
		*u.EmailVerified = NormalizeTime(*u.EmailVerified)
	}
	return u, err
}

// normAccount normalises an account the adapter returned, in place, and
// passes err on.
func normAccount(a *Account, err error) (*Account, error) {
	if a != nil && a.TokenType != nil {
		if l := strings.ToLower(*a.TokenType); l != *a.TokenType {
			*a.TokenType = l
		}
	}
	return a, err
}

// normSession normalises a session the adapter returned, in place, and
// passes err on.
func normSession(s *Session, err error) (*Session, error) {
	if s != nil {
		*s = s.Normalize()
	}
	return s, err
}

// normToken normalises a verification token the adapter returned, in
// place, and passes err on.
func normToken(v *VerificationToken, err error) (*VerificationToken, error) {
	if v != nil {
		v.Expires = NormalizeTime(v.Expires)
	}
	return v, err
}

// CreateUser is createUser through the layer.
func (s *Store) CreateUser(ctx context.Context, user User) (*User, error) {
	return write(ctx, s, MethodCreateUser, func(a UserCreator) (*User, error) {
		return normUser(a.CreateUser(ctx, user.Normalize()))
	}, user.Validate, func() error { return checkUser(MethodCreateUser, &user) },
		func() error { return s.keepsUsernames(MethodCreateUser, user.Username) })
}

// GetUser is getUser through the layer.
func (s *Store) GetUser(ctx context.Context, id string) (*User, error) {
	return lookup(ctx, s, MethodGetUser, nil, []string{id}, func(a UserGetter) (*User, error) {
		return normUser(a.GetUser(ctx, id))
	})
}

// GetUserByEmail is getUserByEmail through the layer.
func (s *Store) GetUserByEmail(ctx context.Context, email string) (*User, error) {
	return lookup(ctx, s, MethodGetUserByEmail, nil, []string{email}, func(a UserByEmailGetter) (*User, error) {
		return normUser(a.GetUserByEmail(ctx, email))
	})
}

// GetUserByUsername is the getUserByUsername extension through the layer.
// A name that is not normalised finds nothing.
func (s *Store) GetUserByUsername(ctx context.Context, username string) (*User, error) {
	return lookup(ctx, s, MethodGetUserByUsername, nil, []string{username}, func(a UserByUsernameGetter) (*User, error) {
		if n, err := NormalizeUsername(username); err != nil || n != username {
			return nil, nil
		}
		return normUser(a.GetUserByUsername(ctx, username))
	})
}

// GetUserByAccount is getUserByAccount through the layer.
func (s *Store) GetUserByAccount(ctx context.Context, key AccountKey) (*User, error) {
	return lookup(ctx, s, MethodGetUserByAccount, nil, []string{key.Provider, key.ProviderAccountID}, func(a UserByAccountGetter) (*User, error) {
		return normUser(a.GetUserByAccount(ctx, key))
	})
}

// UpdateUser is updateUser through the layer.
func (s *Store) UpdateUser(ctx context.Context, update UserUpdate) (*User, error) {
	const m = MethodUpdateUser
	return write(ctx, s, m, func(a UserUpdater) (*User, error) {
		update.EmailVerified.Value = NormalizeTimePtr(update.EmailVerified.Value)
		return normUser(a.UpdateUser(ctx, update))
	}, update.Validate, func() error {
		return checkStrings(m, field{"id", &update.ID}, field{"email", &update.Email.Value},
			field{"name", update.Name.Value}, field{"image", update.Image.Value})
	}, func() error { return checkData(m, update.Data) },
		func() error { return s.keepsUsernames(m, update.Username.Value) })
}

// DeleteUser is deleteUser through the layer.
func (s *Store) DeleteUser(ctx context.Context, id string) (*User, error) {
	return lookup(ctx, s, MethodDeleteUser, nil, []string{id}, func(a UserDeleter) (*User, error) {
		return normUser(a.DeleteUser(ctx, id))
	})
}

// LinkAccount is linkAccount through the layer.
func (s *Store) LinkAccount(ctx context.Context, account Account) (*Account, error) {
	return write(ctx, s, MethodLinkAccount, func(a AccountLinker) (*Account, error) {
		return normAccount(a.LinkAccount(ctx, account.Normalize()))
	}, account.Validate, func() error { return checkAccount(MethodLinkAccount, &account) }, func() error {
		if account.PasswordHash != nil && !s.has(MethodSwapPasswordHash) {
			return invalid(string(MethodLinkAccount), "passwordHash", "this adapter keeps no password hashes (it does not offer swapPasswordHash)")
		}
		return nil
	})
}

// SwapPasswordHash is the swapPasswordHash extension through the layer. A
// refused swap returns nil and an error matching [ErrPasswordHashChanged]
// (the layer returns no record with an error): read the account again.
func (s *Store) SwapPasswordHash(ctx context.Context, key AccountKey, oldHash, newHash string) (*Account, error) {
	const m = MethodSwapPasswordHash
	return write(ctx, s, m, func(a PasswordHashSwapper) (*Account, error) {
		return normAccount(a.SwapPasswordHash(ctx, key, oldHash, newHash))
	}, func() error {
		return firstBroken(m, rule{key.Provider == "", "provider", notEmpty},
			rule{key.ProviderAccountID == "", "providerAccountId", notEmpty}, rule{newHash == "", "newHash", notEmpty})
	}, func() error {
		return checkStrings(m, field{"provider", &key.Provider}, field{"providerAccountId", &key.ProviderAccountID},
			field{"oldHash", &oldHash}, field{"newHash", &newHash})
	})
}

// UnlinkAccount is unlinkAccount through the layer.
func (s *Store) UnlinkAccount(ctx context.Context, key AccountKey) (*Account, error) {
	return lookup(ctx, s, MethodUnlinkAccount, nil, []string{key.Provider, key.ProviderAccountID}, func(a AccountUnlinker) (*Account, error) {
		return normAccount(a.UnlinkAccount(ctx, key))
	})
}

// GetAccount is getAccount through the layer.
func (s *Store) GetAccount(ctx context.Context, providerAccountID, provider string) (*Account, error) {
	return lookup(ctx, s, MethodGetAccount, nil, []string{providerAccountID, provider}, func(a AccountGetter) (*Account, error) {
		return normAccount(a.GetAccount(ctx, providerAccountID, provider))
	})
}

// ListAccountsByUserID is the listAccountsByUserId extension through the
// layer.
func (s *Store) ListAccountsByUserID(ctx context.Context, userID string) ([]Account, error) {
	return lookup(ctx, s, MethodListAccountsByUserID, []Account{}, []string{userID}, func(a AccountsByUserLister) ([]Account, error) {
		out, err := a.ListAccountsByUserID(ctx, userID)
		for i := range out {
			normAccount(&out[i], nil)
		}
		return nonNil(out, err)
	})
}

// UpdateAccount is the updateAccount extension through the layer.
func (s *Store) UpdateAccount(ctx context.Context, update AccountUpdate) (*Account, error) {
	const m = MethodUpdateAccount
	return write(ctx, s, m, func(a AccountUpdater) (*Account, error) {
		update.TokenType.Value = NormalizeTokenType(update.TokenType.Value)
		return normAccount(a.UpdateAccount(ctx, update))
	}, update.Validate, func() error {
		probe := update.Apply(Account{Provider: update.Provider, ProviderAccountID: update.ProviderAccountID})
		return checkAccount(m, &probe)
	})
}

// CreateSession is createSession through the layer.
func (s *Store) CreateSession(ctx context.Context, session Session) (*Session, error) {
	const m = MethodCreateSession
	return write(ctx, s, m, func(a SessionCreator) (*Session, error) {
		return normSession(a.CreateSession(ctx, session.Normalize()))
	}, session.Validate, func() error {
		return checkStrings(m, field{"sessionToken", &session.SessionToken}, field{"userId", &session.UserID},
			field{"ipAddress", &session.IPAddress}, field{"userAgent", &session.UserAgent})
	})
}

// GetSessionAndUser is getSessionAndUser through the layer.
func (s *Store) GetSessionAndUser(ctx context.Context, sessionToken string) (*SessionAndUser, error) {
	return lookup(ctx, s, MethodGetSessionAndUser, nil, []string{sessionToken}, func(a SessionAndUserGetter) (*SessionAndUser, error) {
		out, err := a.GetSessionAndUser(ctx, sessionToken)
		if out != nil {
			normSession(&out.Session, nil)
			normUser(&out.User, nil)
		}
		return out, err
	})
}

// UpdateSession is updateSession through the layer.
func (s *Store) UpdateSession(ctx context.Context, update SessionUpdate) (*Session, error) {
	const m = MethodUpdateSession
	return write(ctx, s, m, func(a SessionUpdater) (*Session, error) {
		update.Expires.Value = NormalizeTime(update.Expires.Value)
		update.UpdatedAt.Value = normalizeOptionalTime(update.UpdatedAt.Value)
		return normSession(a.UpdateSession(ctx, update))
	}, update.Validate, func() error {
		return checkStrings(m, field{"sessionToken", &update.SessionToken}, field{"userId", &update.UserID.Value})
	})
}

// extended is what [SessionExtender.ExtendSession] returns.
type extended struct {
	session *Session
	wrote   bool
}

// ExtendSession is the extendSession extension through the layer. from,
// expires and seen are normalised (see [NormalizeTime]) before the adapter
// sees them; an expires not after from, or a zero seen, is an
// [*InputError].
func (s *Store) ExtendSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*Session, bool, error) {
	const m = MethodExtendSession
	r, err := call(ctx, s, m, func(a SessionExtender) (extended, error) {
		from, expires, seen = NormalizeTime(from), NormalizeTime(expires), NormalizeTime(seen)
		if !expires.After(from) {
			return extended{}, invalid(string(m), "expires", "must be after from")
		}
		if seen.Equal(NormalizeTime(time.Time{})) {
			return extended{}, invalid(string(m), "seen", mustBeSet)
		}
		if !lookupKey(sessionToken) {
			return extended{}, nil
		}
		out, wrote, err := a.ExtendSession(ctx, sessionToken, from, expires, seen)
		normSession(out, nil)
		return extended{out, wrote && out != nil}, err
	})
	return r.session, r.wrote, err
}

// DeleteSession is deleteSession through the layer.
func (s *Store) DeleteSession(ctx context.Context, sessionToken string) (*Session, error) {
	return lookup(ctx, s, MethodDeleteSession, nil, []string{sessionToken}, func(a SessionDeleter) (*Session, error) {
		return normSession(a.DeleteSession(ctx, sessionToken))
	})
}

// ListSessionsByUserID is the listSessionsByUserId extension through the
// layer.
func (s *Store) ListSessionsByUserID(ctx context.Context, userID string) ([]Session, error) {
	return lookup(ctx, s, MethodListSessionsByUserID, []Session{}, []string{userID}, func(a SessionsByUserLister) ([]Session, error) {
		out, err := a.ListSessionsByUserID(ctx, userID)
		for i := range out {
			out[i] = out[i].Normalize()
		}
		return nonNil(out, err)
	})
}

// DeleteSessionsByUserID is the deleteSessionsByUserId extension through
// the layer. An except that no write could have stored keeps nothing.
func (s *Store) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	return lookup(ctx, s, MethodDeleteSessionsByUserID, 0, []string{userID}, func(a SessionsByUserDeleter) (int, error) {
		if except != "" && !storable(except) {
			except = ""
		}
		return a.DeleteSessionsByUserID(ctx, userID, except)
	})
}

// CreateVerificationToken is createVerificationToken through the layer.
func (s *Store) CreateVerificationToken(ctx context.Context, token VerificationToken) (*VerificationToken, error) {
	const m = MethodCreateVerificationToken
	return write(ctx, s, m, func(a VerificationTokenCreator) (*VerificationToken, error) {
		return normToken(a.CreateVerificationToken(ctx, token.Normalize()))
	}, token.Validate, func() error {
		return checkStrings(m, field{"identifier", &token.Identifier}, field{"token", &token.Token})
	})
}

// UseVerificationToken is useVerificationToken through the layer.
func (s *Store) UseVerificationToken(ctx context.Context, key VerificationTokenKey) (*VerificationToken, error) {
	return lookup(ctx, s, MethodUseVerificationToken, nil, []string{key.Identifier, key.Token}, func(a VerificationTokenUser) (*VerificationToken, error) {
		return normToken(a.UseVerificationToken(ctx, key))
	})
}

// CreateAuthenticator is createAuthenticator through the layer.
func (s *Store) CreateAuthenticator(ctx context.Context, authenticator Authenticator) (*Authenticator, error) {
	const m = MethodCreateAuthenticator
	au := authenticator.Clone()
	return write(ctx, s, m, func(a AuthenticatorCreator) (*Authenticator, error) {
		return a.CreateAuthenticator(ctx, au)
	}, au.Validate, func() error {
		return checkStrings(m, field{"credentialID", &au.CredentialID}, field{"credentialPublicKey", &au.CredentialPublicKey},
			field{"credentialDeviceType", &au.CredentialDeviceType}, field{"providerAccountId", &au.ProviderAccountID},
			field{"userId", &au.UserID}, field{"transports", au.Transports})
	})
}

// GetAuthenticator is getAuthenticator through the layer.
func (s *Store) GetAuthenticator(ctx context.Context, credentialID string) (*Authenticator, error) {
	return lookup(ctx, s, MethodGetAuthenticator, nil, []string{credentialID}, func(a AuthenticatorGetter) (*Authenticator, error) {
		return a.GetAuthenticator(ctx, credentialID)
	})
}

// ListAuthenticatorsByUserID is listAuthenticatorsByUserId through the layer.
func (s *Store) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]Authenticator, error) {
	return lookup(ctx, s, MethodListAuthenticatorsByUserID, []Authenticator{}, []string{userID}, func(a AuthenticatorsByUserLister) ([]Authenticator, error) {
		return nonNil(a.ListAuthenticatorsByUserID(ctx, userID))
	})
}

// nonNil returns an empty list for a nil one when err is nil: a list
// method finds an empty list, never nil.
func nonNil[T any](out []T, err error) ([]T, error) {
	if err == nil && out == nil {
		out = []T{}
	}
	return out, err
}

// write is a call with checks of its input: they run in order, and the
// first that fails ends the call, without calling the adapter.
func write[I, R any](ctx context.Context, s *Store, m Method, f func(I) (R, error), checks ...func() error) (R, error) {
	return call(ctx, s, m, func(a I) (R, error) {
		for _, c := range checks {
			if err := c(); err != nil {
				var zero R
				return zero, err
			}
		}
		return f(a)
	})
}

// counterUpdate is updateAuthenticatorCounter or its extension
// advanceAuthenticatorCounter through the layer: a negative counter is an
// [*InputError]; an empty or unstorable credential id (which names no
// authenticator) is [ErrNotFound].
func counterUpdate[I any](ctx context.Context, s *Store, m Method, credentialID string, counter int64,
	update func(I) (*Authenticator, error)) (*Authenticator, error) {
	return call(ctx, s, m, func(a I) (*Authenticator, error) {
		if counter < 0 {
			return nil, invalid(string(m), "counter", "must not be negative")
		}
		if !lookupKey(credentialID) {
			return nil, fmt.Errorf("no authenticator with credential id %q: %w", credentialID, ErrNotFound)
		}
		return update(a)
	})
}

// UpdateAuthenticatorCounter is updateAuthenticatorCounter through the
// layer.
func (s *Store) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*Authenticator, error) {
	return counterUpdate(ctx, s, MethodUpdateAuthenticatorCounter, credentialID, newCounter, func(a AuthenticatorCounterUpdater) (*Authenticator, error) {
		return a.UpdateAuthenticatorCounter(ctx, credentialID, newCounter)
	})
}

// AdvanceAuthenticatorCounter is the advanceAuthenticatorCounter extension
// through the layer.
func (s *Store) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*Authenticator, error) {
	return counterUpdate(ctx, s, Method(ExtensionAdvanceAuthenticatorCounter), credentialID, newCounter, func(a AuthenticatorCounterAdvancer) (*Authenticator, error) {
		return a.AdvanceAuthenticatorCounter(ctx, credentialID, newCounter)
	})
}

// CreateFactor is the createFactor extension through the layer.
func (s *Store) CreateFactor(ctx context.Context, factor Factor) (*Factor, error) {
	const m = MethodCreateFactor
	return write(ctx, s, m, func(a FactorCreator) (*Factor, error) {
		return normFactor(a.CreateFactor(ctx, factor.Normalize()))
	}, factor.Validate, func() error {
		return checkStrings(m, field{"id", &factor.ID}, field{"userId", &factor.UserID}, field{"name", &factor.Name})
	})
}

// ListFactorsByUserID is the listFactorsByUserId extension through the
// layer.
func (s *Store) ListFactorsByUserID(ctx context.Context, userID string) ([]Factor, error) {
	return lookup(ctx, s, MethodListFactorsByUserID, []Factor{}, []string{userID}, func(a FactorsByUserLister) ([]Factor, error) {
		out, err := a.ListFactorsByUserID(ctx, userID)
		for i := range out {
			normFactor(&out[i], nil)
		}
		return nonNil(out, err)
	})
}

// SwapFactor is the swapFactor extension through the layer. A refused swap
// returns nil and an error matching [ErrFactorChanged] (the layer returns
// no record with an error): read the factor again. A factor named by an
// empty or unstorable id finds nothing.
func (s *Store) SwapFactor(ctx context.Context, old, next Factor) (*Factor, error) {
	const m = MethodSwapFactor
	return write(ctx, s, m, func(a FactorSwapper) (*Factor, error) {
		if !lookupKey(old.UserID, old.ID) {
			return nil, nil
		}
		return normFactor(a.SwapFactor(ctx, old.Normalize(), next.Normalize()))
	}, func() error {
		return firstBroken(m, rule{len(next.Name) > MaxFactorName, "name", "must be at most 256 bytes"},
			rule{len(next.Secret) > MaxFactorSecret, "secret", "must be at most 4096 bytes"},
			rule{next.Step < 0, "step", "must not be negative"},
			rule{!lastUsedOK(next.LastUsedAt), "lastUsedAt", lastUsedReason})
	}, func() error { return checkStrings(m, field{"name", &next.Name}) })
}

// DeleteFactor is the deleteFactor extension through the layer.
func (s *Store) DeleteFactor(ctx context.Context, userID, id string) (*Factor, error) {
	return lookup(ctx, s, MethodDeleteFactor, nil, []string{userID, id}, func(a FactorDeleter) (*Factor, error) {
		return normFactor(a.DeleteFactor(ctx, userID, id))
	})
}

// normFactor normalises a factor the adapter returned, in place, and
// passes err on.
func normFactor(f *Factor, err error) (*Factor, error) {
	if f != nil {
		f.CreatedAt = NormalizeTime(f.CreatedAt)
		f.LastUsedAt = normalizeOptionalTime(f.LastUsedAt)
		if len(f.Secret) == 0 {
			f.Secret = nil
		}
	}
	return f, err
}

// PurgeExpired is the purgeExpired extension through the layer.
func (s *Store) PurgeExpired(ctx context.Context) (PurgeResult, error) {
	return call(ctx, s, Method(ExtensionPurgeExpired), func(a ExpiredPurger) (PurgeResult, error) {
		return a.PurgeExpired(ctx)
	})
}

// The layer implements every method; Probe and Require look through it.
var _ interface {
	Adapter
	ExpiredPurger
	AuthenticatorCounterAdvancer
	AccountsByUserLister
	AccountUpdater
	FactorCreator
	FactorsByUserLister
	FactorSwapper
	FactorDeleter
} = (*Store)(nil)
