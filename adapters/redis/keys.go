package redisadapter

import (
	"errors"
	"strconv"
	"strings"
	"sync"
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
//	<p>user:{<uid>}:authenticators   hash   <credentialID> -> authenticator
//	<p>email:{<email>}               string uid
//	<p>account:{<provider>:<paid>}   string uid
//	<p>session:{<sessionToken>}      string uid, expires at the session's expiry
//	<p>authenticator:{<credID>}      string uid
//	<p>verification:{<identifier>:<token>} string expiry (ms), expires then
//
// Every user-supplied component is escaped with [escape], so it never holds
// ':', '{', '}', '%' or any byte outside a small safe set: kinds and components
// cannot run into each other, and a brace in a value cannot change the slot.

// escape percent-encodes every byte of s outside [A-Za-z0-9._@+-]. It is
// injective and its output never contains ':', '{', '}' or whitespace. The
// Lua function enc in scripts.go is its exact twin.
func escape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safeByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func safeByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '.', c == '_', c == '@', c == '+', c == '-':
		return true
	}
	return false
}

var errBadEscape = errors.New("malformed escaped key component")

// unescape reverses [escape].
func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) {
			return "", errBadEscape
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", errBadEscape
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// keys builds the key names of one adapter.
type keys struct{ p string }

func (k keys) user(uid string) string { return k.p + "user:{" + escape(uid) + "}" }
func (k keys) accounts(uid string) string {
	return k.p + "user:{" + escape(uid) + "}:accounts"
}
func (k keys) sessions(uid string) string {
	return k.p + "user:{" + escape(uid) + "}:sessions"
}
func (k keys) authenticators(uid string) string {
	return k.p + "user:{" + escape(uid) + "}:authenticators"
}
func (k keys) email(email string) string { return k.p + "email:{" + escape(email) + "}" }

// accountField is the field of an account in the user's accounts hash; the
// account pointer's hash tag is the same string.
func accountField(provider, providerAccountID string) string {
	return escape(provider) + ":" + escape(providerAccountID)
}
func (k keys) account(field string) string { return k.p + "account:{" + field + "}" }
func (k keys) session(token string) string { return k.p + "session:{" + escape(token) + "}" }

// moving is the marker of a session being moved to another user on a
// cluster (see [Adapter.settledPointer]); in the session key's slot.
func (k keys) moving(token string) string { return k.session(token) + ":moving" }
func (k keys) authenticator(credID string) string {
	return k.p + "authenticator:{" + escape(credID) + "}"
}
func (k keys) verification(ident, tok string) string {
	return k.p + "verification:{" + escape(ident) + ":" + escape(tok) + "}"
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
	kind string // user, accounts, sessions, authenticators, email, account, session, authenticator, verification, used, moving
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
	case kind == "user" && (suffix == ":accounts" || suffix == ":sessions" || suffix == ":authenticators"):
		kind = suffix[1:]
	case suffix == "" && (kind == "email" || kind == "account" || kind == "session" || kind == "authenticator" || kind == "verification"):
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
		return "", "", errBadEscape
	}
	ua, err := unescape(a)
	if err != nil {
		return "", "", err
	}
	ub, err := unescape(b)
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
