"""The SQL of the PostgreSQL run queue, over procrastinate's tables and functions.

Every statement runs on a connection whose ``search_path`` is the queue's schema, so
the names are unqualified (procrastinate's own functions resolve their tables the same
way). Procrastinate keeps the jobs (``procrastinate_jobs``: one job per run, its
``lock`` the thread, its ``args`` the run), the order of a thread's runs and the
``SKIP LOCKED`` claim (``procrastinate_fetch_job_v2``), the per-claim worker rows whose
identity is our fencing token (``procrastinate_workers``), the status history
(``procrastinate_events``), the ``NOTIFY`` on insert, and the once-per-tick record of
periodic work (``procrastinate_periodic_defers``). Our table ``sg_runs`` adds what a
run queue needs beyond a job: the run id, the claim's expiry, the claim count and a
pending cancel request.

Lock order, to stay free of deadlocks: a statement that locks rows locks the job row
before its ``sg_runs`` row (``FOR UPDATE OF j, r``); statements that lock only
``sg_runs`` never wait for a job row.
"""

from __future__ import annotations

TASK = "stategraph.run"
"""procrastinate ``task_name`` of every run job."""
CRON_TASK = "stategraph.cron"
"""procrastinate ``task_name`` of the cron tick records (``periodic_id`` = cron id)."""
LIVE = "('todo', 'doing')"

CHANNEL_PREFIX = "procrastinate_queue_v1#"
"""procrastinate's per-queue NOTIFY channel (its insert trigger notifies it)."""

# -- enqueue --------------------------------------------------------------------------
THREAD_LOCK = "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))"
RUN_EXISTS = "SELECT 1 FROM sg_runs WHERE run_id = %s"
THREAD_RUNS = f"""
SELECT r.run_id, j.id, j.status::text, r.cancel
  FROM procrastinate_jobs j JOIN sg_runs r ON r.job_id = j.id
 WHERE r.thread_id = %s AND j.status IN {LIVE}
 ORDER BY j.id
   FOR UPDATE OF j, r
"""
CANCEL_PENDING = "SELECT procrastinate_cancel_job_v1(%s, false, false)"
MARK_REMOVED = """
UPDATE sg_runs SET final_status = 'interrupted', finished_at = clock_timestamp()
 WHERE job_id = %s
"""
REQUEST_CANCEL = """
UPDATE sg_runs SET cancel = CASE WHEN cancel = 'rollback' THEN cancel ELSE %s END
 WHERE job_id = %s
"""
DEFER = """
SELECT (procrastinate_defer_jobs_v1(ARRAY[ROW(
    %(queue)s, %(task)s, 0, %(lock)s, NULL, %(args)s,
    CASE WHEN %(available_at)s > 0 THEN to_timestamp(%(available_at)s) END
)::procrastinate_job_to_defer_v1]))[1]
"""
INSERT_RUN = """
INSERT INTO sg_runs (run_id, job_id, thread_id) VALUES (%s, %s, %s)
ON CONFLICT (run_id) DO NOTHING
RETURNING 1
"""

# -- claim ----------------------------------------------------------------------------
NEXT_DUE_EXPR = """extract(epoch FROM least(
    (SELECT min(r.expires_at) FROM sg_runs r JOIN procrastinate_jobs j ON j.id = r.job_id
      WHERE j.queue_name = %(queue)s AND j.status = 'doing'),
    (SELECT min(j.scheduled_at) FROM procrastinate_jobs j
      WHERE j.queue_name = %(queue)s AND j.status = 'todo'
        AND j.scheduled_at > clock_timestamp())
) - clock_timestamp())::float8"""
EXPIRED = """
SELECT j.id, r.token
  FROM procrastinate_jobs j JOIN sg_runs r ON r.job_id = j.id
 WHERE j.queue_name = %s AND j.status = 'doing' AND r.expires_at < clock_timestamp()
 ORDER BY j.id
   FOR UPDATE OF j, r SKIP LOCKED
"""
REQUEUE = "SELECT procrastinate_retry_job_v2(%s, NULL::timestamptz, NULL, NULL, NULL)"
REQUEUE_AFTER = """
SELECT procrastinate_retry_job_v2(
    %(job_id)s, clock_timestamp() + %(delay)s * interval '1 second', NULL, NULL, NULL)
"""
DROP_CLAIM = (
    "UPDATE sg_runs SET token = NULL, expires_at = NULL, worker_id = NULL WHERE job_id = %s"
)
PROBE = f"""
SELECT EXISTS (
         SELECT 1 FROM procrastinate_jobs j JOIN sg_runs r ON r.job_id = j.id
          WHERE j.queue_name = %(queue)s AND j.status = 'doing'
            AND r.expires_at < clock_timestamp()),
       EXISTS (
         SELECT 1 FROM procrastinate_jobs j
          WHERE j.queue_name = %(queue)s AND j.status = 'todo'
            AND (j.scheduled_at IS NULL OR j.scheduled_at <= clock_timestamp())
            AND (j.lock IS NULL OR NOT EXISTS (
                 SELECT 1 FROM procrastinate_jobs d WHERE d.lock = j.lock AND d.status = 'doing'))),
       ({NEXT_DUE_EXPR})
"""
"""Whether a claim could take anything now (an expired claim, a runnable run) and the
seconds until the next claim expiry or delayed run is due: one read, no transaction,
so an idle worker's look at the queue writes nothing and costs one round trip."""
REGISTER = "SELECT worker_id FROM procrastinate_register_worker_v1()"
UNREGISTER = "SELECT procrastinate_unregister_worker_v1(%s)"
FETCH = "SELECT id, args FROM procrastinate_fetch_job_v2(ARRAY[%s]::varchar[], %s)"
TAKE = """
UPDATE sg_runs
   SET token = %(token)s, attempt = attempt + 1, worker_id = %(worker)s,
       expires_at = clock_timestamp() + %(lease)s * interval '1 second'
 WHERE job_id = %(job_id)s
RETURNING attempt, cancel, extract(epoch FROM expires_at)::float8
"""

# -- a claim's own calls ----------------------------------------------------------------
LOCK_CLAIM = """
SELECT j.id, j.status::text, r.token
  FROM procrastinate_jobs j JOIN sg_runs r ON r.job_id = j.id
 WHERE r.run_id = %s
   FOR UPDATE OF j, r
"""
BEAT = """
UPDATE sg_runs r
   SET expires_at = clock_timestamp() + %(lease)s * interval '1 second'
  FROM procrastinate_jobs j
 WHERE r.run_id = %(run_id)s AND r.token = %(token)s
   AND j.id = r.job_id AND j.status = 'doing'
RETURNING r.cancel, extract(epoch FROM r.expires_at)::float8
"""
HEARTBEAT_WORKER = "SELECT procrastinate_update_heartbeat_v1(%s)"
FINISH_JOB = "SELECT procrastinate_finish_job_v1(%s, %s, %s)"
MARK_FINISHED = """
UPDATE sg_runs
   SET token = NULL, expires_at = NULL, final_status = %s, finished_at = clock_timestamp()
 WHERE job_id = %s
"""
RUN_STATE = """
SELECT j.status::text, r.token
  FROM procrastinate_jobs j JOIN sg_runs r ON r.job_id = j.id
 WHERE r.run_id = %s
"""
CANCEL_STATE = """
SELECT j.id, j.status::text, r.cancel
  FROM procrastinate_jobs j JOIN sg_runs r ON r.job_id = j.id
 WHERE r.run_id = %s
   FOR UPDATE OF j, r
"""
DELETE_JOB = "DELETE FROM procrastinate_jobs WHERE id = %s"
PENDING = f"""
SELECT r.run_id
  FROM procrastinate_jobs j JOIN sg_runs r ON r.job_id = j.id
 WHERE r.thread_id = %s AND j.status IN {LIVE}
 ORDER BY j.id
"""
NOTIFY = 'SELECT pg_notify(%s, \'{"type": "stategraph_wake"}\')'
NOTIFY_IF_WAITING = """
SELECT pg_notify(%(channel)s, '{"type": "stategraph_wake"}')
  FROM procrastinate_jobs
 WHERE lock = %(lock)s AND status = 'todo'
 LIMIT 1
"""
"""Wake the workers only when a run of the thread waits behind the one that ended."""
NEXT_DUE = f"SELECT {NEXT_DUE_EXPR}"
PURGE = """
DELETE FROM procrastinate_jobs j
 USING sg_runs r
 WHERE r.job_id = j.id AND j.queue_name = %s
   AND r.finished_at < clock_timestamp() - %s * interval '1 second'
   AND j.status NOT IN ('todo', 'doing')
"""

# -- cron ticks -------------------------------------------------------------------------
CRON_LOCK = "SELECT pg_advisory_xact_lock(hashtext('stategraph.cron'), hashtext(%(cron_id)s))"
# a tick fires when it is new and not older than ``keep`` before the newest fired tick
# of its cron; ticks further back than that are forgotten, and refused
CLAIM_TICK = """
INSERT INTO procrastinate_periodic_defers (task_name, periodic_id, defer_timestamp)
SELECT %(task)s::varchar, %(cron_id)s::varchar, %(ts)s::bigint
 WHERE %(ts)s::bigint >= coalesce(
        (SELECT max(defer_timestamp) FROM procrastinate_periodic_defers
          WHERE task_name = %(task)s::varchar AND periodic_id = %(cron_id)s::varchar),
        %(ts)s::bigint) - %(keep_ms)s::bigint
ON CONFLICT DO NOTHING
RETURNING id
"""
FORGET_TICKS = """
DELETE FROM procrastinate_periodic_defers
 WHERE task_name = %(task)s::varchar AND periodic_id = %(cron_id)s::varchar
   AND defer_timestamp < %(ts)s::bigint - %(keep_ms)s::bigint
"""
