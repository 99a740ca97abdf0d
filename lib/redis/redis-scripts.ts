/*
 * Lua scripts: each runs atomically in Redis, so multi-key updates need no locks and cost one
 * round trip. They build key names from the prefix passed in ARGV[1], which ties them to a single
 * Redis (or a primary with replicas); Redis Cluster is not supported.
 *
 * Key layout under the prefix p:
 *   p..'session:'..id       JSON string, PX idle TTL
 *   p..'sessions'           ZSET id → last access (ms): live sessions, for the maxSessions bound
 *   p..'owner:'..owner      ZSET id → last access (ms) of one owner's sessions, for its cap
 *   p..'owners'             HASH session id → owner (principal:… or address:…)
 *   p..'getstreams'         HASH session id → id of its current GET stream
 *   p..'stream:'..sid       Redis Stream of SSE events (field m = JSON), MAXLEN ~ cap, PX TTL
 *   p..'stream:'..sid..':meta'  HASH k = 'g'|'p' (GET or POST stream), o = owner instance,
 *                           f = '1' once finished, t = '1' while another instance tails it,
 *                           s = session id (POST streams)
 *   p..'sessionstreams:'..id  SET of the POST streams of a session (dropped with it), PX TTL
 * Byte accounting of the events STREAM_APPEND keeps (a stream leaves it when its events are gone,
 * dropped or expired: entries of expired streams are removed a few at a time on each append):
 *   p..'eventstreams'       ZSET sid → order of its last append (p..'eventclock', a counter):
 *                           least recently written first
 *   p..'eventbytes'         HASH sid → bytes of the stream's events
 *   p..'eventsession'       HASH sid → its session id ('' for none)
 *   p..'eventtotal'         bytes of all the events accounted; these five PX TTL
 *   p..'sessionevents:'..id  ZSET sid → last append of one session's streams, PX TTL
 *   p..'sessionbytes:'..id  bytes of one session's events, PX TTL
 *   p..'instance:'..id      heartbeat, PX
 *   p..'nonce:'..n          single-use requestState nonces, PX until the state expires
 */

/**
 * ARGV: p, id, json, idleTtlMs, nowMs, maxSessions, owner ('' for none), maxPerOwner.
 * Within the owner's cap: ends that owner's least recently used sessions (expired ones first, as
 * they are the oldest), never another owner's. Then, at maxSessions live sessions (expired ones
 * dropped first), refuses. Returns { created (1 or 0), ids of the owner's sessions it ended }.
 */
export const SESSION_CREATE = `
local p, id, owner = ARGV[1], ARGV[2], ARGV[7]
local ttl, now, max, perOwner = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[8])
local index, owners = p .. 'sessions', p .. 'owners'
redis.call('ZREMRANGEBYSCORE', index, '-inf', now - ttl)
local evicted = {}
local mine = p .. 'owner:' .. owner
if owner ~= '' then
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', mine, '-inf', now - ttl)) do redis.call('HDEL', owners, gone) end
  redis.call('ZREMRANGEBYSCORE', mine, '-inf', now - ttl)
  local excess = redis.call('ZCARD', mine) - perOwner + 1
  if excess > 0 then
    local victims = redis.call('ZPOPMIN', mine, excess)
    for i = 1, #victims, 2 do
      local victim = victims[i]
      redis.call('DEL', p .. 'session:' .. victim)
      redis.call('ZREM', index, victim)
      redis.call('HDEL', owners, victim)
      local stream = redis.call('HGET', p .. 'getstreams', victim)
      if stream then
        redis.call('HDEL', p .. 'getstreams', victim)
        redis.call('PUBLISH', p .. 'relay', 's ' .. stream)
      end
      evicted[#evicted + 1] = victim
    end
  end
end
if redis.call('ZCARD', index) >= max then return { 0, evicted } end
redis.call('SET', p .. 'session:' .. id, ARGV[3], 'PX', ttl)
redis.call('ZADD', index, now, id)
redis.call('PEXPIRE', index, ttl)
if owner ~= '' then
  redis.call('ZADD', mine, now, id)
  redis.call('PEXPIRE', mine, ttl)
  redis.call('HSET', owners, id, owner)
  redis.call('PEXPIRE', owners, ttl)
end
return { 1, evicted }`;

/** ARGV: p, id, idleTtlMs, nowMs. Returns the session JSON (idle timer refreshed) or nil. */
export const SESSION_GET = `
local p, id, ttl = ARGV[1], ARGV[2], ARGV[3]
local value = redis.call('GETEX', p .. 'session:' .. id, 'PX', ttl)
if value then
  redis.call('ZADD', p .. 'sessions', 'XX', ARGV[4], id)
  redis.call('PEXPIRE', p .. 'sessions', ttl)
  redis.call('PEXPIRE', p .. 'getstreams', ttl)
  local owner = redis.call('HGET', p .. 'owners', id)
  if owner then
    redis.call('ZADD', p .. 'owner:' .. owner, 'XX', ARGV[4], id)
    redis.call('PEXPIRE', p .. 'owner:' .. owner, ttl)
    redis.call('PEXPIRE', p .. 'owners', ttl)
  end
end
return value`;

/** ARGV: p, id, json, idleTtlMs. Replaces a live session only (like the in-memory store). */
export const SESSION_UPDATE = `
local key = ARGV[1] .. 'session:' .. ARGV[2]
if redis.call('EXISTS', key) == 0 then return 0 end
redis.call('SET', key, ARGV[3], 'PX', ARGV[4])
return 1`;

/** ARGV: p, id. Returns the id of the GET stream it had ('' for none), or false if unknown. */
export const SESSION_DELETE = `
local p, id = ARGV[1], ARGV[2]
if redis.call('DEL', p .. 'session:' .. id) == 0 then return false end
redis.call('ZREM', p .. 'sessions', id)
local owner = redis.call('HGET', p .. 'owners', id)
if owner then
  redis.call('ZREM', p .. 'owner:' .. owner, id)
  redis.call('HDEL', p .. 'owners', id)
end
local stream = redis.call('HGET', p .. 'getstreams', id)
redis.call('HDEL', p .. 'getstreams', id)
if stream then redis.call('PUBLISH', p .. 'relay', 's ' .. stream) end
return stream or ''`;

/** ARGV: p, streamId, kind, owner, ttlMs, sessionId. Records a new stream (fire-and-forget at open). */
export const STREAM_OPEN = `
local meta = ARGV[1] .. 'stream:' .. ARGV[2] .. ':meta'
redis.call('HSET', meta, 'k', ARGV[3], 'o', ARGV[4], 's', ARGV[6])
redis.call('PEXPIRE', meta, ARGV[5])
local streams = ARGV[1] .. 'sessionstreams:' .. ARGV[6]
redis.call('SADD', streams, ARGV[2])
redis.call('PEXPIRE', streams, ARGV[5])
return 1`;

/**
 * Lua helpers shared by the scripts that touch the byte accounting; they expect `p` (the prefix)
 * to be set. A counter is only decremented while it exists: DECRBY on an expired key would create
 * it again without a TTL.
 */
const EVENT_ACCOUNTING = `
local byTime, sizes, owners, total = p .. 'eventstreams', p .. 'eventbytes', p .. 'eventsession', p .. 'eventtotal'
local function decrease(key, n)
  if n ~= 0 and redis.call('EXISTS', key) == 1 then redis.call('DECRBY', key, n) end
end
-- Takes a stream out of the accounting (its events are gone: dropped, expired or deleted).
local function forget(sid)
  local bytes = tonumber(redis.call('HGET', sizes, sid) or '0')
  local session = redis.call('HGET', owners, sid)
  redis.call('HDEL', sizes, sid)
  redis.call('HDEL', owners, sid)
  redis.call('ZREM', byTime, sid)
  decrease(total, bytes)
  if session and session ~= '' then
    redis.call('ZREM', p .. 'sessionevents:' .. session, sid)
    decrease(p .. 'sessionbytes:' .. session, bytes)
  end
end
-- Drops the oldest event of a stream; a stream left without events (or expired) is forgotten.
local function dropOldest(sid)
  local key = p .. 'stream:' .. sid
  local first = redis.call('XRANGE', key, '-', '+', 'COUNT', 1)[1]
  if not first then
    forget(sid)
    return
  end
  local size = 0
  for i = 1, #first[2], 2 do
    if first[2][i] == 'm' then size = #first[2][i + 1] end
  end
  redis.call('XDEL', key, first[1])
  redis.call('HINCRBY', sizes, sid, -size)
  decrease(total, size)
  local session = redis.call('HGET', owners, sid)
  if session and session ~= '' then decrease(p .. 'sessionbytes:' .. session, size) end
  if redis.call('XLEN', key) == 0 then forget(sid) end
end
-- Forgets up to n of the least recently written streams of an index whose key expired.
local function sweep(index, n)
  for _, sid in ipairs(redis.call('ZRANGE', index, 0, n - 1)) do
    if redis.call('EXISTS', p .. 'stream:' .. sid) == 0 then forget(sid) end
  end
end`;

/**
 * ARGV: p, streamId, json, maxLen, ttlMs, maxBytes, maxSessionBytes, maxTotalBytes. Appends one
 * event, then drops the oldest events until the stream holds at most maxLen events and maxBytes
 * bytes, its session at most maxSessionBytes (from the session's least recently written stream
 * first), and all streams at most maxTotalBytes (from the least recently written stream first),
 * as the in-memory store does. Pokes tailing instances. Returns the Redis entry id (time-based:
 * unique and ordered, even across instances and key expiry).
 */
export const STREAM_APPEND = `
local p, sid, ttl = ARGV[1], ARGV[2], ARGV[5]
local key, meta = p .. 'stream:' .. sid, p .. 'stream:' .. sid .. ':meta'
local maxLen, maxBytes, maxSession, maxTotal = tonumber(ARGV[4]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
${EVENT_ACCOUNTING}
-- Write order, not wall time: appends in the same millisecond must still rank, or the trim could
-- pick the stream written last as the least recent one.
local now = redis.call('INCR', p .. 'eventclock')
local session = redis.call('HGET', meta, 's') or ''
local sessionIndex, sessionBytes = p .. 'sessionevents:' .. session, p .. 'sessionbytes:' .. session
-- A stream whose key expired and is written again starts from zero bytes.
if redis.call('EXISTS', key) == 0 then forget(sid) end
sweep(byTime, 3)
if session ~= '' then sweep(sessionIndex, 3) end
local id = redis.call('XADD', key, '*', 'm', ARGV[3])
local size = #ARGV[3]
redis.call('HINCRBY', sizes, sid, size)
redis.call('HSET', owners, sid, session)
redis.call('ZADD', byTime, now, sid)
redis.call('INCRBY', total, size)
for _, k in ipairs({ key, meta, byTime, sizes, owners, total, p .. 'eventclock' }) do redis.call('PEXPIRE', k, ttl) end
if session ~= '' then
  redis.call('ZADD', sessionIndex, now, sid)
  redis.call('INCRBY', sessionBytes, size)
  redis.call('PEXPIRE', sessionIndex, ttl)
  redis.call('PEXPIRE', sessionBytes, ttl)
  redis.call('PEXPIRE', p .. 'sessionstreams:' .. session, ttl)
end
-- Each pass drops one event or forgets one stream, so every loop ends.
while redis.call('HEXISTS', sizes, sid) == 1 and (tonumber(redis.call('HGET', sizes, sid)) > maxBytes or redis.call('XLEN', key) > maxLen) do
  dropOldest(sid)
end
-- The least recently written stream of an index loses its oldest events until the counter fits.
local function trimTo(counter, index, max)
  while tonumber(redis.call('GET', counter) or '0') > max do
    local oldest = redis.call('ZRANGE', index, 0, 0)[1]
    if not oldest then
      redis.call('DEL', counter)
      break
    end
    dropOldest(oldest)
  end
end
if session ~= '' then trimTo(sessionBytes, sessionIndex, maxSession) end
trimTo(total, byTime, maxTotal)
if redis.call('HEXISTS', meta, 't') == 1 then redis.call('PUBLISH', p .. 'relay', 's ' .. sid) end
return id`;

/**
 * ARGV: p, sessionId. Deletes the POST streams of a session that ended, and their bytes from the
 * accounting; instances tailing one of them are poked and end it (its metadata is gone). Returns
 * the number of streams deleted.
 */
export const SESSION_STREAMS_DROP = `
local p, session = ARGV[1], ARGV[2]
${EVENT_ACCOUNTING}
local set = p .. 'sessionstreams:' .. session
local streams = redis.call('SMEMBERS', set)
for _, sid in ipairs(streams) do
  forget(sid)
  redis.call('DEL', p .. 'stream:' .. sid, p .. 'stream:' .. sid .. ':meta')
  redis.call('PUBLISH', p .. 'relay', 's ' .. sid)
end
-- Streams whose SET entry is gone still hold bytes in the session's index: forget them too.
for _, sid in ipairs(redis.call('ZRANGE', p .. 'sessionevents:' .. session, 0, -1)) do
  forget(sid)
  redis.call('DEL', p .. 'stream:' .. sid, p .. 'stream:' .. sid .. ':meta')
end
redis.call('DEL', set, p .. 'sessionevents:' .. session, p .. 'sessionbytes:' .. session)
return #streams`;

/** ARGV: p, streamId, ttlMs. Marks a stream finished; tailers end after its last event. */
export const STREAM_FINISH = `
local p, sid = ARGV[1], ARGV[2]
local meta = p .. 'stream:' .. sid .. ':meta'
redis.call('HSET', meta, 'f', '1')
redis.call('PEXPIRE', meta, ARGV[3])
if redis.call('HEXISTS', meta, 't') == 1 then redis.call('PUBLISH', p .. 'relay', 's ' .. sid) end
return 1`;

/**
 * ARGV: p, sessionId, streamId, owner, streamTtlMs, idleTtlMs. Makes streamId the session's GET
 * stream, ends the previous one on whichever instance tails it, and drops a few entries of
 * sessions that expired (the hash would otherwise keep them until the next change event).
 */
export const GET_STREAM_OPEN = `
local p, session, sid = ARGV[1], ARGV[2], ARGV[3]
local streams = p .. 'getstreams'
local previous = redis.call('HGET', streams, session)
redis.call('HSET', streams, session, sid)
redis.call('PEXPIRE', streams, ARGV[6])
local meta = p .. 'stream:' .. sid .. ':meta'
redis.call('HSET', meta, 'k', 'g', 'o', ARGV[4], 't', '1')
redis.call('PEXPIRE', meta, ARGV[5])
for _, other in ipairs(redis.call('HRANDFIELD', streams, 4)) do
  if redis.call('EXISTS', p .. 'session:' .. other) == 0 then redis.call('HDEL', streams, other) end
end
if previous and previous ~= sid then redis.call('PUBLISH', p .. 'relay', 's ' .. previous) end
return 1`;

/**
 * ARGV: p, streamId, sessionId, afterId, count. One read of a tailed stream: its state first, then
 * the entries after afterId, so that a stream seen as finished has all its events in the same
 * reply. Returns { state, entries } where state is 'live' or 'end'.
 */
export const STREAM_TAIL = `
local p, sid, session = ARGV[1], ARGV[2], ARGV[3]
local meta = p .. 'stream:' .. sid .. ':meta'
local m = redis.call('HMGET', meta, 'k', 'o', 'f')
local state = 'live'
if m[1] == 'p' then
  if m[3] == '1' then state = 'end'
  elseif not m[2] or redis.call('EXISTS', p .. 'instance:' .. m[2]) == 0 then state = 'end' end
elseif redis.call('HGET', p .. 'getstreams', session) ~= sid or redis.call('EXISTS', p .. 'session:' .. session) == 0 then
  state = 'end'
end
if m[1] then redis.call('HSET', meta, 't', '1') end
local entries = redis.call('XRANGE', p .. 'stream:' .. sid, '(' .. ARGV[4], '+', 'COUNT', ARGV[5])
return { state, entries }`;

/**
 * ARGV: p, sessionId, json, maxLen, streamTtlMs. Appends to the session's GET stream, wherever it
 * is held (or to be replayed when the client comes back). Returns 1, or 0 without a GET stream.
 */
export const SEND_TO_SESSION = `
local p, session = ARGV[1], ARGV[2]
local sid = redis.call('HGET', p .. 'getstreams', session)
if not sid then return 0 end
if redis.call('EXISTS', p .. 'session:' .. session) == 0 then
  redis.call('HDEL', p .. 'getstreams', session)
  return 0
end
local key = p .. 'stream:' .. sid
redis.call('XADD', key, 'MAXLEN', '~', ARGV[4], '*', 'm', ARGV[3])
redis.call('PEXPIRE', key, ARGV[5])
redis.call('PUBLISH', p .. 'relay', 's ' .. sid)
return 1`;

/**
 * ARGV: p, eventJson, notificationJson, 'list' | 'resource', uri, maxLen, streamTtlMs.
 * A change event: appended once, here, to the GET stream of every legacy session that wants it
 * (list changes: all; resource updates: sessions subscribed to the URI), then announced to every
 * instance (their tails pick the appends up; their subscriptions/listen streams get the event).
 * Appending at the source rather than on each holder means an event is stored even while no
 * instance holds the stream, and never twice. Returns the number of GET streams reached.
 */
export const BUS_PUBLISH = `
local p = ARGV[1]
local streams = p .. 'getstreams'
local all = redis.call('HGETALL', streams)
local poked = {}
for i = 1, #all, 2 do
  local session, sid = all[i], all[i + 1]
  local value = redis.call('GET', p .. 'session:' .. session)
  if not value then
    redis.call('HDEL', streams, session)
  else
    local wanted = ARGV[4] == 'list'
    if not wanted then
      local ok, decoded = pcall(cjson.decode, value)
      if ok and type(decoded) == 'table' and type(decoded.subscriptions) == 'table' then
        for _, uri in ipairs(decoded.subscriptions) do
          if uri == ARGV[5] then wanted = true break end
        end
      end
    end
    if wanted then
      local key = p .. 'stream:' .. sid
      redis.call('XADD', key, 'MAXLEN', '~', ARGV[6], '*', 'm', ARGV[3])
      redis.call('PEXPIRE', key, ARGV[7])
      poked[#poked + 1] = sid
    end
  end
end
if #poked > 0 then redis.call('PUBLISH', p .. 'relay', 's ' .. table.concat(poked, ' ')) end
redis.call('PUBLISH', p .. 'bus', ARGV[2])
return #poked`;
