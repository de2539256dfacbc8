"""Papers: each paper's headline claims beside ours, from the committed study runs
(docs/studies/NAME.json, written by `planner study NAME --json --out ...`); nothing runs here."""

import streamlit as st

from appkit import state
from appkit.charts import fmt_num
from appkit.tables import md_table, scroll_wide
from appkit.uploads import md
from planner.studies import STUDIES, module
from planner.studies.common import json_path, load, verdict_label
from planner.studies.docs import TITLES, calibrations_note, verdict_counts

st.title("Papers")
st.caption("What each paper claims, in the paper's own setting, beside what the planner measures in the closest "
           "setting the shipped data allows. Read from the committed full runs under docs/studies/ "
           "(`planner study NAME --json --out docs/studies/NAME.json` writes one; docs/papers.md has the same "
           "tables and the reasons).")

LABELS = {"claim": "claim", "metric": "metric", "paper_value": "paper", "paper_setting": "paper's setting",
          "value": "ours", "setting": "our setting", "reproduced": "reproduced", "why": "why"}
# the verdict next to the claim; the settings last
ORDER = ("claim", "paper_value", "value", "reproduced", "why", "metric", "paper_setting", "setting")
WHY_CHARS = 240  # a table cell's share of a row's "why"; the whole text is in the expander below


def short_why(text: str) -> str:
    """The start of a row's "why" for the table cell: whole up to WHY_CHARS, else cut at the last
    sentence or clause end before that, marked as cut (the full text is listed below the table)."""
    if len(text) <= WHY_CHARS:
        return text
    head = text[:WHY_CHARS]
    cut = max(head.rfind(". "), head.rfind("; "), head.rfind(": "))
    return (head[:cut] if cut > 60 else head.rsplit(" ", 1)[0]) + " ... (in full below the table)"


def _cell(v) -> str:
    """A value as table text (md_table makes it Markdown-inert: a leading '>' stays text,
    `p*k*0.8^log2(k)` keeps its asterisks)."""
    return "-" if v is None else (v if isinstance(v, str) else fmt_num(v, digits=4))  # 1,338,000 (not 1.338e+06)


scroll_wide()  # the tables below scroll sideways in a narrow window
for name in STUDIES:
    try:
        mod = module(name)
    except ImportError:  # a study not built yet
        mod = None
    st.subheader(TITLES.get(name, name), anchor=name)
    if getattr(mod, "PAPER", ""):
        st.caption(mod.PAPER)
    res = load(name) if json_path(name).exists() else None
    if res is None:
        st.info(f"No full run of this study is committed yet (docs/studies/{name}.json). "
                f"`planner study {name} --json --out docs/studies/{name}.json` runs it.")
        continue
    c = verdict_counts(res)
    rule = res.get("rule") or getattr(mod, "RULE", "")
    st.markdown(f"**{c['yes']}** reproduced, **{c['partly']}** partly, **{c['no']}** not"
                + calibrations_note(c)
                + (" — a quick run" if res.get("quick") else "")
                + (f" (this run leaves out: {res['cut']})" if res.get("cut") else "") + ".")
    if rule:
        st.markdown(f"Policy: {md(rule)}.")
    rows = [{LABELS[k]: (verdict_label(r) if k == "reproduced" else _cell(short_why(r[k]) if k == "why" else r[k]))
             for k in ORDER} for r in res["rows"]]
    # a static Markdown table (long claims and reasons wrap): no table widget, whose code (Arrow's,
    # 1.0 MB) a first load would otherwise fetch and compile (appkit.tables)
    st.markdown(md_table(rows))
    long = [r for r in res["rows"] if len(r["why"]) > WHY_CHARS]
    if long:
        with st.expander("Why, in full: the experiments behind each verdict"):
            st.markdown("\n".join(f"- **{md(r['claim'])}** ({r['reproduced']}): {md(r['why'])}" for r in long))
    link = getattr(mod, "PLANNER", None)
    if link:
        cols = st.columns([1, 4])
        if cols[0].button("Open in Planner", key=f"papers_open_{name}"):
            # a paper's setting can take minutes: Run starts it; over the defaults, not the session's knobs
            state.open_in_planner(link, autorun=False, fresh=True)
        cols[1].caption("Opens the Planner on " + getattr(mod, "PLANNER_NOTE", "the paper's setting")
                        + "; press Run there.")
