package redisadapter

import "github.com/redis/go-redis/v9"

// Lua scripts. Every script that builds key names takes the prefix as
// ARGV[1] and a mode as ARGV[2]:
//
//   - "S" (single node): the script does the whole operation atomically. It
//     may follow a pointer key (KEYS[1]) and build the user's key names
//     itself, which a single Redis server allows.
//   - "C" (cluster): the script does only the part that lives in the user's
//     hash slot; every key it touches is declared in KEYS and shares the
//     hash tag {<uid>}. The adapter does the pointer-key steps around it.

// luaHeader is prepended to every script that takes a prefix. enc is the
// exact twin of escape in keys.go.
const luaHeader = `
local P = ARGV[1]
local function enc(s)
  return (string.gsub(s, '[^A-Za-z0-9%._@%+%-]', function(c) return string.format('%%%02X', string.byte(c)) end))
end
local function ukey(e) return P .. 'user:{' .. e .. '}' end -- e: an escaped user id, as index keys hold it
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function pxat(x)
  local n = tonumber(x)
  if n < 1 then n = 1 end
  return string.format('%d', n)
end
local function unpoint(k, v) -- DEL k if it holds v
  if redis.call('GET', k) == v then redis.call('DEL', k) end
end
local function claim(k, v) -- SET k v unless k exists; false if it does
  if redis.call('EXISTS', k) == 1 then return false end
  redis.call('SET', k, v)
  return true
end
-- unique[f]: f is a unique user field, whose value has an index key
-- uptr(f, v) naming its user (e-mail and username; see uniqueFields).
local unique = {` + fEmail + ` = true, ` + fUsername + ` = true}
local function uptr(f, v) return P .. f .. ':{' .. enc(v) .. '}' end
local function same(k, from) -- hash k holds exactly the field/value pairs ARGV[from], ARGV[from+1] …
  if redis.call('HLEN', k) * 2 ~= #ARGV - from + 1 then return false end
  for i = from, #ARGV, 2 do
    if redis.call('HGET', k, ARGV[i]) ~= ARGV[i + 1] then return false end
  end
  return true
end
` + luaSessionFns

// luaSessionFns are the functions that keep a user's sessions set z and
// its metadata hash m (z .. ':meta') exact: prune drops the entries of
// the sessions expired at now (ms), the expired sessions' metadata with
// them, and returns how many it dropped; zttl gives both keys the expiry
// of the last session, so that they never outlive it (an empty set takes
// its metadata with it). Every script that writes the set calls both. It
// is part of luaHeader, and spliced into the expired branch of the
// getSessionAndUser scripts, whose hot path defines nothing.
const luaSessionFns = `
local function zttl(z, m)
  local last = redis.call('ZRANGE', z, -1, -1, 'WITHSCORES')
  if not last[2] then
    redis.call('DEL', m)
    return
  end
  local at = string.format('%d', math.max(tonumber(last[2]), 1))
  redis.call('PEXPIREAT', z, at)
  redis.call('PEXPIREAT', m, at)
end
local function prune(z, m, now)
  local gone = redis.call('ZRANGE', z, '-inf', now, 'BYSCORE')
  for _, g in ipairs(gone) do redis.call('HDEL', m, g) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', z, '-inf', now) end
  return #gone
end
`

// luaResolve follows, in mode S, the pointer KEYS[1] to its user; K is then
// {user, accounts, sessions, authenticators, session metadata} and U the
// escaped user id. In mode C the caller has followed the pointer and
// passes the five user keys (Adapter.userKeys) as KEYS; U is nil.
const luaResolve = `
local K, U = KEYS, nil
if ARGV[2] == 'S' then
  U = redis.call('GET', KEYS[1])
  if not U then return false end
  local uk = ukey(U)
  K = {uk, uk .. ':accounts', uk .. ':sessions', uk .. ':authenticators', uk .. ':sessions` + sessionMetaSuffix + `'}
end
`

// createUser. KEYS: S {user}, C {user, tombstone}. ARGV: P, mode, uid,
// field/value pairs (userFields). In mode S it also claims, all or none,
// the index key of each unique field among the pairs (e-mail, username; a
// user without one has no such pair), and returns 'exists:<field>' when
// one is taken. In mode C a user stored exactly as given is 'ok'
// (go-redis's retry of a run whose reply was lost, or the adapter's, finds
// the user the first run wrote), and a tombstone left by an earlier user
// of this id (luaDeleteUser) is dropped: its index keys are that user's,
// not this one's.
const luaCreateUser = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  if ARGV[2] == 'C' and same(KEYS[1], 4) then return 'ok' end
  return 'exists:id'
end
if ARGV[2] == 'C' then redis.call('DEL', KEYS[2]) end
if ARGV[2] == 'S' then
  local ptrs = {}
  for i = 4, #ARGV, 2 do
    if unique[ARGV[i]] then
      local k = uptr(ARGV[i], ARGV[i + 1])
      if redis.call('EXISTS', k) == 1 then return 'exists:' .. ARGV[i] end
      ptrs[#ptrs + 1] = k
    end
  end
  for _, k in ipairs(ptrs) do redis.call('SET', k, ARGV[3]) end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
return 'ok'
`

// luaUndoCreate undoes, on a cluster, a createUser whose script's outcome
// is unknown (its replies lost): it deletes the user if it is stored
// exactly as createUser would have written it and nothing has been
// attached to it yet. KEYS {user, accounts, sessions, authenticators,
// factors}. ARGV as luaCreateUser's. Returns 'gone' when no such user is
// stored (now), 'same' for the user as given but in use, 'other' for
// another.
const luaUndoCreate = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
if not same(KEYS[1], 4) then return 'other' end
if redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4], KEYS[5]) > 0 then return 'same' end
redis.call('DEL', KEYS[1])
return 'gone'
`

// getUserByEmail and getUserByUsername, mode S only. KEYS {index key}.
// ARGV: P. Returns the user's HGETALL (the caller checks that its e-mail
// or username is the one asked for).
const luaUserByEmail = `
local u = redis.call('GET', KEYS[1])
if not u then return false end
return redis.call('HGETALL', ukey(u))
`

// updateUser. KEYS {user}. ARGV: P, mode, uid, nu, nu pairs (unique
// field, its new value or ” to remove it) of the unique fields the update
// sets, n, n field/value pairs to set, fields to delete (the unique fields
// are among those too). In mode S it moves the unique fields' index keys
// (all or none; 'exists:<field>' when a new value's is taken). Returns
// {old e-mail or ”, HGETALL}.
const luaUpdateUser = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'notfound' end
local oldEmail = redis.call('HGET', KEYS[1], '` + fEmail + `') or ''
local nu = tonumber(ARGV[4])
local moves = {}
for i = 5, 4 + 2 * nu, 2 do
  local f, v = ARGV[i], ARGV[i + 1]
  local old = redis.call('HGET', KEYS[1], f) or ''
  if ARGV[2] == 'S' and v ~= old then
    if v ~= '' and redis.call('EXISTS', uptr(f, v)) == 1 then return 'exists:' .. f end
    moves[#moves + 1] = {f, old, v}
  end
end
for _, m in ipairs(moves) do
  if m[2] ~= '' then unpoint(uptr(m[1], m[2]), ARGV[3]) end
  if m[3] ~= '' then redis.call('SET', uptr(m[1], m[3]), ARGV[3]) end
end
local b = 5 + 2 * nu
local n = tonumber(ARGV[b])
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, b + 1, b + 2 * n)) end
if #ARGV > b + 2 * n then redis.call('HDEL', KEYS[1], unpack(ARGV, b + 1 + 2 * n)) end
return {oldEmail, redis.call('HGETALL', KEYS[1])}
`

// deleteUser. KEYS {user, accounts, sessions, authenticators, session
// metadata, tombstone, factors}. ARGV P, mode, escaped uid, attempt id,
// tombstone TTL in ms. Returns {HGETALL, index keys}: every index key of
// the user (its unique fields' (see unique), accounts', sessions',
// authenticators' and factors'). In mode S it has also deleted each of them that still
// holds this user id (a session key may name a new session of another user
// once this one's entry expired).
//
// In mode C the adapter releases the index keys after, so the script
// leaves its reply in the user's tombstone (KEYS[6], in the user's slot)
// for ARGV[5] ms, with the attempt id: a run that finds no user but a
// tombstone replies the first run's answer to the same attempt (go-redis's
// retry after a lost reply), and the index keys with an empty user to any
// other call (an application's retry): either way the keys are released,
// and the user is returned once. The adapter deletes the tombstone when
// every key is released.
const luaDeleteUser = `
local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then
  if ARGV[2] ~= 'C' then return false end
  local t = redis.call('GET', KEYS[6])
  if not t then return false end
  local r = cmsgpack.unpack(t)
  if r[1] == ARGV[4] then return {r[2], r[3]} end
  return {{}, r[3]}
end
local ptrs = {}
for i = 1, #h, 2 do
  if unique[h[i]] and h[i + 1] ~= '' then ptrs[#ptrs + 1] = uptr(h[i], h[i + 1]) end
end
for _, a in ipairs(redis.call('HKEYS', KEYS[2])) do ptrs[#ptrs + 1] = P .. 'account:{' .. a .. '}' end
for _, s in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do ptrs[#ptrs + 1] = P .. 'session:{' .. s .. '}' end
for _, c in ipairs(redis.call('HKEYS', KEYS[4])) do ptrs[#ptrs + 1] = P .. 'authenticator:{' .. c .. '}' end
for _, f in ipairs(redis.call('HKEYS', KEYS[7])) do ptrs[#ptrs + 1] = P .. 'factor:{' .. f .. '}' end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[7])
if ARGV[2] == 'S' then
  for _, k in ipairs(ptrs) do unpoint(k, ARGV[3]) end
elseif #ptrs > 0 then
  redis.call('SET', KEYS[6], cmsgpack.pack({ARGV[4], h, ptrs}), 'PX', ARGV[5])
end
return {h, ptrs}
`

// linkAccount and createAuthenticator: attach a record to an existing user
// under a unique pointer. KEYS: S {user, hash, ptr}, C {user, hash}. ARGV:
// P, mode, uid, field, value.
const luaAttach = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'notfound' end
if ARGV[2] == 'S' and not claim(KEYS[3], ARGV[3]) then return 'exists' end
-- On a cluster the caller holds the claim on the pointer, so a record
-- already here was left by a link whose claim expired uncommitted.
redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
return 'ok'
`

// getUserByAccount. ARGV: P, mode, account field.
const luaUserByAccount = luaResolve + `
if redis.call('HEXISTS', K[2], ARGV[3]) == 0 then return false end
return redis.call('HGETALL', K[1])
`

// getAccount. ARGV: P, mode, account field.
const luaGetAccount = luaResolve + `
return redis.call('HGET', K[2], ARGV[3])
`

// unlinkAccount. ARGV: P, mode, account field. Returns the stored account.
const luaUnlinkAccount = luaResolve + `
local v = redis.call('HGET', K[2], ARGV[3])
if ARGV[2] == 'S' then redis.call('DEL', KEYS[1]) end
if not v then return false end
redis.call('HDEL', K[2], ARGV[3])
return v
`

// createSession. KEYS: S {user, sessions, session metadata, ptr}, C {user,
// sessions, session metadata}. ARGV: P, mode, uid, member (escaped token),
// expiry in ms, metadata (encodeSessionMeta).
const luaCreateSession = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'notfound' end
if ARGV[2] == 'S' then
  if redis.call('EXISTS', KEYS[4]) == 1 then return 'exists' end
  redis.call('SET', KEYS[4], ARGV[3], 'PXAT', pxat(ARGV[5]))
end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[4], ARGV[6])
prune(KEYS[2], KEYS[3], nowms()) -- after ZADD: a session created expired is not indexed, as its key is not kept
zttl(KEYS[2], KEYS[3])
return 'ok'
`

// getSessionAndUser on a single node: the hot path, kept as lean as the
// baseline of the benchmarks (the same three reads, plus the expiry check).
// KEYS {sessionPtr}. ARGV: P, member, the caller's time in ms. Returns
// {expiry, HGETALL}, or nil when the session is missing or has expired at
// that time. (The session key itself expires by the server's clock.) A
// session found expired is removed then (SPEC §3): its key, and its entry
// and metadata with every other expired one's in the user's sessions set.
const luaSessionAndUser = `
local u = redis.call('GET', KEYS[1])
if not u then return false end
local uk = ARGV[1] .. 'user:{' .. u .. '}'
local z = uk .. ':sessions'
local s = redis.call('ZSCORE', z, ARGV[2])
if not s then return false end
if tonumber(s) <= tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])` + luaSessionFns + `
  prune(z, z .. '` + sessionMetaSuffix + `', ARGV[3])
  zttl(z, z .. '` + sessionMetaSuffix + `')
  return false
end
return {s, redis.call('HGETALL', uk)}
`

// getSessionAndUser's step in the user's slot on a cluster. KEYS {user,
// sessions}. ARGV: member, the caller's time in ms. A session found
// expired is removed from the set, with every other expired one, and the
// reply is 'expired': the adapter then releases the session key. The
// metadata hash, in the same slot, is named from the set's key here (only
// on that branch), so that the hot path passes no third key.
const luaSessionAndUserC = `
local s = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not s then return false end
if tonumber(s) <= tonumber(ARGV[2]) then` + luaSessionFns + `
  prune(KEYS[2], KEYS[2] .. '` + sessionMetaSuffix + `', ARGV[2])
  zttl(KEYS[2], KEYS[2] .. '` + sessionMetaSuffix + `')
  return 'expired'
end
return {s, redis.call('HGETALL', KEYS[1])}
`

// updateSession and extendSession. ARGV: P, mode, member, new expiry or
// ”, new uid or ” (mode S only; in mode C the adapter moves a session
// between users in steps), for extendSession the expiry the caller read
// (ms) or ” (the write happens only if the stored expiry is not after
// it), '1' to set UpdatedAt else '0', the new UpdatedAt's head of the
// metadata (see encodeSessionMeta), and the whole metadata to store if
// the session has none. Returns {expiry, uid or ”, 1 if written else 0},
// 'notfound' for an unknown new user, or nil when the session is missing
// or expired. Nothing is written for a session that is not in the user's
// set: an update or extension racing a delete never brings it back.
const luaUpdateSession = luaResolve + `
local s = redis.call('ZSCORE', K[3], ARGV[3])
local now = nowms()
if not s or tonumber(s) <= now then return false end
if ARGV[6] ~= '' and tonumber(s) > tonumber(ARGV[6]) then return {s, U or '', 0} end
local exp = s
if ARGV[4] ~= '' then exp = ARGV[4] end
local meta = redis.call('HGET', K[5], ARGV[3])
if ARGV[7] == '1' then
  if meta then
    local i = string.find(meta, ' ', 1, true)
    if not i then return redis.error_reply('corrupt session metadata') end
    meta = ARGV[8] .. string.sub(meta, i)
  else
    meta = ARGV[9]
  end
end
local nu = ARGV[5]
if ARGV[2] == 'S' and nu ~= '' and nu ~= U then
  local nk = ukey(nu)
  if redis.call('EXISTS', nk) == 0 then return 'notfound' end
  redis.call('ZREM', K[3], ARGV[3])
  redis.call('HDEL', K[5], ARGV[3])
  prune(K[3], K[5], now)
  zttl(K[3], K[5])
  local nz = nk .. ':sessions'
  local nm = nz .. '` + sessionMetaSuffix + `'
  redis.call('ZADD', nz, exp, ARGV[3])
  if meta then redis.call('HSET', nm, ARGV[3], meta) end
  prune(nz, nm, now)
  zttl(nz, nm)
  redis.call('SET', KEYS[1], nu, 'PXAT', pxat(exp))
  return {exp, nu, 1}
end
redis.call('ZADD', K[3], exp, ARGV[3])
if ARGV[7] == '1' then redis.call('HSET', K[5], ARGV[3], meta) end
prune(K[3], K[5], now)
zttl(K[3], K[5])
if ARGV[2] == 'S' then redis.call('PEXPIREAT', KEYS[1], pxat(exp)) end
return {exp, U or '', 1}
`

// deleteSession. ARGV: P, mode, member. Deletes the session and returns
// {expiry, uid or ”, 1 if it had not expired else 0, metadata or ”}, or
// nil when the user holds no such session.
const luaDeleteSession = luaResolve + `
local s = redis.call('ZSCORE', K[3], ARGV[3])
if ARGV[2] == 'S' then redis.call('DEL', KEYS[1]) end
if not s then return false end
local meta = redis.call('HGET', K[5], ARGV[3]) or ''
local now = nowms()
redis.call('ZREM', K[3], ARGV[3])
redis.call('HDEL', K[5], ARGV[3])
prune(K[3], K[5], now)
zttl(K[3], K[5])
local alive = 0
if tonumber(s) > now then alive = 1 end
return {s, U or '', alive, meta}
`

// listSessionsByUserId: one script in the user's slot. KEYS {sessions,
// session metadata}. ARGV: P, mode, the caller's time in ms. Prunes the
// entries of sessions expired at that time (whether or not Redis evicted
// their keys), then returns {member, expiry, metadata or ”, …} of the
// rest: ZRANGEBYSCORE -inf now, HDEL and ZREMRANGEBYSCORE of those (only
// when there are any), ZRANGE WITHSCORES, and one HGET per session.
const luaListSessions = `
if prune(KEYS[1], KEYS[2], ARGV[3]) > 0 then zttl(KEYS[1], KEYS[2]) end
local live = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = live[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], live[i]) or ''
end
return out
`

// deleteSessionsByUserId: one script in the user's slot. KEYS {sessions,
// session metadata, receipt (mode C)}. ARGV: P, mode, escaped uid, member
// to keep or ”, the caller's time in ms, the receipt's TTL in ms. Removes
// every session of the user but the one kept (whose entry stays unless it
// has expired), with its metadata; in mode S also its session key (while
// it names this user). Returns "<n> <member> <member> …": n the sessions
// removed that had not expired, then, in mode C, the members whose session
// keys the adapter releases afterwards. In mode C the reply is also left
// in the receipt key for ARGV[6] ms, so that a retry of the same call
// after a lost reply gets the same answer (the first run removed the
// members) and the keys are released all the same; the adapter deletes
// the receipt with the release.
const luaDeleteSessions = `
if ARGV[2] == 'C' then
  local r = redis.call('GET', KEYS[3])
  if r then return r end
end
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local n, gone = 0, {''} -- gone[1]: n, once counted
for i = 1, #all, 2 do
  local m = all[i]
  if m ~= ARGV[4] then
    redis.call('ZREM', KEYS[1], m)
    redis.call('HDEL', KEYS[2], m)
    if tonumber(all[i + 1]) > tonumber(ARGV[5]) then n = n + 1 end
    if ARGV[2] == 'S' then
      unpoint(P .. 'session:{' .. m .. '}', ARGV[3])
    else
      gone[#gone + 1] = m
    end
  end
end
prune(KEYS[1], KEYS[2], ARGV[5])
zttl(KEYS[1], KEYS[2])
gone[1] = tostring(n)
local reply = table.concat(gone, ' ')
if #gone > 1 then redis.call('SET', KEYS[3], reply, 'PX', ARGV[6]) end
return reply
`

// getAuthenticator. ARGV: P, mode, authenticator field.
const luaGetAuthenticator = luaResolve + `
return redis.call('HGET', K[4], ARGV[3])
`

// updateAuthenticatorCounter. ARGV: P, mode, field, new counter. Replaces
// the leading decimal counter of the stored value.
const luaUpdateCounter = luaResolve + `
local v = redis.call('HGET', K[4], ARGV[3])
if not v then return false end
local i = string.find(v, ' ', 1, true)
if not i then return redis.error_reply('corrupt authenticator record') end
v = ARGV[4] .. string.sub(v, i)
redis.call('HSET', K[4], ARGV[3], v)
return v
`

// advanceAuthenticatorCounter. ARGV: P, mode, field, new counter (decimal,
// not negative). Sets the counter only if the new one is above the stored
// one, compared as decimal strings (exact for any int64); both "0" passes
// unchanged. Returns {'ok', value} or {'low', value}.
const luaAdvanceCounter = luaResolve + `
local v = redis.call('HGET', K[4], ARGV[3])
if not v then return false end
local i = string.find(v, ' ', 1, true)
if not i then return redis.error_reply('corrupt authenticator record') end
local old, new = string.sub(v, 1, i - 1), ARGV[4]
if old == '0' and new == '0' then return {'ok', v} end
if #new < #old or (#new == #old and new <= old) then return {'low', v} end
v = new .. string.sub(v, i)
redis.call('HSET', K[4], ARGV[3], v)
return {'ok', v}
`

// swapFactor: one script in the user's slot. KEYS {factors}. ARGV: the
// factor's field (escaped id), then, in the factor layout of recordcodec
// (encodeFactor), old's secret (str) and step (varint), next's name (str),
// secret (str) and step (varint), and next's lastUsedAt (varint). The
// record is the version byte (codecVersion, 1), then userId, id, type and name (str each),
// secret (str), step, createdAt and lastUsedAt (varint each): the script
// walks the strs to the secret and compares the bytes of the stored secret
// and step with old's (a str and a minimal varint end where their bytes
// say, so equal bytes are an equal secret and step), then splices next's
// name, secret and step and lastUsedAt around the stored head (userId, id,
// type) and createdAt. Returns {'ok', record as written}, {'changed',
// stored record}, or nil when the user has no such factor.
const luaSwapFactor = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return false end
local function uvarint(i) -- the uvarint at byte i (at most 10 bytes) and the index after it
  local n, mul = 0, 1
  for _ = 1, 10 do
    local c = string.byte(v, i)
    if not c then return nil end
    if c < 128 then return n + c * mul, i + 1 end
    n, mul, i = n + (c - 128) * mul, mul * 128, i + 1
  end
  return nil
end
if string.byte(v, 1) ~= 1 then return redis.error_reply('corrupt factor record') end
local i, head = 2, nil -- after the version byte
for s = 1, 4 do -- userId, id, type, then name
  if s == 4 then head = string.sub(v, 1, i - 1) end
  local n, j = uvarint(i)
  if not n or j + n - 1 > #v then return redis.error_reply('corrupt factor record') end
  i = j + n
end
local old = ARGV[2]
if string.sub(v, i, i + #old - 1) ~= old then return {'changed', v} end
local n, j = uvarint(i + #old) -- createdAt, a zig-zag varint: a uvarint's bytes
local m, k = nil, nil
if n then m, k = uvarint(j) end -- lastUsedAt, the last field
if not m or k ~= #v + 1 then return redis.error_reply('corrupt factor record') end
local rec = head .. ARGV[3] .. string.sub(v, i + #old, j - 1) .. ARGV[4]
redis.call('HSET', KEYS[1], ARGV[1], rec)
return {'ok', rec}
`

// deleteFactor: one script in the user's slot. KEYS: S {factors, factor
// index key}, C {factors}. ARGV: P, mode, field (escaped id), escaped uid.
// Deletes the factor and returns its record, or nil when the user has no
// such factor. In mode S it also deletes the index key (while it names
// this user); in mode C the adapter releases it afterwards.
const luaDeleteFactor = `
local v = redis.call('HGET', KEYS[1], ARGV[3])
if not v then return false end
redis.call('HDEL', KEYS[1], ARGV[3])
if ARGV[2] == 'S' then unpoint(KEYS[2], ARGV[4]) end
return v
`

// luaLock takes the lease lock of a user's unique fields (e-mail,
// username) on a cluster: the user hash field lockField holds "<nonce>
// <expiry ms>". KEYS {user}. ARGV: nonce, lease in ms, then fields.
// Returns {"=", the user's value of each field ("" for none)}, "busy"
// while another live lease holds it, or "notfound". A lease this nonce
// holds already is taken again (renewed): the retry of a run whose reply
// was lost must not wait for its own lease.
const luaLock = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'notfound' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local l = redis.call('HGET', KEYS[1], '` + lockField + `')
if l and string.sub(l, 1, #ARGV[1] + 1) ~= ARGV[1] .. ' ' then
  local exp = tonumber(string.match(l, ' (%d+)$'))
  if exp and exp > now then return 'busy' end
end
redis.call('HSET', KEYS[1], '` + lockField + `', ARGV[1] .. ' ' .. string.format('%d', now + tonumber(ARGV[2])))
local out = {'='}
for i = 3, #ARGV do out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[i]) or '' end
return out
`

// luaUnlock gives the lock back if ARGV[1] (the nonce) still holds it.
const luaUnlock = `
local l = redis.call('HGET', KEYS[1], '` + lockField + `')
if l and string.sub(l, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
  redis.call('HDEL', KEYS[1], '` + lockField + `')
end
return 1
`

// lockField is the user hash field of the e-mail-change lock (cluster
// only). It is not a user field: decoding ignores it.
const lockField = "~emailLock"

// Pointer scripts for the cluster steps; they take no prefix.

// luaCommit makes a claimed pointer permanent (ARGV[2] = '0') or sets its
// expiry (ARGV[2] = ms; with ARGV[3] = 'GT', only to a later one), if it
// still holds ARGV[1]. Returns 1 or 0.
const luaCommit = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then
  redis.call('PERSIST', KEYS[1])
elseif ARGV[3] then
  redis.call('PEXPIREAT', KEYS[1], ARGV[2], ARGV[3])
else
  redis.call('PEXPIREAT', KEYS[1], ARGV[2])
end
return 1
`

// luaRelease deletes a pointer if it still holds ARGV[1] and, with
// ARGV[2], if it still expires at ARGV[2] ms (a claim's token: the claim
// of one attempt, not another's of the same user id, nor a confirmed
// pointer). Returns 1 or 0.
const luaRelease = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] and redis.call('PEXPIRETIME', KEYS[1]) ~= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1])
return 1
`

// luaReleaseStale deletes a pointer if it still holds ARGV[1] and has no
// TTL (a confirmed pointer, not a claim in progress). Returns 1 or 0.
const luaReleaseStale = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('PTTL', KEYS[1]) ~= -1 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`

// luaRepoint changes a pointer from ARGV[1] to ARGV[2], expiring at ARGV[3]
// ms, if it still holds ARGV[1]. Returns 1 or 0.
const luaRepoint = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
return 1
`

// luaConsume is useVerificationToken under client retries. KEYS {token,
// receipt}: the receipt key is this attempt's own (a random id) in the
// token's hash slot. A first run takes the token (GETDEL) and leaves its
// value in the receipt for ARGV[1] ms; a retry of the same attempt, whose
// first reply was lost, finds the receipt and gets the same answer, where
// a second GETDEL would say "no token". Returns the value or nil.
const luaConsume = `
local r = redis.call('GET', KEYS[2])
if r then return r end
local v = redis.call('GETDEL', KEYS[1])
if not v then return false end
redis.call('SET', KEYS[2], v, 'PX', ARGV[1])
return v
`

// luaReplaceField sets field ARGV[1] of hash KEYS[1] to ARGV[3] if it
// still holds ARGV[2] (updateAccount's compare-and-set). Returns 1 if set.
const luaReplaceField = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`

// scripts holds one adapter's compiled scripts.
type scripts struct {
	createUser, userByEmail, updateUser, deleteUser  *redis.Script
	undoCreate                                       *redis.Script
	attach, userByAccount, getAccount, unlinkAccount *redis.Script
	createSession, sessionAndUser, sessionAndUserC   *redis.Script
	updateSession, listSessions, deleteSessions      *redis.Script
	deleteSession, getAuthenticator, updateCounter   *redis.Script
	advanceCounter                                   *redis.Script
	commit, release, releaseStale, repoint, lock     *redis.Script
	unlock                                           *redis.Script
	consume, replaceField                            *redis.Script
	swapFactor, deleteFactor                         *redis.Script
}

func newScripts() *scripts {
	h := func(body string) *redis.Script { return redis.NewScript(luaHeader + body) }
	return &scripts{
		createUser:       h(luaCreateUser),
		undoCreate:       h(luaUndoCreate),
		userByEmail:      h(luaUserByEmail),
		updateUser:       h(luaUpdateUser),
		deleteUser:       h(luaDeleteUser),
		attach:           h(luaAttach),
		userByAccount:    h(luaUserByAccount),
		getAccount:       h(luaGetAccount),
		unlinkAccount:    h(luaUnlinkAccount),
		createSession:    h(luaCreateSession),
		sessionAndUser:   redis.NewScript(luaSessionAndUser),
		sessionAndUserC:  redis.NewScript(luaSessionAndUserC),
		updateSession:    h(luaUpdateSession),
		listSessions:     h(luaListSessions),
		deleteSessions:   h(luaDeleteSessions),
		deleteSession:    h(luaDeleteSession),
		getAuthenticator: h(luaGetAuthenticator),
		updateCounter:    h(luaUpdateCounter),
		advanceCounter:   h(luaAdvanceCounter),
		commit:           redis.NewScript(luaCommit),
		consume:          redis.NewScript(luaConsume),
		replaceField:     redis.NewScript(luaReplaceField),
		release:          redis.NewScript(luaRelease),
		releaseStale:     redis.NewScript(luaReleaseStale),
		repoint:          redis.NewScript(luaRepoint),
		lock:             redis.NewScript(luaLock),
		unlock:           redis.NewScript(luaUnlock),
		swapFactor:       redis.NewScript(luaSwapFactor),
		deleteFactor:     h(luaDeleteFactor),
	}
}

func (s *scripts) all() []*redis.Script {
	return []*redis.Script{
		s.createUser, s.undoCreate, s.userByEmail, s.updateUser, s.deleteUser,
		s.attach, s.userByAccount, s.getAccount, s.unlinkAccount,
		s.createSession, s.sessionAndUser, s.sessionAndUserC, s.updateSession, s.listSessions, s.deleteSessions,
		s.deleteSession, s.getAuthenticator, s.updateCounter, s.advanceCounter,
		s.commit, s.release, s.releaseStale, s.repoint, s.lock, s.unlock, s.consume, s.replaceField,
		s.swapFactor, s.deleteFactor,
	}
}
