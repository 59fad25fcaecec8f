package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ---- SQL (PostgreSQL, MariaDB): the adapter's default table names ---------

type sqlRaw struct {
	db    *sql.DB
	mysql bool
}

// q writes a query given with "double-quoted" names and ? placeholders in
// the server's dialect.
func (r sqlRaw) q(query string) string {
	if r.mysql {
		return provision.Query(provision.BackendMySQL, query)
	}
	return provision.Query(provision.BackendPostgres, query)
}

func (r sqlRaw) count(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := r.db.QueryRowContext(ctx, r.q(query), args...).Scan(&n)
	return n, err
}

// one scans the single row of query; found is false when there is none.
func (r sqlRaw) one(ctx context.Context, query string, args []any, dest ...any) (bool, error) {
	err := r.db.QueryRowContext(ctx, r.q(query), args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (r sqlRaw) user(ctx context.Context, id string) (bool, error) {
	n, err := r.count(ctx, `SELECT count(*) FROM "users" WHERE "id" = ?`, id)
	return n > 0, err
}

func (r sqlRaw) account(ctx context.Context, k core.AccountKey) (string, bool, error) {
	var uid string
	found, err := r.one(ctx, `SELECT "userId" FROM "accounts" WHERE "provider" = ? AND "providerAccountId" = ?`,
		[]any{k.Provider, k.ProviderAccountID}, &uid)
	return uid, found, err
}

func (r sqlRaw) session(ctx context.Context, token string) (string, time.Time, bool, error) {
	var uid string
	var exp time.Time
	found, err := r.one(ctx, `SELECT "userId", "expires" FROM "sessions" WHERE "sessionToken" = ?`, []any{token}, &uid, &exp)
	return uid, exp, found, err
}

func (r sqlRaw) authenticator(ctx context.Context, credID string) (string, bool, error) {
	var uid string
	found, err := r.one(ctx, `SELECT "userId" FROM "authenticators" WHERE "credentialID" = ?`, []any{credID}, &uid)
	return uid, found, err
}

func (r sqlRaw) token(ctx context.Context, k core.VerificationTokenKey) (bool, error) {
	n, err := r.count(ctx, `SELECT count(*) FROM "verification_token" WHERE "identifier" = ? AND "token" = ?`, k.Identifier, k.Token)
	return n > 0, err
}

func (r sqlRaw) leftovers(ctx context.Context, u *userRec) ([]leftover, error) {
	var left []leftover
	for _, table := range []string{"accounts", "sessions", "authenticators"} {
		n, err := r.count(ctx, `SELECT count(*) FROM "`+table+`" WHERE "userId" = ?`, u.id)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			left = append(left, leftover{what: fmt.Sprintf("%d row(s) in %s", n, table)})
		}
	}
	return left, nil
}

// ---- Redis and Redis Cluster: the key layout of adapters/redis/README.md --

// redisPrefix is the key prefix the test's Redis adapters use. The ids the
// load makes contain only bytes the adapter does not escape.
const redisPrefix = "faults:"

type redisRaw struct{ c redis.UniversalClient }

func (r redisRaw) key(kind, id string) string { return redisPrefix + kind + ":{" + id + "}" }

func (r redisRaw) user(ctx context.Context, id string) (bool, error) {
	n, err := r.c.Exists(ctx, r.key("user", id)).Result()
	return n > 0, err
}

// index reads an index key (the user id it points to) and checks that the
// user's hash or set holds member too.
func (r redisRaw) index(ctx context.Context, kind, id, userSuffix, member string) (string, bool, error) {
	uid, err := r.c.Get(ctx, r.key(kind, id)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var in bool
	if userSuffix == ":sessions" {
		_, err = r.c.ZScore(ctx, r.key("user", uid)+userSuffix, member).Result()
		in = err == nil
		if errors.Is(err, redis.Nil) {
			err = nil
		}
	} else {
		in, err = r.c.HExists(ctx, r.key("user", uid)+userSuffix, member).Result()
	}
	return uid, in, err
}

func (r redisRaw) account(ctx context.Context, k core.AccountKey) (string, bool, error) {
	field := k.Provider + ":" + k.ProviderAccountID
	return r.index(ctx, "account", field, ":accounts", field)
}

func (r redisRaw) session(ctx context.Context, token string) (string, time.Time, bool, error) {
	uid, found, err := r.index(ctx, "session", token, ":sessions", token)
	if err != nil || !found {
		return uid, time.Time{}, found, err
	}
	ms, err := r.c.ZScore(ctx, r.key("user", uid)+":sessions", token).Result()
	return uid, time.UnixMilli(int64(ms)).UTC(), err == nil, err
}

func (r redisRaw) authenticator(ctx context.Context, credID string) (string, bool, error) {
	return r.index(ctx, "authenticator", credID, ":authenticators", credID)
}

func (r redisRaw) token(ctx context.Context, k core.VerificationTokenKey) (bool, error) {
	n, err := r.c.Exists(ctx, r.key("verification", k.Identifier+":"+k.Token)).Result()
	return n > 0, err
}

func (r redisRaw) leftovers(ctx context.Context, u *userRec) ([]leftover, error) {
	type probe struct {
		key   string
		acked bool // the write that made it was acknowledged
	}
	probes := []probe{
		{r.key("user", u.id) + ":accounts", true}, {r.key("user", u.id) + ":sessions", true},
		{r.key("user", u.id) + ":authenticators", true}, {r.key("email", u.email), true},
	}
	if u.accTried {
		probes = append(probes, probe{r.key("account", u.account.Provider+":"+u.account.ProviderAccountID), u.accAck})
	}
	if u.sessTried {
		probes = append(probes, probe{r.key("session", u.session), u.sessAck})
	}
	if u.credTried {
		probes = append(probes, probe{r.key("authenticator", u.cred), u.credAck})
	}
	var left []leftover
	for _, p := range probes { // one by one: on a cluster they are in different slots
		ttl, err := r.c.PTTL(ctx, p.key).Result()
		if err != nil {
			return nil, err
		}
		if ttl == -2*time.Nanosecond || ttl == -2*time.Millisecond { // no such key (go-redis reports -2 as is)
			continue
		}
		l := leftover{what: "key " + p.key}
		if !p.acked {
			l.what += " (its write failed)"
		}
		if ttl > 0 {
			l.what += fmt.Sprintf(" (expires in %v)", ttl.Round(time.Millisecond))
			// A claim of a write that failed: a unique-key claim of
			// linkAccount or createAuthenticator lives at most the
			// adapter's claim TTL (30 s by default), a session key's
			// claim until the session's expiry.
			l.claim = !p.acked
		}
		left = append(left, l)
	}
	return left, nil
}

// ---- MongoDB: the adapter's default collections ---------------------------

type mongoRaw struct{ db *mongo.Database }

func (r mongoRaw) count(ctx context.Context, coll string, filter bson.M) (int64, error) {
	return r.db.Collection(coll).CountDocuments(ctx, filter)
}

// one decodes the first document matching filter; found is false when there
// is none.
func (r mongoRaw) one(ctx context.Context, coll string, filter bson.M, dest any) (bool, error) {
	err := r.db.Collection(coll).FindOne(ctx, filter).Decode(dest)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

func (r mongoRaw) user(ctx context.Context, id string) (bool, error) {
	n, err := r.count(ctx, "users", bson.M{"_id": id})
	return n > 0, err
}

func (r mongoRaw) account(ctx context.Context, k core.AccountKey) (string, bool, error) {
	var doc struct {
		UserID string `bson:"userId"`
	}
	found, err := r.one(ctx, "accounts", bson.M{"provider": k.Provider, "providerAccountId": k.ProviderAccountID}, &doc)
	return doc.UserID, found, err
}

func (r mongoRaw) session(ctx context.Context, token string) (string, time.Time, bool, error) {
	var doc struct {
		UserID  string        `bson:"userId"`
		Expires bson.DateTime `bson:"expires"`
	}
	found, err := r.one(ctx, "sessions", bson.M{"sessionToken": token}, &doc)
	return doc.UserID, doc.Expires.Time().UTC(), found, err
}

func (r mongoRaw) authenticator(ctx context.Context, credID string) (string, bool, error) {
	var doc struct {
		UserID string `bson:"userId"`
	}
	found, err := r.one(ctx, "authenticators", bson.M{"credentialID": credID}, &doc)
	return doc.UserID, found, err
}

func (r mongoRaw) token(ctx context.Context, k core.VerificationTokenKey) (bool, error) {
	n, err := r.count(ctx, "verification_tokens", bson.M{"identifier": k.Identifier, "token": k.Token})
	return n > 0, err
}

func (r mongoRaw) leftovers(ctx context.Context, u *userRec) ([]leftover, error) {
	var left []leftover
	for _, coll := range []string{"accounts", "sessions", "authenticators"} {
		n, err := r.count(ctx, coll, bson.M{"userId": u.id})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			left = append(left, leftover{what: fmt.Sprintf("%d document(s) in %s", n, coll)})
		}
	}
	return left, nil
}

// snapshot reads the five collections whole (they hold this test's records
// only) with the driver, into a mapRaw.
func (r mongoRaw) snapshot(ctx context.Context) (raw, error) {
	m := newMapRaw()
	all := func(coll string, each func(cur *mongo.Cursor) error) error {
		cur, err := r.db.Collection(coll).Find(ctx, bson.M{})
		if err != nil {
			return err
		}
		defer cur.Close(ctx)
		for cur.Next(ctx) {
			if err := each(cur); err != nil {
				return err
			}
		}
		return cur.Err()
	}
	type doc struct {
		ID                string        `bson:"_id"`
		UserID            string        `bson:"userId"`
		Provider          string        `bson:"provider"`
		ProviderAccountID string        `bson:"providerAccountId"`
		SessionToken      string        `bson:"sessionToken"`
		Expires           bson.DateTime `bson:"expires"`
		CredentialID      string        `bson:"credentialID"`
		Identifier        string        `bson:"identifier"`
		Token             string        `bson:"token"`
	}
	decode := func(cur *mongo.Cursor) (doc, error) {
		var d doc
		var full bson.M
		if err := cur.Decode(&full); err != nil {
			return d, err
		}
		str := func(k string) string { v, _ := full[k].(string); return v }
		d.ID, d.UserID, d.Provider, d.ProviderAccountID = str("_id"), str("userId"), str("provider"), str("providerAccountId")
		d.SessionToken, d.CredentialID, d.Identifier, d.Token = str("sessionToken"), str("credentialID"), str("identifier"), str("token")
		d.Expires, _ = full["expires"].(bson.DateTime)
		return d, nil
	}
	steps := []struct {
		coll string
		add  func(d doc)
	}{
		{"users", func(d doc) { m.users[d.ID] = true }},
		{"accounts", func(d doc) {
			m.accounts[core.AccountKey{Provider: d.Provider, ProviderAccountID: d.ProviderAccountID}] = d.UserID
			m.byUser[d.UserID] = append(m.byUser[d.UserID], "an account")
		}},
		{"sessions", func(d doc) {
			m.sessions[d.SessionToken] = sessionRow{d.UserID, d.Expires.Time().UTC()}
			m.byUser[d.UserID] = append(m.byUser[d.UserID], "a session")
		}},
		{"authenticators", func(d doc) {
			m.authenticators[d.CredentialID] = d.UserID
			m.byUser[d.UserID] = append(m.byUser[d.UserID], "an authenticator")
		}},
		{"verification_tokens", func(d doc) {
			m.tokens[core.VerificationTokenKey{Identifier: d.Identifier, Token: d.Token}] = true
		}},
	}
	for _, st := range steps {
		err := all(st.coll, func(cur *mongo.Cursor) error {
			d, err := decode(cur)
			if err == nil {
				st.add(d)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", st.coll, err)
		}
	}
	return m, nil
}

// mapRaw is a raw view over records read beforehand.
type mapRaw struct {
	users          map[string]bool
	accounts       map[core.AccountKey]string
	sessions       map[string]sessionRow
	authenticators map[string]string
	tokens         map[core.VerificationTokenKey]bool
	byUser         map[string][]string // what refers to a user id
}

type sessionRow struct {
	userID  string
	expires time.Time
}

func newMapRaw() *mapRaw {
	return &mapRaw{
		users: map[string]bool{}, accounts: map[core.AccountKey]string{}, sessions: map[string]sessionRow{},
		authenticators: map[string]string{}, tokens: map[core.VerificationTokenKey]bool{}, byUser: map[string][]string{},
	}
}

func (m *mapRaw) user(_ context.Context, id string) (bool, error) { return m.users[id], nil }

func (m *mapRaw) account(_ context.Context, k core.AccountKey) (string, bool, error) {
	uid, ok := m.accounts[k]
	return uid, ok, nil
}

func (m *mapRaw) session(_ context.Context, token string) (string, time.Time, bool, error) {
	s, ok := m.sessions[token]
	return s.userID, s.expires, ok, nil
}

func (m *mapRaw) authenticator(_ context.Context, credID string) (string, bool, error) {
	uid, ok := m.authenticators[credID]
	return uid, ok, nil
}

func (m *mapRaw) token(_ context.Context, k core.VerificationTokenKey) (bool, error) {
	return m.tokens[k], nil
}

func (m *mapRaw) leftovers(_ context.Context, u *userRec) ([]leftover, error) {
	var left []leftover
	for _, what := range m.byUser[u.id] {
		left = append(left, leftover{what: what})
	}
	return left, nil
}
