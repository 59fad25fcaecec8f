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
