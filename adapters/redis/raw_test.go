package redisadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

// rawView reads the keys under one prefix straight from Redis and decodes
// them, for the conformance suite. It implements conformance.Raw,
// conformance.Mentioner and conformance.ConsistencyChecker.
type rawView struct{ redistest.View }

// newRawView returns the raw view of the keys under prefix.
func newRawView(c redis.UniversalClient, prefix string) rawView {
	return rawView{redistest.NewView(c, prefix, func(v redistest.View) redistest.ReadRecords {
		return redistest.ReadEach(func(ctx context.Context) (iter.Seq2[int, *entry], error) {
			es, err := rawView{v}.snapshot(ctx)
			return slices.All(es), err
		}, addEntry)
	})}
}

var (
	_ conformance.Mentioner          = rawView{}
	_ conformance.FactorRaw          = rawView{}
	_ conformance.ConsistencyChecker = rawView{}
	_ conformance.RawWriter          = rawView{}
	_ conformance.UserDataWriter     = rawView{}
)

// WriteAccount stores the account exactly as given (not normalized): its
// field in the user's accounts hash and its pointer key, with plain
// commands, as another program sharing the keys would.
func (r rawView) WriteAccount(ctx context.Context, acc core.Account) error {
	k := keys{p: r.Prefix}
	field := accountField(acc.Provider, acc.ProviderAccountID)
	if err := r.C.HSet(ctx, k.accounts(acc.UserID), field, encodeAccount(&acc)).Err(); err != nil {
		return err
	}
	return r.C.Set(ctx, k.account(field), shared.Escape(acc.UserID), 0).Err()
}

// WriteUserData sets application fields on a stored user as another
// program would: HSET of data:<name> fields in the user's hash.
func (r rawView) WriteUserData(ctx context.Context, userID string, data map[string]json.RawMessage) error {
	args := []any{}
	for name, v := range data {
		args = append(args, fDataPrefix+name, string(v))
	}
	return r.C.HSet(ctx, keys{p: r.Prefix}.user(userID), args...).Err()
}

// entry is one stored key, read and parsed.
type entry struct {
	key    string
	pk     parsedKey
	str    string            // string value
	hash   map[string]string // hash value
	zset   []redis.Z         // sorted set value
	meta   map[string]string // of a sessions set: its metadata hash
	expire int64             // PEXPIRETIME: ms since the epoch, -1 none, -2 gone
}

// snapshot reads every key under the prefix. Keys that are not of the
// layout have kind "".
func (r rawView) snapshot(ctx context.Context) ([]*entry, error) {
	ks, err := redistest.ScanKeys(ctx, r.C, r.Prefix)
	if err != nil {
		return nil, err
	}
	sort.Strings(ks)
	es := make([]*entry, len(ks))
	vals := make([]redis.Cmder, len(ks))
	exps := make([]*redis.Cmd, len(ks))
	_, err = r.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range ks {
			pk, _ := parseKey(r.Prefix, k)
			es[i] = &entry{key: k, pk: pk}
			switch pk.kind {
			case "user", "accounts", "authenticators", "factors", "sessionmeta":
				vals[i] = p.HGetAll(ctx, k)
			case "sessions":
				vals[i] = p.ZRangeWithScores(ctx, k, 0, -1)
			case "":
				vals[i] = p.Type(ctx, k)
			default: // string keys, tombstones among them
				vals[i] = p.Get(ctx, k)
			}
			exps[i] = p.Do(ctx, "pexpiretime", k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	var out []*entry
	metas := map[string]map[string]string{}
	for i, e := range es {
		switch v := vals[i].(type) {
		case *redis.MapStringStringCmd:
			e.hash = v.Val()
		case *redis.ZSliceCmd:
			e.zset = v.Val()
		case *redis.StringCmd:
			if v.Err() != nil { // evicted between SCAN and GET
				continue
			}
			e.str = v.Val()
		}
		e.expire, _ = exps[i].Int64()
		if e.pk.kind == "sessionmeta" {
			metas[strings.TrimSuffix(e.key, sessionMetaSuffix)] = e.hash
		}
		out = append(out, e)
	}
	for _, e := range out {
		if e.pk.kind == "sessions" {
			e.meta = metas[e.key]
		}
	}
	return out, nil
}

// addEntry files the records of one key into rs (see newRawView).
func addEntry(rs *conformance.Records, _ int, e *entry) error {
	var err error
	switch e.pk.kind {
	case "user":
		err = redistest.Append(&rs.Users)(decodeUserMap(e.hash))
	case "accounts":
		rs.Accounts, err = decodeFields(rs.Accounts, e, decodeAccount)
	case "authenticators":
		rs.Authenticators, err = decodeFields(rs.Authenticators, e, decodeAuthenticator)
	case "sessions":
		rs.Sessions, err = decodeSessions(rs.Sessions, e)
	case "verification":
		var t core.VerificationToken
		var ms int64
		if t.Identifier, t.Token, err = splitPair(e.pk.tag); err == nil {
			ms, err = strconv.ParseInt(e.str, 10, 64)
		}
		t.Expires = shared.MsTime(ms)
		rs.VerificationTokens = append(rs.VerificationTokens, t)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e.key, err)
	}
	return nil
}

// Factors returns every stored factor, read from the users' factors
// hashes (conformance.FactorRaw).
func (r rawView) Factors(ctx context.Context) ([]core.Factor, error) {
	es, err := r.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := []core.Factor{}
	for _, e := range es {
		if e.pk.kind == "factors" {
			if out, err = decodeFields(out, e, decodeFactor); err != nil {
				return nil, fmt.Errorf("%s: %w", e.key, err)
			}
		}
	}
	return out, nil
}

// decodeFields appends the records held in the fields of a hash entry.
func decodeFields[T any](out []T, e *entry, decode func(string) (*T, error)) ([]T, error) {
	for f, v := range e.hash {
		rec, err := decode(v)
		if err != nil {
			return out, fmt.Errorf("field %s: %w", f, err)
		}
		out = append(out, *rec)
	}
	return out, nil
}

// decodeSessions appends the sessions of a user's sessions set.
func decodeSessions(out []core.Session, e *entry) ([]core.Session, error) {
	uid, err := shared.Unescape(e.pk.tag)
	if err != nil {
		return out, err
	}
	for _, z := range e.zset {
		m, _ := z.Member.(string)
		tok, err := shared.Unescape(m)
		if err != nil {
			return out, fmt.Errorf("member %q: %w", m, err)
		}
		s := core.Session{SessionToken: tok, UserID: uid, Expires: shared.MsTime(int64(z.Score))}
		if v, ok := e.meta[m]; ok {
			if err := decodeSessionMeta(v, &s); err != nil {
				return out, fmt.Errorf("metadata of %q: %w", m, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Mentions returns every key whose name, escaped or not, or whose value
// (string, hash field or value, sorted-set member) contains s.
func (r rawView) Mentions(ctx context.Context, s string) ([]string, error) {
	return r.mentions(ctx, s, false)
}

// PersistentMentions is Mentions of the keys without a TTL
// (conformance.PersistentMentioner).
func (r rawView) PersistentMentions(ctx context.Context, s string) ([]string, error) {
	return r.mentions(ctx, s, true)
}

func (r rawView) mentions(ctx context.Context, s string, persistent bool) ([]string, error) {
	es, err := r.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	has := func(v string) bool {
		if strings.Contains(v, s) {
			return true
		}
		u, err := shared.Unescape(v)
		return err == nil && strings.Contains(u, s)
	}
	var out []string
	for _, e := range es {
		found := has(strings.TrimPrefix(e.key, r.Prefix)) || has(e.str)
		for f, v := range e.hash {
			found = found || has(f) || has(v)
		}
		for _, z := range e.zset {
			m, _ := z.Member.(string)
			found = found || has(m)
		}
		if found && (!persistent || e.expire == -1) {
			out = append(out, e.key)
		}
	}
	return out, nil
}

// CheckConsistency checks that every index key points at a record that
// points back, that every record is reachable from its index keys, that
// permanent index keys have no TTL left, that session keys, the sessions
// set and its metadata hash expire exactly when their sessions do, and
// that the metadata hash holds exactly the set's sessions.
func (r rawView) CheckConsistency(ctx context.Context) error {
	start := time.Now()
	es, err := r.snapshot(ctx)
	if err != nil {
		return err
	}
	byKey := make(map[string]*entry, len(es))
	for _, e := range es {
		byKey[e.key] = e
	}
	k := keys{p: r.Prefix}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	pointsTo := func(ptr, uid string) {
		e, ok := byKey[ptr]
		switch {
		case !ok:
			bad("%s: no index key for a stored record of user %q", ptr, uid)
		case e.str != shared.Escape(uid):
			bad("%s: points at user %q, want %q", ptr, e.str, shared.Escape(uid))
		}
	}
	for _, e := range es {
		switch e.pk.kind {
		case "":
			bad("%s: key not of the layout", e.key)
		case "user":
			u, err := decodeUserMap(e.hash)
			if err != nil || u == nil {
				bad("%s: undecodable user: %v", e.key, err)
				continue
			}
			if k.user(u.ID) != e.key {
				bad("%s: holds user %q", e.key, u.ID)
			}
			if e.expire != -1 {
				bad("%s: user has a TTL", e.key)
			}
			if _, locked := e.hash[lockField]; locked {
				bad("%s: e-mail-change lock left behind", e.key)
			}
			for _, f := range uniqueFields() {
				if v := uniqueValue(u, f); v != "" {
					pointsTo(k.unique(f, v), u.ID)
				}
			}
		case "accounts", "sessions", "authenticators", "factors":
			uid, err := shared.Unescape(e.pk.tag)
			if err != nil {
				bad("%s: %v", e.key, err)
				continue
			}
			if _, ok := byKey[k.user(uid)]; !ok {
				bad("%s: no user %q", e.key, uid)
			}
			for f, v := range e.hash {
				pointsTo(r.Prefix+map[string]string{"accounts": "account", "authenticators": "authenticator", "factors": "factor"}[e.pk.kind]+":{"+f+"}", uid)
				switch e.pk.kind {
				case "accounts":
					a, err := decodeAccount(v)
					if err != nil || a.UserID != uid || accountField(a.Provider, a.ProviderAccountID) != f {
						bad("%s %s: account record does not match its field: %v", e.key, f, err)
					}
				case "factors":
					fa, err := decodeFactor(v)
					if err != nil || fa.UserID != uid || shared.Escape(fa.ID) != f {
						bad("%s %s: factor record does not match its field: %v", e.key, f, err)
					}
				default:
					a, err := decodeAuthenticator(v)
					if err != nil || a.UserID != uid || shared.Escape(a.CredentialID) != f {
						bad("%s %s: authenticator record does not match its field: %v", e.key, f, err)
					}
				}
			}
			if e.pk.kind == "sessions" {
				var max float64
				for _, z := range e.zset {
					max = z.Score
					m, _ := z.Member.(string)
					// A session about to expire may lose its key while we read.
					if shared.MsTime(int64(z.Score)).After(start.Add(2 * time.Second)) {
						ptr := r.Prefix + "session:{" + m + "}"
						pointsTo(ptr, uid)
						if p, ok := byKey[ptr]; ok && p.expire != max64(int64(z.Score), 1) {
							bad("%s: expires at %d, its session at %d", ptr, p.expire, int64(z.Score))
						}
					}
				}
				if len(e.zset) > 0 && e.expire != max64(int64(max), 1) {
					bad("%s: expires at %d, its last session at %d", e.key, e.expire, int64(max))
				}
				meta := byKey[e.key+sessionMetaSuffix]
				if shared.MsTime(e.expire).Before(start.Add(2 * time.Second)) {
					break // about to expire: either key may go while we read
				}
				if meta == nil {
					bad("%s: no session metadata hash", e.key)
				} else if meta.expire != e.expire {
					bad("%s: expires at %d, its sessions set at %d", meta.key, meta.expire, e.expire)
				}
				for _, z := range e.zset {
					m, _ := z.Member.(string)
					if _, ok := e.meta[m]; !ok {
						bad("%s: no metadata for session %q", e.key, m)
					}
				}
			}
		case "sessionmeta":
			z := byKey[strings.TrimSuffix(e.key, sessionMetaSuffix)]
			for f, v := range e.hash {
				if err := decodeSessionMeta(v, &core.Session{}); err != nil {
					bad("%s %s: undecodable metadata: %v", e.key, f, err)
				}
				if z == nil || !slices.ContainsFunc(z.zset, func(m redis.Z) bool { return m.Member == f }) {
					bad("%s: metadata of %q, which is not in the sessions set", e.key, f)
				}
			}
		case "email", "username", "account", "session", "authenticator", "factor":
			uid, err := shared.Unescape(e.str)
			if err != nil {
				bad("%s: value %q is not an escaped user id", e.key, e.str)
				continue
			}
			u, ok := byKey[k.user(uid)]
			if !ok {
				bad("%s: points at missing user %q", e.key, uid)
				continue
			}
			switch e.pk.kind {
			case "email", "username":
				if v, err := shared.Unescape(e.pk.tag); err != nil || v == "" || u.hash[e.pk.kind] != v {
					bad("%s: user %q has %s %q", e.key, e.str, e.pk.kind, u.hash[e.pk.kind])
				}
			case "account":
				if h := byKey[k.accounts(uid)]; h == nil || h.hash[e.pk.tag] == "" {
					bad("%s: user %q has no such account", e.key, e.str)
				}
			case "authenticator":
				if h := byKey[k.authenticators(uid)]; h == nil || h.hash[e.pk.tag] == "" {
					bad("%s: user %q has no such authenticator", e.key, e.str)
				}
			case "factor":
				if h := byKey[k.factors(uid)]; h == nil || h.hash[e.pk.tag] == "" {
					bad("%s: user %q has no such factor", e.key, e.str)
				}
			case "session":
				found := false
				if z := byKey[k.sessions(uid)]; z != nil {
					for _, m := range z.zset {
						found = found || m.Member == e.pk.tag
					}
				}
				if !found {
					bad("%s: user %q has no such session", e.key, e.str)
				}
			}
			if e.pk.kind != "session" && e.expire != -1 {
				bad("%s: index key still provisional (TTL set)", e.key)
			}
		case "tombstone":
			if e.expire == -1 {
				bad("%s: deleteUser's tombstone without a TTL", e.key)
			}
		case "verification":
			if _, _, err := splitPair(e.pk.tag); err != nil {
				bad("%s: %v", e.key, err)
			}
			ms, err := strconv.ParseInt(e.str, 10, 64)
			if err != nil || e.expire != max64(ms, 1) {
				bad("%s: value %q, expires at %d", e.key, e.str, e.expire)
			}
		}
	}
	return errors.Join(errs...)
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
