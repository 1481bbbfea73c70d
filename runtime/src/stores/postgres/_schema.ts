import { createHash } from 'node:crypto'
import { ConfigurationError } from '../../errors.js'
import type { PgPool } from './_pg.js'

/** A schema's name: a PostgreSQL identifier short enough for the channel names built from it (see `_listener.ts`). */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/

/** The schema's name, checked, between double quotes: the one form every statement uses. */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema) || /^pg_/i.test(schema))
    throw new ConfigurationError(
      `The PostgreSQL store's schema must be letters, digits and _ (at most 48, not starting with a digit or pg_; got ${JSON.stringify(schema.slice(0, 80))})`,
    )
  return `"${schema}"`
}

/** A 64-bit advisory lock key of the schema for one purpose, the same in every instance of every version. */
export function lockKey(schema: string, purpose: string): string {
  return createHash('sha256').update(`a2a-runtime ${purpose} ${schema}`).digest().readBigInt64BE(0).toString()
}

const ENDED = `('completed', 'failed', 'canceled', 'rejected')`

/**
 * Counts a new task (state `p_state`, owner `p_owner`) in a2a_counts, keys in order (see a2a_count): written in the
 * functions that insert tasks, which cost a trigger call, arrays and a grouping per task when a trigger did it.
 */
const countNewTask = (s: string) => `INSERT INTO ${s}.a2a_counts AS c (key, shard, n)
    SELECT k.key, pg_backend_pid() % k.shards, 1
    FROM (VALUES ('', 128), ('o:' || p_owner, 16), ('os:' || p_state || ':' || p_owner, 16), ('s:' || p_state, 128))
      AS k (key, shards)
    WHERE k.key IS NOT NULL ORDER BY k.key
  ON CONFLICT (key, shard) DO UPDATE SET n = c.n + excluded.n;`

/**
 * The migrations, in order: migration n (1-based) brings the schema from version n - 1 to n. Each is SQL over the
 * quoted schema `s`. Never edit one that was released: add the next.
 */
export const MIGRATIONS: Array<(s: string) => string> = [
  (s) => `
-- One row per task. json: the task without its history, as of folded_seq (the events after it are folded in when
-- it is read); head: without history nor artifacts (a listing that shows neither reads only it); the history one
-- row per message (a2a_history); events one row per event (a2a_events), kept after kept_after within log_bytes.
-- The columns an event changes come last: an update logs only what changed (prefix and suffix unchanged).
CREATE TABLE ${s}.a2a_tasks (
  id text COLLATE "C" PRIMARY KEY,
  context_id text COLLATE "C" NOT NULL,
  owner text COLLATE "C",
  state text NOT NULL,
  settled boolean NOT NULL,
  status_ms bigint NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now(),
  lease_holder text,
  lease_until timestamptz,
  -- Followers registered on any instance (see _follow.ts): an event is notified only while it has some.
  followers integer NOT NULL DEFAULT 0,
  head text NOT NULL,
  json text NOT NULL,
  folded_seq integer NOT NULL DEFAULT 0,
  history_count integer NOT NULL,
  kept_after integer NOT NULL DEFAULT 0,
  last_seq integer NOT NULL DEFAULT 0,
  log_bytes bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 70);
CREATE TABLE ${s}.a2a_history (
  task_id text COLLATE "C" NOT NULL REFERENCES ${s}.a2a_tasks (id) ON DELETE CASCADE,
  n integer NOT NULL,
  message text NOT NULL,
  PRIMARY KEY (task_id, n)
);
CREATE TABLE ${s}.a2a_events (
  task_id text COLLATE "C" NOT NULL REFERENCES ${s}.a2a_tasks (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  event text NOT NULL,
  bytes integer NOT NULL,
  PRIMARY KEY (task_id, seq)
);
CREATE TABLE ${s}.a2a_push_configs (
  task_id text COLLATE "C" NOT NULL REFERENCES ${s}.a2a_tasks (id) ON DELETE CASCADE,
  id text COLLATE "C" NOT NULL,
  config text NOT NULL,
  PRIMARY KEY (task_id, id)
);
-- ListTasks: one index per filter it is asked with, newest status first, ties by id (the cursor's order).
CREATE INDEX a2a_tasks_by_time ON ${s}.a2a_tasks (status_ms DESC, id DESC);
CREATE INDEX a2a_tasks_by_context ON ${s}.a2a_tasks (context_id, status_ms DESC, id DESC);
CREATE INDEX a2a_tasks_by_state ON ${s}.a2a_tasks (state, status_ms DESC, id DESC);
CREATE INDEX a2a_tasks_by_owner ON ${s}.a2a_tasks (owner, status_ms DESC, id DESC) WHERE owner IS NOT NULL;
CREATE INDEX a2a_tasks_by_owner_context ON ${s}.a2a_tasks (owner, context_id, status_ms DESC, id DESC)
  WHERE owner IS NOT NULL;
CREATE INDEX a2a_tasks_by_owner_state ON ${s}.a2a_tasks (owner, state, status_ms DESC, id DESC)
  WHERE owner IS NOT NULL;
-- ListTasks' total without a filter, by state, by owner, by owner and state: a COUNT over 100k index entries takes
-- tens of ms, so these are kept by a trigger in the statement that changes them, several rows per key: a session
-- writes the row of its server process (pids come in sequence: a pool's sessions each get their own), as a row stays
-- locked until its transaction's commit is on disk and writes that shared a row queued behind each other's commits.
-- Every write counts all tasks and its state: 128 rows for each of those keys; an owner's keys only meet that owner's
-- concurrent writes: 16 rows each (a row per owner, state and pid would grow without bound). A task's -1 may go to
-- another row than its +1: only the sum means anything. Filters with a context count its index entries (a context
-- holds a conversation's tasks); updatedAfter counts its range.
CREATE TABLE ${s}.a2a_counts (
  key text COLLATE "C" NOT NULL,
  shard smallint NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (key, shard)
);
CREATE FUNCTION ${s}.a2a_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  v_keys text[] := '{}';
  v_deltas integer[] := '{}';
BEGIN
  IF TG_OP <> 'INSERT' THEN
    v_keys := v_keys || ('s:' || OLD.state);
    v_deltas := v_deltas || -1;
    IF OLD.owner IS NOT NULL THEN
      v_keys := v_keys || ('os:' || OLD.state || ':' || OLD.owner);
      v_deltas := v_deltas || -1;
    END IF;
    IF TG_OP = 'DELETE' THEN
      v_keys := v_keys || ''::text;
      v_deltas := v_deltas || -1;
      IF OLD.owner IS NOT NULL THEN
        v_keys := v_keys || ('o:' || OLD.owner);
        v_deltas := v_deltas || -1;
      END IF;
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    v_keys := v_keys || ('s:' || NEW.state);
    v_deltas := v_deltas || 1;
    IF NEW.owner IS NOT NULL THEN
      v_keys := v_keys || ('os:' || NEW.state || ':' || NEW.owner);
      v_deltas := v_deltas || 1;
    END IF;
    IF TG_OP = 'INSERT' THEN
      v_keys := v_keys || ''::text;
      v_deltas := v_deltas || 1;
      IF NEW.owner IS NOT NULL THEN
        v_keys := v_keys || ('o:' || NEW.owner);
        v_deltas := v_deltas || 1;
      END IF;
    END IF;
  END IF;
  -- In the order of the keys, so two writers never wait for each other's rows in opposite orders.
  INSERT INTO ${s}.a2a_counts AS c (key, shard, n)
    SELECT k.key, pg_backend_pid() % CASE WHEN k.key LIKE 'o%' THEN 16 ELSE 128 END, sum(k.delta)
    FROM unnest(v_keys, v_deltas) AS k (key, delta) GROUP BY k.key ORDER BY k.key
  ON CONFLICT (key, shard) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $fn$;
CREATE TRIGGER a2a_counted AFTER INSERT OR DELETE ON ${s}.a2a_tasks FOR EACH ROW EXECUTE FUNCTION ${s}.a2a_count();
CREATE TRIGGER a2a_recounted AFTER UPDATE OF state ON ${s}.a2a_tasks FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION ${s}.a2a_count();
-- The lost-task check reads the running tasks only; retention by age the settled ones.
CREATE INDEX a2a_tasks_unsettled ON ${s}.a2a_tasks (lease_until) WHERE NOT settled;
CREATE INDEX a2a_tasks_settled ON ${s}.a2a_tasks (changed_at) WHERE settled;

-- A new task, its lease taken by the instance that runs it. Answers 1, 2 when it exists with this instance's
-- lease (a retry of a create that landed), 0 when another instance has a task of this id.
CREATE FUNCTION ${s}.a2a_create(p_id text, p_context text, p_owner text, p_state text, p_settled boolean,
  p_status_ms bigint, p_json text, p_head text, p_messages text[], p_instance text, p_lease_ms integer)
RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE v_holder text;
BEGIN
  INSERT INTO ${s}.a2a_tasks (id, context_id, owner, state, settled, status_ms, lease_holder, lease_until, head, json,
    history_count)
  VALUES (p_id, p_context, p_owner, p_state, p_settled, p_status_ms, p_instance,
    clock_timestamp() + p_lease_ms * interval '1 millisecond', p_head, p_json, cardinality(p_messages))
  ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN
    SELECT lease_holder INTO v_holder FROM ${s}.a2a_tasks WHERE id = p_id;
    RETURN CASE WHEN v_holder = p_instance THEN 2 ELSE 0 END;
  END IF;
  INSERT INTO ${s}.a2a_history (task_id, n, message)
    SELECT p_id, m.i - 1, m.message FROM unnest(p_messages) WITH ORDINALITY AS m (message, i);
  RETURN 1;
END $fn$;

-- A task's events, in order, in one statement (the events of a task handed while its previous write was on its way
-- go together), each all or nothing and never over a task that has ended (an instance whose lease ran out may still
-- be running it); see APPEND in the Redis store, whose answers these are, one per event in an array: 1 written, 2
-- already written (a retry), 0 the task has ended, -1 gone, -2 not the event after the last one written (send the
-- whole task), -3 later events were written before it. Per event: p_json (NULL: keep) is the task without history as
-- of p_json_seq; p_head (NULL: keep); p_whole: its messages are the whole history, else they join it (p_messages
-- holds every event's, p_message_counts how many are each one's). Past p_log_limit bytes the oldest events already
-- folded into json go (the newest always stays), and kept_after says from where the log is whole. The event that
-- ends the task frees its lease when this instance holds it. The task's row is updated once for all the events (an
-- update of a status moves the row in every index of the table).
-- Each event's p_notify goes to p_channel on commit when the task has followers (a follower registers in the row
-- before it reads the events table: under this row's lock, so an append either sees the follower or committed before
-- the follower's read). NOTIFY takes a lock of the whole database from the commit's start to its end: a task nobody
-- follows (most: their client waits on the instance that runs them) never takes it.
CREATE FUNCTION ${s}.a2a_append(p_id text, p_seqs integer[], p_events text[], p_states text[], p_settled boolean[],
  p_ends boolean[], p_status_ms bigint[], p_kept_after integer[], p_log_limit bigint, p_instance text,
  p_json text[], p_json_seq integer[], p_head text[], p_whole boolean[], p_messages text[],
  p_message_counts integer[], p_channel text, p_notify text[])
RETURNS integer[] LANGUAGE plpgsql AS $fn$
DECLARE
  t record;
  v_old record;
  v_answers integer[] := '{}';
  v_got text;
  v_seq integer;
  v_from integer := 1;
  v_count integer;
  v_state text;
  v_settled boolean;
  v_status_ms bigint;
  v_frees boolean := false;
  v_head text;
  v_json text;
  v_wrote boolean := false;
  v_last integer;
  v_hn integer;
  v_folded integer;
  v_kept integer;
  v_bytes bigint;
  v_event_bytes integer;
  v_cut integer;
  v_freed bigint;
BEGIN
  SELECT state, settled, last_seq, kept_after, log_bytes, folded_seq, history_count, followers INTO t
    FROM ${s}.a2a_tasks WHERE id = p_id FOR UPDATE;
  IF NOT FOUND THEN RETURN array_fill(-1, ARRAY[cardinality(p_seqs)]); END IF;
  v_state := t.state;
  v_settled := t.settled;
  v_last := t.last_seq;
  v_hn := t.history_count;
  v_folded := t.folded_seq;
  v_kept := t.kept_after;
  v_bytes := t.log_bytes;
  FOR i IN 1 .. cardinality(p_seqs) LOOP
    v_seq := p_seqs[i];
    v_count := p_message_counts[i];
    v_from := v_from + v_count;
    IF v_seq <= v_last THEN
      SELECT event INTO v_got FROM ${s}.a2a_events WHERE task_id = p_id AND seq = v_seq;
      v_answers := v_answers || CASE WHEN v_got = p_events[i] THEN 2
        WHEN v_got IS NOT NULL AND v_state IN ${ENDED} THEN 0 ELSE -3 END;
      CONTINUE;
    END IF;
    IF v_state IN ${ENDED} THEN v_answers := v_answers || 0; CONTINUE; END IF;
    IF NOT p_whole[i] AND v_seq <> v_last + 1 THEN v_answers := v_answers || -2; CONTINUE; END IF;
    IF p_whole[i] THEN
      DELETE FROM ${s}.a2a_history WHERE task_id = p_id;
      v_hn := 0;
    END IF;
    IF v_count > 0 THEN
      INSERT INTO ${s}.a2a_history (task_id, n, message)
        SELECT p_id, v_hn + m.i - 1, m.message
        FROM unnest(p_messages[v_from - v_count : v_from - 1]) WITH ORDINALITY AS m (message, i);
      v_hn := v_hn + v_count;
    END IF;
    v_event_bytes := octet_length(p_events[i]);
    INSERT INTO ${s}.a2a_events (task_id, seq, event, bytes) VALUES (p_id, v_seq, p_events[i], v_event_bytes);
    IF p_json[i] IS NOT NULL THEN
      v_json := p_json[i];
      v_folded := p_json_seq[i];
    END IF;
    v_kept := greatest(v_kept, p_kept_after[i]);
    IF v_seq > v_last + 1 THEN v_kept := greatest(v_kept, v_seq - 1); END IF;
    v_bytes := v_bytes + v_event_bytes;
    IF v_bytes > p_log_limit THEN
      -- Oldest first, only as far as needed: a log that cannot shrink yet (nothing folded) costs one row here.
      v_cut := NULL;
      v_freed := 0;
      FOR v_old IN SELECT e.seq, e.bytes FROM ${s}.a2a_events e WHERE e.task_id = p_id ORDER BY e.seq LOOP
        EXIT WHEN v_bytes - v_freed <= p_log_limit OR v_old.seq >= v_seq OR v_old.seq > v_folded;
        v_cut := v_old.seq;
        v_freed := v_freed + v_old.bytes;
      END LOOP;
      IF v_cut IS NOT NULL THEN
        DELETE FROM ${s}.a2a_events WHERE task_id = p_id AND seq <= v_cut;
        v_bytes := v_bytes - v_freed;
        v_kept := greatest(v_kept, v_cut);
      END IF;
    END IF;
    v_state := p_states[i];
    v_settled := p_settled[i];
    v_status_ms := coalesce(p_status_ms[i], v_status_ms);
    v_frees := v_frees OR p_ends[i];
    v_head := coalesce(p_head[i], v_head);
    v_last := v_seq;
    v_wrote := true;
    IF p_notify[i] IS NOT NULL AND t.followers > 0 THEN PERFORM pg_notify(p_channel, p_notify[i]); END IF;
    v_answers := v_answers || 1;
  END LOOP;
  IF v_wrote THEN
    UPDATE ${s}.a2a_tasks SET
      state = v_state,
      settled = v_settled,
      status_ms = coalesce(v_status_ms, status_ms),
      changed_at = CASE WHEN v_status_ms IS NULL THEN changed_at ELSE now() END,
      lease_holder = CASE WHEN v_frees AND lease_holder = p_instance THEN NULL ELSE lease_holder END,
      lease_until = CASE WHEN v_frees AND lease_holder = p_instance THEN NULL ELSE lease_until END,
      head = coalesce(v_head, head),
      json = coalesce(v_json, json),
      folded_seq = v_folded,
      history_count = v_hn,
      kept_after = v_kept,
      last_seq = v_last,
      log_bytes = v_bytes
    WHERE id = p_id;
  END IF;
  RETURN v_answers;
END $fn$;`,
  (s) => `
-- New tasks are counted by the functions that insert them (countNewTask); the trigger keeps counting what moves a
-- count afterwards (a state's change, a delete).
DROP TRIGGER a2a_counted ON ${s}.a2a_tasks;
CREATE TRIGGER a2a_counted AFTER DELETE ON ${s}.a2a_tasks FOR EACH ROW EXECUTE FUNCTION ${s}.a2a_count();
CREATE OR REPLACE FUNCTION ${s}.a2a_create(p_id text, p_context text, p_owner text, p_state text,
  p_settled boolean, p_status_ms bigint, p_json text, p_head text, p_messages text[], p_instance text,
  p_lease_ms integer)
RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE v_holder text;
BEGIN
  INSERT INTO ${s}.a2a_tasks (id, context_id, owner, state, settled, status_ms, lease_holder, lease_until, head, json,
    history_count)
  VALUES (p_id, p_context, p_owner, p_state, p_settled, p_status_ms, p_instance,
    clock_timestamp() + p_lease_ms * interval '1 millisecond', p_head, p_json, cardinality(p_messages))
  ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN
    SELECT lease_holder INTO v_holder FROM ${s}.a2a_tasks WHERE id = p_id;
    RETURN CASE WHEN v_holder = p_instance THEN 2 ELSE 0 END;
  END IF;
  ${countNewTask(s)}
  INSERT INTO ${s}.a2a_history (task_id, n, message)
    SELECT p_id, m.i - 1, m.message FROM unnest(p_messages) WITH ORDINALITY AS m (message, i);
  RETURN 1;
END $fn$;

-- A new task as it stands after its first events (those its agent handed while the create waited a moment for them:
-- an agent that answers at once hands them all), written with them in one statement and one commit: its row as of
-- the last event (p_json folded up to it), its history, its events (seq 1 to n) each a row. The event that ends the
-- task frees its lease in the same statement (p_frees). Answers as a2a_create: 1 written, 2 it exists with this
-- instance's lease (a retry of a create that landed), 0 another instance has a task of this id.
CREATE FUNCTION ${s}.a2a_create_with(p_id text, p_context text, p_owner text, p_state text, p_settled boolean,
  p_status_ms bigint, p_json text, p_head text, p_messages text[], p_instance text, p_lease_ms integer,
  p_seqs integer[], p_events text[], p_frees boolean)
RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_holder text;
  v_last integer := p_seqs[cardinality(p_seqs)];
BEGIN
  INSERT INTO ${s}.a2a_tasks (id, context_id, owner, state, settled, status_ms, lease_holder, lease_until, head, json,
    history_count, folded_seq, last_seq, log_bytes)
  VALUES (p_id, p_context, p_owner, p_state, p_settled, p_status_ms,
    CASE WHEN p_frees THEN NULL ELSE p_instance END,
    CASE WHEN p_frees THEN NULL ELSE clock_timestamp() + p_lease_ms * interval '1 millisecond' END,
    p_head, p_json, cardinality(p_messages), v_last, v_last,
    (SELECT coalesce(sum(octet_length(e)), 0) FROM unnest(p_events) AS e))
  ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN
    -- A retry of this very write (its answer was lost): its last event is there, though its lease may be freed.
    SELECT lease_holder INTO v_holder FROM ${s}.a2a_tasks WHERE id = p_id;
    RETURN CASE WHEN v_holder = p_instance OR EXISTS (SELECT 1 FROM ${s}.a2a_events
      WHERE task_id = p_id AND seq = v_last AND event = p_events[cardinality(p_events)]) THEN 2 ELSE 0 END;
  END IF;
  ${countNewTask(s)}
  INSERT INTO ${s}.a2a_history (task_id, n, message)
    SELECT p_id, m.i - 1, m.message FROM unnest(p_messages) WITH ORDINALITY AS m (message, i);
  INSERT INTO ${s}.a2a_events (task_id, seq, event, bytes)
    SELECT p_id, e.seq, e.event, octet_length(e.event) FROM unnest(p_seqs, p_events) AS e (seq, event);
  RETURN 1;
END $fn$;`,
  (s) => `
-- New tasks that reach an instance in the same moment, written in one statement and one commit, each as
-- a2a_create_with writes one (its row as of its last event, its history, its events; a task without events as
-- a2a_create does): a commit and a call cost PostgreSQL about what a task's rows do, so sixteen concurrent sends
-- cost about half of what sixteen statements did. Tasks go in by id, so two instances writing the same ids wait for
-- each other in one order. Row i of the arrays is task i; p_message_tasks and p_event_tasks give each message and
-- event its task's row number, in order. Answers one a2a_create answer per task: 1 written, 2 it exists with this
-- instance's lease or its last event (a retry of a write that landed), 0 another instance has a task of this id.
CREATE FUNCTION ${s}.a2a_create_many(p_ids text[], p_contexts text[], p_owners text[], p_states text[],
  p_settled boolean[], p_status_ms bigint[], p_jsons text[], p_heads text[], p_last_seqs integer[],
  p_frees boolean[], p_instance text, p_lease_ms integer, p_message_tasks integer[], p_message_ns integer[],
  p_messages text[], p_event_tasks integer[], p_event_seqs integer[], p_events text[])
RETURNS integer[] LANGUAGE plpgsql AS $fn$
DECLARE
  v_inserted text[];
  v_answers integer[] := '{}';
  v_holder text;
  v_last text;
BEGIN
  WITH t AS (
    SELECT * FROM unnest(p_ids, p_contexts, p_owners, p_states, p_settled, p_status_ms, p_jsons, p_heads,
      p_last_seqs, p_frees) WITH ORDINALITY
      AS t (id, context_id, owner, state, settled, status_ms, json, head, last_seq, frees, i)
  ), history AS (
    SELECT m.t AS i, count(*) AS n FROM unnest(p_message_tasks) AS m (t) GROUP BY m.t
  ), log AS (
    SELECT e.t AS i, sum(octet_length(e.event)) AS bytes FROM unnest(p_event_tasks, p_events) AS e (t, event)
    GROUP BY e.t
  ), inserted AS (
    INSERT INTO ${s}.a2a_tasks (id, context_id, owner, state, settled, status_ms, lease_holder, lease_until, head,
      json, history_count, folded_seq, last_seq, log_bytes)
    SELECT t.id, t.context_id, t.owner, t.state, t.settled, t.status_ms,
      CASE WHEN t.frees THEN NULL ELSE p_instance END,
      CASE WHEN t.frees THEN NULL ELSE clock_timestamp() + p_lease_ms * interval '1 millisecond' END,
      t.head, t.json, coalesce(history.n, 0), t.last_seq, t.last_seq, coalesce(log.bytes, 0)
    FROM t LEFT JOIN history ON history.i = t.i LEFT JOIN log ON log.i = t.i ORDER BY t.id
    ON CONFLICT (id) DO NOTHING
    RETURNING id, owner, state
  ), counted AS (
    -- As countNewTask, for all the tasks inserted: one row per key.
    INSERT INTO ${s}.a2a_counts AS c (key, shard, n)
    SELECT k.key, pg_backend_pid() % k.shards, count(*)
    FROM inserted, LATERAL (VALUES ('', 128), ('o:' || inserted.owner, 16),
      ('os:' || inserted.state || ':' || inserted.owner, 16), ('s:' || inserted.state, 128)) AS k (key, shards)
    WHERE k.key IS NOT NULL GROUP BY k.key, k.shards ORDER BY k.key
    ON CONFLICT (key, shard) DO UPDATE SET n = c.n + excluded.n
  )
  SELECT coalesce(array_agg(id), '{}') INTO v_inserted FROM inserted;
  INSERT INTO ${s}.a2a_history (task_id, n, message)
    SELECT p_ids[m.t], m.n, m.message FROM unnest(p_message_tasks, p_message_ns, p_messages) AS m (t, n, message)
    WHERE p_ids[m.t] = ANY (v_inserted);
  INSERT INTO ${s}.a2a_events (task_id, seq, event, bytes)
    SELECT p_ids[e.t], e.seq, e.event, octet_length(e.event)
    FROM unnest(p_event_tasks, p_event_seqs, p_events) AS e (t, seq, event)
    WHERE p_ids[e.t] = ANY (v_inserted);
  FOR i IN 1 .. cardinality(p_ids) LOOP
    IF p_ids[i] = ANY (v_inserted) THEN
      v_answers := v_answers || 1;
      CONTINUE;
    END IF;
    -- A retry of this very write (its answer was lost): its last event is there, though its lease may be freed.
    SELECT lease_holder INTO v_holder FROM ${s}.a2a_tasks WHERE id = p_ids[i];
    SELECT e.event INTO v_last FROM unnest(p_event_tasks, p_event_seqs, p_events) AS e (t, seq, event)
      WHERE e.t = i AND e.seq = p_last_seqs[i];
    v_answers := v_answers || CASE WHEN v_holder = p_instance OR (v_last IS NOT NULL AND EXISTS (SELECT 1
      FROM ${s}.a2a_events WHERE task_id = p_ids[i] AND seq = p_last_seqs[i] AND event = v_last)) THEN 2 ELSE 0 END;
  END LOOP;
  RETURN v_answers;
END $fn$;

-- A task's history and events go with it through a trigger that runs once per statement deleting tasks, not through
-- foreign keys: a key checked for every row inserted cost PostgreSQL a fifth of a send. Push configs keep theirs
-- (saved rarely). The trigger's deletes are statements of their own, after the tasks': a write of a task's events
-- locks its row first (a2a_append), so it either landed before the task's delete (their snapshot sees its rows) or
-- finds no task. Every version's retention deletes tasks, so instances still on an earlier version during a rolling
-- upgrade leave nothing behind either. The tables are locked first, tasks first, as a write takes them.
LOCK TABLE ${s}.a2a_tasks, ${s}.a2a_history, ${s}.a2a_events IN ACCESS EXCLUSIVE MODE;
CREATE FUNCTION ${s}.a2a_forget() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${s}.a2a_history WHERE task_id IN (SELECT id FROM gone);
  DELETE FROM ${s}.a2a_events WHERE task_id IN (SELECT id FROM gone);
  RETURN NULL;
END $fn$;
CREATE TRIGGER a2a_forgotten AFTER DELETE ON ${s}.a2a_tasks REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.a2a_forget();
ALTER TABLE ${s}.a2a_history DROP CONSTRAINT a2a_history_task_id_fkey;
ALTER TABLE ${s}.a2a_events DROP CONSTRAINT a2a_events_task_id_fkey;`,
  (s) => `
-- Deleted tasks are counted out once per statement, one upsert per key for all of them, in the statement trigger
-- that deletes their history and events: a row trigger did it per task (a function call, arrays, a grouping and an
-- upsert each), about a fifth of what retention cost PostgreSQL at the task cap. Keys in order, as every writer
-- takes them. A state's change is still counted by the row trigger (a2a_recounted).
-- Their rows go by their ids, which the tables' keys look up, never by reading a whole table: the planner knows
-- nothing of how many tasks a statement deleted, nor, before the tables are first analyzed, how many rows a task has
-- (at the task cap it read the whole log for a third of these deletes, ten times the cost of looking the ids up).
LOCK TABLE ${s}.a2a_tasks IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER a2a_counted ON ${s}.a2a_tasks;
CREATE OR REPLACE FUNCTION ${s}.a2a_forget() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  v_ids text[] COLLATE "C";
BEGIN
  INSERT INTO ${s}.a2a_counts AS c (key, shard, n)
    SELECT k.key, pg_backend_pid() % k.shards, -count(*)
    FROM gone, LATERAL (VALUES ('', 128), ('o:' || gone.owner, 16), ('os:' || gone.state || ':' || gone.owner, 16),
      ('s:' || gone.state, 128)) AS k (key, shards)
    WHERE k.key IS NOT NULL GROUP BY k.key, k.shards ORDER BY k.key
  ON CONFLICT (key, shard) DO UPDATE SET n = c.n + excluded.n;
  v_ids := ARRAY(SELECT id FROM gone);
  DELETE FROM ${s}.a2a_history WHERE task_id = ANY (v_ids);
  DELETE FROM ${s}.a2a_events WHERE task_id = ANY (v_ids);
  RETURN NULL;
END $fn$ SET enable_seqscan = off;
-- The row trigger now counts a state's change only (a2a_recounted): its keys in byte order, as the functions above
-- take theirs (their keys are of "C" columns), whatever the database's collation.
CREATE OR REPLACE FUNCTION ${s}.a2a_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ${s}.a2a_counts AS c (key, shard, n)
    SELECT k.key, pg_backend_pid() % k.shards, sum(k.delta)
    FROM (VALUES ('s:' || OLD.state, 128, -1), ('s:' || NEW.state, 128, 1),
      ('os:' || OLD.state || ':' || OLD.owner, 16, -1), ('os:' || NEW.state || ':' || NEW.owner, 16, 1))
      AS k (key, shards, delta)
    WHERE k.key IS NOT NULL GROUP BY k.key, k.shards ORDER BY k.key COLLATE "C"
  ON CONFLICT (key, shard) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $fn$;`,
  (s) => `
-- A task that ends in the statement that creates it (an agent that answers at once) keeps no event in the log: nobody
-- can have followed a task whose create had not landed, and what its events did is in its row, which says where its
-- log starts (kept_after, its last event: a resume from before it is told to read the task). The log's rows were a
-- fifth of what such a send cost PostgreSQL (inserted, then deleted by retention). A task's events given here may
-- start after 1 too: the log is whole after the first one written. Writers of version 4 pass every event from 1, so
-- their tasks read as before. A retry of a create whose answer was lost knows its write by the row it left.
CREATE OR REPLACE FUNCTION ${s}.a2a_create_many(p_ids text[], p_contexts text[], p_owners text[], p_states text[],
  p_settled boolean[], p_status_ms bigint[], p_jsons text[], p_heads text[], p_last_seqs integer[],
  p_frees boolean[], p_instance text, p_lease_ms integer, p_message_tasks integer[], p_message_ns integer[],
  p_messages text[], p_event_tasks integer[], p_event_seqs integer[], p_events text[])
RETURNS integer[] LANGUAGE plpgsql AS $fn$
DECLARE
  v_inserted text[];
  v_answers integer[] := '{}';
  v_holder text;
  v_same boolean;
  v_last text;
BEGIN
  WITH t AS (
    SELECT * FROM unnest(p_ids, p_contexts, p_owners, p_states, p_settled, p_status_ms, p_jsons, p_heads,
      p_last_seqs, p_frees) WITH ORDINALITY
      AS t (id, context_id, owner, state, settled, status_ms, json, head, last_seq, frees, i)
  ), history AS (
    SELECT m.t AS i, count(*) AS n FROM unnest(p_message_tasks) AS m (t) GROUP BY m.t
  ), log AS (
    SELECT e.t AS i, sum(octet_length(e.event)) AS bytes, min(e.seq) - 1 AS kept_after
    FROM unnest(p_event_tasks, p_event_seqs, p_events) AS e (t, seq, event) GROUP BY e.t
  ), inserted AS (
    INSERT INTO ${s}.a2a_tasks (id, context_id, owner, state, settled, status_ms, lease_holder, lease_until, head,
      json, history_count, folded_seq, kept_after, last_seq, log_bytes)
    SELECT t.id, t.context_id, t.owner, t.state, t.settled, t.status_ms,
      CASE WHEN t.frees THEN NULL ELSE p_instance END,
      CASE WHEN t.frees THEN NULL ELSE clock_timestamp() + p_lease_ms * interval '1 millisecond' END,
      t.head, t.json, coalesce(history.n, 0), t.last_seq, coalesce(log.kept_after, t.last_seq), t.last_seq,
      coalesce(log.bytes, 0)
    FROM t LEFT JOIN history ON history.i = t.i LEFT JOIN log ON log.i = t.i ORDER BY t.id
    ON CONFLICT (id) DO NOTHING
    RETURNING id, owner, state
  ), counted AS (
    -- As countNewTask, for all the tasks inserted: one row per key.
    INSERT INTO ${s}.a2a_counts AS c (key, shard, n)
    SELECT k.key, pg_backend_pid() % k.shards, count(*)
    FROM inserted, LATERAL (VALUES ('', 128), ('o:' || inserted.owner, 16),
      ('os:' || inserted.state || ':' || inserted.owner, 16), ('s:' || inserted.state, 128)) AS k (key, shards)
    WHERE k.key IS NOT NULL GROUP BY k.key, k.shards ORDER BY k.key
    ON CONFLICT (key, shard) DO UPDATE SET n = c.n + excluded.n
  )
  SELECT coalesce(array_agg(id), '{}') INTO v_inserted FROM inserted;
  INSERT INTO ${s}.a2a_history (task_id, n, message)
    SELECT p_ids[m.t], m.n, m.message FROM unnest(p_message_tasks, p_message_ns, p_messages) AS m (t, n, message)
    WHERE p_ids[m.t] = ANY (v_inserted);
  IF cardinality(p_events) > 0 THEN
    INSERT INTO ${s}.a2a_events (task_id, seq, event, bytes)
      SELECT p_ids[e.t], e.seq, e.event, octet_length(e.event)
      FROM unnest(p_event_tasks, p_event_seqs, p_events) AS e (t, seq, event)
      WHERE p_ids[e.t] = ANY (v_inserted);
  END IF;
  FOR i IN 1 .. cardinality(p_ids) LOOP
    IF p_ids[i] = ANY (v_inserted) THEN
      v_answers := v_answers || 1;
      CONTINUE;
    END IF;
    -- A retry of this very write (its answer was lost): the lease is this instance's, or the write ended the task
    -- and the row is as it left it, or its last event is there (a later write moved the row).
    SELECT lease_holder, json = p_jsons[i] INTO v_holder, v_same FROM ${s}.a2a_tasks WHERE id = p_ids[i];
    SELECT e.event INTO v_last FROM unnest(p_event_tasks, p_event_seqs, p_events) AS e (t, seq, event)
      WHERE e.t = i AND e.seq = p_last_seqs[i];
    v_answers := v_answers || CASE WHEN v_holder = p_instance OR (v_holder IS NULL AND v_same) OR (v_last IS NOT NULL
      AND EXISTS (SELECT 1 FROM ${s}.a2a_events WHERE task_id = p_ids[i] AND seq = p_last_seqs[i] AND event = v_last))
      THEN 2 ELSE 0 END;
  END LOOP;
  RETURN v_answers;
END $fn$;`,
]

/** The version this code writes and reads. */
const SCHEMA_VERSION = MIGRATIONS.length

/** What the schema's table of migrations says: its version, 0 for a schema without it. */
async function versionOf(pool: PgPool, s: string): Promise<number> {
  const [row] = await pool.queryNow<{ exists: boolean }>({ text: 'SELECT to_regclass($1) IS NOT NULL AS exists' }, [
    `${s}.a2a_migrations`,
  ])
  if (!row?.exists) return 0
  const [found] = await pool.queryNow<{ version: number | null }>({
    text: `SELECT max(version) AS version FROM ${s}.a2a_migrations`,
  })
  return found?.version ?? 0
}

function newerThanKnown(schema: string, version: number): ConfigurationError {
  return new ConfigurationError(
    `The PostgreSQL schema "${schema}" is at version ${version}, newer than this runtime knows (${SCHEMA_VERSION}): upgrade a2a-runtime (a schema is never downgraded)`,
  )
}

/**
 * Applies the pending migrations in one transaction, under an advisory lock of the schema: instances that start at
 * once apply each migration once (the others wait, then find it applied). Refuses a schema newer than this code.
 */
export async function migrate(pool: PgPool, schema: string): Promise<{ from: number; to: number }> {
  const s = quoteSchema(schema)
  const client = await pool.pool.connect().catch((error: unknown) => {
    throw pool.unavailable(error)
  })
  let failed = false
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey(schema, 'migrate')])
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.a2a_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    )
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${s}.a2a_migrations`,
    )
    const from = rows[0]?.version ?? 0
    if (from > SCHEMA_VERSION) throw newerThanKnown(schema, from)
    for (let version = from + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!(s))
      await client.query(`INSERT INTO ${s}.a2a_migrations (version) VALUES ($1)`, [version])
    }
    await client.query('COMMIT')
    return { from, to: Math.max(from, SCHEMA_VERSION) }
  } catch (error) {
    failed = true
    await client.query('ROLLBACK').catch(() => {})
    throw pool.unavailable(error)
  } finally {
    client.release(failed)
  }
}

/** Without migrations at start (`migrate: false`): the schema must be at this code's version already. */
export async function checkCurrent(pool: PgPool, schema: string): Promise<void> {
  const version = await versionOf(pool, quoteSchema(schema))
  if (version > SCHEMA_VERSION) throw newerThanKnown(schema, version)
  if (version < SCHEMA_VERSION)
    throw new ConfigurationError(
      `The PostgreSQL schema "${schema}" is at version ${version}, this runtime needs ${SCHEMA_VERSION}: run \`a2a store migrate\` (or start with migrations on)`,
    )
}
