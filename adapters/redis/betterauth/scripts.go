package betterauth

import "github.com/redis/go-redis/v9"

// luaList reads and writes a user's active-sessions list as Better Auth
// does (setActiveSessionReferences): the entries still unexpired, sorted
// by expiry, the key expiring with the last of them, or deleted when none
// is left. writelist keeps the entries keep(token) accepts, each token
// once, and adds add (a {token, expiresAt} table) when given.
const luaList = `
local function readlist(k)
  local v = redis.call('GET', k)
  if not v then return {} end
  local ok, d = pcall(cjson.decode, v)
  if not ok or type(d) ~= 'table' then return {} end
  return d
end
local function writelist(k, l, now, keep, add)
  local out, seen = {}, {}
  for _, e in ipairs(l) do
    if type(e) == 'table' and type(e.token) == 'string' then
      local at = tonumber(e.expiresAt)
      if at and at > now and keep(e.token) and not seen[e.token] then
        seen[e.token] = true
        out[#out + 1] = {token = e.token, expiresAt = at}
      end
    end
  end
  if add then out[#out + 1] = add end
  if #out == 0 then
    redis.call('DEL', k)
    return
  end
  table.sort(out, function(a, b) return a.expiresAt < b.expiresAt end)
  redis.call('SET', k, cjson.encode(out), 'PXAT', string.format('%d', out[#out].expiresAt))
end
local function except(tok) return function(t) return t ~= tok end end
local function same(k, e)
  local v = redis.call('GET', k)
  if e == '0' then return not v end
  return v == string.sub(e, 2)
end
`

// luaCreateSession: KEYS session, list; ARGV value, expiry ms, token, now
// ms. A taken token is refused; a session already expired is not stored
// (Better Auth writes none with a TTL under a second).
const luaCreateSession = luaList + `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
local exp, now = tonumber(ARGV[2]), tonumber(ARGV[4])
if exp <= now then return 'ok' end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
writelist(KEYS[2], readlist(KEYS[2]), now, except(ARGV[3]), {token = ARGV[3], expiresAt = exp})
return 'ok'
`

// luaReplaceSession: KEYS session, old user's list, new user's list; ARGV
// value read, new value, expiry ms, token, now ms. A compare-and-set of
// the value that moves the list entry with it.
const luaReplaceSession = luaList + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
local exp, now, tok = tonumber(ARGV[3]), tonumber(ARGV[5]), ARGV[4]
writelist(KEYS[2], readlist(KEYS[2]), now, except(tok))
if exp <= now then
  redis.call('DEL', KEYS[1])
  return 'ok'
end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
writelist(KEYS[3], readlist(KEYS[3]), now, except(tok), {token = tok, expiresAt = exp})
return 'ok'
`

// luaDetachSession: KEYS session, list; ARGV value read, token, now ms.
// Deletes the session if it is still as read, and its list entry.
const luaDetachSession = luaList + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'retry' end
redis.call('DEL', KEYS[1])
writelist(KEYS[2], readlist(KEYS[2]), tonumber(ARGV[3]), except(ARGV[2]))
return 'ok'
`

// luaDeleteSessions: KEYS list, revoked-before key, then the keys of the
// sessions the list named when read; ARGV the list as read (shared.Enc),
// the token to keep, now ms, the user id, "1" to write the revocation
// time, the revocation time ms, its TTL ms, then per session key its
// token and "1" when its entry was unexpired. Deletes the user's listed
// sessions but the one kept, and returns how many unexpired ones it
// deleted, or -1 when the list changed since it was read.
const luaDeleteSessions = luaList + `
if not same(KEYS[1], ARGV[1]) then return -1 end
local keep, now, uid = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local n, kept = 0, false
for i = 3, #KEYS do
  local tok, live = ARGV[8 + 2 * (i - 3)], ARGV[9 + 2 * (i - 3)]
  local v = redis.call('GET', KEYS[i])
  if v then
    local ok, d = pcall(cjson.decode, v)
    if ok and type(d) == 'table' and type(d.session) == 'table' and d.session.userId == uid then
      if tok == keep then
        kept = true
      else
        redis.call('DEL', KEYS[i])
        if live == '1' then n = n + 1 end
      end
    end
  end
end
writelist(KEYS[1], readlist(KEYS[1]), now, function(t) return kept and t == keep end)
if ARGV[5] == '1' then
  local prev = tonumber(redis.call('GET', KEYS[2])) or 0
  redis.call('SET', KEYS[2], string.format('%d', math.max(prev, tonumber(ARGV[6]))), 'PX', ARGV[7])
end
return n
`

// luaReplaceValues: KEYS the keys to change; ARGV per key the value read
// and the new one. Sets every key, keeping its TTL, if none changed.
const luaReplaceValues = `
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[2 * i - 1] then return 'retry' end
end
for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[2 * i], 'KEEPTTL') end
return 'ok'
`

// luaPruneList: KEYS list; ARGV the list as read (shared.Enc), now ms,
// then the tokens to drop. Rewrites the list without them (and without
// the expired entries) if it is still as read.
const luaPruneList = luaList + `
if not same(KEYS[1], ARGV[1]) then return 'retry' end
local drop = {}
for i = 3, #ARGV do drop[ARGV[i]] = true end
writelist(KEYS[1], readlist(KEYS[1]), tonumber(ARGV[2]), function(t) return not drop[t] end)
return 'ok'
`

// luaCreateVerification: KEYS the verification key; ARGV the value, the
// token, the expiry ms. Better Auth keeps one value per identifier: a new
// token replaces another, the same token again is refused.
const luaCreateVerification = `
local v = redis.call('GET', KEYS[1])
if v then
  local ok, d = pcall(cjson.decode, v)
  if ok and type(d) == 'table' and d.value == ARGV[2] then return 'exists' end
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
return 'ok'
`

// luaUseVerification: KEYS the verification key; ARGV the token. Deletes
// and returns the value if it holds the token (Better Auth's getAndDelete,
// with the token compared in the same step).
const luaUseVerification = `
local v = redis.call('GET', KEYS[1])
if not v then return false end
local ok, d = pcall(cjson.decode, v)
if not ok or type(d) ~= 'table' or d.value ~= ARGV[1] then return false end
redis.call('DEL', KEYS[1])
return v
`

type scripts struct {
	createSession, replaceSession, detachSession, deleteSessions  *redis.Script
	replaceValues, pruneList, createVerification, useVerification *redis.Script
}

func newScripts() *scripts {
	return &scripts{
		createSession:      redis.NewScript(luaCreateSession),
		replaceSession:     redis.NewScript(luaReplaceSession),
		detachSession:      redis.NewScript(luaDetachSession),
		deleteSessions:     redis.NewScript(luaDeleteSessions),
		replaceValues:      redis.NewScript(luaReplaceValues),
		pruneList:          redis.NewScript(luaPruneList),
		createVerification: redis.NewScript(luaCreateVerification),
		useVerification:    redis.NewScript(luaUseVerification),
	}
}

func (s *scripts) all() []*redis.Script {
	return []*redis.Script{s.createSession, s.replaceSession, s.detachSession, s.deleteSessions,
		s.replaceValues, s.pruneList, s.createVerification, s.useVerification}
}
