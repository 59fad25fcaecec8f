package redisadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/core"
)

// WithUnstorageLayout makes the adapter read and write the keys and values
// of Auth.js's @auth/unstorage-adapter (2.x, default options) over
// unstorage's Redis driver, whose base option is base: a user is the JSON
// document at <base>:user:<id>, dates are ISO 8601 strings, and so on (see
// README.md). An Auth.js application and an authport one can then share
// the same Redis database.
//
// Every operation stays atomic (Lua scripts and compare-and-set), so the
// guarantees of the default layout hold, single use of verification tokens
// and unique e-mails, accounts, sessions and credentials included, as far
// as authport's own callers go; @auth/unstorage-adapter itself does not
// make them. The layout needs a single Redis server (or a failover
// client): New refuses it on Redis Cluster, since its keys carry no hash
// tags. WithPrefix does not apply to it.
func WithUnstorageLayout(base string) Option {
	return func(o *options) { o.unstorage = &base }
}

// ustore implements the adapter's methods on the unstorage layout.
type ustore struct {
	c redis.UniversalClient
	k ukeys
}

// casRetries bounds the compare-and-set loops of read-modify-write
// operations; each lost round means another writer changed the record.
const casRetries = 1000

// errContention is returned when a compare-and-set loop keeps losing.
var errContention = errors.New("record changed by concurrent writers on every attempt; retry")

// enc encodes an optional stored value for the scripts' same() check.
func enc(v string, present bool) string {
	if !present {
		return "0"
	}
	return "1" + v
}

// get reads a key; present is false when it does not exist.
func (u *ustore) get(ctx context.Context, key string) (string, bool, error) {
	v, err := u.c.Get(ctx, key).Result()
	if isNil(err) {
		return "", false, nil
	}
	return v, err == nil, err
}

// backoff waits a little before round attempt of a compare-and-set loop.
func backoff(ctx context.Context, attempt int) error {
	if attempt < 3 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(min(attempt, 20)) * 100 * time.Microsecond):
		return nil
	}
}

// Lua helpers shared by the scripts. same(k, e) compares a key with an
// enc() value; isuser(k, id) checks that k holds the user document of id;
// owned(k, id) that k holds a document whose userId is id.
const luaUHelpers = `
local function same(k, e)
  local v = redis.call('GET', k)
  if e == '0' then return not v end
  return v == string.sub(e, 2)
end
local function field(k, f)
  local v = redis.call('GET', k)
  if not v then return nil end
  local ok, d = pcall(cjson.decode, v)
  if not ok or type(d) ~= 'table' then return nil end
  return d[f]
end
local function isuser(k, id) return field(k, 'id') == id end
local function owned(k, id) return field(k, 'userId') == id end
`

var (
	// KEYS: user, email. ARGV: json, id, stale e-mail key value ("": none).
	uCreateUser = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 or KEYS[1] == KEYS[2] then return 'exists' end
local cur = redis.call('GET', KEYS[2])
if cur and cur ~= ARGV[3] then return 'exists' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return 'ok'`)

	// KEYS: user, old e-mail, new e-mail. ARGV: old json, new json, id,
	// move, stale e-mail key value ("": none).
	uUpdateUser = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
if ARGV[4] == '1' then
  local cur = redis.call('GET', KEYS[3])
  if cur and cur ~= ARGV[3] and cur ~= ARGV[5] then return 'exists' end
  redis.call('SET', KEYS[3], ARGV[3])
  if KEYS[2] ~= KEYS[3] and redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
end
redis.call('SET', KEYS[1], ARGV[2])
return 'ok'`)

	// KEYS: user, email, account-by-user, session-by-user, authenticators
	// by user, own accounts, own sessions, own authenticators. ARGV: old json, id, enc of keys
	// 3-5, n, n record keys.
	uDeleteUser = redis.NewScript(luaUHelpers + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
for i = 3, 5 do if not same(KEYS[i], ARGV[i]) then return 'retry' end end
local targets = {}
for i = 7, 6 + tonumber(ARGV[6]) do targets[#targets + 1] = ARGV[i] end
for _, s in ipairs({KEYS[6], KEYS[7], KEYS[8]}) do
  for _, m in ipairs(redis.call('SMEMBERS', s)) do targets[#targets + 1] = m end
end
for _, k in ipairs(targets) do
  if owned(k, ARGV[2]) then redis.call('DEL', k) end
end
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8])
return 'ok'`)

	// KEYS: user, record, by-user, own set. ARGV: uid, json, by-user value,
	// record key, pxat (0: none), enc of the by-user key's current value,
	// the Redis key that value names ("": none). The record the by-user key
	// named so far (written by Auth.js, which keeps only the latest) joins
	// the own set, so that deleteUser still finds it.
	uAttach = redis.NewScript(luaUHelpers + `
if not isuser(KEYS[1], ARGV[1]) then return 'notfound' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'exists' end
if not same(KEYS[3], ARGV[6]) then return 'retry' end
if ARGV[7] ~= '' and owned(ARGV[7], ARGV[1]) then redis.call('SADD', KEYS[4], ARGV[7]) end
if ARGV[5] ~= '0' then
  redis.call('SET', KEYS[2], ARGV[2], 'PXAT', ARGV[5])
else
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('SET', KEYS[3], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[4])
return 'ok'`)

	// KEYS: record, own set, by-user. ARGV: old json, record key, by-user
	// value.
	uDetach = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
return 'ok'`)

	// uUnindexSession drops a session's index entries whose record is
	// gone (it was created already expired, and Redis dropped its key at
	// once). KEYS: session, own set, by-user. ARGV: session key, by-user
	// value.
	uUnindexSession = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 'live' end
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return 'ok'`)

	// KEYS: session, old own set, new own set, new user, new by-user, old
	// by-user. ARGV: old json, new json, pxat, new uid, session key,
	// by-user value, move.
	uUpdateSession = redis.NewScript(luaUHelpers + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
if ARGV[7] == '1' then
  if not isuser(KEYS[4], ARGV[4]) then return 'notfound' end
  redis.call('SREM', KEYS[2], ARGV[5])
  redis.call('SADD', KEYS[3], ARGV[5])
  if redis.call('GET', KEYS[6]) == ARGV[6] then redis.call('DEL', KEYS[6]) end
  redis.call('SET', KEYS[5], ARGV[6])
end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
return 'ok'`)

	// KEYS: token. ARGV: identifier, token.
	// KEYS: token, receipt. ARGV: identifier, token, receipt TTL in ms.
	// As luaConsume: a retry of the same attempt whose first reply was
	// lost finds the receipt and gets the same answer. The receipt holds
	// only the token's expires (no identifier, no token), and so does the
	// reply.
	uUseToken = redis.NewScript(luaUHelpers + `
local r = redis.call('GET', KEYS[2])
if r then return r end
if field(KEYS[1], 'identifier') ~= ARGV[1] or field(KEYS[1], 'token') ~= ARGV[2] then return false end
local e = field(KEYS[1], 'expires')
if type(e) ~= 'string' then e = '' end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], e, 'PX', ARGV[3])
return e`)

	// KEYS: user, authenticator, authenticators by user, own set. ARGV:
	// uid, json, enc of the old list, new list, credential id.
	uCreateAuth = redis.NewScript(luaUHelpers + `
if not isuser(KEYS[1], ARGV[1]) then return 'notfound' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'exists' end
if not same(KEYS[3], ARGV[3]) then return 'retry' end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], ARGV[4])
redis.call('SADD', KEYS[4], ARGV[5])
return 'ok'`)

	// KEYS: record. ARGV: old json, new json.
	uReplace = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 'ok'`)
)

// unstorageScripts returns every script of the layout, for Preload.
func unstorageScripts() []*redis.Script {
	return []*redis.Script{uCreateUser, uUpdateUser, uDeleteUser, uAttach, uDetach, uUpdateSession, uUseToken, uCreateAuth, uReplace}
}

func (u *ustore) createUser(ctx context.Context, user core.User) (*core.User, error) {
	const m = core.MethodCreateUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := user.Validate(); err != nil {
		return nil, err
	}
	nu := user.Normalize()
	if err := u.checkUser(m, &nu); err != nil {
		return nil, err
	}
	doc, err := encodeUUser(&nu)
	if err != nil {
		return nil, wrap(m, err)
	}
	stale, err := u.staleEmail(ctx, nu.Email, nu.ID)
	if err != nil {
		return nil, wrap(m, err)
	}
	res, err := uCreateUser.Run(ctx, u.c, []string{u.k.user(nu.ID), u.k.email(nu.Email)}, doc, nu.ID, stale).Text()
	if err != nil {
		return nil, wrap(m, err)
	}
	if res != "ok" {
		return nil, fmt.Errorf("%s: user id %q or e-mail %q: %w", m, nu.ID, nu.Email, core.ErrAlreadyExists)
	}
	return &nu, nil
}

// staleEmail returns the value of email's index key when it names a user
// other than id that no longer has that e-mail (or no longer exists):
// @auth/unstorage-adapter's updateUser leaves the old e-mail's key behind.
// Such a key does not block the e-mail. It returns "" otherwise.
func (u *ustore) staleEmail(ctx context.Context, email, id string) (string, error) {
	holder, ok, err := u.get(ctx, u.k.email(email))
	if err != nil || !ok || holder == id {
		return "", err
	}
	_, usr, err := u.readUser(ctx, holder)
	if err != nil {
		return "", err
	}
	if usr == nil || usr.Email != email {
		return holder, nil
	}
	return "", nil
}

func (u *ustore) checkUser(m core.Method, nu *core.User) error {
	if err := checkUTF8(m, map[string]*string{"id": &nu.ID, "email": &nu.Email, "name": nu.Name, "image": nu.Image}); err != nil {
		return err
	}
	if err := checkKey(m, "id", uUser, uUser+nu.ID); err != nil {
		return err
	}
	if err := checkKey(m, "email", uEmail, uEmail+nu.Email); err != nil {
		return err
	}
	if err := checkTime(m, "emailVerified", nu.EmailVerified); err != nil {
		return err
	}
	return checkISOTime(m, "emailVerified", nu.EmailVerified)
}

// readUser reads the user document of id: its raw value (for
// compare-and-set) and the decoded user, nil when there is none.
func (u *ustore) readUser(ctx context.Context, id string) (string, *core.User, error) {
	raw, ok, err := u.get(ctx, u.k.user(id))
	if err != nil || !ok {
		return "", nil, err
	}
	usr, err := decodeUUser(raw, id)
	return raw, usr, err
}

func (u *ustore) getUser(ctx context.Context, id string) (*core.User, error) {
	const m = core.MethodGetUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if id == "" {
		return nil, nil
	}
	_, usr, err := u.readUser(ctx, id)
	if err != nil {
		return nil, wrap(m, err)
	}
	return usr, nil
}

func (u *ustore) getUserByEmail(ctx context.Context, email string) (*core.User, error) {
	const m = core.MethodGetUserByEmail
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if email == "" {
		return nil, nil
	}
	id, ok, err := u.get(ctx, u.k.email(email))
	if err != nil {
		return nil, wrap(m, err)
	}
	if !ok {
		return nil, nil
	}
	_, usr, err := u.readUser(ctx, id)
	if err != nil {
		return nil, wrap(m, err)
	}
	// The index key is only a pointer: the user's own record decides.
	if usr == nil || usr.Email != email {
		return nil, nil
	}
	return usr, nil
}

func (u *ustore) readAccount(ctx context.Context, provider, paid string) (string, *core.Account, error) {
	raw, ok, err := u.get(ctx, u.k.account(provider, paid))
	if err != nil || !ok {
		return "", nil, err
	}
	acc, err := decodeUAccount(raw, provider, paid)
	if acc != nil {
		acc.TokenType = core.NormalizeTokenType(acc.TokenType)
	}
	return raw, acc, err
}

func (u *ustore) getUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	const m = core.MethodGetUserByAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if key.Provider == "" || key.ProviderAccountID == "" {
		return nil, nil
	}
	_, acc, err := u.readAccount(ctx, key.Provider, key.ProviderAccountID)
	if err != nil {
		return nil, wrap(m, err)
	}
	if acc == nil {
		return nil, nil
	}
	_, usr, err := u.readUser(ctx, acc.UserID)
	if err != nil {
		return nil, wrap(m, err)
	}
	return usr, nil
}

func (u *ustore) updateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	const m = core.MethodUpdateUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := up.Validate(); err != nil {
		return nil, err
	}
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, wrap(m, err)
		}
		raw, cur, err := u.readUser(ctx, up.ID)
		if err != nil {
			return nil, wrap(m, err)
		}
		if cur == nil {
			return nil, fmt.Errorf("%s: user %q: %w", m, up.ID, core.ErrNotFound)
		}
		next := up.Apply(*cur).Normalize()
		if err := u.checkUser(m, &next); err != nil {
			return nil, err
		}
		doc, _ := object(raw) // keeps fields authport does not know
		newDoc, err := encodeUUser(&next)
		if err != nil {
			return nil, wrap(m, err)
		}
		known, _ := object(newDoc)
		for k, v := range known {
			doc[k] = v
		}
		s, err := marshalJSON(doc)
		if err != nil {
			return nil, wrap(m, err)
		}
		move, stale := "0", ""
		if next.Email != cur.Email {
			move = "1"
			if stale, err = u.staleEmail(ctx, next.Email, up.ID); err != nil {
				return nil, wrap(m, err)
			}
		}
		res, err := uUpdateUser.Run(ctx, u.c, []string{u.k.user(up.ID), u.k.email(cur.Email), u.k.email(next.Email)},
			raw, s, up.ID, move, stale).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		switch res {
		case "ok":
			return &next, nil
		case "exists":
			return nil, fmt.Errorf("%s: e-mail %q: %w", m, next.Email, core.ErrAlreadyExists)
		}
	}
	return nil, wrap(m, errContention)
}

func (u *ustore) deleteUser(ctx context.Context, id string) (*core.User, error) {
	const m = core.MethodDeleteUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if id == "" {
		return nil, nil
	}
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, wrap(m, err)
		}
		raw, usr, err := u.readUser(ctx, id)
		if err != nil {
			return nil, wrap(m, err)
		}
		if usr == nil {
			return nil, nil
		}
		idx := []string{u.k.accountByUser(id), u.k.sessionByUser(id), u.k.authByUser(id)}
		vals, err := u.c.MGet(ctx, idx...).Result()
		if err != nil {
			return nil, wrap(m, err)
		}
		args := []any{raw, id}
		var targets []any
		for i, v := range vals {
			s, ok := v.(string)
			args = append(args, enc(s, ok))
			if !ok {
				continue
			}
			if i < 2 { // a logical key
				targets = append(targets, u.k.redis(s))
				continue
			}
			for _, cred := range credList(s) {
				targets = append(targets, u.k.auth(cred))
			}
		}
		args = append(append(args, len(targets)), targets...)
		res, err := uDeleteUser.Run(ctx, u.c, []string{u.k.user(id), u.k.email(usr.Email), idx[0], idx[1], idx[2],
			u.k.ownAccounts(id), u.k.ownSessions(id), u.k.ownAuths(id)}, args...).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		if res == "ok" {
			return usr, nil
		}
	}
	return nil, wrap(m, errContention)
}

// credList decodes the JSON list of credential ids unstorage keeps per
// user; anything else reads as empty.
func credList(s string) []string {
	var l []string
	if json.Unmarshal([]byte(s), &l) != nil {
		return nil
	}
	return l
}

func (u *ustore) checkAccount(m core.Method, a *core.Account) error {
	if err := checkUTF8(m, map[string]*string{
		"userId": &a.UserID, "provider": &a.Provider, "providerAccountId": &a.ProviderAccountID,
		"access_token": a.AccessToken, "id_token": a.IDToken, "refresh_token": a.RefreshToken,
		"scope": a.Scope, "token_type": a.TokenType, "session_state": a.SessionState,
	}); err != nil {
		return err
	}
	for _, d := range a.AuthorizationDetails {
		strs := []*string{&d.Type, &d.Identifier}
		for _, l := range [][]string{d.Locations, d.Actions, d.Datatypes, d.Privileges} {
			for i := range l {
				strs = append(strs, &l[i])
			}
		}
		for _, s := range strs {
			if err := checkUTF8(m, map[string]*string{"authorization_details": s}); err != nil {
				return err
			}
		}
	}
	for name, n := range map[string]*int64{"expires_at": a.ExpiresAt, "expires_in": a.ExpiresIn} {
		if n != nil && (*n > maxSafeCounter || *n < -maxSafeCounter) {
			return invalid(m, name, "is beyond the integers a JSON number holds exactly")
		}
	}
	return checkKey(m, "provider", uAccount, u.k.accountLogical(a.Provider, a.ProviderAccountID))
}

// attach runs uAttach until the by-user key it read has not changed
// meanwhile. It returns "ok", "exists" or "notfound".
func (u *ustore) attach(ctx context.Context, uid, key, byUser, own, doc, logical string, pxat int64) (string, error) {
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return "", err
		}
		prev, ok, err := u.get(ctx, byUser)
		if err != nil {
			return "", err
		}
		prevKey := ""
		if ok {
			prevKey = u.k.redis(prev)
		}
		res, err := uAttach.Run(ctx, u.c, []string{u.k.user(uid), key, byUser, own}, uid, doc, logical, key, pxat, enc(prev, ok), prevKey).Text()
		if err != nil || res != "retry" {
			return res, err
		}
	}
	return "", errContention
}

func (u *ustore) linkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	const m = core.MethodLinkAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := account.Validate(); err != nil {
		return nil, err
	}
	acc := account.Normalize()
	if err := u.checkAccount(m, &acc); err != nil {
		return nil, err
	}
	doc, err := encodeUAccount(&acc)
	if err != nil {
		return nil, wrap(m, err)
	}
	logical := u.k.accountLogical(acc.Provider, acc.ProviderAccountID)
	key := u.k.redis(logical)
	res, err := u.attach(ctx, acc.UserID, key, u.k.accountByUser(acc.UserID), u.k.ownAccounts(acc.UserID), doc, logical, 0)
	switch {
	case err != nil:
		return nil, wrap(m, err)
	case res == "notfound":
		return nil, fmt.Errorf("%s: user %q: %w", m, acc.UserID, core.ErrNotFound)
	case res != "ok":
		return nil, fmt.Errorf("%s: account (%q, %q): %w", m, acc.Provider, acc.ProviderAccountID, core.ErrAlreadyExists)
	}
	return &acc, nil
}

func (u *ustore) unlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	const m = core.MethodUnlinkAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if key.Provider == "" || key.ProviderAccountID == "" {
		return nil, nil
	}
	logical := u.k.accountLogical(key.Provider, key.ProviderAccountID)
	rk := u.k.redis(logical)
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, wrap(m, err)
		}
		raw, acc, err := u.readAccount(ctx, key.Provider, key.ProviderAccountID)
		if err != nil {
			return nil, wrap(m, err)
		}
		if acc == nil {
			return nil, nil
		}
		res, err := uDetach.Run(ctx, u.c, []string{rk, u.k.ownAccounts(acc.UserID), u.k.accountByUser(acc.UserID)}, raw, rk, logical).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		if res == "ok" {
			return acc, nil
		}
	}
	return nil, wrap(m, errContention)
}

func (u *ustore) getAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	const m = core.MethodGetAccount
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if provider == "" || providerAccountID == "" {
		return nil, nil
	}
	_, acc, err := u.readAccount(ctx, provider, providerAccountID)
	if err != nil {
		return nil, wrap(m, err)
	}
	return acc, nil
}

func (u *ustore) createSession(ctx context.Context, session core.Session) (*core.Session, error) {
	const m = core.MethodCreateSession
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := session.Validate(); err != nil {
		return nil, err
	}
	s := session.Normalize()
	if err := checkUTF8(m, map[string]*string{"sessionToken": &s.SessionToken, "userId": &s.UserID}); err != nil {
		return nil, err
	}
	if err := checkKey(m, "sessionToken", uSession, uSession+s.SessionToken); err != nil {
		return nil, err
	}
	if err := checkTimes(m, "expires", s.Expires); err != nil {
		return nil, err
	}
	doc, err := encodeUSession(&s)
	if err != nil {
		return nil, wrap(m, err)
	}
	logical := uSession + s.SessionToken
	key := u.k.redis(logical)
	res, err := u.attach(ctx, s.UserID, key, u.k.sessionByUser(s.UserID), u.k.ownSessions(s.UserID), doc, logical, expiryMillis(s.Expires))
	switch {
	case err != nil:
		return nil, wrap(m, err)
	case res == "notfound":
		return nil, fmt.Errorf("%s: user %q: %w", m, s.UserID, core.ErrNotFound)
	case res != "ok":
		return nil, fmt.Errorf("%s: session token: %w", m, core.ErrAlreadyExists)
	}
	if s.Expired(time.Now()) {
		// Redis dropped the key at once (PXAT in the past): drop its
		// index entries too, so that nothing points at it.
		if err := uUnindexSession.Run(context.WithoutCancel(ctx), u.c, []string{key, u.k.ownSessions(s.UserID), u.k.sessionByUser(s.UserID)}, key, logical).Err(); err != nil {
			return nil, wrap(m, err)
		}
	}
	return &s, nil
}

func (u *ustore) readSession(ctx context.Context, token string) (string, *core.Session, error) {
	raw, ok, err := u.get(ctx, u.k.session(token))
	if err != nil || !ok {
		return "", nil, err
	}
	s, err := decodeUSession(raw, token)
	return raw, s, err
}

func (u *ustore) getSessionAndUser(ctx context.Context, token string) (*core.SessionAndUser, error) {
	const m = core.MethodGetSessionAndUser
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if token == "" {
		return nil, nil
	}
	raw, s, err := u.readSession(ctx, token)
	if err != nil {
		return nil, wrap(m, err)
	}
	if s == nil {
		return nil, nil
	}
	if s.Expired(time.Now()) {
		// Found expired before Redis evicted it: remove it and its index
		// entries now (SPEC §3), unless it changed meanwhile.
		logical := uSession + token
		key := u.k.redis(logical)
		if err := uDetach.Run(ctx, u.c, []string{key, u.k.ownSessions(s.UserID), u.k.sessionByUser(s.UserID)}, raw, key, logical).Err(); err != nil {
			return nil, wrap(m, err)
		}
		return nil, nil
	}
	_, usr, err := u.readUser(ctx, s.UserID)
	if err != nil {
		return nil, wrap(m, err)
	}
	if usr == nil {
		return nil, nil
	}
	return &core.SessionAndUser{Session: *s, User: *usr}, nil
}

func (u *ustore) updateSession(ctx context.Context, up core.SessionUpdate) (*core.Session, error) {
	const m = core.MethodUpdateSession
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := up.Validate(); err != nil {
		return nil, err
	}
	logical := uSession + up.SessionToken
	key := u.k.redis(logical)
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, wrap(m, err)
		}
		raw, cur, err := u.readSession(ctx, up.SessionToken)
		if err != nil {
			return nil, wrap(m, err)
		}
		if cur == nil || cur.Expired(time.Now()) {
			return nil, nil
		}
		next := up.Apply(*cur).Normalize()
		if err := checkTimes(m, "expires", next.Expires); err != nil {
			return nil, err
		}
		if err := checkTime(m, "expires", &next.Expires); err != nil {
			return nil, err
		}
		if err := checkUTF8(m, map[string]*string{"userId": &next.UserID}); err != nil {
			return nil, err
		}
		doc, _ := object(raw)
		newDoc, err := encodeUSession(&next)
		if err != nil {
			return nil, wrap(m, err)
		}
		known, _ := object(newDoc)
		for k, v := range known {
			doc[k] = v
		}
		s, err := marshalJSON(doc)
		if err != nil {
			return nil, wrap(m, err)
		}
		move := "0"
		if next.UserID != cur.UserID {
			move = "1"
		}
		res, err := uUpdateSession.Run(ctx, u.c, []string{key, u.k.ownSessions(cur.UserID), u.k.ownSessions(next.UserID),
			u.k.user(next.UserID), u.k.sessionByUser(next.UserID), u.k.sessionByUser(cur.UserID)},
			raw, s, expiryMillis(next.Expires), next.UserID, key, logical, move).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		switch res {
		case "ok":
			return &next, nil
		case "notfound":
			return nil, fmt.Errorf("%s: user %q: %w", m, next.UserID, core.ErrNotFound)
		}
	}
	return nil, wrap(m, errContention)
}

func (u *ustore) deleteSession(ctx context.Context, token string) (*core.Session, error) {
	const m = core.MethodDeleteSession
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if token == "" {
		return nil, nil
	}
	logical := uSession + token
	key := u.k.redis(logical)
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, wrap(m, err)
		}
		raw, s, err := u.readSession(ctx, token)
		if err != nil {
			return nil, wrap(m, err)
		}
		if s == nil {
			return nil, nil
		}
		res, err := uDetach.Run(ctx, u.c, []string{key, u.k.ownSessions(s.UserID), u.k.sessionByUser(s.UserID)}, raw, key, logical).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		if res == "ok" {
			if s.Expired(time.Now()) {
				return nil, nil
			}
			return s, nil
		}
	}
	return nil, wrap(m, errContention)
}

func (u *ustore) createVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	const m = core.MethodCreateVerificationToken
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := token.Validate(); err != nil {
		return nil, err
	}
	t := token.Normalize()
	if err := checkUTF8(m, map[string]*string{"identifier": &t.Identifier, "token": &t.Token}); err != nil {
		return nil, err
	}
	if err := checkKey(m, "token", uToken, uToken+t.Identifier+":"+t.Token); err != nil {
		return nil, err
	}
	if err := checkTime(m, "expires", &t.Expires); err != nil {
		return nil, err
	}
	if err := checkTimes(m, "expires", t.Expires); err != nil {
		return nil, err
	}
	doc, err := encodeUToken(&t)
	if err != nil {
		return nil, wrap(m, err)
	}
	err = u.c.Do(ctx, "set", u.k.token(t.Identifier, t.Token), doc, "nx", "pxat", expiryMillis(t.Expires)).Err()
	if isNil(err) {
		return nil, fmt.Errorf("%s: token for %q: %w", m, t.Identifier, core.ErrAlreadyExists)
	}
	if err != nil {
		return nil, wrap(m, err)
	}
	return &t, nil
}

func (u *ustore) useVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	const m = core.MethodUseVerificationToken
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if key.Identifier == "" || key.Token == "" {
		return nil, nil
	}
	attempt, err := attemptID()
	if err != nil {
		return nil, wrap(m, err)
	}
	v, err := uUseToken.Run(ctx, u.c, []string{u.k.token(key.Identifier, key.Token), u.k.receipt(attempt)},
		key.Identifier, key.Token, receiptTTL.Milliseconds()).Text()
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(m, err)
	}
	exp, err := parseISOTime(v)
	if err != nil {
		return nil, wrap(m, err)
	}
	t := &core.VerificationToken{Identifier: key.Identifier, Token: key.Token, Expires: exp}
	if t.Expired(time.Now()) {
		return nil, nil
	}
	return t, nil
}

func (u *ustore) createAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	const m = core.MethodCreateAuthenticator
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if err := authenticator.Validate(); err != nil {
		return nil, err
	}
	au := authenticator.Clone()
	if err := checkUTF8(m, map[string]*string{
		"credentialID": &au.CredentialID, "credentialPublicKey": &au.CredentialPublicKey, "userId": &au.UserID,
		"providerAccountId": &au.ProviderAccountID, "credentialDeviceType": &au.CredentialDeviceType, "transports": au.Transports,
	}); err != nil {
		return nil, err
	}
	if err := checkKey(m, "credentialID", uAuth, uAuth+au.CredentialID); err != nil {
		return nil, err
	}
	if au.Counter > maxSafeCounter {
		return nil, invalid(m, "counter", "is beyond the integers a JSON number holds exactly")
	}
	doc, err := encodeUAuth(&au)
	if err != nil {
		return nil, wrap(m, err)
	}
	listKey := u.k.authByUser(au.UserID)
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, wrap(m, err)
		}
		old, ok, err := u.get(ctx, listKey)
		if err != nil {
			return nil, wrap(m, err)
		}
		// As @auth/unstorage-adapter does: the new credential first.
		list := []string{au.CredentialID}
		for _, c := range credList(old) {
			if !slices.Contains(list, c) {
				list = append(list, c)
			}
		}
		newList, err := marshalJSON(list)
		if err != nil {
			return nil, wrap(m, err)
		}
		res, err := uCreateAuth.Run(ctx, u.c, []string{u.k.user(au.UserID), u.k.auth(au.CredentialID), listKey, u.k.ownAuths(au.UserID)},
			au.UserID, doc, enc(old, ok), newList, u.k.auth(au.CredentialID)).Text()
		switch {
		case err != nil:
			return nil, wrap(m, err)
		case res == "ok":
			return &au, nil
		case res == "notfound":
			return nil, fmt.Errorf("%s: user %q: %w", m, au.UserID, core.ErrNotFound)
		case res == "exists":
			return nil, fmt.Errorf("%s: credential id %q: %w", m, au.CredentialID, core.ErrAlreadyExists)
		}
	}
	return nil, wrap(m, errContention)
}

func (u *ustore) readAuth(ctx context.Context, cred string) (string, *core.Authenticator, error) {
	raw, ok, err := u.get(ctx, u.k.auth(cred))
	if err != nil || !ok {
		return "", nil, err
	}
	a, err := decodeUAuth(raw, cred)
	return raw, a, err
}

func (u *ustore) getAuthenticator(ctx context.Context, cred string) (*core.Authenticator, error) {
	const m = core.MethodGetAuthenticator
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if cred == "" {
		return nil, nil
	}
	_, a, err := u.readAuth(ctx, cred)
	if err != nil {
		return nil, wrap(m, err)
	}
	return a, nil
}

func (u *ustore) listAuthenticators(ctx context.Context, userID string) ([]core.Authenticator, error) {
	const m = core.MethodListAuthenticatorsByUserID
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	out := []core.Authenticator{}
	if userID == "" {
		return out, nil
	}
	list, _, err := u.get(ctx, u.k.authByUser(userID))
	if err != nil {
		return nil, wrap(m, err)
	}
	// authport's own set of the user's authenticator keys complements
	// unstorage's list, which @auth/unstorage-adapter's
	// updateAuthenticatorCounter can truncate.
	own, err := u.c.SMembers(ctx, u.k.ownAuths(userID)).Result()
	if err != nil {
		return nil, wrap(m, err)
	}
	keys := []string{}
	for _, cred := range credList(list) {
		keys = append(keys, u.k.auth(cred))
	}
	seen := map[string]bool{}
	for _, k := range append(keys, own...) {
		if seen[k] {
			continue // @auth/unstorage-adapter may repeat a credential
		}
		seen[k] = true
		raw, ok, err := u.get(ctx, k)
		if err != nil {
			return nil, wrap(m, err)
		}
		if !ok {
			continue
		}
		doc, _ := object(raw)
		cred, _ := stringField(doc, "credentialID")
		a, err := decodeUAuth(raw, cred)
		if err != nil {
			return nil, wrap(m, err)
		}
		if a != nil && a.UserID == userID && u.k.auth(cred) == k {
			out = append(out, *a)
		}
	}
	slices.SortFunc(out, func(x, y core.Authenticator) int { return strings.Compare(x.CredentialID, y.CredentialID) })
	return out, nil
}

func (u *ustore) setCounter(ctx context.Context, m core.Method, cred string, n int64, increaseOnly bool) (*core.Authenticator, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap(m, err)
	}
	if n < 0 {
		return nil, invalid(m, "counter", "must not be negative")
	}
	if n > maxSafeCounter {
		return nil, invalid(m, "counter", "is beyond the integers a JSON number holds exactly")
	}
	for attempt := 0; attempt < casRetries; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, wrap(m, err)
		}
		raw, a, err := u.readAuth(ctx, cred)
		if err != nil {
			return nil, wrap(m, err)
		}
		if a == nil || cred == "" {
			return nil, fmt.Errorf("%s: credential id %q: %w", m, cred, core.ErrNotFound)
		}
		if increaseOnly && n <= a.Counter && (n != 0 || a.Counter != 0) {
			return nil, fmt.Errorf("%s: stored %d, reported %d: %w", m, a.Counter, n, core.ErrCounterNotIncreased)
		}
		doc, _ := object(raw)
		doc["counter"] = json.RawMessage(strconv.FormatInt(n, 10))
		s, err := marshalJSON(doc)
		if err != nil {
			return nil, wrap(m, err)
		}
		res, err := uReplace.Run(ctx, u.c, []string{u.k.auth(cred)}, raw, s).Text()
		if err != nil {
			return nil, wrap(m, err)
		}
		if res == "ok" {
			a.Counter = n
			return a, nil
		}
	}
	return nil, wrap(m, errContention)
}
