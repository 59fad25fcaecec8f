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

const (

	// KEYS: user, email. ARGV: json, id, stale e-mail key value ("": none).
	luaCreateUser = `
if redis.call('EXISTS', KEYS[1]) == 1 or KEYS[1] == KEYS[2] then return 'exists' end
local cur = redis.call('GET', KEYS[2])
if cur and cur ~= ARGV[3] then return 'exists' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return 'ok'`

	// KEYS: user, old e-mail, new e-mail. ARGV: old json, new json, id,
	// move, stale e-mail key value ("": none).
	luaUpdateUser = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
if ARGV[4] == '1' then
  local cur = redis.call('GET', KEYS[3])
  if cur and cur ~= ARGV[3] and cur ~= ARGV[5] then return 'exists' end
  redis.call('SET', KEYS[3], ARGV[3])
  if KEYS[2] ~= KEYS[3] and redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
end
redis.call('SET', KEYS[1], ARGV[2])
return 'ok'`

	// KEYS: user, email, account-by-user, session-by-user, authenticators
	// by user, own accounts, own sessions, own authenticators. ARGV: old json, id, enc of keys
	// 3-5, n, n record keys.
	luaDeleteUser = luaUHelpers + `
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
return 'ok'`

	// KEYS: user, record, by-user, own set. ARGV: uid, json, by-user value,
	// record key, pxat (0: none), enc of the by-user key's current value,
	// the Redis key that value names ("": none). The record the by-user key
	// named so far (written by Auth.js, which keeps only the latest) joins
	// the own set, so that deleteUser still finds it.
	luaAttach = luaUHelpers + `
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
return 'ok'`

	// KEYS: record, own set, by-user. ARGV: old json, record key, by-user
	// value.
	luaDetach = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
return 'ok'`

	// uUnindexSession drops a session's index entries whose record is
	// gone (it was created already expired, and Redis dropped its key at
	// once). KEYS: session, own set, by-user. ARGV: session key, by-user
	// value.
	luaUnindexSession = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'live' end
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return 'ok'`

	// KEYS: session, old own set, new own set, new user, new by-user, old
	// by-user. ARGV: old json, new json, pxat, new uid, session key,
	// by-user value, move.
	luaUpdateSession = luaUHelpers + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
if ARGV[7] == '1' then
  if not isuser(KEYS[4], ARGV[4]) then return 'notfound' end
  redis.call('SREM', KEYS[2], ARGV[5])
  redis.call('SADD', KEYS[3], ARGV[5])
  if redis.call('GET', KEYS[6]) == ARGV[6] then redis.call('DEL', KEYS[6]) end
  redis.call('SET', KEYS[5], ARGV[6])
end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
return 'ok'`

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

	// KEYS: record. ARGV: old json, new json.
	luaReplace = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 'ok'`
)

// scripts holds the layout's compiled scripts.
type scripts struct {
	createUser, updateUser, deleteUser, attach, detach, unindexSession, updateSession, useToken, createAuth, replace *redis.Script
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
	}
}

func (s *scripts) all() []*redis.Script {
	return []*redis.Script{s.createUser, s.updateUser, s.deleteUser, s.attach, s.detach, s.unindexSession, s.updateSession, s.useToken, s.createAuth, s.replace}
}
