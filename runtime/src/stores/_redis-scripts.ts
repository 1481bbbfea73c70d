/**
 * The Redis store's Lua scripts. Each touches the keys of one task, or the index keys, never both: on Redis
 * Cluster those live in different slots (see `_redis-keys.ts`).
 */

const ENDED = "state == 'completed' or state == 'failed' or state == 'canceled' or state == 'rejected'"

/**
 * One event of a task, all or nothing, and never over a task that has ended (an instance whose lease ran out
 * may still be running it). The event joins the task's entries, after the follow-up messages that came before
 * it; the task's `json` is rewritten only when the caller sends it (at creation and when the entries are worth
 * folding in), so an event costs its own size, not the task's.
 *
 * With `kept after` past 0, the log is marked as holding every event only after that number (some before it
 * could not be written, or an instance that died may have sent events it never wrote): a client resuming from
 * before is told so instead of missing events silently.
 *
 * KEYS: task, entries, push. ARGV: seq, event JSON, state after it, live channel, settles ('1'/'0'), ttl ms,
 * kept after (0: no mark), task JSON or '' (then the number of messages and the messages).
 * Returns 1, 0 when the task has ended, -1 when it is gone.
 */
export const APPEND = `
local state = redis.call('hget', KEYS[1], 'state')
if not state then return -1 end
if ${ENDED} then return 0 end
local seq = ARGV[1]
local json = ARGV[8]
local count = 0
if json == '' then
  count = tonumber(ARGV[9])
  for i = 1, count do redis.call('xadd', KEYS[2], seq .. '-' .. (i - 1), 'm', ARGV[9 + i]) end
end
if tonumber(ARGV[7]) > tonumber(redis.call('hget', KEYS[1], 'kept') or '0') then redis.call('hset', KEYS[1], 'kept', ARGV[7]) end
redis.call('xadd', KEYS[2], seq .. '-' .. count, 'e', ARGV[2])
if json == '' then
  redis.call('hset', KEYS[1], 'state', ARGV[3])
else
  redis.call('hset', KEYS[1], 'json', json, 'seq', seq, 'state', ARGV[3])
end
redis.call('publish', ARGV[4], ARGV[2])
if ARGV[5] == '1' then
  for i = 1, 3 do redis.call('pexpire', KEYS[i], ARGV[6]) end
else
  for i = 1, 3 do redis.call('persist', KEYS[i]) end
end
return 1`

/**
 * The task as written and what was added since, read together. KEYS: task, entries.
 * Returns nil, or { json, seq, entries after seq }.
 */
export const READ = `
local doc = redis.call('hmget', KEYS[1], 'json', 'seq')
if not doc[1] then return false end
return { doc[1], doc[2], redis.call('xrange', KEYS[2], (tonumber(doc[2]) + 1) .. '-0', '+') }`

/**
 * The number of the task's last event: its newest entry's, else the one its json was written at.
 * KEYS: task, entries. Returns nil for an unknown task.
 */
export const LAST_SEQ = `
local seq = redis.call('hget', KEYS[1], 'seq')
if not seq then return false end
local last = redis.call('xrevrange', KEYS[2], '+', '-', 'COUNT', 1)[1]
if last then return tonumber(string.match(last[1], '^(%d+)')) end
return tonumber(seq)`

/**
 * Files a task under its state, its context and both, newest status first (score: the status time in ms),
 * leaving the sets it was in before. KEYS: all, indexed, running, by state, by context, by context and state.
 * ARGV: task id, state, context id, score, settled ('1'/'0'), index prefix.
 */
export const INDEX = `
local id, state, ctx, score, prefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6]
local was = redis.call('hget', KEYS[2], id)
if was then
  local old = string.match(was, '^(%S+)')
  if old ~= state then
    redis.call('zrem', prefix .. 'state:' .. old, id)
    redis.call('zrem', prefix .. 'ctx-state:' .. old .. ':' .. ctx, id)
  end
end
redis.call('hset', KEYS[2], id, state .. ' ' .. ctx)
redis.call('zadd', KEYS[1], score, id)
redis.call('zadd', KEYS[4], score, id)
redis.call('zadd', KEYS[5], score, id)
redis.call('zadd', KEYS[6], score, id)
if ARGV[5] == '1' then redis.call('srem', KEYS[3], id) else redis.call('sadd', KEYS[3], id) end
return 1`

/**
 * Takes tasks out of every index (they expired or were trimmed). KEYS: all, indexed, running.
 * ARGV: index prefix, then the task ids.
 */
export const UNINDEX = `
local prefix = ARGV[1]
for i = 2, #ARGV do
  local id = ARGV[i]
  local was = redis.call('hget', KEYS[2], id)
  if was then
    local state, ctx = string.match(was, '^(%S+) (.*)$')
    redis.call('zrem', prefix .. 'state:' .. state, id)
    redis.call('zrem', prefix .. 'ctx:' .. ctx, id)
    redis.call('zrem', prefix .. 'ctx-state:' .. state .. ':' .. ctx, id)
    redis.call('hdel', KEYS[2], id)
  end
  redis.call('zrem', KEYS[1], id)
  redis.call('srem', KEYS[3], id)
end
return 1`

/**
 * One page of an index, newest status first, after a cursor (score and id; ties go by id, descending) and
 * at or after a minimum score; with the count of all that match. KEYS: the index.
 * ARGV: page size, min score ('-inf' or a number), cursor score ('' for the first page), cursor id.
 * Returns { total, id1, score1, id2, score2, … } (at most page size + 1 tasks: one more tells there is a next page).
 */
export const PAGE = `
local limit, min, cursorScore, cursorId = tonumber(ARGV[1]) + 1, ARGV[2], ARGV[3], ARGV[4]
local out = { redis.call('zcount', KEYS[1], min, '+inf') }
local max = '+inf'
if cursorScore ~= '' then
  -- The tasks of the cursor's own millisecond that come after it (a few at most), then the older ones.
  local same = redis.call('zrange', KEYS[1], cursorScore, cursorScore, 'BYSCORE', 'REV')
  for _, id in ipairs(same) do
    if id < cursorId and #out < limit * 2 + 1 then
      out[#out + 1] = id
      out[#out + 1] = cursorScore
    end
  end
  max = '(' .. cursorScore
end
local wanted = limit - (#out - 1) / 2
if wanted > 0 then
  local rest = redis.call('zrange', KEYS[1], max, min, 'BYSCORE', 'REV', 'LIMIT', 0, wanted, 'WITHSCORES')
  for _, value in ipairs(rest) do out[#out + 1] = value end
end
return out`

/** Saves a webhook of a task that exists, expiring with the task when it has settled. KEYS: task, push. */
export const SAVE_PUSH = `
local ttl = redis.call('pttl', KEYS[1])
if ttl == -2 then return 0 end
redis.call('hset', KEYS[2], ARGV[1], ARGV[2])
if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
return 1`

// Compare-and-renew / compare-and-delete of a lease: only the instance that holds it may touch it.
export const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
export const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
