/*
 * Lua scripts: each runs atomically in Redis, so multi-key updates need no locks and cost one
 * round trip.
 *
 * Redis Cluster: every key of a deployment carries one hash tag, the key prefix P = `{prefix}`
 * (see RedisKeys), so all of them live in one slot and any script may touch any of them. Each
 * script takes the keys its arguments name through KEYS (which is also how a Cluster client routes
 * it). Keys of things a script finds inside Redis (the least recently used session of an owner,
 * the least recently written stream, the session a stream belongs to) cannot be named by the
 * caller: they are built from the prefix of KEYS[1], so they carry the same tag and slot.
 *
 * Key layout under P:
 *   P..'session:'..id       JSON string, PX idle TTL (refreshed by GETEX on every request: the
 *                           remaining TTL is what orders an owner's sessions by last use); field
 *                           usedUs: the instance's clock in µs at creation
 *   P..'used:'..id          the instance's clock in µs at the session's last request, PX idle TTL,
 *                           written after a GETEX found it: usedUs and this break ties of sessions
 *                           whose TTLs end in the same millisecond
 *   P..'sessions'           ZSET, all scores 0, members '<owner tag>:<id>' of live (and a few
 *                           expired) sessions, plus the member '' the heartbeat keeps: ZLEXCOUNT
 *                           counts one owner's sessions, ZCARD all of them. An entry whose
 *                           session key is gone names a session that expired: whichever script
 *                           removes it (SESSION_SWEEP, SESSION_ADMIT) returns its id, so that one
 *                           instance, and only one, runs the close hook for it
 *   P..'owned:'..tag        ZSET member → lower bound of the session's deadline, of one owner
 *                           at its cap, kept by SESSION_ADMIT only, PX idle TTL
 *   P..'sessionsfull'       set while every session in the index is live and the index is full,
 *                           PX until the first could expire: refusals then cost no scan
 *   P..'getstreams'         HASH session id → id of its current GET stream (field '' kept by the
 *                           heartbeat); the heartbeat keeps both indexes' TTL, so a request does
 *                           not need to
 *   P..'stream:'..sid       Redis Stream of SSE events (field m = JSON), MAXLEN ~ cap, PX TTL
 *   P..'stream:'..sid..':meta'  HASH k = 'g'|'p' (GET or POST stream), o = owner instance,
 *                           f = '1' once finished, t = '1' while another instance tails it,
 *                           s = session id (POST streams)
 *   P..'sessionstreams:'..id  SET of the POST streams of a session (dropped with it), PX TTL
 * Byte accounting of the events STREAM_APPEND keeps (a stream leaves it when its events are gone,
 * dropped or expired: entries of expired streams are removed a few at a time on each append):
 *   P..'eventstreams'       ZSET sid → order of its last append (P..'eventclock', a counter):
 *                           least recently written first
 *   P..'eventbytes'         HASH sid → bytes of the stream's events
 *   P..'eventsession'       HASH sid → its session id ('' for none)
 *   P..'eventtotal'         bytes of all the events accounted; these five PX TTL
 *   P..'sessionevents:'..id  ZSET sid → last append of one session's streams, PX TTL
 *   P..'sessionbytes:'..id  bytes of one session's events, PX TTL
 *   P..'instance:'..id      heartbeat, PX
 *   P..'nonce:'..n          single-use requestState nonces, PX until the state expires
 */

/** Lua: `p`, the tagged prefix, from KEYS[1] whose name under the prefix is `suffix`. */
export const prefixFrom = (suffix: string): string => `local p = string.sub(KEYS[1], 1, ${-suffix.length - 1})`;

/** Lua: ends one session the index names (member '<tag>:<id>'): its key, entry and GET stream. */
const END_SESSION = `
local function endSession(member, id)
  redis.call('DEL', p .. 'session:' .. id, p .. 'used:' .. id)
  redis.call('ZREM', p .. 'sessions', member)
  local stream = redis.call('HGET', p .. 'getstreams', id)
  if stream then
    redis.call('HDEL', p .. 'getstreams', id)
    redis.call('PUBLISH', p .. 'relay', 's ' .. stream)
  end
end`;

/**
 * KEYS: P..'sessions', P..'session:'..id, P..'sessionsfull', P..'owned:'..tag. ARGV: member, owner
 * tag ('' for no cap), maxPerOwner, maxSessions, idleTtlMs. Run only when the pipelined create
 * (SET, ZADD, ZLEXCOUNT, ZCARD) counted more than a cap allows: the counts include entries of
 * expired sessions, which this drops. Within the owner's cap it ends that owner's least recently
 * used sessions (expired ones are dropped first), never another owner's; then, beyond maxSessions
 * live sessions, it withdraws the new one. Returns { admitted (1 or 0), ids it ended, ids of expired
 * sessions whose entries it dropped }.
 *
 * The owner's order of last use comes from its sessions' remaining TTLs, kept between runs in
 * P..'owned:'..tag as lower bounds of each session's deadline (a request only pushes a deadline
 * later). The entry with the smallest bound whose bound is still exact is the least recently used
 * one; a stale bound is raised and the next one tried. So a flood of creates from one owner reads
 * one TTL per create, not one per session of the owner.
 */
export const SESSION_ADMIT = `
${prefixFrom('sessions')}
local index, mine, tag = KEYS[1], ARGV[1], ARGV[2]
local perOwner, max, idle = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
${END_SESSION}
local idOf = function(member) return string.sub(member, string.find(member, ':', 1, true) + 1) end
-- Milliseconds left of a session (-2 once it is gone).
local function remaining(member)
  local left = redis.call('PTTL', p .. 'session:' .. idOf(member))
  if left == -1 then return idle end
  return left
end
-- When a session was last used, in µs of the clock of the instance that served it (0 if unknown).
local function usedAt(member)
  local id = idOf(member)
  local used = redis.call('GET', p .. 'used:' .. id)
  if used then return tonumber(used) or 0 end
  local ok, decoded = pcall(cjson.decode, redis.call('GET', p .. 'session:' .. id) or '')
  return ok and type(decoded) == 'table' and tonumber(decoded.usedUs) or 0
end
local evicted, expired = {}, {}
if tag ~= '' then
  local cache = KEYS[4]
  local clock = redis.call('TIME')
  local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  -- TTLs have ms resolution, and a bound counts as exact within 2 ms: among the sessions whose
  -- bounds reach that far past the chosen one's deadline, the earliest deadline, then the
  -- earliest use, is the least recently used one.
  local function oldest(member, deadline)
    local best, bestUse = member, nil
    for _, other in ipairs(redis.call('ZRANGEBYSCORE', cache, '-inf', deadline + 2, 'LIMIT', 0, 100)) do
      if other ~= member and other ~= mine then
        local left = remaining(other)
        if left >= 0 and now + left <= deadline then
          if now + left < deadline then best, deadline, bestUse = other, now + left, nil
          else
            bestUse = bestUse or usedAt(best)
            local use = usedAt(other)
            if use < bestUse then best, bestUse = other, use end
          end
        end
      end
    end
    return best
  end
  local members = redis.call('ZRANGEBYLEX', index, '[' .. tag .. ':', '(' .. tag .. ';')
  local count = #members
  if count > perOwner then
    -- Sessions created since the last run have no bound yet (the new one included: its TTL was
    -- set by the pipelined SET a moment ago, and a bound must never exceed the deadline).
    for i = 1, #members, 500 do
      local chunk = {}
      for j = i, math.min(i + 499, #members) do chunk[#chunk + 1] = members[j] end
      local bounds = redis.call('ZMSCORE', cache, unpack(chunk))
      for j = 1, #chunk do
        if not bounds[j] then
          local member = chunk[j]
          local left = remaining(member)
          if left < 0 then
            redis.call('ZREM', index, member)
            expired[#expired + 1] = idOf(member)
            count = count - 1
          else
            redis.call('ZADD', cache, now + left, member)
          end
        end
      end
    end
    while count > perOwner do
      local first = redis.call('ZRANGE', cache, 0, 1, 'WITHSCORES')
      local member, bound = first[1], tonumber(first[2])
      if member == mine then member, bound = first[3], tonumber(first[4]) end
      if not member then break end
      local left = remaining(member)
      if left < 0 then
        redis.call('ZREM', cache, member)
        if redis.call('ZREM', index, member) == 1 then
          expired[#expired + 1] = idOf(member)
          count = count - 1
        end
      elseif now + left > bound + 2 then
        redis.call('ZADD', cache, now + left, member)
      else
        member = oldest(member, now + left)
        endSession(member, idOf(member))
        redis.call('ZREM', cache, member)
        redis.call('DEL', KEYS[3])
        evicted[#evicted + 1] = idOf(member)
        count = count - 1
      end
    end
    redis.call('PEXPIRE', cache, idle)
  end
end
local count = function() return redis.call('ZCARD', index) - (redis.call('ZSCORE', index, '') and 1 or 0) end
if count() > max and redis.call('EXISTS', KEYS[3]) == 0 then
  -- Drops expired entries until the count fits; when none is left to drop, every session is
  -- live and the index is full until the soonest one expires (or one ends): recorded, so that
  -- the refusals until then cost no scan.
  local soonest, from = nil, 0
  while count() > max do
    local chunk = redis.call('ZRANGE', index, from, from + 99)
    if #chunk == 0 then break end
    for _, member in ipairs(chunk) do
      local left = (member ~= '' and member ~= mine) and remaining(member) or idle
      if left < 0 then
        redis.call('ZREM', index, member)
        expired[#expired + 1] = idOf(member)
      else
        from = from + 1
        if member ~= '' and member ~= mine and (not soonest or left < soonest) then soonest = left end
      end
    end
  end
  if count() > max and soonest then redis.call('SET', KEYS[3], '1', 'PX', math.max(1, soonest)) end
end
if count() > max then
  redis.call('DEL', KEYS[2], p .. 'used:' .. idOf(mine))
  redis.call('ZREM', index, mine)
  return { 0, evicted, expired }
end
return { 1, evicted, expired }`;

/**
 * KEYS: P..'sessions'. ARGV: after (the last member the previous batch read, '' to start a pass),
 * count. Reads up to count index entries after `after` and removes those whose session expired
 * (its key is gone: a DELETE, an eviction and a withdrawn create remove their entry in the same
 * script that removes the key), with their GET stream's entry. Returns { the member to continue
 * after ('' once the pass is complete), the ids it removed }: ZREM inside one script, so an id is
 * returned to exactly one caller, however many instances sweep.
 */
export const SESSION_SWEEP = `
${prefixFrom('sessions')}
local count = tonumber(ARGV[2])
${END_SESSION}
local members = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1] == '' and '-' or '(' .. ARGV[1], '+', 'LIMIT', 0, count)
local expired = {}
for _, member in ipairs(members) do
  if member ~= '' then
    local id = string.sub(member, string.find(member, ':', 1, true) + 1)
    if redis.call('EXISTS', p .. 'session:' .. id) == 0 then
      endSession(member, id)
      expired[#expired + 1] = id
    end
  end
end
return { #members < count and '' or members[#members], expired }`;

/**
 * KEYS: P..'sessions', P..'session:'..id, P..'getstreams', P..'sessionsfull'. ARGV: id.
 * Returns the id of the GET stream it had ('' for none), or false if unknown.
 */
export const SESSION_DELETE = `
${prefixFrom('sessions')}
local id = ARGV[1]
local value = redis.call('GET', KEYS[2])
if not value then return false end
redis.call('DEL', KEYS[2], p .. 'used:' .. id)
local ok, decoded = pcall(cjson.decode, value)
local owner = ok and type(decoded) == 'table' and type(decoded.owner) == 'string' and decoded.owner or nil
if owner then redis.call('ZREM', KEYS[1], string.sub(redis.sha1hex(owner), 1, 16) .. ':' .. id) end
redis.call('ZREM', KEYS[1], '-:' .. id)
redis.call('DEL', KEYS[4])
local stream = redis.call('HGET', KEYS[3], id)
redis.call('HDEL', KEYS[3], id)
if stream then redis.call('PUBLISH', p .. 'relay', 's ' .. stream) end
return stream or ''`;

/**
 * Replaces a live session's value only if it is still the one the caller read (compare and set),
 * keeping its idle TTL fresh. KEYS: the session. ARGV: the value read, the new value, the idle TTL.
 * Returns 1 when stored, 0 when the session is gone, -1 when another write came first.
 */
export const SESSION_PATCH = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if current ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

/**
 * KEYS: P..'instance:'..id, P..'sessions', P..'getstreams'. ARGV: heartbeatTtlMs, indexTtlMs.
 * The instance's heartbeat, which also keeps the two indexes every request relies on alive (and
 * under a TTL, so they go once no instance runs), instead of each request refreshing them.
 */
export const HEARTBEAT = `
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('ZADD', KEYS[2], 0, '')
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[3], '', '')
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1`;
