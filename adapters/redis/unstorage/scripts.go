package unstorage

import "github.com/redis/go-redis/v9"

// Lua helpers shared by the scripts. same(k, e) compares a key with an
// shared.Enc value; isuser(k, id) checks that k holds the user document of id;
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

// luaSetFns keep authport's own sets of a user's record keys exact:
// sttl(s) drops the members whose record key is gone (evicted, or deleted
// behind authport's back) and gives the set the latest expiry of its
// members' keys (none while one has no TTL), so that the set never
// outlives the last record it names; norm(k) is unstorageKey (keys.go),
// for the logical keys unstorage's by-user-id keys hold.
const luaSetFns = `
local function sttl(s)
  local at, keep = 0, false
  for _, m in ipairs(redis.call('SMEMBERS', s)) do
    local t = redis.call('PEXPIRETIME', m)
    if t == -2 then
      redis.call('SREM', s, m)
    elseif t == -1 then
      keep = true
    elseif t > at then
      at = t
    end
  end
  if keep then
    redis.call('PERSIST', s)
  elseif at > 0 then
    redis.call('PEXPIREAT', s, at)
  end
end
local function norm(k)
  k = string.match(k, '^[^?]*')
  k = string.gsub(k, '[/\\]', ':')
  k = string.gsub(k, ':+', ':')
  k = string.gsub(k, '^:', '')
  k = string.gsub(k, ':$', '')
  return k
end
-- sessionKeys returns the keys of a user's sessions: the members of its
-- own set s, then the key its by-user-id key b names (Auth.js's latest
-- session), each once, and the latter (or nil). base: the driver's prefix.
local function sessionKeys(s, b, base)
  local ks, seen = {}, {}
  for _, k in ipairs(redis.call('SMEMBERS', s)) do
    if not seen[k] then seen[k] = true; ks[#ks + 1] = k end
  end
  local bv = redis.call('GET', b)
  local bk = nil
  if bv then
    bk = base .. norm(bv)
    if not seen[bk] then ks[#ks + 1] = bk end
  end
  return ks, bk
end
-- doc returns the session document at k if it is the user uid's, else nil.
local function sessiondoc(k, uid)
  local v = redis.call('GET', k)
  if not v then return nil end
  local ok, d = pcall(cjson.decode, v)
  if not ok or type(d) ~= 'table' or d.userId ~= uid then return nil end
  return d, v
end
-- unindex drops k from the own set s, and the by-user-id key b if it
-- names k (bk).
local function unindex(s, b, k, bk)
  redis.call('SREM', s, k)
  if k == bk then redis.call('DEL', b) end
end
`

const (

	// KEYS: user, then the index keys of the user's unique values
	// (e-mail, username; none for a user without one). ARGV: json, id,
	// then for each index key the stale value it may hold ("": none).
	luaCreateUser = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
for i = 2, #KEYS do
  local cur = redis.call('GET', KEYS[i])
  if KEYS[i] == KEYS[1] or (cur and cur ~= ARGV[i + 1]) then return 'exists' end
end
redis.call('SET', KEYS[1], ARGV[1])
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[2]) end
return 'ok'`

	// KEYS: user, then for each unique value the update changes (e-mail,
	// username) its old index key if it had one and its new one if it
	// has one. ARGV: old json, new json, id, then for each such change:
	// '1' if it has an old key else '0', the same for a new key, and the
	// stale value the new key may hold ("": none). The new keys are all
	// claimed, or nothing is written.
	luaUpdateUser = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
local ki, moves = 2, {}
for i = 4, #ARGV, 3 do
  local old, new = nil, nil
  if ARGV[i] == '1' then old = KEYS[ki]; ki = ki + 1 end
  if ARGV[i + 1] == '1' then
    new = KEYS[ki]; ki = ki + 1
    local cur = redis.call('GET', new)
    if new == KEYS[1] or (cur and cur ~= ARGV[3] and cur ~= ARGV[i + 2]) then return 'exists' end
  end
  moves[#moves + 1] = {old, new}
end
for _, m in ipairs(moves) do
  if m[2] then redis.call('SET', m[2], ARGV[3]) end
  if m[1] and m[1] ~= m[2] and redis.call('GET', m[1]) == ARGV[3] then redis.call('DEL', m[1]) end
end
redis.call('SET', KEYS[1], ARGV[2])
return 'ok'`

	// KEYS: user, account-by-user, session-by-user, authenticators by
	// user, own accounts, own sessions, own authenticators, own factors,
	// then index keys that may name the user (its e-mail's and username's; for a
	// user without an e-mail, the keys Auth.js writes for one,
	// user:email:null and user:email:undefined), deleted while they hold
	// its id. ARGV: old json, id, enc of keys 2-4, n, n record keys.
	luaDeleteUser = luaUHelpers + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
for i = 2, 4 do if not same(KEYS[i], ARGV[i + 1]) then return 'retry' end end
local targets = {}
for i = 7, 6 + tonumber(ARGV[6]) do targets[#targets + 1] = ARGV[i] end
for _, s in ipairs({KEYS[5], KEYS[6], KEYS[7], KEYS[8]}) do
  for _, m in ipairs(redis.call('SMEMBERS', s)) do targets[#targets + 1] = m end
end
for _, k in ipairs(targets) do
  if owned(k, ARGV[2]) then redis.call('DEL', k) end
end
for i = 9, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2] then redis.call('DEL', KEYS[i]) end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8])
return 'ok'`

	// KEYS: user, record, by-user, own set. ARGV: uid, json, by-user value,
	// record key, pxat (0: none), enc of the by-user key's current value,
	// the Redis key that value names ("": none). The record the by-user key
	// named so far (written by Auth.js, which keeps only the latest) joins
	// the own set, so that deleteUser still finds it. A record with an
	// expiry (a session) gives it to its by-user key too; the own set
	// takes its members' latest.
	luaAttach = luaUHelpers + luaSetFns + `
if not isuser(KEYS[1], ARGV[1]) then return 'notfound' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'exists' end
if not same(KEYS[3], ARGV[6]) then return 'retry' end
if ARGV[7] ~= '' and owned(ARGV[7], ARGV[1]) then redis.call('SADD', KEYS[4], ARGV[7]) end
if ARGV[5] ~= '0' then
  redis.call('SET', KEYS[2], ARGV[2], 'PXAT', ARGV[5])
  redis.call('SET', KEYS[3], ARGV[3], 'PXAT', ARGV[5])
else
  redis.call('SET', KEYS[2], ARGV[2])
  redis.call('SET', KEYS[3], ARGV[3])
end
redis.call('SADD', KEYS[4], ARGV[4])
sttl(KEYS[4])
return 'ok'`

	// KEYS: record, own set, by-user. ARGV: old json, record key, by-user
	// value.
	luaDetach = luaSetFns + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
sttl(KEYS[2])
return 'ok'`

	// uUnindexSession drops a session's index entries whose record is
	// gone (it was created already expired, and Redis dropped its key at
	// once). KEYS: session, own set, by-user. ARGV: session key, by-user
	// value.
	luaUnindexSession = luaSetFns + `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'live' end
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
sttl(KEYS[2])
return 'ok'`

	// KEYS: session, old own set, new own set, new user, new by-user, old
	// by-user. ARGV: old json, new json, pxat, new uid, session key,
	// by-user value, move. Writes only over the document read (old json):
	// a session deleted meanwhile is never written back. The by-user key
	// naming the session expires with it, the own sets with their last
	// session.
	luaUpdateSession = luaUHelpers + luaSetFns + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
if ARGV[7] == '1' then
  if not isuser(KEYS[4], ARGV[4]) then return 'notfound' end
  redis.call('SREM', KEYS[2], ARGV[5])
  redis.call('SADD', KEYS[3], ARGV[5])
  if redis.call('GET', KEYS[6]) == ARGV[6] then redis.call('DEL', KEYS[6]) end
  redis.call('SET', KEYS[5], ARGV[6], 'PXAT', ARGV[3])
  sttl(KEYS[2])
end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
if redis.call('GET', KEYS[5]) == ARGV[6] then redis.call('PEXPIREAT', KEYS[5], ARGV[3]) end
sttl(KEYS[3])
return 'ok'`

	// listSessionsByUserId. KEYS: own sessions set, session by-user. ARGV:
	// base prefix, uid, the caller's time as toISOString writes it. Reads
	// every session of the user (its own set's members and the session its
	// by-user key names; SMEMBERS, GET, and one GET per session) and
	// returns {key, json, …} of those that are the user's. A session found
	// expired (its expires in toISOString's form, at or before the time
	// given: such strings order as their times) is deleted; the index
	// entries of sessions gone (expired, evicted, deleted or moved behind
	// authport's back) are dropped.
	luaListSessions = luaSetFns + `
local ks, bk = sessionKeys(KEYS[1], KEYS[2], ARGV[1])
local out = {}
for _, k in ipairs(ks) do
  local d, v = sessiondoc(k, ARGV[2])
  local e = d and d.expires
  if d and type(e) == 'string' and #e == 24 and string.sub(e, 24) == 'Z' and e <= ARGV[3] then
    redis.call('DEL', k)
    d = nil
  end
  if d then
    out[#out + 1] = k
    out[#out + 1] = v
  else
    unindex(KEYS[1], KEYS[2], k, bk)
  end
end
sttl(KEYS[1])
return out`

	// deleteSessionsByUserId. KEYS: own sessions set, session by-user.
	// ARGV: base prefix, uid, the key of the session to keep or "".
	// Deletes every session of the user (as luaListSessions finds them)
	// but the one kept, with its index entries, and returns the expires of
	// each deleted ("" when not a string), for the caller to count the
	// unexpired ones.
	luaDeleteSessions = luaSetFns + `
local ks, bk = sessionKeys(KEYS[1], KEYS[2], ARGV[1])
local out = {}
for _, k in ipairs(ks) do
  local d = sessiondoc(k, ARGV[2])
  if not d then
    unindex(KEYS[1], KEYS[2], k, bk)
  elseif k ~= ARGV[3] then
    redis.call('DEL', k)
    unindex(KEYS[1], KEYS[2], k, bk)
    local e = d.expires
    if type(e) ~= 'string' then e = '' end
    out[#out + 1] = e
  end
end
sttl(KEYS[1])
return out`

	// KEYS: token. ARGV: identifier, token.
	// KEYS: token, receipt. ARGV: identifier, token, receipt TTL in ms.
	// As luaConsume: a retry of the same attempt whose first reply was
	// lost finds the receipt and gets the same answer. The receipt holds
	// only the token's expires (no identifier, no token), and so does the
	// reply.
	luaUseToken = luaUHelpers + `
local r = redis.call('GET', KEYS[2])
if r then return r end
if field(KEYS[1], 'identifier') ~= ARGV[1] or field(KEYS[1], 'token') ~= ARGV[2] then return false end
local e = field(KEYS[1], 'expires')
if type(e) ~= 'string' then e = '' end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], e, 'PX', ARGV[3])
return e`

	// KEYS: user, authenticator, authenticators by user, own set. ARGV:
	// uid, json, enc of the old list, new list, credential id.
	luaCreateAuth = luaUHelpers + `
if not isuser(KEYS[1], ARGV[1]) then return 'notfound' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'exists' end
if not same(KEYS[3], ARGV[3]) then return 'retry' end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], ARGV[4])
redis.call('SADD', KEYS[4], ARGV[5])
return 'ok'`

	// createFactor. KEYS: user, factor, own factors set. ARGV: uid, json,
	// factor key.
	luaCreateFactor = luaUHelpers + `
if not isuser(KEYS[1], ARGV[1]) then return 'notfound' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'exists' end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
return 'ok'`

	// deleteFactor. KEYS: factor, own factors set. ARGV: old json, factor
	// key.
	luaDeleteFactor = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
return 'ok'`

	// KEYS: record. ARGV: old json, new json.
	luaReplace = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 'ok'`
)

// scripts holds the layout's compiled scripts.
type scripts struct {
	createUser, updateUser, deleteUser, attach, detach, unindexSession, updateSession, useToken, createAuth, replace *redis.Script
	listSessions, deleteSessions                                                                                     *redis.Script
	createFactor, deleteFactor                                                                                       *redis.Script
}

func newScripts() *scripts {
	return &scripts{
		createUser:     redis.NewScript(luaCreateUser),
		updateUser:     redis.NewScript(luaUpdateUser),
		deleteUser:     redis.NewScript(luaDeleteUser),
		attach:         redis.NewScript(luaAttach),
		detach:         redis.NewScript(luaDetach),
		unindexSession: redis.NewScript(luaUnindexSession),
		updateSession:  redis.NewScript(luaUpdateSession),
		useToken:       redis.NewScript(luaUseToken),
		createAuth:     redis.NewScript(luaCreateAuth),
		replace:        redis.NewScript(luaReplace),
		listSessions:   redis.NewScript(luaListSessions),
		deleteSessions: redis.NewScript(luaDeleteSessions),
		createFactor:   redis.NewScript(luaCreateFactor),
		deleteFactor:   redis.NewScript(luaDeleteFactor),
	}
}

func (s *scripts) all() []*redis.Script {
	return []*redis.Script{s.createUser, s.updateUser, s.deleteUser, s.attach, s.detach, s.unindexSession, s.updateSession, s.useToken, s.createAuth, s.replace, s.listSessions, s.deleteSessions, s.createFactor, s.deleteFactor}
}
