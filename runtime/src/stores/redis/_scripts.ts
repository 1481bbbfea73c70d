/**
 * The Redis store's Lua scripts. On Redis Cluster each touches the keys of one task, or the index keys, never
 * both: those live in different slots (see `_keys.ts`); on a single Redis, CREATE and APPEND file the task
 * in the indexes in the same call, saving a round trip per status. They are sent once and then called by their
 * hash (`defineScripts`): an event's write must not carry the script's text along.
 */

/** A client the scripts are defined on: each becomes a command taking the number of keys, the keys, the arguments. */
export interface ScriptClient {
  defineCommand(name: string, definition: { lua: string }): void
}

export type ScriptName = keyof typeof SCRIPTS

/**
 * Defines every script as a command of `client` (ioredis sends EVALSHA, and the script itself only when Redis lacks
 * it).
 */
export function defineScripts(client: ScriptClient): void {
  for (const [name, lua] of Object.entries(SCRIPTS)) client.defineCommand(name, { lua })
}

/** Calls a script defined by `defineScripts`. */
export function runScript(
  client: ScriptClient,
  name: ScriptName,
  keys: number,
  ...args: Array<string | number>
): Promise<unknown> {
  return (client as unknown as Record<ScriptName, (...args: Array<string | number>) => Promise<unknown>>)[name](
    keys,
    ...args,
  )
}

const ended = (state: string): string =>
  `${state} == 'completed' or ${state} == 'failed' or ${state} == 'canceled' or ${state} == 'rejected'`

/**
 * The Lua function `ownerSets(prefix, owner, state, ctx)`: the names of the sorted sets an owner's task in `state`
 * and context `ctx` is filed under, as `RedisKeys.byOwner` names them (the owner's byte length, then the owner: `#`
 * counts bytes); none for a task nobody owns (`owner` false).
 */
const OWNER_SETS_LUA = `
local function ownerSets(prefix, owner, state, ctx)
  if not owner then return {} end
  local who = #owner .. ':' .. owner
  return {
    prefix .. 'owner:' .. who,
    prefix .. 'owner-state:' .. state .. ':' .. who,
    prefix .. 'owner-ctx:' .. who .. ':' .. ctx,
    prefix .. 'owner-ctx-state:' .. state .. ':' .. who .. ':' .. ctx,
  }
end`

/**
 * The Lua function `file`: files a task under its state, its context and both, and under its owner's four sets
 * when it has one, newest status first (score: the status time in ms), leaving the sets it was in before. The
 * index keeps each task's owner (the `owners` hash) beside what it is filed under, so that a task leaves its
 * owner's sets with the others (UNINDEX) when it expires or is trimmed. `ownerArg`: '+<owner>', '-' for none, or
 * '?' for the one the index holds (then the answer is 2 when the task was not filed: its owner is not known here).
 * Arguments: all, indexed, running, by state, by context, by context and state, owners (keys); task id, state,
 * context id, score, settled ('1'/'0'), index prefix, owner. Returns 1 (or 2, as said).
 */
const FILE_LUA = `${OWNER_SETS_LUA}
local function file(all, indexed, running, byState, byCtx, byCtxState, owners, id, state, ctx, score, settled, prefix,
    ownerArg)
  local was = redis.call('hget', indexed, id)
  local filedOwner = redis.call('hget', owners, id)
  local owner, answer = filedOwner, 1
  if ownerArg == '?' then
    if not was then answer = 2 end
  elseif string.sub(ownerArg, 1, 1) == '+' then
    owner = string.sub(ownerArg, 2)
  else
    owner = false
  end
  local now = { all, byState, byCtx, byCtxState }
  for _, set in ipairs(ownerSets(prefix, owner, state, ctx)) do now[#now + 1] = set end
  if was then
    local oldState, oldCtx = string.match(was, '^(%S+) (.*)$')
    local before = {
      prefix .. 'state:' .. oldState, prefix .. 'ctx:' .. oldCtx, prefix .. 'ctx-state:' .. oldState .. ':' .. oldCtx,
    }
    for _, set in ipairs(ownerSets(prefix, filedOwner, oldState, oldCtx)) do before[#before + 1] = set end
    local staying = {}
    for _, set in ipairs(now) do staying[set] = true end
    for _, set in ipairs(before) do
      if not staying[set] then redis.call('zrem', set, id) end
    end
  end
  redis.call('hset', indexed, id, state .. ' ' .. ctx)
  if owner then
    if owner ~= filedOwner then redis.call('hset', owners, id, owner) end
  elseif filedOwner then
    redis.call('hdel', owners, id)
  end
  for _, set in ipairs(now) do redis.call('zadd', set, score, id) end
  if settled == '1' then redis.call('srem', running, id) else redis.call('sadd', running, id) end
  return answer
end`

/**
 * Whether a task whose hash holds `owner` (false: none) may be answered to a read asking for `wanted`: '' (the
 * runtime's own read, which checked its caller) or '+<owner>' (only that owner's task).
 */
const OWNED_LUA = `
local function owned(owner, wanted)
  return wanted == '' or (owner ~= false and '+' .. owner == wanted)
end`

/**
 * One event of a task, all or nothing, and never over a task that has ended (an instance whose lease ran out
 * may still be running it). The event joins the task's entries; the task's `json` is rewritten only when the
 * caller sends it (at creation and when the entries are worth folding in), so an event costs its own size, not
 * the task's.
 *
 * The task's hash holds it in parts (the layout `v` 2), so that a listing reads only what it answers: `json` is
 * the task without its history (its artifacts, as of `seq`), `head` the task without history nor artifacts (as
 * of its last status), and the history one field per message, `h:0` … `h:<hn - 1>`. The caller sends `head`
 * with every status and whole write, and the messages that joined the history since the last write (a
 * follow-up, the agent's question) with the event; a whole write sends the whole history, which replaces the
 * fields. A task of the earlier layout (`json` holding the history and follow-ups in the entries) is written
 * whole the first time (-2 asks for it): from then on it is of this layout.
 *
 * The entries are kept within `log bytes` (the event log a stream resumes from): past it the oldest entries
 * already folded into `json` go, the newest event always stays, and `kept` says which events the log still
 * holds all of. An event that does not follow the last one written (those between could not be written: their
 * retries, coming after it, are refused by the stream's order) marks the log the same way, as does a `kept
 * after` past 0 (an instance that died may have sent events it never wrote): a client resuming from before is
 * told so instead of missing events silently.
 *
 * Only the event after the last one written is written without the whole history: otherwise (another instance
 * wrote the task since, or an earlier event did not land) the caller sends the whole task. A retry of an event
 * already written is told so, not written twice; an event whose number holds another event is not told that.
 *
 * An event that ends the task gives its lease back (when this instance holds it): the run is over.
 *
 * On a single Redis, where one script may touch the index keys too, a status event also files the task under
 * its new status (see INDEX) and its owner as the task's hash holds it, in the same call: the index keys follow
 * the task's, and INDEX's first six arguments the rest. (A retry of an event that landed files nothing: it was
 * filed as it landed, and a later status may have been.)
 *
 * KEYS: task, entries, push, lease[, INDEX's seven keys]. ARGV: seq, event JSON, state after it, live channel,
 * settles ('1'/'0'), ttl ms, kept after (0: no mark), log bytes, this instance's id (the lease's holder), the
 * task's json without history ('' to keep the one written), the number of the last event it holds, its head
 * ('' to keep the one written), whole ('1': the messages are the whole history; '0': they join it), the number
 * of messages, the messages[, then INDEX's first six arguments].
 * Returns 1 when written, 2 when it already was, 0 when the task has ended (another instance may have ended it
 * with an event of this number), -1 when it is gone, -2 when the event does not follow the last one written, or
 * the task is of the earlier layout (nothing written: send the whole task), -3 when later events were written
 * before it.
 */
const APPEND = `${FILE_LUA}
local function index()
  if #KEYS < 11 then return end
  local n = #ARGV
  -- The owner as the task's hash holds it (written with the task by CREATE).
  local owner = redis.call('hget', KEYS[1], 'owner')
  file(KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], ARGV[n - 5], ARGV[n - 4], ARGV[n - 3],
    ARGV[n - 2], ARGV[n - 1], ARGV[n], owner and '+' .. owner or '-')
end
local fields = redis.call('hmget', KEYS[1], 'state', 'seq', 'kept', 'logBytes', 'last', 'v', 'hn')
local state = fields[1]
if not state then return -1 end
local seq = ARGV[1]
local last = tonumber(fields[5] or fields[2])
if tonumber(seq) <= last then
  -- A retry of an event that landed (its answer was lost), or an event later ones overtook, or one whose number
  -- another instance wrote an event of its own under (it failed the task, taking this one's lease for run out).
  local got = redis.call('xrange', KEYS[2], seq .. '-0', seq .. '-18446744073709551615', 'COUNT', 1)[1]
  if got and got[2][2] == ARGV[2] then return 2 end
  if got and (${ended('state')}) then return 0 end
  return -3
end
if ${ended('state')} then return 0 end
local json, whole = ARGV[10], ARGV[13]
if whole ~= '1' and (fields[6] ~= '2' or tonumber(seq) ~= last + 1) then return -2 end
local count = tonumber(ARGV[14])
local hn = tonumber(fields[7] or '0')
if whole == '1' then
  for i = count, hn - 1 do redis.call('hdel', KEYS[1], 'h:' .. i) end
  hn = 0
end
for i = 1, count do redis.call('hset', KEYS[1], 'h:' .. (hn + i - 1), ARGV[14 + i]) end
hn = hn + count
local id = seq .. '-0'
redis.call('xadd', KEYS[2], id, 'e', ARGV[2])
local folded = tonumber(fields[2])
if json ~= '' then folded = tonumber(ARGV[11]) end
local kept = math.max(tonumber(fields[3] or '0'), tonumber(ARGV[7]))
if tonumber(seq) > last + 1 then kept = math.max(kept, tonumber(seq) - 1) end
local bytes = tonumber(fields[4] or '0') + #ARGV[2]
local limit = tonumber(ARGV[8])
while bytes > limit do
  local oldest = redis.call('xrange', KEYS[2], '-', '+', 'COUNT', 1)[1]
  if not oldest or oldest[1] == id then break end
  local oldestSeq = tonumber(string.match(oldest[1], '^(%d+)'))
  if oldestSeq > folded then break end
  redis.call('xdel', KEYS[2], oldest[1])
  bytes = bytes - #oldest[2][2]
  if oldest[2][1] == 'e' and oldestSeq > kept then kept = oldestSeq end
end
redis.call('hset', KEYS[1], 'state', ARGV[3], 'kept', kept, 'logBytes', bytes, 'last', seq, 'v', '2', 'hn', hn)
if json ~= '' then redis.call('hset', KEYS[1], 'json', json, 'seq', ARGV[11]) end
if ARGV[12] ~= '' then redis.call('hset', KEYS[1], 'head', ARGV[12]) end
redis.call('publish', ARGV[4], ARGV[2])
if ARGV[5] == '1' then
  for i = 1, 3 do redis.call('pexpire', KEYS[i], ARGV[6]) end
else
  for i = 1, 3 do redis.call('persist', KEYS[i]) end
end
local after = ARGV[3]
if ARGV[5] == '1' and (${ended('after')}) and redis.call('get', KEYS[4]) == ARGV[9] then redis.call('del', KEYS[4]) end
index()
return 1`

/**
 * Reads the history fields `h:<from>` … `h:<to - 1>` of the task hash `key` (HMGET in slices: Lua's unpack has a
 * limit), as a Lua function `history(key, from, to)`.
 */
const HISTORY_LUA = `
local function history(key, from, to)
  local out = {}
  local at = from
  while at < to do
    local names = {}
    for i = at, math.min(to, at + 1000) - 1 do names[#names + 1] = 'h:' .. i end
    local got = redis.call('hmget', key, unpack(names))
    for i = 1, #names do out[#out + 1] = got[i] or '' end
    at = at + 1000
  end
  return out
end`

/**
 * The task as written and what was added since, read together, when the reader may see it: its owner is checked
 * before anything of the task is read (a task of another owner answers as one that does not exist).
 * KEYS: task, entries. ARGV: whose task ('' any, '+<owner>' only that owner's; see OWNED_LUA).
 * Returns nil, 0 for a task of another owner (nothing of it read), or { json, seq, entries after seq } for a task
 * of the earlier layout (its history in `json` and the entries), or { json, seq, entries after seq, history } (see
 * APPEND).
 */
const READ = `${HISTORY_LUA}${OWNED_LUA}
-- The runtime's own read ('') asks nothing more of Redis than before owners were kept.
if ARGV[1] ~= '' and not owned(redis.call('hget', KEYS[1], 'owner'), ARGV[1]) then
  if redis.call('exists', KEYS[1]) == 1 then return 0 end
  return false
end
local doc = redis.call('hmget', KEYS[1], 'json', 'seq', 'v', 'hn')
if not doc[1] then return false end
local entries = redis.call('xrange', KEYS[2], (tonumber(doc[2]) + 1) .. '-0', '+')
if doc[3] ~= '2' then return { doc[1], doc[2], entries } end
return { doc[1], doc[2], entries, history(KEYS[1], 0, tonumber(doc[4])) }`

/**
 * What a listing answers of a task, and nothing more: its head (the task without history nor artifacts, as of
 * its last status) and its newest `history` messages; with `artifacts` '1', its json (without history) and the
 * entries after it in place of the head. Nothing is parsed here: Redis only hands fields over. A task of the
 * earlier layout is read whole (READ's first answer), as only the whole of it says its history.
 * KEYS: task, entries. ARGV: most messages of the history ('all', or a number), artifacts ('1'/'0'), whose task
 * (as READ's).
 * Returns nil; 0 for a task of another owner (nothing of it read); { 1, json, seq, entries after seq } for the
 * earlier layout; { 2, head, history } or { 2, head, history, json, seq, entries after seq }.
 */
const LIST_READ = `${HISTORY_LUA}${OWNED_LUA}
local doc = redis.call('hmget', KEYS[1], 'v', 'hn', 'seq', 'owner')
if not doc[3] then return false end
if not owned(doc[4], ARGV[3]) then return 0 end
local function entries() return redis.call('xrange', KEYS[2], (tonumber(doc[3]) + 1) .. '-0', '+') end
if doc[1] ~= '2' then return { 1, redis.call('hget', KEYS[1], 'json'), doc[3], entries() } end
local hn = tonumber(doc[2])
local from = 0
if ARGV[1] ~= 'all' then from = math.max(0, hn - tonumber(ARGV[1])) end
local out = { 2, redis.call('hget', KEYS[1], 'head'), history(KEYS[1], from, hn) }
if ARGV[2] == '1' then
  out[4] = redis.call('hget', KEYS[1], 'json')
  out[5] = doc[3]
  out[6] = entries()
end
return out`

/**
 * The number of the task's last event: its newest entry's, else the one its json was written at.
 * KEYS: task, entries. Returns nil for an unknown task.
 */
const LAST_SEQ = `
local seq = redis.call('hget', KEYS[1], 'seq')
if not seq then return false end
local last = redis.call('xrevrange', KEYS[2], '+', '-', 'COUNT', 1)[1]
if last then return tonumber(string.match(last[1], '^(%d+)')) end
return tonumber(seq)`

/**
 * Files a task under its state, its context and both, and its owner's sets, newest status first (score: the
 * status time in ms), leaving the sets it was in before (see `file` in FILE_LUA).
 * KEYS: all, indexed, running, by state, by context, by context and state, owners.
 * ARGV: task id, state, context id, score, settled ('1'/'0'), index prefix, owner ('+<owner>', '-', '?').
 * Returns 1, or 2 when the owner was '?' and the task was not filed (filed now without an owner: file it again
 * with the owner its hash holds).
 */
const INDEX = `${FILE_LUA}
return file(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5],
  ARGV[6], ARGV[7])`

/**
 * A new task, with its lease taken by the instance that runs it, so no instance takes it for one whose runner
 * died. Its entries are cleared (nothing of an older task with its id can be left, but anyway); it expires as a
 * settled task would until its first event (which keeps it): a create whose indexing never happened leaves
 * nothing behind for good. It is written in parts (see APPEND), with its owner (the field `owner`, absent for a
 * task nobody owns), which no later write changes. On a single Redis it is indexed in the same call (as APPEND
 * does), under its owner too.
 * KEYS: task, entries, lease[, INDEX's seven keys]. ARGV: task JSON without history, state, ttl ms, this
 * instance's id, lease ms, head, owner ('+<owner>' or '-'), the number of messages of the history, the
 * messages[, INDEX's first six arguments].
 * Returns 1, or 0 when another instance holds the lease.
 */
const CREATE = `${FILE_LUA}
local holder = redis.call('get', KEYS[3])
if holder and holder ~= ARGV[4] then return 0 end
redis.call('set', KEYS[3], ARGV[4], 'PX', ARGV[5])
redis.call('del', KEYS[1], KEYS[2])
local count = tonumber(ARGV[8])
redis.call('hset', KEYS[1], 'json', ARGV[1], 'seq', 0, 'state', ARGV[2], 'head', ARGV[6], 'v', '2', 'hn', count)
if string.sub(ARGV[7], 1, 1) == '+' then redis.call('hset', KEYS[1], 'owner', string.sub(ARGV[7], 2)) end
for i = 1, count do redis.call('hset', KEYS[1], 'h:' .. (i - 1), ARGV[8 + i]) end
redis.call('pexpire', KEYS[1], ARGV[3])
if #KEYS >= 10 then
  local n = #ARGV
  file(KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], ARGV[n - 5], ARGV[n - 4], ARGV[n - 3],
    ARGV[n - 2], ARGV[n - 1], ARGV[n], ARGV[7])
end
return 1`

/**
 * Takes tasks out of every index, their owners' sets included (they expired or were trimmed).
 * KEYS: all, indexed, running, owners. ARGV: index prefix, then the task ids.
 */
const UNINDEX = `${OWNER_SETS_LUA}
local prefix = ARGV[1]
for i = 2, #ARGV do
  local id = ARGV[i]
  local was = redis.call('hget', KEYS[2], id)
  local owner = redis.call('hget', KEYS[4], id)
  local state, ctx = '', ''
  if was then
    state, ctx = string.match(was, '^(%S+) (.*)$')
    redis.call('zrem', prefix .. 'state:' .. state, id)
    redis.call('zrem', prefix .. 'ctx:' .. ctx, id)
    redis.call('zrem', prefix .. 'ctx-state:' .. state .. ':' .. ctx, id)
    redis.call('hdel', KEYS[2], id)
  end
  for _, set in ipairs(ownerSets(prefix, owner, state, ctx)) do redis.call('zrem', set, id) end
  redis.call('hdel', KEYS[4], id)
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
const PAGE = `
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
const SAVE_PUSH = `
local ttl = redis.call('pttl', KEYS[1])
if ttl == -2 then return 0 end
redis.call('hset', KEYS[2], ARGV[1], ARGV[2])
if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
return 1`

// Compare-and-renew / compare-and-delete of a lease: only the instance that holds it may touch it.
const RENEW =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

/**
 * Renews the lease of a task this instance runs; a task not started yet (an agent with \`messageReplies\` starts
 * it at its first move) keeps living with it, as its first event would keep it. KEYS: lease, task. ARGV: this
 * instance's id, lease ms, ttl ms. Returns 0 when the lease is not this instance's.
 */
const RENEW_TASK = `
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('pexpire', KEYS[1], ARGV[2])
if redis.call('hget', KEYS[2], 'state') == 'submitted' then redis.call('pexpire', KEYS[2], ARGV[3]) end
return 1`

const SCRIPTS = {
  a2aCreate: CREATE,
  a2aAppend: APPEND,
  a2aRead: READ,
  a2aListRead: LIST_READ,
  a2aLastSeq: LAST_SEQ,
  a2aIndex: INDEX,
  a2aUnindex: UNINDEX,
  a2aPage: PAGE,
  a2aSavePush: SAVE_PUSH,
  a2aRenew: RENEW,
  a2aRenewTask: RENEW_TASK,
  a2aRelease: RELEASE,
}
