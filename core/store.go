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
// core/auth and the conformance suite call adapters only through a Store.
// A Store implements every method interface of this package; [Probe] and
// [Require] look through it at the adapter it wraps.
type Store struct {
	adapter any
	caps    Capabilities
}

// NewStore puts the checked layer in front of adapter a. It probes a once.
// A Store given a Store returns it unchanged.
func NewStore(a any) *Store {
	if s, ok := a.(*Store); ok {
		return s
	}
	return &Store{adapter: a, caps: Probe(a)}
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
// checks, then f with the adapter as I, wrapping f's error.
func call[I, R any](ctx context.Context, s *Store, m Method, f func(I) (R, error)) (R, error) {
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

// checkStrings returns an [*InputError] for the first field whose value is
// not valid UTF-8 or holds a NUL byte. fields alternates names and values;
// nil pointers are skipped.
func checkStrings(m Method, fields ...any) error {
	for i := 0; i+1 < len(fields); i += 2 {
		var v string
		switch x := fields[i+1].(type) {
		case string:
			v = x
		case *string:
			if x == nil {
				continue
			}
			v = *x
		}
		if !utf8.ValidString(v) {
			return invalid(string(m), fields[i].(string), "must be valid UTF-8")
		}
		if strings.IndexByte(v, 0) >= 0 {
			return invalid(string(m), fields[i].(string), "must not contain a NUL byte")
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
	if err := checkStrings(m, "id", u.ID, "email", u.Email, "name", u.Name, "image", u.Image); err != nil {
		return err
	}
	return checkData(m, u.Data)
}

func checkAccount(m Method, a *Account) error {
	err := checkStrings(m, "userId", a.UserID, "provider", a.Provider, "providerAccountId", a.ProviderAccountID,
		"access_token", a.AccessToken, "id_token", a.IDToken, "refresh_token", a.RefreshToken,
		"scope", a.Scope, "token_type", a.TokenType, "session_state", a.SessionState)
	if err != nil {
		return err
	}
	for _, d := range a.AuthorizationDetails {
		if err := checkStrings(m, "authorization_details", d.Type, "authorization_details", d.Identifier); err != nil {
			return err
		}
		for _, list := range [][]string{d.Locations, d.Actions, d.Datatypes, d.Privileges} {
			for _, v := range list {
				if err := checkStrings(m, "authorization_details", v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// normUser normalises a user the adapter returned, in place.
func normUser(u *User) *User {
	if u != nil && u.EmailVerified != nil {
		*u.EmailVerified = NormalizeTime(*u.EmailVerified)
	}
	return u
}

// normAccount normalises an account the adapter returned, in place.
func normAccount(a *Account) *Account {
	if a != nil && a.TokenType != nil {
		if l := strings.ToLower(*a.TokenType); l != *a.TokenType {
			*a.TokenType = l
		}
	}
	return a
}

func normSession(s *Session) *Session {
	if s != nil {
		s.Expires = NormalizeTime(s.Expires)
	}
	return s
}

func normToken(v *VerificationToken) *VerificationToken {
	if v != nil {
		v.Expires = NormalizeTime(v.Expires)
	}
	return v
}

// CreateUser is createUser through the layer.
func (s *Store) CreateUser(ctx context.Context, user User) (*User, error) {
	return call(ctx, s, MethodCreateUser, func(a UserCreator) (*User, error) {
		if err := user.Validate(); err != nil {
			return nil, err
		}
		if err := checkUser(MethodCreateUser, &user); err != nil {
			return nil, err
		}
		u, err := a.CreateUser(ctx, user.Normalize())
		return normUser(u), err
	})
}

// GetUser is getUser through the layer.
func (s *Store) GetUser(ctx context.Context, id string) (*User, error) {
	return call(ctx, s, MethodGetUser, func(a UserGetter) (*User, error) {
		if !lookupKey(id) {
			return nil, nil
		}
		u, err := a.GetUser(ctx, id)
		return normUser(u), err
	})
}

// GetUserByEmail is getUserByEmail through the layer.
func (s *Store) GetUserByEmail(ctx context.Context, email string) (*User, error) {
	return call(ctx, s, MethodGetUserByEmail, func(a UserByEmailGetter) (*User, error) {
		if !lookupKey(email) {
			return nil, nil
		}
		u, err := a.GetUserByEmail(ctx, email)
		return normUser(u), err
	})
}

// GetUserByAccount is getUserByAccount through the layer.
func (s *Store) GetUserByAccount(ctx context.Context, key AccountKey) (*User, error) {
	return call(ctx, s, MethodGetUserByAccount, func(a UserByAccountGetter) (*User, error) {
		if !lookupKey(key.Provider, key.ProviderAccountID) {
			return nil, nil
		}
		u, err := a.GetUserByAccount(ctx, key)
		return normUser(u), err
	})
}

// UpdateUser is updateUser through the layer.
func (s *Store) UpdateUser(ctx context.Context, update UserUpdate) (*User, error) {
	const m = MethodUpdateUser
	return call(ctx, s, m, func(a UserUpdater) (*User, error) {
		if err := update.Validate(); err != nil {
			return nil, err
		}
		if err := checkStrings(m, "id", update.ID, "email", update.Email.Value,
			"name", update.Name.Value, "image", update.Image.Value); err != nil {
			return nil, err
		}
		if err := checkData(m, update.Data); err != nil {
			return nil, err
		}
		update.EmailVerified.Value = NormalizeTimePtr(update.EmailVerified.Value)
		u, err := a.UpdateUser(ctx, update)
		return normUser(u), err
	})
}

// DeleteUser is deleteUser through the layer.
func (s *Store) DeleteUser(ctx context.Context, id string) (*User, error) {
	return call(ctx, s, MethodDeleteUser, func(a UserDeleter) (*User, error) {
		if !lookupKey(id) {
			return nil, nil
		}
		u, err := a.DeleteUser(ctx, id)
		return normUser(u), err
	})
}

// LinkAccount is linkAccount through the layer.
func (s *Store) LinkAccount(ctx context.Context, account Account) (*Account, error) {
	return call(ctx, s, MethodLinkAccount, func(a AccountLinker) (*Account, error) {
		if err := account.Validate(); err != nil {
			return nil, err
		}
		if err := checkAccount(MethodLinkAccount, &account); err != nil {
			return nil, err
		}
		out, err := a.LinkAccount(ctx, account.Normalize())
		return normAccount(out), err
	})
}

// UnlinkAccount is unlinkAccount through the layer.
func (s *Store) UnlinkAccount(ctx context.Context, key AccountKey) (*Account, error) {
	return call(ctx, s, MethodUnlinkAccount, func(a AccountUnlinker) (*Account, error) {
		if !lookupKey(key.Provider, key.ProviderAccountID) {
			return nil, nil
		}
		out, err := a.UnlinkAccount(ctx, key)
		return normAccount(out), err
	})
}

// GetAccount is getAccount through the layer.
func (s *Store) GetAccount(ctx context.Context, providerAccountID, provider string) (*Account, error) {
	return call(ctx, s, MethodGetAccount, func(a AccountGetter) (*Account, error) {
		if !lookupKey(providerAccountID, provider) {
			return nil, nil
		}
		out, err := a.GetAccount(ctx, providerAccountID, provider)
		return normAccount(out), err
	})
}

// ListAccountsByUserID is the listAccountsByUserId extension through the
// layer.
func (s *Store) ListAccountsByUserID(ctx context.Context, userID string) ([]Account, error) {
	return call(ctx, s, MethodListAccountsByUserID, func(a AccountsByUserLister) ([]Account, error) {
		if !lookupKey(userID) {
			return []Account{}, nil
		}
		out, err := a.ListAccountsByUserID(ctx, userID)
		if err == nil && out == nil {
			out = []Account{}
		}
		for i := range out {
			normAccount(&out[i])
		}
		return out, err
	})
}

// UpdateAccount is the updateAccount extension through the layer.
func (s *Store) UpdateAccount(ctx context.Context, update AccountUpdate) (*Account, error) {
	const m = MethodUpdateAccount
	return call(ctx, s, m, func(a AccountUpdater) (*Account, error) {
		if err := update.Validate(); err != nil {
			return nil, err
		}
		probe := update.Apply(Account{Provider: update.Provider, ProviderAccountID: update.ProviderAccountID})
		if err := checkAccount(m, &probe); err != nil {
			return nil, err
		}
		update.TokenType.Value = NormalizeTokenType(update.TokenType.Value)
		out, err := a.UpdateAccount(ctx, update)
		return normAccount(out), err
	})
}

// CreateSession is createSession through the layer.
func (s *Store) CreateSession(ctx context.Context, session Session) (*Session, error) {
	const m = MethodCreateSession
	return call(ctx, s, m, func(a SessionCreator) (*Session, error) {
		if err := session.Validate(); err != nil {
			return nil, err
		}
		if err := checkStrings(m, "sessionToken", session.SessionToken, "userId", session.UserID); err != nil {
			return nil, err
		}
		out, err := a.CreateSession(ctx, session.Normalize())
		return normSession(out), err
	})
}

// GetSessionAndUser is getSessionAndUser through the layer.
func (s *Store) GetSessionAndUser(ctx context.Context, sessionToken string) (*SessionAndUser, error) {
	return call(ctx, s, MethodGetSessionAndUser, func(a SessionAndUserGetter) (*SessionAndUser, error) {
		if !lookupKey(sessionToken) {
			return nil, nil
		}
		out, err := a.GetSessionAndUser(ctx, sessionToken)
		if out != nil {
			normSession(&out.Session)
			normUser(&out.User)
		}
		return out, err
	})
}

// UpdateSession is updateSession through the layer.
func (s *Store) UpdateSession(ctx context.Context, update SessionUpdate) (*Session, error) {
	const m = MethodUpdateSession
	return call(ctx, s, m, func(a SessionUpdater) (*Session, error) {
		if err := update.Validate(); err != nil {
			return nil, err
		}
		if err := checkStrings(m, "sessionToken", update.SessionToken, "userId", update.UserID.Value); err != nil {
			return nil, err
		}
		update.Expires.Value = NormalizeTime(update.Expires.Value)
		out, err := a.UpdateSession(ctx, update)
		return normSession(out), err
	})
}

// extended is what [SessionExtender.ExtendSession] returns.
type extended struct {
	session *Session
	wrote   bool
}

// ExtendSession is the extendSession extension through the layer. from and
// expires are normalised (see [NormalizeTime]) before the adapter sees them;
// an expires not after from is an [*InputError].
func (s *Store) ExtendSession(ctx context.Context, sessionToken string, from, expires time.Time) (*Session, bool, error) {
	const m = MethodExtendSession
	r, err := call(ctx, s, m, func(a SessionExtender) (extended, error) {
		from, expires = NormalizeTime(from), NormalizeTime(expires)
		if !expires.After(from) {
			return extended{}, invalid(string(m), "expires", "must be after from")
		}
		if !lookupKey(sessionToken) {
			return extended{}, nil
		}
		out, wrote, err := a.ExtendSession(ctx, sessionToken, from, expires)
		return extended{normSession(out), wrote && out != nil}, err
	})
	return r.session, r.wrote, err
}

// DeleteSession is deleteSession through the layer.
func (s *Store) DeleteSession(ctx context.Context, sessionToken string) (*Session, error) {
	return call(ctx, s, MethodDeleteSession, func(a SessionDeleter) (*Session, error) {
		if !lookupKey(sessionToken) {
			return nil, nil
		}
		out, err := a.DeleteSession(ctx, sessionToken)
		return normSession(out), err
	})
}

// CreateVerificationToken is createVerificationToken through the layer.
func (s *Store) CreateVerificationToken(ctx context.Context, token VerificationToken) (*VerificationToken, error) {
	const m = MethodCreateVerificationToken
	return call(ctx, s, m, func(a VerificationTokenCreator) (*VerificationToken, error) {
		if err := token.Validate(); err != nil {
			return nil, err
		}
		if err := checkStrings(m, "identifier", token.Identifier, "token", token.Token); err != nil {
			return nil, err
		}
		out, err := a.CreateVerificationToken(ctx, token.Normalize())
		return normToken(out), err
	})
}

// UseVerificationToken is useVerificationToken through the layer.
func (s *Store) UseVerificationToken(ctx context.Context, key VerificationTokenKey) (*VerificationToken, error) {
	return call(ctx, s, MethodUseVerificationToken, func(a VerificationTokenUser) (*VerificationToken, error) {
		if !lookupKey(key.Identifier, key.Token) {
			return nil, nil
		}
		out, err := a.UseVerificationToken(ctx, key)
		return normToken(out), err
	})
}

// CreateAuthenticator is createAuthenticator through the layer.
func (s *Store) CreateAuthenticator(ctx context.Context, authenticator Authenticator) (*Authenticator, error) {
	const m = MethodCreateAuthenticator
	return call(ctx, s, m, func(a AuthenticatorCreator) (*Authenticator, error) {
		au := authenticator.Clone()
		if err := au.Validate(); err != nil {
			return nil, err
		}
		if err := checkStrings(m, "credentialID", au.CredentialID, "credentialPublicKey", au.CredentialPublicKey,
			"credentialDeviceType", au.CredentialDeviceType, "providerAccountId", au.ProviderAccountID,
			"userId", au.UserID, "transports", au.Transports); err != nil {
			return nil, err
		}
		return a.CreateAuthenticator(ctx, au)
	})
}

// GetAuthenticator is getAuthenticator through the layer.
func (s *Store) GetAuthenticator(ctx context.Context, credentialID string) (*Authenticator, error) {
	return call(ctx, s, MethodGetAuthenticator, func(a AuthenticatorGetter) (*Authenticator, error) {
		if !lookupKey(credentialID) {
			return nil, nil
		}
		return a.GetAuthenticator(ctx, credentialID)
	})
}

// ListAuthenticatorsByUserID is listAuthenticatorsByUserId through the layer.
func (s *Store) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]Authenticator, error) {
	return call(ctx, s, MethodListAuthenticatorsByUserID, func(a AuthenticatorsByUserLister) ([]Authenticator, error) {
		if !lookupKey(userID) {
			return []Authenticator{}, nil
		}
		out, err := a.ListAuthenticatorsByUserID(ctx, userID)
		if err == nil && out == nil {
			out = []Authenticator{}
		}
		return out, err
	})
}

// checkCounter rejects a negative counter and an empty or unstorable
// credential id (which names no authenticator).
func checkCounter(m Method, credentialID string, counter int64) error {
	if counter < 0 {
		return invalid(string(m), "counter", "must not be negative")
	}
	if !lookupKey(credentialID) {
		return fmt.Errorf("no authenticator with credential id %q: %w", credentialID, ErrNotFound)
	}
	return nil
}

// UpdateAuthenticatorCounter is updateAuthenticatorCounter through the
// layer.
func (s *Store) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*Authenticator, error) {
	const m = MethodUpdateAuthenticatorCounter
	return call(ctx, s, m, func(a AuthenticatorCounterUpdater) (*Authenticator, error) {
		if err := checkCounter(m, credentialID, newCounter); err != nil {
			return nil, err
		}
		return a.UpdateAuthenticatorCounter(ctx, credentialID, newCounter)
	})
}

// AdvanceAuthenticatorCounter is the advanceAuthenticatorCounter extension
// through the layer.
func (s *Store) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*Authenticator, error) {
	const m = Method(ExtensionAdvanceAuthenticatorCounter)
	return call(ctx, s, m, func(a AuthenticatorCounterAdvancer) (*Authenticator, error) {
		if err := checkCounter(m, credentialID, newCounter); err != nil {
			return nil, err
		}
		return a.AdvanceAuthenticatorCounter(ctx, credentialID, newCounter)
	})
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
} = (*Store)(nil)
