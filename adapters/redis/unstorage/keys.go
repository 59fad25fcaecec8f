package unstorage

import (
	"fmt"
	"strings"
	"time"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// The key names of @auth/unstorage-adapter 2.x (its default options, with
// baseKeyPrefix ""), as logical keys before unstorage normalizes them.
const (
	uUser          = "user:"
	uEmail         = "user:email:"
	uAccount       = "user:account:"
	uAccountByUser = "user:account:by-user-id:"
	uSession       = "user:session:"
	uSessionByUser = "user:session:by-user-id:"
	uToken         = "user:token:"
	uAuth          = "authenticator:"
	uAuthByUser    = "authenticator:by-user-id:"

	// Keys of authport's own, which @auth/unstorage-adapter neither reads
	// nor writes: the complete sets of a user's account and session keys
	// (unstorage's by-user-id keys hold only the latest one).
	uOwnAccounts = "authport:accounts-by-user:"
	uOwnSessions = "authport:sessions-by-user:"
	uOwnAccount  = "authport:account:"
	uOwnAuths    = "authport:authenticators-by-user:"
	// uOwnUsername + a username: the user id of the user with that
	// username (Auth.js keeps no usernames).
	uOwnUsername = "authport:username:"
	// uOwnFactor + a percent-encoded factor id (keyEscape): the factor's
	// JSON document (uFactorDoc); the key is the id's, so that it is
	// unique across users. uOwnFactors + a user id: the set of the Redis
	// keys of the user's factors. Auth.js knows no second factors.
	uOwnFactor  = "authport:factor:"
	uOwnFactors = "authport:factors-by-user:"
	// uUsed + a random attempt id: the receipt of one useVerificationToken
	// call (see uUseToken), for a minute.
	uUsed = "authport:used:"
)

// unstorageKey normalizes a logical key the way unstorage's storage layer
// does (normalizeKey in unstorage 1.x): the part before the first '?', with
// '/' and '\' turned into ':', runs of ':' collapsed and one leading and
// trailing ':' removed.
func unstorageKey(key string) string {
	key, _, _ = strings.Cut(key, "?")
	key = strings.NewReplacer("/", ":", `\`, ":").Replace(key)
	for strings.Contains(key, "::") {
		key = strings.ReplaceAll(key, "::", ":")
	}
	key = strings.TrimPrefix(key, ":")
	return strings.TrimSuffix(key, ":")
}

// unstorageBase returns the prefix the unstorage Redis driver puts before
// every key for its base option ("" or the normalized base and ':').
func unstorageBase(base string) string {
	base = strings.TrimSuffix(base, ":")
	base = strings.NewReplacer("/", ":", `\`, ":").Replace(base)
	base = strings.TrimPrefix(base, ":")
	base = strings.TrimSuffix(base, ":")
	if base == "" {
		return ""
	}
	return base + ":"
}

// hasDotSegment reports whether a normalized key has a "." or ".."
// segment, which unstorage refuses.
func hasDotSegment(key string) bool {
	for _, s := range strings.Split(key, ":") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// ukeys builds the Redis key names of the unstorage layout.
type ukeys struct{ base string }

// redis returns the Redis key of a logical key.
func (k ukeys) redis(logical string) string { return k.base + unstorageKey(logical) }

func (k ukeys) user(id string) string     { return k.redis(uUser + id) }
func (k ukeys) email(email string) string { return k.redis(uEmail + email) }

// accountLogical returns the logical key of an account: unstorage's
// "user:account:<provider>:<providerAccountId>" when that names it alone,
// else (a provider with ':', '/', '\' or '?', or a providerAccountId that
// unstorage's normalization would merge with another) a key of authport's
// own with both parts percent-encoded, which @auth/unstorage-adapter does
// not find: its own key could not tell ("a:b", "c") from ("a", "b:c").
func (k ukeys) accountLogical(p, paid string) string {
	if !strings.ContainsAny(p, `:/\?`) && !strings.ContainsAny(paid, `/\?`) &&
		!strings.Contains(paid, "::") && !strings.HasPrefix(paid, ":") && !strings.HasSuffix(paid, ":") {
		return uAccount + p + ":" + paid
	}
	return uOwnAccount + keyEscape(p) + ":" + keyEscape(paid)
}

// keyEscape percent-encodes s so that it holds no key separator and no
// "." or ".." segment.
func keyEscape(s string) string                 { return strings.ReplaceAll(shared.Escape(s), ".", "%2E") }
func (k ukeys) account(p, paid string) string   { return k.redis(k.accountLogical(p, paid)) }
func (k ukeys) accountByUser(uid string) string { return k.redis(uAccountByUser + uid) }
func (k ukeys) session(tok string) string       { return k.redis(uSession + tok) }
func (k ukeys) sessionByUser(uid string) string { return k.redis(uSessionByUser + uid) }
func (k ukeys) token(ident, tok string) string  { return k.redis(uToken + ident + ":" + tok) }
func (k ukeys) auth(cred string) string         { return k.redis(uAuth + cred) }
func (k ukeys) authByUser(uid string) string    { return k.redis(uAuthByUser + uid) }
func (k ukeys) receipt(attempt string) string   { return k.redis(uUsed + attempt) }
func (k ukeys) ownAccounts(uid string) string   { return k.redis(uOwnAccounts + uid) }
func (k ukeys) ownSessions(uid string) string   { return k.redis(uOwnSessions + uid) }
func (k ukeys) ownAuths(uid string) string      { return k.redis(uOwnAuths + uid) }
func (k ukeys) username(name string) string     { return k.redis(uOwnUsername + name) }
func (k ukeys) factor(id string) string         { return k.redis(uOwnFactor + keyEscape(id)) }
func (k ukeys) ownFactors(uid string) string    { return k.redis(uOwnFactors + uid) }

// foreign reports whether the normalized logical key of a record of one
// kind (its logical prefix) lands among the keys of another kind: a user id
// "email:x" would name the e-mail index key of x.
func foreign(prefix, logical string) bool {
	n := unstorageKey(logical)
	switch prefix {
	case uUser:
		for _, p := range []string{uEmail, uAccount, uSession, uToken} {
			if strings.HasPrefix(n, p) || n+":" == p {
				return true
			}
		}
	case uAccount, uOwnAccount:
		if strings.HasPrefix(n, uOwnAccount) {
			return false
		}
		return strings.HasPrefix(n, uAccountByUser) || n+":" == uAccountByUser
	case uSession:
		return strings.HasPrefix(n, uSessionByUser) || n+":" == uSessionByUser
	case uAuth:
		return strings.HasPrefix(n, uAuthByUser) || n+":" == uAuthByUser
	}
	return !strings.HasPrefix(n, prefix) && n+":" != prefix
}

// checkKey refuses a logical key that unstorage could not store or that
// would land among another kind's keys.
func checkKey(m core.Method, field, prefix, logical string) error {
	n := unstorageKey(logical)
	switch {
	case hasDotSegment(n):
		return shared.Invalid(m, field, `has a "." or ".." key segment, which unstorage refuses`)
	case foreign(prefix, logical):
		return shared.Invalid(m, field, "would name a key of another kind in unstorage's key layout")
	}
	return nil
}

// isoLayout is JavaScript's Date.prototype.toISOString format for years
// 0 to 9999, which is how JSON.stringify writes a Date.
const isoLayout = "2006-01-02T15:04:05.000Z"

// isoTime formats a normalized time as Date.prototype.toISOString does.
func isoTime(t time.Time) string { return t.UTC().Format(isoLayout) }

// checkISOTime refuses a time outside the years toISOString writes in its
// four-digit form. It is the layout's only check of a time: those years
// are well within the milliseconds shared.CheckTime accepts.
func checkISOTime(m core.Method, field string, t *time.Time) error {
	if t == nil {
		return nil
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return shared.Invalid(m, field, fmt.Sprintf("year %d is outside 0-9999, which unstorage's ISO 8601 strings cannot hold", y))
	}
	return nil
}

// parseISOTime parses a date as Auth.js's isDate helper accepts it (ISO
// 8601 with a zone, seconds and fraction optional) and normalizes it.
func parseISOTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return core.NormalizeTime(t), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %q is not an ISO 8601 date", shared.ErrCorrupt, s)
}
