package core

import (
	"encoding/json"
	"log/slog"
	"strings"
	"time"
)

// AccountType is the provider type an [Account] was created through
// (SPEC §2.1 AdapterAccountType).
type AccountType string

// The account types of SPEC §2.1.
const (
	AccountTypeOAuth    AccountType = "oauth"
	AccountTypeOIDC     AccountType = "oidc"
	AccountTypeEmail    AccountType = "email"
	AccountTypeWebAuthn AccountType = "webauthn"
	// AccountTypeCredentials is a password account: its PasswordHash is
	// the user's password hash. Not one of SPEC §2.1's types (Auth.js
	// stores no account for credentials); authport's password sign-in
	// keeps one per user, under provider [PasswordProvider] with the user's
	// id as provider account id, as Better Auth does.
	AccountTypeCredentials AccountType = "credentials"
)

// PasswordProvider is the provider id of password accounts
// ([AccountTypeCredentials]); Better Auth's name for them.
const PasswordProvider = "credential"

// Valid reports whether t is one of the account types the spec allows.
func (t AccountType) Valid() bool {
	switch t {
	case AccountTypeOAuth, AccountTypeOIDC, AccountTypeEmail, AccountTypeWebAuthn, AccountTypeCredentials:
		return true
	}
	return false
}

// User is a person who can sign in (SPEC §2.8 AdapterUser).
//
// Pointer fields are nullable: nil is the spec's null (or an absent field) and
// is stored and returned as such, distinct from a pointer to "".
type User struct {
	// ID uniquely identifies the user. The library assigns it before
	// CreateUser is called; adapters never invent one.
	ID string
	// Email is the user's e-mail address, or "" for a user without one (an
	// OAuth profile that gave none, a user known by a username). Unique
	// among the users that have one; getUserByEmail never finds a user by
	// "". Adapters store "" as their null (SQL NULL, an absent field, no
	// index entry), so any number of users can be without one.
	Email string
	// Username is the user's sign-in name, or "" for none. The library
	// stores it normalised ([NormalizeUsername]: lowercase, so unique
	// case-insensitively) and adapters compare it exactly. Unique among the
	// users that have one. Only adapters that offer getUserByUsername
	// ([UserByUsernameGetter]) keep it; the others refuse a user with one.
	Username string
	// EmailVerified is nil until the user first signs in with an e-mail
	// provider, then the time of that first sign-in.
	EmailVerified *time.Time
	// Name is the user's display name, or nil.
	Name *string
	// Image is a URL of the user's picture, or nil.
	Image *string
	// Data holds the application's own fields on the user (a role, a
	// tenant id), by name, each a JSON value; nil when there are none.
	// Names follow [ValidDataName]. Read and write them typed with
	// [UserField]. Adapters store them beside the standard fields (extra
	// columns, document fields, JSON keys) and keep the fields another
	// application wrote. A JSON null is not stored: the field is absent.
	Data map[string]json.RawMessage
}

// AccountKey names an account by its provider and the provider's id for it
// (the object SPEC §4 passes to getUserByAccount and unlinkAccount).
type AccountKey struct {
	Provider          string
	ProviderAccountID string
}

// Account links a [User] to one provider (SPEC §2.8 AdapterAccount). One user
// can have several accounts; (Provider, ProviderAccountID) is unique.
//
// The token fields are what the provider returned, as filtered by the
// provider's account callback. Pointer fields are nullable.
type Account struct {
	// UserID is the id of the owning user.
	UserID string
	// Provider is the provider id, as in the provider configuration.
	Provider string
	// Type is the provider type of this account.
	Type AccountType
	// ProviderAccountID is the provider's id for the account: the profile id
	// for OAuth/OIDC, the e-mail address for e-mail, the authorize
	// callback's id for credentials.
	ProviderAccountID string

	AccessToken *string
	// AuthorizationDetails is the RFC 9396 authorization_details the token
	// endpoint returned. nil (absent) and an empty list differ.
	AuthorizationDetails []AuthorizationDetail
	// ExpiresAt is the absolute time, in seconds since the Unix epoch, at
	// which AccessToken expires.
	ExpiresAt *int64
	// ExpiresIn is the access token's lifetime in seconds, as returned.
	ExpiresIn    *int64
	IDToken      *string
	RefreshToken *string
	Scope        *string
	// TokenType is always lowercase; adapters store it lowercased.
	TokenType    *string
	SessionState *string

	// PasswordHash is a password account's hash ([AccountTypeCredentials]),
	// nil on every other account. It is stored exactly as the password
	// provider's hasher (core/password's Hasher) wrote it, in that
	// hasher's format: a PHC string for Argon2id
	// ($argon2id$v=19$m=…,t=…,p=…$salt$key), Better Auth's scrypt hash
	// (32 hex characters of salt, a colon, 128 hex characters of key) for
	// BetterAuthScrypt; a hash migrated from another system keeps that
	// system's format until it is re-hashed. Adapters store it and
	// compare it (swapPasswordHash) as an opaque string; they never parse
	// it. Its readers are core/auth's password flows, whose sign-in and
	// change hand it to the configured hasher (or a Verifier added to it)
	// to check a password, and whose reset links and pending sign-ins
	// keep a fingerprint of it to notice a change; and, where the account
	// table is shared with a Better Auth app, that app. Only adapters that
	// offer swapPasswordHash ([PasswordHashSwapper]) keep it; the others
	// refuse an account with one. Never logged, never put in a session,
	// token or event.
	PasswordHash *string
}

// LogValue is what [log/slog] records of an account: its key, user and
// type, and which secrets it holds (never their values: no password hash,
// no token).
func (a Account) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("userId", a.UserID),
		slog.String("provider", a.Provider),
		slog.String("type", string(a.Type)),
		slog.String("providerAccountId", a.ProviderAccountID),
		slog.Bool("hasAccessToken", a.AccessToken != nil),
		slog.Bool("hasRefreshToken", a.RefreshToken != nil),
		slog.Bool("hasIdToken", a.IDToken != nil),
		slog.Bool("hasPasswordHash", a.PasswordHash != nil),
	)
}

// Key returns the account's (Provider, ProviderAccountID) key.
func (a *Account) Key() AccountKey {
	return AccountKey{Provider: a.Provider, ProviderAccountID: a.ProviderAccountID}
}

// AuthorizationDetail is one RFC 9396 authorization details object, with the
// common data fields that RFC defines. Fields beyond those are not kept.
type AuthorizationDetail struct {
	Type       string   `json:"type"`
	Locations  []string `json:"locations,omitempty"`
	Actions    []string `json:"actions,omitempty"`
	Datatypes  []string `json:"datatypes,omitempty"`
	Identifier string   `json:"identifier,omitempty"`
	Privileges []string `json:"privileges,omitempty"`
}

// Session is a database session (SPEC §2.8 AdapterSession).
type Session struct {
	// SessionToken is the random value kept in the session cookie; unique.
	SessionToken string
	// UserID is the id of the signed-in user.
	UserID string
	// Expires is the absolute expiry time.
	Expires time.Time

	// The session's metadata, which lists of a user's sessions show ("where
	// am I signed in?"). Adapters keep it where their table or layout has
	// room for it and say so with [SessionMetadataKeeper]; one without room
	// returns the zero values. Never written on a request of its own:
	// CreatedAt, IPAddress and UserAgent with the session, UpdatedAt with
	// it and with each extension of its expiry.

	// CreatedAt is when the session was created; zero when unknown.
	CreatedAt time.Time
	// UpdatedAt is when the session was last extended (its "last seen",
	// to within the session's update age); zero when unknown.
	UpdatedAt time.Time
	// IPAddress is the client's address at sign-in, as the library
	// determined it (see auth.Config.TrustedProxies); "" when unknown.
	IPAddress string
	// UserAgent is the client's User-Agent at sign-in, cut to
	// [MaxUserAgent] bytes; "" when unknown.
	UserAgent string
}

// MaxUserAgent is the most bytes of a User-Agent header a session keeps.
const MaxUserAgent = 512

// SessionAndUser is what GetSessionAndUser returns: a session and its user.
type SessionAndUser struct {
	Session Session
	User    User
}

// VerificationToken is a single-use token for e-mail sign-in (SPEC §2.8).
type VerificationToken struct {
	// Identifier is the e-mail address the token was sent to.
	Identifier string
	// Token is the hashed token (never the value sent by e-mail).
	Token string
	// Expires is the absolute expiry time.
	Expires time.Time
}

// VerificationTokenKey names a verification token (the object SPEC §4 passes
// to useVerificationToken).
type VerificationTokenKey struct {
	Identifier string
	Token      string
}

// Authenticator is a WebAuthn credential registered to a user
// (SPEC §2.8 AdapterAuthenticator). CredentialID is unique.
type Authenticator struct {
	// CredentialID is the base64-encoded credential id.
	CredentialID string
	// CredentialPublicKey is the base64-encoded public key.
	CredentialPublicKey string
	// Counter is the number of times the authenticator has been used.
	Counter int64
	// CredentialBackedUp reports whether the client backed the credential up.
	CredentialBackedUp bool
	// CredentialDeviceType is the authenticator's device type.
	CredentialDeviceType string
	// ProviderAccountID is the id of the account the authenticator belongs to.
	ProviderAccountID string
	// UserID is the id of the owning user.
	UserID string
	// Transports is the concatenated transport flags, or nil.
	Transports *string
}

// TimePrecision is the precision every adapter keeps for times: they are
// stored truncated to it and returned in UTC.
const TimePrecision = time.Millisecond

// NormalizeTime returns t as adapters store it: truncated to
// [TimePrecision], in UTC, without a monotonic clock reading.
func NormalizeTime(t time.Time) time.Time {
	return t.Truncate(TimePrecision).UTC().Round(0)
}

// normalizeOptionalTime is [NormalizeTime] for a time whose zero value
// means unknown: the zero time stays time.Time{}.
func normalizeOptionalTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return NormalizeTime(t)
}

// NormalizeTimePtr is [NormalizeTime] for a nullable time.
func NormalizeTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	n := NormalizeTime(*t)
	return &n
}

// NormalizeTokenType returns a token type as it is stored: lowercased
// (SPEC §2.8: the value is case-insensitive). nil stays nil.
func NormalizeTokenType(s *string) *string {
	if s == nil {
		return nil
	}
	l := strings.ToLower(*s)
	return &l
}

// Normalize returns a deep copy of u as adapters store it: EmailVerified
// truncated to [TimePrecision] in UTC.
func (u User) Normalize() User {
	u = u.Clone()
	u.EmailVerified = NormalizeTimePtr(u.EmailVerified)
	return u
}

// Normalize returns a deep copy of a as adapters store it: TokenType
// lowercased.
func (a Account) Normalize() Account {
	a = a.Clone()
	a.TokenType = NormalizeTokenType(a.TokenType)
	return a
}

// CompareAccounts orders accounts as listAccountsByUserId returns them: by
// provider, then by provider account id. It is a comparison function for
// [slices.SortFunc].
func CompareAccounts(x, y Account) int {
	if c := strings.Compare(x.Provider, y.Provider); c != 0 {
		return c
	}
	return strings.Compare(x.ProviderAccountID, y.ProviderAccountID)
}

// CompareAuthenticators orders authenticators as
// listAuthenticatorsByUserId returns them: by credential id. It is a
// comparison function for [slices.SortFunc].
func CompareAuthenticators(x, y Authenticator) int {
	return strings.Compare(x.CredentialID, y.CredentialID)
}

// Normalize returns s as adapters store it: its times truncated to
// [TimePrecision] in UTC (a zero time stays zero).
func (s Session) Normalize() Session {
	s.Expires = NormalizeTime(s.Expires)
	s.CreatedAt = normalizeOptionalTime(s.CreatedAt)
	s.UpdatedAt = normalizeOptionalTime(s.UpdatedAt)
	return s
}

// WithoutMetadata returns s with its metadata (CreatedAt, UpdatedAt,
// IPAddress, UserAgent) cleared: what an adapter without room for it
// returns.
func (s Session) WithoutMetadata() Session {
	s.CreatedAt, s.UpdatedAt, s.IPAddress, s.UserAgent = time.Time{}, time.Time{}, "", ""
	return s
}

// CompareSessions orders sessions as listSessionsByUserId returns them: by
// session token. It is a comparison function for [slices.SortFunc].
func CompareSessions(x, y Session) int {
	return strings.Compare(x.SessionToken, y.SessionToken)
}

// Expired reports whether s has expired at now. A session expires at the
// instant of Expires.
func (s *Session) Expired(now time.Time) bool { return !now.Before(s.Expires) }

// Normalize returns v as adapters store it: Expires truncated to
// [TimePrecision] in UTC.
func (v VerificationToken) Normalize() VerificationToken {
	v.Expires = NormalizeTime(v.Expires)
	return v
}

// Expired reports whether v has expired at now. A token expires at the
// instant of Expires.
func (v *VerificationToken) Expired(now time.Time) bool { return !now.Before(v.Expires) }

// Key returns the token's (Identifier, Token) key.
func (v *VerificationToken) Key() VerificationTokenKey {
	return VerificationTokenKey{Identifier: v.Identifier, Token: v.Token}
}
