// Lua scripts of event streams, the relay and the bus (see redis-scripts.ts for the key layout
// every script shares).
import { prefixFrom } from './redis-scripts.js';

/**
 * KEYS: P..'stream:'..sid..':meta', P..'sessionstreams:'..session. ARGV: streamId, kind, owner,
 * ttlMs, sessionId. Records a new stream (fire-and-forget at open).
 */
export const STREAM_OPEN = `
redis.call('HSET', KEYS[1], 'k', ARGV[2], 'o', ARGV[3], 's', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
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
 * KEYS: P..'eventclock', P..'stream:'..sid, P..'stream:'..sid..':meta', P..'eventstreams',
 * P..'eventbytes', P..'eventsession', P..'eventtotal'. ARGV: streamId, json, maxLen, ttlMs,
 * maxBytes, maxSessionBytes, maxTotalBytes. Appends one event, then drops the oldest events until
 * the stream holds at most maxLen events and maxBytes bytes, its session at most maxSessionBytes
 * (from the session's least recently written stream first), and all streams at most
 * maxTotalBytes (from the least recently written stream first), as the in-memory store does.
 * Pokes tailing instances. Returns the Redis entry id (time-based: unique and ordered, even
 * across instances and key expiry).
 */
export const STREAM_APPEND = `
${prefixFrom('eventclock')}
local sid, ttl = ARGV[1], ARGV[4]
local key, meta = KEYS[2], KEYS[3]
local maxLen, maxBytes, maxSession, maxTotal = tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
${EVENT_ACCOUNTING}
-- Write order, not wall time: appends in the same millisecond must still rank, or the trim could
-- pick the stream written last as the least recent one.
local now = redis.call('INCR', KEYS[1])
local session = redis.call('HGET', meta, 's') or ''
local sessionIndex, sessionBytes = p .. 'sessionevents:' .. session, p .. 'sessionbytes:' .. session
-- A stream whose key expired and is written again starts from zero bytes.
if redis.call('EXISTS', key) == 0 then forget(sid) end
sweep(byTime, 3)
if session ~= '' then sweep(sessionIndex, 3) end
local id = redis.call('XADD', key, '*', 'm', ARGV[2])
local size = #ARGV[2]
redis.call('HINCRBY', sizes, sid, size)
redis.call('HSET', owners, sid, session)
redis.call('ZADD', byTime, now, sid)
redis.call('INCRBY', total, size)
for _, k in ipairs({ key, meta, byTime, sizes, owners, total, KEYS[1] }) do redis.call('PEXPIRE', k, ttl) end
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
 * KEYS: P..'sessionstreams:'..session, P..'sessionevents:'..session, P..'sessionbytes:'..session.
 * ARGV: sessionId. Deletes the POST streams of a session that ended, and their bytes from the
 * accounting; instances tailing one of them are poked and end it (its metadata is gone). Returns
 * the number of streams deleted.
 */
export const SESSION_STREAMS_DROP = `
local p = string.sub(KEYS[1], 1, -#('sessionstreams:' .. ARGV[1]) - 1)
${EVENT_ACCOUNTING}
local streams = redis.call('SMEMBERS', KEYS[1])
for _, sid in ipairs(streams) do
  forget(sid)
  redis.call('DEL', p .. 'stream:' .. sid, p .. 'stream:' .. sid .. ':meta')
  redis.call('PUBLISH', p .. 'relay', 's ' .. sid)
end
-- Streams whose SET entry is gone still hold bytes in the session's index: forget them too.
for _, sid in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  forget(sid)
  redis.call('DEL', p .. 'stream:' .. sid, p .. 'stream:' .. sid .. ':meta')
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return #streams`;

/**
 * KEYS: P..'stream:'..sid, P..'stream:'..sid..':meta', P..'relay'. ARGV: streamId. Deletes the
 * events of a stream whose call was cancelled, and their bytes from the accounting; an instance
 * tailing it is poked and ends it (its metadata is gone). Returns 1.
 */
export const STREAM_DROP = `
local p = string.sub(KEYS[1], 1, -#('stream:' .. ARGV[1]) - 1)
${EVENT_ACCOUNTING}
local session = redis.call('HGET', KEYS[2], 's')
forget(ARGV[1])
redis.call('DEL', KEYS[1], KEYS[2])
if session and session ~= '' then redis.call('SREM', p .. 'sessionstreams:' .. session, ARGV[1]) end
redis.call('PUBLISH', KEYS[3], 's ' .. ARGV[1])
return 1`;

/**
 * KEYS: P..'stream:'..sid..':meta', P..'relay' (a channel, named like a key so that it carries
 * the tag). ARGV: streamId, ttlMs. Marks a stream finished; tailers end after its last event.
 */
export const STREAM_FINISH = `
redis.call('HSET', KEYS[1], 'f', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('HEXISTS', KEYS[1], 't') == 1 then redis.call('PUBLISH', KEYS[2], 's ' .. ARGV[1]) end
return 1`;

/**
 * KEYS: P..'getstreams', P..'stream:'..sid..':meta'. ARGV: sessionId, streamId, owner,
 * streamTtlMs, idleTtlMs. Makes streamId the session's GET stream, ends the previous one on
 * whichever instance tails it, and drops a few entries of sessions that expired (the hash would
 * otherwise keep them until the next change event).
 */
export const GET_STREAM_OPEN = `
${prefixFrom('getstreams')}
local streams, session, sid = KEYS[1], ARGV[1], ARGV[2]
local previous = redis.call('HGET', streams, session)
redis.call('HSET', streams, session, sid)
redis.call('PEXPIRE', streams, ARGV[5])
redis.call('HSET', KEYS[2], 'k', 'g', 'o', ARGV[3], 't', '1')
redis.call('PEXPIRE', KEYS[2], ARGV[4])
for _, other in ipairs(redis.call('HRANDFIELD', streams, 4)) do
  if other ~= '' and redis.call('EXISTS', p .. 'session:' .. other) == 0 then redis.call('HDEL', streams, other) end
end
if previous and previous ~= sid then redis.call('PUBLISH', p .. 'relay', 's ' .. previous) end
return 1`;

/**
 * KEYS: P..'stream:'..sid..':meta', P..'stream:'..sid, P..'getstreams', P..'session:'..session.
 * ARGV: streamId, afterId, count, sessionId. One read of a tailed stream: its state first, then the entries
 * after afterId, so that a stream seen as finished has all its events in the same reply. Returns
 * { state, entries } where state is 'live' or 'end'.
 */
export const STREAM_TAIL = `
local p = string.sub(KEYS[1], 1, -#('stream:' .. ARGV[1] .. ':meta') - 1)
local m = redis.call('HMGET', KEYS[1], 'k', 'o', 'f')
local state = 'live'
if m[1] == 'p' then
  if m[3] == '1' then state = 'end'
  elseif not m[2] or redis.call('EXISTS', p .. 'instance:' .. m[2]) == 0 then state = 'end' end
elseif redis.call('HGET', KEYS[3], ARGV[4]) ~= ARGV[1] or redis.call('EXISTS', KEYS[4]) == 0 then
  state = 'end'
end
if m[1] then redis.call('HSET', KEYS[1], 't', '1') end
local entries = redis.call('XRANGE', KEYS[2], '(' .. ARGV[2], '+', 'COUNT', ARGV[3])
return { state, entries }`;

/**
 * KEYS: P..'getstreams', P..'session:'..session. ARGV: sessionId, json, maxLen, streamTtlMs.
 * Appends to the session's GET stream, wherever it is held (or to be replayed when the client
 * comes back). Returns 1, or 0 without a GET stream.
 */
export const SEND_TO_SESSION = `
${prefixFrom('getstreams')}
local sid = redis.call('HGET', KEYS[1], ARGV[1])
if not sid then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 0
end
local key = p .. 'stream:' .. sid
redis.call('XADD', key, 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[2])
redis.call('PEXPIRE', key, ARGV[4])
redis.call('PUBLISH', p .. 'relay', 's ' .. sid)
return 1`;

/**
 * KEYS: P..'getstreams'. ARGV: eventJson, notificationJson, 'list' | 'resource', uri, maxLen,
 * streamTtlMs. A change event: appended once, here, to the GET stream of every legacy session
 * that wants it (list changes: all; resource updates: sessions subscribed to the URI), then
 * announced to every instance (their tails pick the appends up; their subscriptions/listen streams
 * get the event). Appending at the source rather than on each holder means an event is stored even
 * while no instance holds the stream, and never twice. Returns the number of GET streams reached.
 */
export const BUS_PUBLISH = `
${prefixFrom('getstreams')}
local streams = KEYS[1]
local all = redis.call('HGETALL', streams)
local poked = {}
for i = 1, #all, 2 do
  local session, sid = all[i], all[i + 1]
  if session ~= '' then
    local value = redis.call('GET', p .. 'session:' .. session)
    if not value then
      redis.call('HDEL', streams, session)
    else
      local wanted = ARGV[3] == 'list'
      if not wanted then
        local ok, decoded = pcall(cjson.decode, value)
        if ok and type(decoded) == 'table' and type(decoded.subscriptions) == 'table' then
          for _, uri in ipairs(decoded.subscriptions) do
            if uri == ARGV[4] then wanted = true break end
          end
        end
      end
      if wanted then
        local key = p .. 'stream:' .. sid
        redis.call('XADD', key, 'MAXLEN', '~', ARGV[5], '*', 'm', ARGV[2])
        redis.call('PEXPIRE', key, ARGV[6])
        poked[#poked + 1] = sid
      end
    end
  end
end
if #poked > 0 then redis.call('PUBLISH', p .. 'relay', 's ' .. table.concat(poked, ' ')) end
redis.call('PUBLISH', p .. 'bus', ARGV[1])
return #poked`;
