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


def adapt_to_log(sc: Mapping, log: str, start_s: float, end_s: float, nodes: int) -> dict:
    """The scenario switched to `log`: a window start outside the log moves to the log's start,
    the window is clipped to the log's span, the pool size to the log's nodes."""
    out = dict(sc)
    out["log"] = log
    span_h = max((float(end_s) - float(start_s)) / 3600.0, 0.05)
    try:
        cur_s = parse_time(sc.get("start"))
    except InputError:
        cur_s = None
    if cur_s is None or not (start_s <= cur_s < end_s):
        out["start"] = iso_utc(start_s)
        cur_s = float(start_s)
    out["hours"] = float(min(float(out.get("hours", 24.0)), max((float(end_s) - cur_s) / 3600.0, 0.05), span_h))
    if out.get("pool", "log") == "log":
        out["pool_size"] = int(min(int(out.get("pool_size", nodes)), int(nodes)))
    return out


# ---------------------------------------------------------------------------
# Streamlit side (imported lazily so the pure part stays testable without a server)

SCENARIO_KEY = "scenario"
KEEP_PARAMS = ("ws", "result")
URL_SEEN_KEY = "_scenario_url_seen"


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
    if sc is None:
        sc, notes = scenario_from_params(known)
        st.session_state[URL_SEEN_KEY] = known
        st.session_state[SCENARIO_KEY] = sc
    elif known and known != st.session_state.get(URL_SEEN_KEY):
        sc, notes = scenario_from_params(known, base=sc)
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


def open_in_planner(sc: Mapping, autorun: bool = True) -> None:
    """Switch to the Planner page with scenario `sc` (used by the Compare and Papers pages);
    autorun: run it on arrival (False: the Planner waits for its Run button)."""
    import streamlit as st

    merged = dict(st.session_state.get(SCENARIO_KEY) or DEFAULTS)
    merged.update({k: v for k, v in sc.items() if k in FIELDS})
    st.session_state[SCENARIO_KEY] = merged
    params = scenario_to_params(merged)
    st.session_state[URL_SEEN_KEY] = params
    st.session_state["_autorun"] = bool(autorun)
    st.switch_page("app_pages/planner.py", query_params={**params, **{
        k: v for k, v in st.query_params.to_dict().items() if k == "ws"}})
