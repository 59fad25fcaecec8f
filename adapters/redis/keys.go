package redisadapter

import (
	"strconv"
	"strings"
	"sync"

	"github.com/authport/authport/adapters/redis/internal/shared"
)

// DefaultPrefix is the key prefix an [Adapter] uses unless [WithPrefix]
// gives another.
const DefaultPrefix = "authport:"

// Key layout (see README.md for the full table). Every key starts with the
// prefix, then a kind, then the hash tag of the slot it lives in:
//
//	<p>user:{<uid>}                  hash   the user's fields
//	<p>user:{<uid>}:accounts         hash   <provider>:<providerAccountId> -> account
//	<p>user:{<uid>}:sessions         zset   <sessionToken> scored by expiry (ms)
//	<p>user:{<uid>}:sessions:meta    hash   <sessionToken> -> the session's metadata
//	<p>user:{<uid>}:authenticators   hash   <credentialID> -> authenticator
//	<p>user:{<uid>}:factors          hash   <factor id> -> factor
//	<p>email:{<email>}               string uid (none for a user without one)
//	<p>username:{<username>}         string uid (none for a user without one)
//	<p>account:{<provider>:<paid>}   string uid
//	<p>session:{<sessionToken>}      string uid, expires at the session's expiry
//	<p>authenticator:{<credID>}      string uid
//	<p>factor:{<factor id>}          string uid
//	<p>verification:{<identifier>:<token>} string expiry (ms), expires then
//	<p>user:{<uid>}:deleted          string a deleteUser's tombstone (cluster), expires
//
// Every user-supplied component is escaped with [escape], so it never holds
// ':', '{', '}', '%' or any byte outside a small safe set: kinds and components
// cannot run into each other, and a brace in a value cannot change the slot.

// keys builds the key names of one adapter.
type keys struct{ p string }

func (k keys) user(uid string) string { return k.p + "user:{" + shared.Escape(uid) + "}" }
func (k keys) accounts(uid string) string {
	return k.p + "user:{" + shared.Escape(uid) + "}:accounts"
}
func (k keys) sessions(uid string) string {
	return k.p + "user:{" + shared.Escape(uid) + "}:sessions"
}

// sessionMeta is the hash of the metadata of a user's sessions (see
// encodeSessionMeta), beside its sessions set: the sessions set's name and
// sessionMetaSuffix, so that a script given the set can name it.
func (k keys) sessionMeta(uid string) string { return k.sessions(uid) + sessionMetaSuffix }

// sessionMetaSuffix turns a sessions set's key into its metadata hash's.
const sessionMetaSuffix = ":meta"

func (k keys) authenticators(uid string) string {
	return k.p + "user:{" + shared.Escape(uid) + "}:authenticators"
}

// factors is the hash of a user's second factors: escaped factor id ->
// the factor (encodeFactor).
func (k keys) factors(uid string) string { return k.p + "user:{" + shared.Escape(uid) + "}:factors" }

// factor is the index key of a factor id, holding its user's id: it makes
// the id unique across users, whose factors live in other slots.
func (k keys) factor(id string) string { return k.p + "factor:{" + shared.Escape(id) + "}" }

func (k keys) email(email string) string { return k.unique(fEmail, email) }

// unique is the index key of a unique user field's value: the field's
// name is the key's kind (email, username), as the scripts build it.
func (k keys) unique(field, value string) string {
	return k.p + field + ":{" + shared.Escape(value) + "}"
}

// tombstone is where, on a cluster, deleteUser leaves the index keys it
// has still to release (see luaDeleteUser), in the user's slot.
func (k keys) tombstone(uid string) string { return k.user(uid) + tombstoneSuffix }

// tombstoneSuffix turns a user's key into its tombstone's.
const tombstoneSuffix = ":deleted"

// accountField is the field of an account in the user's accounts hash; the
// account pointer's hash tag is the same string.
func accountField(provider, providerAccountID string) string {
	return shared.Escape(provider) + ":" + shared.Escape(providerAccountID)
}
func (k keys) account(field string) string { return k.p + "account:{" + field + "}" }
func (k keys) session(token string) string { return k.p + "session:{" + shared.Escape(token) + "}" }

// moving is the marker of a session being moved to another user on a
// cluster (see [Adapter.settledPointer]); in the session key's slot.
func (k keys) moving(token string) string { return k.session(token) + ":moving" }
func (k keys) authenticator(credID string) string {
	return k.p + "authenticator:{" + shared.Escape(credID) + "}"
}
func (k keys) verification(ident, tok string) string {
	return k.p + "verification:{" + shared.Escape(ident) + ":" + shared.Escape(tok) + "}"
}

// receipt returns the key of one useVerificationToken attempt's receipt
// (see luaConsume), under hash tag slotTag: on a cluster, one of the token
// key's hash slot that names neither the identifier nor the token, so that
// no stored key mentions an e-mail address once its token is used.
func (k keys) receipt(slotTag, attempt string) string {
	return k.p + "used:{" + slotTag + "}" + attempt
}

// parsedKey is a key of the layout, split into its parts.
type parsedKey struct {
	kind string // user, accounts, sessions, sessionmeta, tombstone, authenticators, factors, factor, email, username, account, session, authenticator, verification, used, moving
	tag  string // the escaped content of the hash tag
}

// parseKey splits a key name under prefix p. ok is false for a key that is
// not of the layout.
func parseKey(p, key string) (parsedKey, bool) {
	rest, ok := strings.CutPrefix(key, p)
	if !ok {
		return parsedKey{}, false
	}
	kind, rest, ok := strings.Cut(rest, ":{")
	if !ok {
		return parsedKey{}, false
	}
	tag, suffix, ok := strings.Cut(rest, "}")
	if !ok || strings.ContainsAny(tag, "{}") {
		return parsedKey{}, false
	}
	switch {
	case kind == "user" && suffix == "":
	case kind == "user" && (suffix == ":accounts" || suffix == ":sessions" || suffix == ":authenticators" || suffix == ":factors"):
		kind = suffix[1:]
	case kind == "user" && suffix == ":sessions"+sessionMetaSuffix:
		kind = "sessionmeta"
	case kind == "user" && suffix == tombstoneSuffix:
		kind = "tombstone"
	case suffix == "" && (kind == "email" || kind == "username" || kind == "account" || kind == "session" || kind == "authenticator" || kind == "factor" || kind == "verification"):
	case kind == "used" && suffix != "":
	case kind == "session" && suffix == ":moving":
		kind = "moving"
	default:
		return parsedKey{}, false
	}
	return parsedKey{kind: kind, tag: tag}, true
}

// splitPair splits an escaped "<a>:<b>" pair and unescapes both parts.
func splitPair(s string) (string, string, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", shared.ErrBadEscape
	}
	ua, err := shared.Unescape(a)
	if err != nil {
		return "", "", err
	}
	ub, err := shared.Unescape(b)
	if err != nil {
		return "", "", err
	}
	return ua, ub, nil
}

// crc16 is the CRC-16/XMODEM of s, Redis Cluster's key hash.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// slotTags maps each cluster hash slot to a short hash tag ("r" and a
// base-36 number) whose key hash is that slot. It is built on first use.
type slotTags struct {
	once sync.Once
	tags *[16384]string
}

func (st *slotTags) tag(slot uint16) string {
	st.once.Do(func() {
		var t [16384]string
		for i, left := 0, len(t); left > 0; i++ {
			s := "r" + strconv.FormatInt(int64(i), 36)
			if n := crc16(s) % 16384; t[n] == "" {
				t[n] = s
				left--
			}
		}
		st.tags = &t
	})
	return st.tags[slot]
}
