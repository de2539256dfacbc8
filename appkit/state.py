"""The Planner scenario as page state: defaults, URL query parameters, session state.

The scenario is a plain dict whose keys are the `planner simulate` option names with dashes
as underscores (the fields of planner.scenario.record.Scenario), plus `baseline`, the allocator the
Planner page compares against. Pure functions convert it to and from URL query parameters,
so a link reproduces a run; the few Streamlit helpers at the bottom keep it in
st.session_state (which outlives page switches, unlike widget state) and in st.query_params.
"""

from __future__ import annotations

from collections.abc import Mapping

from planner.errors import InputError
from planner.scenario import schema
from planner.scenario.schema import POOLS  # noqa: F401  (the pages' radio options)
from planner.times import format_iso, parse_time


def _baseline_choices() -> tuple[str, ...]:
    from planner import allocators

    return ("none", *allocators.names())


# The page's one field beyond the scenario: the allocator it compares against.
BASELINE = schema.Field("baseline", str, "equal-share", "allocator the Planner compares against (none: no baseline)",
                        choices=_baseline_choices, url=True)

# name -> planner.scenario.schema.Field: the fields a link carries, in URL order (the scenario's
# URL fields, with the baseline after the allocator). Types, bounds and choices come from the schema.
FIELDS: dict[str, schema.Field] = {}
for _f in schema.url_fields():
    FIELDS[_f.name] = _f
    if _f.name == "allocator":
        FIELDS[BASELINE.name] = BASELINE
# The page opens on BFTrainer's replay window of the shipped Summit log; every other field at
# its schema default.
DEFAULTS: dict[str, object] = {k: schema.BFTRAINER_REPLAY.get(k, f.default) for k, f in FIELDS.items()}
MAX_URL_TEXT = 200  # longest text value taken from a URL


def widget_bounds(name: str) -> dict:
    """min_value/max_value for a number widget of a field (the schema's bounds)."""
    f = FIELDS[name]
    conv = f.kind
    return {k: conv(v) for k, v in (("min_value", f.lo), ("max_value", f.hi)) if v is not None}


def scenario_from_widgets(values: Mapping, prefix: str) -> dict:
    """The page's scenario dict from its widgets' state (widget key = prefix + field name)."""
    return {k: values[prefix + k] for k in FIELDS if prefix + k in values}


def _coerce(name: str, raw) -> object:
    """One URL value -> the field's value (ValueError/InputError with the reason)."""
    f = FIELDS[name]
    if isinstance(raw, (list, tuple)):
        raw = raw[-1] if raw else None
    if raw is None:
        raise ValueError("missing")
    text = str(raw).strip()
    if not text or len(text) > MAX_URL_TEXT:
        raise ValueError("empty or too long")
    if f is BASELINE:
        if text not in BASELINE.allowed():
            raise ValueError(f"choose one of {', '.join(BASELINE.allowed())}")
        return text
    value = schema.check(name, text)
    if f.time:  # one form in the URL and the widgets: naive UTC ISO
        value = iso_utc(parse_time(value, field=name))
    return value


def scenario_from_params(params: Mapping, base: Mapping | None = None) -> tuple[dict, list[str]]:
    """Scenario from URL query parameters over `base` (default DEFAULTS).

    Unknown keys are ignored; a bad value keeps the base value and adds a one-line note to
    the returned list (the page shows them as warnings).
    """
    sc = dict(DEFAULTS if base is None else base)
    notes = []
    for name in FIELDS:
        if name not in params:
            continue
        try:
            sc[name] = _coerce(name, params[name])
        except InputError as e:
            notes.append(f"URL parameter {name}={schema.short_repr(params[name])} ignored: {str(e).split(': ', 1)[-1]}")
        except (ValueError, TypeError) as e:
            notes.append(f"URL parameter {name}={schema.short_repr(params[name])} ignored: {e}")
    return sc, notes


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:g}" if value == value else "nan"
    return str(value)


def scenario_to_params(sc: Mapping) -> dict[str, str]:
    """Query parameters for a scenario (only its known fields, as strings)."""
    return {k: _fmt(sc[k]) for k in FIELDS if k in sc and sc[k] is not None}


def same_scenario(a: Mapping, b: Mapping) -> bool:
    return scenario_to_params(a) == scenario_to_params(b)


def iso_utc(t_s: float) -> str:
    """Epoch seconds -> 'YYYY-MM-DDTHH:MM:SS' (UTC, the form the URL and the widgets use)."""
    return format_iso(t_s, zone="", timespec="auto")


# The shared time zoom of a page's time charts (appkit.zoom), kept in the URL as Grafana keeps its range:
# `from` and `to`, UTC in the form of `start` (epoch seconds and Grafana's epoch milliseconds accepted).
# Not scenario fields: a zoom changes what is shown, not what is run (nor a result's id).
ZOOM_PARAMS = ("from", "to")
_EPOCH_MS = 1e11  # a number above this is Grafana's epoch milliseconds (1e11 s is the year 5138)


def zoom_to_params(a_s: float, b_s: float) -> dict[str, str]:
    """The URL fields of a zoom from a_s to b_s (epoch seconds; whole seconds in the URL)."""
    return {"from": iso_utc(round(float(a_s))), "to": iso_utc(round(float(b_s)))}


def zoom_from_params(params: Mapping, lo_s: float, hi_s: float) -> tuple[tuple[float, float] | None, list[str]]:
    """The zoom a link's `from`/`to` name, checked against the window lo_s..hi_s (epoch seconds):
    (a_s, b_s) or None, and one-line notes for what was ignored (the page shows them as warnings)."""
    given = {k: params[k] for k in ZOOM_PARAMS if params.get(k) not in (None, "", [])}
    if not given:
        return None, []
    shown = ", ".join(f"{k}={schema.short_repr(v)}" for k, v in given.items())
    if len(given) < 2:
        return None, [f"URL parameter {shown} ignored: a zoom needs both from and to."]
    out = []
    for k in ZOOM_PARAMS:
        raw = given[k][-1] if isinstance(given[k], (list, tuple)) else given[k]
        text = str(raw).strip()
        try:
            if len(text) <= 20 and text.replace(".", "", 1).isdigit() and float(text) > _EPOCH_MS:
                text = f"{float(text) / 1000.0:.3f}"
            out.append(parse_time(text, field=k))
        except InputError as e:
            return None, [f"URL parameter {k}={schema.short_repr(raw)} ignored: {str(e).split(': ', 1)[-1]}"]
    a, b = out
    lo, hi = float(lo_s), float(hi_s)
    if not b > a:
        return None, [f"URL parameters {shown} ignored: from must be before to."]
    if a < lo - 1.0 or b > hi + 1.0:  # 1 s: the URL's times are whole seconds
        return None, [f"URL parameters {shown} ignored: the range is outside the window shown "
                      f"({iso_utc(lo)} .. {iso_utc(hi)} UTC)."]
    return (max(a, lo), min(b, hi)), []


# The Idle page's view (appkit.idle_views.pick_view), kept in the URL as `view`: its sections are drawn one
# view at a time (a page of ten figures took seconds to draw); "all" draws every section. Not a scenario field.
VIEW_PARAM = "view"
IDLE_VIEWS = {"overview": "Overview", "fragments": "Fragments and T_fwd", "periods": "By day, week, month",
              "where": "When and where", "logs": "Logs side by side", "numbers": "The numbers",
              "survival": "Survival and calibration", "all": "Everything"}


def view_from_params(params: Mapping, views: Mapping = IDLE_VIEWS) -> tuple[str | None, list[str]]:
    """The view a link's `view` names (None when it names none) and a one-line note when it names an
    unknown one (then the page keeps its own)."""
    raw = params.get(VIEW_PARAM)
    if raw in (None, "", []):
        return None, []
    text = str(raw[-1] if isinstance(raw, (list, tuple)) else raw).strip().lower()
    if text in views:
        return text, []
    return None, [f"URL parameter {VIEW_PARAM}={schema.short_repr(raw)} ignored: one of {', '.join(views)}."]


def log_default_pool(nodes: int) -> int:
    """A log's default pool size: the page default (BFTrainer's 1024), at most the log's nodes."""
    return int(min(int(DEFAULTS["pool_size"]), int(nodes)))


def adapt_to_log(sc: Mapping, log: str, start_s: float, end_s: float, nodes: int, *,
                 default_start_s: float | None = None, prev_nodes: int | None = None,
                 notes: list | None = None, missing: tuple = ()) -> dict:
    """The scenario switched to (or checked against) `log`; every value that does not fit the log
    goes back to the log's default, with a one-line note appended to `notes`:

    - a window start outside the log (or named in `missing`) -> the log's default start
      (default_start_s: after a job log's warm-up, planner.idle.split; else the log's start);
    - the window clipped to the log's span (`missing`: the page default, clipped);
    - a log pool larger than the log, or still at the previous log's default (prev_nodes: that
      log's size; a pool size is never carried over from a smaller log unasked), or `missing`
      -> the log's default pool size (log_default_pool)."""
    out = dict(sc)
    out["log"] = log
    notes = [] if notes is None else notes
    lo = float(start_s)
    d0 = float(default_start_s) if default_start_s is not None and lo <= float(default_start_s) < float(end_s) else lo
    span_h = max((float(end_s) - lo) / 3600.0, 0.05)
    try:
        cur_s = parse_time(sc.get("start")) if "start" not in missing else None
    except InputError:
        cur_s = None
    if cur_s is None or not (lo <= cur_s < float(end_s)):
        if cur_s is not None or (sc.get("start") and "start" not in missing):
            notes.append(f"Window start {sc.get('start')} is outside {log} ({iso_utc(lo)} .. {iso_utc(end_s)}): "
                         f"reset to {iso_utc(d0)}" + (" (after the log's warm-up)." if d0 > lo else "."))
        out["start"] = iso_utc(d0)
        cur_s = d0
    want = float(DEFAULTS["hours"]) if "hours" in missing else float(out.get("hours", DEFAULTS["hours"]))
    fit = float(min(want, max((float(end_s) - cur_s) / 3600.0, 0.05), span_h))
    if fit < want and "hours" not in missing:
        notes.append(f"Horizon {want:g} h runs past the end of {log}: clipped to {fit:.4g} h.")
    out["hours"] = fit
    if out.get("pool", "log") == "log":
        k_def = log_default_pool(nodes)
        try:
            k = int(out.get("pool_size", k_def))
        except (TypeError, ValueError):
            k = -1
        prev_def = log_default_pool(prev_nodes) if prev_nodes else None
        if "pool_size" in missing:
            out["pool_size"] = k_def
        elif k < 1 or k > int(nodes):
            notes.append(f"Pool size {k} does not fit {log} ({int(nodes):,} nodes): reset to its default {k_def}.")
            out["pool_size"] = k_def
        elif prev_def is not None and k == prev_def and k != k_def:
            notes.append(f"Pool size {k} was the previous log's default: set to {log}'s default {k_def}.")
            out["pool_size"] = k_def
        else:
            out["pool_size"] = k
    return out


# ---------------------------------------------------------------------------
# Streamlit side (imported lazily so the pure part stays testable without a server)

SCENARIO_KEY = "scenario"
TZ_PARAM = "tz"  # the Idle page's clock (appkit.idle_views.time_zone_select): an IANA time zone name
# the Idle overview's charts as Plotly figures (appkit.idle_views.interactive_toggle): `charts=interactive`;
# absent, the page keeps the session's choice (pictures by default)
CHARTS_PARAM, CHARTS_ON = "charts", "interactive"
# kept when the scenario rewrites the URL
KEEP_PARAMS = ("ws", "result", *ZOOM_PARAMS, VIEW_PARAM, TZ_PARAM, CHARTS_PARAM)
URL_SEEN_KEY = "_scenario_url_seen"


LOG_NOTES_KEY = "_log_notes"
FILL_FROM_LOG = ("start", "hours", "pool_size")  # what a link naming a log but not these takes from it


def _log_row(name: str):
    from appkit import data

    logs = data.list_all_logs()
    hit = logs[logs["name"] == name]
    return None if hit.empty else hit.iloc[0]


def fit_to_log(sc: Mapping, log: str, prev_log: str | None = None, missing: tuple = ()) -> dict:
    """adapt_to_log with the log's row (its default start after a warm-up, its size, the previous
    log's size); the notes go to the session for show_log_notes()."""
    import streamlit as st

    row = _log_row(log)
    if row is None:
        return dict(sc)
    prev = _log_row(prev_log) if prev_log and prev_log != log else None
    notes: list[str] = []
    d0 = float(row.get("harvest_start_s", row["start_s"]))
    if log == DEFAULTS["log"]:  # the shipped Summit log opens on BFTrainer's replay window
        d0 = parse_time(DEFAULTS["start"])
    out = adapt_to_log(sc, log, row["start_s"], row["end_s"], int(row["nodes"]), default_start_s=d0,
                       prev_nodes=None if prev is None else int(prev["nodes"]), notes=notes, missing=missing)
    if notes:
        from planner.report.glossary import in_units

        unit = "GPU" if row.get("unit") == "GPU" else "node"  # a GPU trace's notes say GPUs
        st.session_state[LOG_NOTES_KEY] = list(st.session_state.get(LOG_NOTES_KEY) or []) + [
            in_units(n, unit) for n in notes]
    return out


def show_log_notes() -> None:
    """The notes of the last log switch or link (a value reset to the log's default), once."""
    import streamlit as st

    from appkit.uploads import md

    for n in st.session_state.pop(LOG_NOTES_KEY, None) or []:
        st.warning(md(n), icon=":material/restart_alt:")  # quotes user values: Markdown-inert


def current_scenario() -> tuple[dict, list[str]]:
    """The session's scenario; a URL that differs from what the page last wrote wins.

    So a pasted link (or the Compare page's switch) loads its scenario, and a page switch
    that drops the query parameters keeps the session's scenario.
    """
    import streamlit as st

    params = st.query_params.to_dict()
    known = {k: v for k, v in params.items() if k in FIELDS}
    sc = st.session_state.get(SCENARIO_KEY)
    notes: list[str] = []
    if sc is None or (known and known != st.session_state.get(URL_SEEN_KEY)):
        prev_log = None if sc is None else sc.get("log")
        sc, notes = scenario_from_params(known, base=sc)
        if "log" in known or sc is not None:
            # a link naming a log: what it leaves out comes from that log's defaults (never from the
            # previous log), and what it gives must fit the log
            missing = tuple(f for f in FILL_FROM_LOG if f not in known) if "log" in known else ()
            try:
                sc = fit_to_log(sc, sc["log"], prev_log=prev_log, missing=missing)
            except Exception:  # noqa: BLE001  (the log check of appkit.session reports a missing log)
                pass
        st.session_state[URL_SEEN_KEY] = known
        st.session_state[SCENARIO_KEY] = sc
    return dict(sc), notes


def store_scenario(sc: Mapping, write_url: bool = True) -> None:
    """Keep `sc` as the session's scenario and (on the Planner) in the URL."""
    import streamlit as st

    st.session_state[SCENARIO_KEY] = dict(sc)
    if write_url:
        params = scenario_to_params(sc)
        # the workspace token and a result id stay in the URL (appkit.session)
        params.update({k: v for k, v in st.query_params.to_dict().items() if k in KEEP_PARAMS})
        if st.query_params.to_dict() != params:
            st.query_params.from_dict(params)
        st.session_state[URL_SEEN_KEY] = {k: v for k, v in params.items() if k in FIELDS}


def open_in_planner(sc: Mapping, autorun: bool = True, fresh: bool = False) -> None:
    """Switch to the Planner page with scenario `sc` (used by the Compare and Papers pages);
    autorun: run it on arrival (False: the Planner waits for its Run button); fresh: `sc` over the
    defaults, not over the session's scenario (a paper's setting: a knob left from an earlier one,
    e.g. IBM's drop mode, would otherwise stay set)."""
    import streamlit as st

    merged = dict(DEFAULTS if fresh else (st.session_state.get(SCENARIO_KEY) or DEFAULTS))
    merged.update({k: v for k, v in sc.items() if k in FIELDS})
    st.session_state[SCENARIO_KEY] = merged
    params = scenario_to_params(merged)
    st.session_state[URL_SEEN_KEY] = params
    st.session_state["_autorun"] = bool(autorun)
    st.switch_page("app_pages/planner.py", query_params={**params, **{
        k: v for k, v in st.query_params.to_dict().items() if k == "ws"}})


def pick_view(views: Mapping, key: str, default: str, label: str, help_: str) -> str:
    """A page's view (one section drawn at a time), kept in the URL as `view`: a reload or a shared link
    opens the same view, an unknown one is ignored with a note; `views`: name -> label, drawn as a
    segmented control (widget key `key`; the value last read from or written to the URL in
    session_state[view_seen_key(key)])."""
    import streamlit as st

    url_view, notes = view_from_params(st.query_params.to_dict(), views)
    if url_view is not None and url_view != st.session_state.get(view_seen_key(key)):  # a link or a reload
        st.session_state[key] = url_view
    st.session_state.setdefault(key, default)
    view = st.segmented_control(label, list(views), format_func=views.get, key=key, required=True, help=help_)
    view = view if view in views else default
    for n in notes:
        st.warning(n)
    if st.query_params.get(VIEW_PARAM) != view:
        st.query_params[VIEW_PARAM] = view
    st.session_state[view_seen_key(key)] = view
    return view


def view_seen_key(key: str) -> str:
    """The session key holding the `view` a page's pick_view last read from or wrote to the URL."""
    return f"_{key}_url"
