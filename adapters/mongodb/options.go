package mongoadapter

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/core"
)

// Collections names the collections the adapter uses. An empty name keeps
// the default of [DefaultCollections].
type Collections struct {
	Users              string
	Accounts           string
	Sessions           string
	VerificationTokens string
	Authenticators     string
	// Factors holds users' second factors ([core.Factor]), which Auth.js
	// does not store.
	Factors string
	// Locks holds short-lived lock documents, used only on servers whose
	// updates are not atomic (see [Capabilities.AtomicFindAndModify]).
	Locks string
}

// DefaultCollections returns the default collection names: users,
// accounts, sessions and verification_tokens, as Auth.js's MongoDB adapter
// names them, authenticators (which that adapter does not store),
// authport_factors (second factors, which Auth.js has none of) and
// authport_locks (used only on servers whose updates are not atomic).
func DefaultCollections() Collections {
	return Collections{
		Users:              "users",
		Accounts:           "accounts",
		Sessions:           "sessions",
		VerificationTokens: "verification_tokens",
		Authenticators:     "authenticators",
		Factors:            "authport_factors",
		Locks:              "authport_locks",
	}
}

// validate checks that every name is a valid collection name of its own.
func (c Collections) validate() error {
	kinds := []struct{ field, name string }{
		{"Users", c.Users},
		{"Accounts", c.Accounts},
		{"Sessions", c.Sessions},
		{"VerificationTokens", c.VerificationTokens},
		{"Authenticators", c.Authenticators},
		{"Factors", c.Factors},
		{"Locks", c.Locks},
	}
	for i, k := range kinds {
		if reason := invalidCollectionName(k.name); reason != "" {
			return fmt.Errorf("collection name %s %q %s: %w", k.field, k.name, reason, core.ErrInvalidInput)
		}
		for _, o := range kinds[:i] {
			if o.name == k.name {
				return fmt.Errorf("collections %s and %s are both %q; each kind of record needs a collection of its own: %w",
					o.field, k.field, k.name, core.ErrInvalidInput)
			}
		}
	}
	return nil
}

// invalidCollectionName says what is wrong with a collection name, or
// returns "" for a valid one.
func invalidCollectionName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case strings.ContainsRune(name, '$'):
		return "contains '$'"
	case strings.ContainsRune(name, 0):
		return "contains a NUL character"
	case strings.HasPrefix(name, "."):
		return "starts with '.'"
	case strings.HasPrefix(name, "system."):
		return `starts with "system." (reserved by the server)`
	}
	return ""
}

// Option configures an [Adapter]; pass options to [New].
type Option func(*config)

type config struct {
	now            func() time.Time
	names          Collections
	objectIDs      bool
	betterAuth     bool
	noLookup       bool
	noTransactions bool
}

// WithCollections sets the names of the collections. Fields left empty keep
// their defaults (see [DefaultCollections]). [New] rejects, with an error
// matching [core.ErrInvalidInput], names that are not valid collection names
// (one containing '$' or NUL, starting with '.' or "system.", or not UTF-8)
// and two kinds of record sharing one collection. The server checks the
// length of the name, when the adapter first writes to the collection.
func WithCollections(c Collections) Option {
	return func(cfg *config) {
		set := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		set(&cfg.names.Users, c.Users)
		set(&cfg.names.Accounts, c.Accounts)
		set(&cfg.names.Sessions, c.Sessions)
		set(&cfg.names.VerificationTokens, c.VerificationTokens)
		set(&cfg.names.Authenticators, c.Authenticators)
		set(&cfg.names.Factors, c.Factors)
		set(&cfg.names.Locks, c.Locks)
	}
}

// BetterAuthCollections returns the collection names Better Auth's MongoDB
// adapter (@better-auth/mongo-adapter, without usePlural) uses: user,
// session, account and verification; and, for the records Better Auth
// keeps elsewhere or not at all, authport_authenticators (WebAuthn
// credentials, which Better Auth's passkey plugin keeps in another shape),
// authport_factors (second factors) and authport_locks.
func BetterAuthCollections() Collections {
	return Collections{
		Users:              "user",
		Accounts:           "account",
		Sessions:           "session",
		VerificationTokens: "verification",
		Authenticators:     "authport_authenticators",
		Factors:            "authport_factors",
		Locks:              "authport_locks",
	}
}

// BetterAuth makes the adapter share its database with a Better Auth app
// (better-auth 1.7 and its mongodbAdapter): Better Auth's collections
// ([BetterAuthCollections]; with usePlural, name them with a
// [WithCollections] after this option) and its documents, so that each side
// reads and writes the records of the other. The mapping:
//
//   - Ids: every document's _id is an ObjectId, as Better Auth makes them.
//     A user id that is the 24-character lowercase hexadecimal form of an
//     ObjectId is stored as that ObjectId (in the user's _id and the userId
//     of its records), as Better Auth stores its ids; any other id is
//     stored as a string, which Better Auth finds too unless it is 24 hex
//     digits with capitals (Better Auth reads those as an ObjectId). Give
//     new users ObjectId ids: [Adapter.NewUserID] makes one. Sessions,
//     accounts and verification values get a new ObjectId _id.
//   - user: email (required: a user without an address, or an update
//     removing it, is refused with an error matching [core.ErrInvalidInput];
//     stored and compared as given, while Better Auth lowercases the
//     addresses it writes and looks up: give authport lowercase addresses
//     for Better Auth to find its users),
//     name ("" for none: nil is stored as "", and "" reads as nil),
//     emailVerified, a boolean: false for nil; true for a time, which is
//     also kept in emailVerifiedAt, a field of authport's that Better Auth
//     ignores. emailVerified true without emailVerifiedAt (Better Auth set
//     it) reads as the Unix epoch, 1970-01-01T00:00:00Z: verified, at a
//     time not recorded. image; createdAt and updatedAt, set on creation and
//     updatedAt on each update. Every other field is an application field
//     (core.User.Data), as Better Auth's additionalFields are.
//   - session: token (authport's session token), userId, expiresAt,
//     createdAt, updatedAt, ipAddress, userAgent. Better Auth requires
//     createdAt and updatedAt, which authport's sign-ins always set; a
//     session created without them has none.
//   - account: providerId (authport's provider; password accounts are
//     "credential" on both sides), accountId (the provider account id),
//     userId, accessToken, refreshToken, idToken, scope, password (the
//     hash), accessTokenExpiresAt (a date; core.Account.ExpiresAt in
//     seconds), createdAt, updatedAt. What Better Auth has no field for is
//     kept in fields of authport's that it ignores: type, expiresIn,
//     tokenType, sessionState, authorizationDetails. An account Better Auth
//     wrote has no type: it reads as credentials for providerId
//     "credential" and oauth for every other, as with postgres-gorm's
//     BetterAuth preset.
//     refreshTokenExpiresAt, which authport has no field for, is left as
//     stored.
//   - verification: identifier, value (the token), expiresAt, createdAt,
//     updatedAt.
//
// Authenticators and second factors stay in collections of authport's.
// Better Auth's passkey plugin (a separate package, @better-auth/passkey)
// is not mapped: its credentialID is base64url without padding, authport's
// standard base64, so sharing needs a re-encoding that ids in neither form
// make ambiguous. Its twoFactor plugin keeps one TOTP secret per user
// encrypted with the Better Auth app's secret, which [core.Factor] cannot
// hold without decrypting it. [Adapter.Migrate] creates the same indexes as without the
// option on Better Auth's field names; the unique index of e-mail addresses
// is a plain unique index, as Better Auth's own.
func BetterAuth() Option {
	return func(cfg *config) {
		cfg.names = BetterAuthCollections()
		cfg.betterAuth = true
	}
}

// WithClock sets the clock that decides whether sessions and verification
// tokens have expired (default time.Now). Tests use it to move time. The
// server's TTL indexes, where it has them, expire records by its own clock.
func WithClock(now func() time.Time) Option {
	return func(cfg *config) { cfg.now = now }
}

// WithObjectIDs stores user ids as ObjectIds: the users' _id and the userId
// of accounts, sessions, authenticators and factors, as Auth.js's MongoDB adapter
// writes them. User ids are then the 24-character lowercase hexadecimal form
// of an ObjectId ([bson.ObjectID.Hex]). An id not of that form is never
// replaced by another: creating a record with it gives an error matching
// [core.ErrInvalidInput], and looking one up finds nothing.
//
// Without this option user ids are stored as strings, as given.
func WithObjectIDs() Option {
	return func(cfg *config) { cfg.objectIDs = true }
}

// WithoutLookup makes getSessionAndUser and getUserByAccount use two finds
// even where the server supports $lookup.
func WithoutLookup() Option {
	return func(cfg *config) { cfg.noLookup = true }
}

// WithoutTransactions makes deleteUser use ordered deletes even where the
// server supports transactions.
func WithoutTransactions() Option {
	return func(cfg *config) { cfg.noTransactions = true }
}
