"""The session's workspace and background jobs, on the Streamlit side.

bind()        (app.py, every script run, before the page) the workspace of the URL's `ws`
              token or a new one; the token written back into the URL; a fresh session in an
              existing workspace gets its last scenario and Planner result back; a link naming a
              workspace, log or result that is not there gets a warning (nothing silent)
persist()     (app.py, after the page) the scenario and last result into the workspace
start_job()   a worker (appkit.worker) for this session, one per slot (ingest, replay, sweep)
follow_job()  progress bar and Cancel button until the slot's job ends; its outcome
"""

from __future__ import annotations

import time

import streamlit as st

from appkit import data, state, upload_route, worker, workspace
from appkit.uploads import md
from planner.errors import InputError

WS_KEY = "_ws"
QUEUE_WAIT_S = 300.0


def ws_dir():
    return data.session_dir()


def _client() -> str | None:
    """The visitor's address as Streamlit sees it (behind a proxy: the proxy's; raise
    PLANNER_NEW_WORKSPACES_PER_HOUR there); None without one (AppTest): no cap then."""
    try:
        ip = st.context.ip_address
    except Exception:  # noqa: BLE001 - runtimes without a request context
        return None
    return str(ip) if ip else None


def _bind_token() -> tuple[str, bool, list[str]]:
    """(token, newly bound in this session, warnings)."""
    root = data.SESSIONS_ROOT
    url_ws = st.query_params.get("ws")
    cur = st.session_state.get(WS_KEY)
    notes = []
    fresh = False
    if url_ws and url_ws != cur:
        if workspace.exists(root, url_ws):
            cur, fresh = url_ws, True
            st.session_state.pop("last_run", None)
        else:
            notes.append(f"The link names a workspace that is not on this server (workspaces idle for "
                         f"{workspace.idle_days():g} days are removed, or the link is cut short). You are "
                         "in a new, empty workspace; nothing of the link's workspace was loaded.")
            cur = None
    if cur is None or not workspace.exists(root, cur):
        try:
            cur, fresh = workspace.create(root, client=_client()), True
        except InputError as e:  # too many new workspaces from this address (or on the server)
            st.error(f"No new workspace: {md(str(e))}")
            st.stop()
    st.session_state[WS_KEY] = cur
    if fresh:  # a new session (a refresh, a reopened tab): uploads left staged long ago go
        workspace.drop_staged_files(workspace.path(root, cur), older_than_s=workspace.staged_max_age_s())
    if st.query_params.get("ws") != cur:
        st.query_params["ws"] = cur
    workspace.touch(workspace.path(root, cur))
    return cur, fresh, notes


def bind() -> None:
    """Resolve workspace, scenario and result for this script run; show warnings at the top."""
    busy = data.shared_db_busy()
    if busy:  # never another process's lock as an exception: a note, and the page tries again
        st.info(busy, icon=":material/hourglass_top:")
        time.sleep(3)
        st.rerun()
    token, fresh, notes = _bind_token()
    d = workspace.path(data.SESSIONS_ROOT, token)
    _stream_uploads_to(d)
    meta = workspace.read_meta(d)
    known = {k: v for k, v in st.query_params.to_dict().items() if k in state.FIELDS}
    if fresh and state.SCENARIO_KEY not in st.session_state and meta.get("scenario"):
        base, _ = state.scenario_from_params(meta["scenario"])
        st.session_state[state.SCENARIO_KEY] = base  # the URL's fields still go over it
        st.session_state[state.URL_SEEN_KEY] = {}
    sc, url_notes = state.current_scenario()
    notes += url_notes
    notes += _check_log(sc, "log" in known)
    notes += _bind_result(d, meta, fresh)
    if fresh:
        notes += _take_over_jobs(d)
    # the link's warnings stay while the page keeps the link's parameters (a page switch too)
    key = (known, st.query_params.get("result"))
    if notes:
        st.session_state["_link_notes"] = (key, notes)
    elif (known or key[1]) and (saved := st.session_state.get("_link_notes")) and saved[0] == key:
        notes = saved[1]
    for n in notes:  # they quote the link's values: user text, made Markdown-inert
        st.warning(md(n), icon=":material/warning:")
    state.show_log_notes()  # a value reset to the log's default by a log switch or a link


def _stream_uploads_to(d) -> None:
    """This session's uploads go to disk as they arrive, into workspace d (appkit.upload_route;
    installed in the server at the first script run, loudly refused on another Streamlit)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    upload_route.install()
    ctx = get_script_run_ctx()
    if ctx is not None:
        upload_route.register_session(ctx.session_id, d)


JOB_PAGES = {"ingest": ("load", "Logs"), "replay": ("replay", "Planner"), "windows": ("many-window run", "Planner"),
             "sweep": ("grid", "Compare"), "solver": ("benchmark", "Solver")}


def _take_over_jobs(d) -> list[str]:
    """Jobs of this workspace started by a server from before a restart: each goes into its slot,
    so its page follows it like one of its own (progress, Cancel, then the result or why it ended)."""
    notes = []
    for job in worker.recover(d):
        if job.kind == "probe":  # a preview from before the restart: its page asks again
            worker.cancel(job)
            worker.cleanup(job)
            continue
        what, page = JOB_PAGES.get(job.kind, (job.kind, "its"))
        if active_job(job.kind) is not None:
            continue
        st.session_state[f"_job_{job.kind}"] = job
        running = worker.poll(job) is None
        notes.append(f"A {what} started before the server restarted "
                     + (f"is still running ({job.elapsed_s():,.0f} s so far): the {page} page follows it and shows "
                        "its result when it ends." if running else
                        f"has ended: the {page} page shows its outcome."))
    return notes


def _check_log(sc: dict, from_link: bool) -> list[str]:
    logs = data.list_all_logs()
    names = list(logs["name"]) if not logs.empty else []
    if not names or sc["log"] in names:
        return []
    fallback = state.DEFAULTS["log"] if state.DEFAULTS["log"] in names else names[0]
    state.store_scenario(state.fit_to_log(sc, fallback, prev_log=None), write_url=False)
    where = "The link names" if from_link else "The scenario names"
    return [(f"{where} the log {str(sc['log'])[:60]!r}, which is not loaded in this workspace (upload it on "
             f"the Logs page). Showing {fallback!r} instead.")]


def _bind_result(d, meta: dict, fresh: bool) -> list[str]:
    rid = st.query_params.get("result")
    if rid and st.session_state.get("_result_seen") != rid:
        st.session_state["_result_seen"] = rid
        if workspace.has_run(d, rid):
            st.session_state["last_run"] = workspace.load_run(d, rid)
            return []
        return [(f"The link names a Planner result ({str(rid)[:20]!r}) that is not in this workspace (never "
                 "saved, or removed with an idle workspace). Press Run on the Planner to compute it.")]
    last = meta.get("last_result")
    if fresh and "last_run" not in st.session_state and last and workspace.has_run(d, last):
        st.session_state["last_run"] = workspace.load_run(d, last)
    return []


def persist() -> None:
    """Keep the scenario and the last result in the workspace (a refresh or a restart finds them)."""
    token = st.session_state.get(WS_KEY)
    if not workspace.exists(data.SESSIONS_ROOT, token):
        return
    sc = st.session_state.get(state.SCENARIO_KEY)
    last = st.session_state.get("last_run") or {}
    now = (state.scenario_to_params(sc) if sc else None, last.get("rid"))
    if st.session_state.get("_persisted") == now:
        return
    d = workspace.path(data.SESSIONS_ROOT, token)
    changes = {}
    if now[0]:
        changes["scenario"] = now[0]
    if now[1]:
        changes["last_result"] = now[1]
    if changes:
        workspace.update_meta(d, **changes)
    st.session_state["_persisted"] = now


# ---------------------------------------------------------------------------
# background jobs


def active_job(slot: str) -> worker.Job | None:
    return st.session_state.get(f"_job_{slot}")


def start_job(slot: str, kind: str, spec: dict, mem_mb: int | None = None, time_s: float | None = None,
              writes: bool = True, procs: int = 1) -> worker.Job:
    """Start a worker for this session's slot (refused while one runs there); mem_mb / time_s: its
    budgets (default: the app's); writes=False for a job that stores nothing (no quota check);
    procs: how many worker processes it may use (appkit.worker.start grants what is free)."""
    if active_job(slot) is not None:
        raise InputError(f"a {kind} is already running in this session; wait for it or cancel it", field=slot)
    if writes:
        workspace.check_quota(ws_dir(), 0, what=f"a new {kind}")  # runs and grids take space too
    waiting = st.empty()
    deadline = time.monotonic() + QUEUE_WAIT_S
    while True:  # all worker slots taken: wait for one (other sessions' jobs end), bounded
        try:
            job = worker.start(ws_dir(), kind, spec, mem_mb=mem_mb, time_s=time_s, procs=procs)
            break
        except worker.Busy as e:
            if time.monotonic() > deadline:
                raise
            waiting.info(f"Waiting for a free worker: {e}", icon=":material/hourglass_top:")
            time.sleep(0.5)
    waiting.empty()
    st.session_state[f"_job_{slot}"] = job
    st.session_state.pop(f"_outcome_{slot}", None)
    return job


POLL_S = 0.05  # how often a page looks at its running job (a file read): a result shows within this


def follow_job(slot: str, what: str, until_ready: bool = False) -> dict | None:
    """While the slot's job runs: a progress bar and a Cancel button (this blocks the script run,
    not the server: other sessions go on). Returns the outcome once it ends, else None.

    until_ready: return as soon as the worker announces its main result (worker.ready: a replay's
    runs, before their limits): {"status": "ok", "result": ..., "ready": True}; the job stays in
    its slot, and a later follow_job (without until_ready) follows it to the end. Once its
    announcement was returned, a job is not followed again with until_ready (None at once)."""
    job = active_job(slot)
    if job is None:
        return None
    if until_ready and st.session_state.get(f"_ready_{slot}") == str(job.job_dir):
        return None
    holder = st.empty()
    # a job followed twice in one script run (until ready, then to its end) has a button in each place
    ready_seen = st.session_state.get(f"_ready_{slot}") == str(job.job_dir)
    key = f"cancel_{slot}" + ("_rest" if ready_seen and not until_ready else "")
    if holder.button(f"Cancel the {what}", key=key, icon=":material/cancel:"):
        outcome = worker.cancel(job)
    else:
        bar = st.progress(0.0, text=f"{what}: starting the worker ...")
        shown = None
        while (outcome := worker.poll(job)) is None:
            early = worker.ready(job) if until_ready else None
            if early is not None:
                holder.empty()
                bar.empty()
                st.session_state[f"_ready_{slot}"] = str(job.job_dir)
                return {"status": "ok", "result": early, "ready": True, "wall_s": job.elapsed_s()}
            frac, text = worker.progress(job)
            now = (min(max(frac, 0.0), 1.0), f"{what}: {text} ({job.elapsed_s():.0f} s)")
            # a message to the browser only when the bar changes (redrawing it at most every 0.5 s
            # saved only 8 of 156 messages per Run)
            if now != shown:
                bar.progress(*now)
                shown = now
            time.sleep(POLL_S)
        bar.empty()
    holder.empty()
    st.session_state.pop(f"_job_{slot}", None)
    outcome["wall_s"] = job.elapsed_s()
    worker.cleanup(job, log_errors=outcome.get("status") not in ("ok", "cancelled"))
    st.session_state[f"_outcome_{slot}"] = outcome
    if until_ready and outcome.get("status") == "ok" and st.session_state.get(f"_ready_{slot}") == str(job.job_dir):
        return None  # its main result was shown already; the caller that follows it to the end gets this
    return outcome


def keep_spare_worker() -> None:
    """A pre-started worker for this server's next replay (appkit.worker.ensure_spare)."""
    worker.ensure_spare(data.SESSIONS_ROOT)


def last_outcome(slot: str) -> dict | None:
    return st.session_state.get(f"_outcome_{slot}")


def show_failure(outcome: dict, what: str) -> bool:
    """An error/warning box for a job that did not finish; True if it did not."""
    status = outcome.get("status")
    if status == "ok":
        return False
    if status == "restart":
        st.warning(f"The {what} {outcome.get('message', '')}.")
    elif status == "cancelled":
        st.warning(f"The {what} was cancelled ({outcome.get('message', '')}). Nothing was saved.")
    elif status in ("memory", "time", "killed"):
        st.error(f"The {what} {outcome['message']}. The server and other sessions are not affected.")
    else:
        st.error(outcome.get("message") or f"The {what} failed.")
    return True
