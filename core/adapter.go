package core

import "context"

// An adapter is any value. Each interface below is one method of the adapter
// contract of SPEC §4; an adapter implements the ones its data store
// supports, and [Probe] reports which those are. The library calls a method
// only through [Require], which returns an error matching
// [ErrMissingAdapterMethod] when the adapter lacks it.
//
// Rules that hold for every method:
//
//   - ctx bounds the call; a cancelled context makes it return ctx's error.
//   - A lookup that finds nothing returns nil and no error (the spec's null).
//   - Records are copied in and out: the caller may keep and change what it
//     passed or got back without changing what is stored.
//   - Times are returned in UTC, truncated to [TimePrecision]
//     (see [NormalizeTime]); token types are returned lowercased.
//   - Input that breaks the contract (an empty id, a value the store cannot
//     hold) returns an error matching [ErrInvalidInput] and changes nothing.
//   - Errors are wrapped with the method's spec name, e.g. "getUser: ...".
//   - Adapters are safe for concurrent use.

// UserCreator is createUser.
type UserCreator interface {
	// CreateUser stores a new user and returns it as stored. A user with the
	// same e-mail, or the same id, gives an error matching
	// [ErrAlreadyExists] and stores nothing.
	CreateUser(ctx context.Context, user User) (*User, error)
}

// UserGetter is getUser.
type UserGetter interface {
	// GetUser returns the user with the id, or nil, nil when there is none.
	GetUser(ctx context.Context, id string) (*User, error)
}

// UserByEmailGetter is getUserByEmail.
type UserByEmailGetter interface {
	// GetUserByEmail returns the user with the e-mail address, compared
	// exactly, or nil, nil when there is none.
	GetUserByEmail(ctx context.Context, email string) (*User, error)
}

// UserByAccountGetter is getUserByAccount.
type UserByAccountGetter interface {
	// GetUserByAccount returns the user that owns the account with the
	// provider and provider account id, or nil, nil when there is none.
	GetUserByAccount(ctx context.Context, key AccountKey) (*User, error)
}

// UserUpdater is updateUser.
type UserUpdater interface {
	// UpdateUser changes the fields of the user that the update sets, and
	// returns the user as stored afterwards. An unknown id gives an error
	// matching [ErrNotFound]; an e-mail taken by another user gives one
	// matching [ErrAlreadyExists]. Either way nothing changes.
	UpdateUser(ctx context.Context, update UserUpdate) (*User, error)
}

// UserDeleter is deleteUser.
type UserDeleter interface {
	// DeleteUser deletes the user together with its accounts, sessions,
	// authenticators and (on an adapter that keeps them) factors, and
	// returns the deleted user, or nil, nil when there was none. The
	// library does not call it (SPEC §4); applications do.
	DeleteUser(ctx context.Context, id string) (*User, error)
}

// AccountLinker is linkAccount.
type AccountLinker interface {
	// LinkAccount stores a new account for an existing user and returns it
	// as stored. An unknown user gives an error matching [ErrNotFound]; an
	// existing (provider, providerAccountId) one matching [ErrAlreadyExists].
	LinkAccount(ctx context.Context, account Account) (*Account, error)
}

// AccountUnlinker is unlinkAccount.
type AccountUnlinker interface {
	// UnlinkAccount deletes the account and returns it, or nil, nil when
	// there was none. The library does not call it (SPEC §4).
	UnlinkAccount(ctx context.Context, key AccountKey) (*Account, error)
}

// AccountGetter is getAccount.
type AccountGetter interface {
	// GetAccount returns the account, or nil, nil when there is none. Note
	// the argument order, which is the spec's: providerAccountID first.
	GetAccount(ctx context.Context, providerAccountID, provider string) (*Account, error)
}

// SessionCreator is createSession.
type SessionCreator interface {
	// CreateSession stores a new session for an existing user and returns
	// it as stored. An unknown user gives an error matching [ErrNotFound];
	// an existing token one matching [ErrAlreadyExists].
	CreateSession(ctx context.Context, session Session) (*Session, error)
}

// SessionAndUserGetter is getSessionAndUser.
type SessionAndUserGetter interface {
	// GetSessionAndUser returns the session with the token and its user, or
	// nil, nil when there is none or it has expired. An adapter never
	// returns an expired session; it may delete one it finds.
	GetSessionAndUser(ctx context.Context, sessionToken string) (*SessionAndUser, error)
}

// SessionUpdater is updateSession.
type SessionUpdater interface {
	// UpdateSession changes the fields of the session that the update sets
	// and returns the session as stored afterwards, or nil, nil when there
	// is no such session. A user id set to an unknown user gives an error
	// matching [ErrNotFound] and changes nothing.
	UpdateSession(ctx context.Context, update SessionUpdate) (*Session, error)
}

// SessionDeleter is deleteSession.
type SessionDeleter interface {
	// DeleteSession deletes the session and returns it, or nil, nil when
	// there was none.
	DeleteSession(ctx context.Context, sessionToken string) (*Session, error)
}

// VerificationTokenCreator is createVerificationToken.
type VerificationTokenCreator interface {
	// CreateVerificationToken stores a new token and returns it as stored.
	// An existing (identifier, token) gives an error matching
	// [ErrAlreadyExists].
	CreateVerificationToken(ctx context.Context, token VerificationToken) (*VerificationToken, error)
}

// VerificationTokenUser is useVerificationToken.
type VerificationTokenUser interface {
	// UseVerificationToken deletes the token with the identifier and token
	// and returns it, so that it can be used only once: of any number of
	// concurrent calls, at most one returns it. It returns nil, nil when
	// there is no such token or it has expired; an expired token is never
	// returned. A token whose identifier does not match is left in place.
	UseVerificationToken(ctx context.Context, key VerificationTokenKey) (*VerificationToken, error)
}

// AuthenticatorCreator is createAuthenticator.
type AuthenticatorCreator interface {
	// CreateAuthenticator stores a new authenticator for an existing user
	// and returns it as stored. It must fail when nothing was stored
	// (SPEC §7): an unknown user gives an error matching [ErrNotFound], an
	// existing credential id one matching [ErrAlreadyExists].
	CreateAuthenticator(ctx context.Context, authenticator Authenticator) (*Authenticator, error)
}

// AuthenticatorGetter is getAuthenticator.
type AuthenticatorGetter interface {
	// GetAuthenticator returns the authenticator with the credential id, or
	// nil, nil when there is none.
	GetAuthenticator(ctx context.Context, credentialID string) (*Authenticator, error)
}

// AuthenticatorsByUserLister is listAuthenticatorsByUserId.
type AuthenticatorsByUserLister interface {
	// ListAuthenticatorsByUserID returns the user's authenticators, ordered
	// by credential id. For an unknown user it returns an empty, non-nil
	// list and no error; any other failure is an error (SPEC §7).
	ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]Authenticator, error)
}

// AuthenticatorCounterUpdater is updateAuthenticatorCounter.
type AuthenticatorCounterUpdater interface {
	// UpdateAuthenticatorCounter sets the authenticator's counter and
	// returns it as stored afterwards. It must fail when nothing was
	// updated (SPEC §7): an unknown credential id gives an error matching
	// [ErrNotFound], a negative counter one matching [ErrInvalidInput].
	UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*Authenticator, error)
}

// Adapter is the full contract: an adapter that implements every method.
// Adapters need not implement it; it exists so that an adapter that means to
// be complete can assert so at compile time:
//
//	var _ core.Adapter = (*Adapter)(nil)
type Adapter interface {
	UserCreator
	UserGetter
	UserByEmailGetter
	UserByAccountGetter
	UserUpdater
	UserDeleter
	AccountLinker
	AccountUnlinker
	AccountGetter
	SessionCreator
	SessionAndUserGetter
	SessionUpdater
	SessionDeleter
	VerificationTokenCreator
	VerificationTokenUser
	AuthenticatorCreator
	AuthenticatorGetter
	AuthenticatorsByUserLister
	AuthenticatorCounterUpdater
}
