"""Papers: each paper's headline claims beside ours, from the committed study runs
(docs/studies/NAME.json, written by `planner study NAME --json --out ...`); nothing runs here."""

import streamlit as st

from appkit import state
from appkit.charts import svg_gap_bars
from appkit.tables import md_table, scroll_wide
from appkit.uploads import md, md_code
from planner.studies import STUDIES, module
from planner.studies import common as studies
from planner.studies.docs import TITLES, calibrations_note, explained_gaps, gaps_note, verdict_counts

st.title("Papers")
st.caption("What each paper claims, in the paper's own setting, beside what the planner measures in the closest "
           "setting the shipped data allows. Read from the committed full runs under docs/studies/ "
           "(`planner study NAME --json --out docs/studies/NAME.json` writes one; docs/papers.md has the same "
           "tables and the reasons).")

LABELS = {"claim": "claim", "metric": "metric", "paper_value": "paper", "paper_setting": "paper's setting",
          "value": "ours", "setting": "our setting", "reproduced": "reproduced", "why": "why"}
# the verdict next to the claim; the settings last
ORDER = ("claim", "paper_value", "value", "reproduced", "why", "metric", "paper_setting", "setting")


# one paper at a time (all five at once was a page of 12,000 px); the overview first: the five papers'
# verdicts at a glance. Kept in the URL as `view` (a reload or a link opens the same paper).
VIEWS = {"overview": "Overview", **{n: TITLES.get(n, n) for n in STUDIES}, "all": "All five"}


def _module(name: str):
    try:
        return module(name)
    except ImportError:  # a study not built yet
        return None


def overview() -> None:
    """The five papers' verdict counts and policies, one row each."""
    rows = []
    for name in STUDIES:
        res, mod = studies.load(name), _module(name)
        c = verdict_counts(res) if res else {}
        rows.append({"paper": TITLES.get(name, name), "headlines": sum(c.get(k, 0) for k in ("yes", "partly", "no"))
                     if res else "-", "reproduced": c.get("yes", "-"), "partly": c.get("partly", "-"),
                     "not": c.get("no", "-"), "gaps explained": "{} of {}".format(*explained_gaps(res)) if res else "-",
                     "calibration rows": c.get("calibration", 0) if res else "-",
                     "policy": ((res or {}).get("rule") or getattr(mod, "RULE", "") or "-")})
    st.markdown(md_table(rows, code_spans=True))
    st.caption("Gaps explained: of the headlines not reproduced (partly or not), those where one change from our "
               f"setting toward the paper's, re-run, closes {studies.EXPLAINS_TEXT} of the gap to the paper's value. "
               "Pick a paper above for its claims, the paper's numbers beside ours, each verdict's rule and the "
               "experiments behind it, and a link that opens the Planner on the paper's setting.")


def reasons(rows: list[dict]) -> None:
    """Each row's reason, one expander per row (a reason runs to thousands of characters): its isolating
    experiments first where it has them (how much of the gap each one change closed, as bars, then as a
    table), then the reason in full, a paragraph per part (its rule, what explains it, what was measured)."""
    st.markdown("**Why, row by row.** Each verdict's reason, and the experiments behind it: one change each "
                "from our setting toward the paper's, re-run, and how much of the gap between our value and the "
                f"paper's it closed ({studies.EXPLAINS_TEXT} explains it).")
    for i, r in enumerate(rows, 1):
        with st.expander(md(studies.row_heading(i, r))):
            es = studies.ranked_experiments(r)
            if es:
                st.markdown(studies.experiments_summary(r))
                items = [(f"{n}. {e['change']}", e["closes"], studies.reading_of(e), e["change"])
                         for n, e in enumerate(es, 1)]
                st.image(svg_gap_bars(items, "How much of the gap each one change closes", studies.READINGS,
                                      band=studies.EXPLAINS), width="stretch")
                st.markdown(md_table(studies.experiment_rows(r), code_spans=True))
            st.markdown("\n\n".join(md_code(t) for t in studies.why_paragraphs(r["why"])))


def paper(name: str) -> None:
    """One paper: its verdicts, its policy, the claims table, the reasons in full, the Planner link."""
    mod = _module(name)
    st.subheader(TITLES.get(name, name), anchor=name)
    if getattr(mod, "PAPER", ""):
        st.caption(mod.PAPER)
    res = studies.load(name)
    if res is None:
        st.info(f"No full run of this study is committed yet (docs/studies/{name}.json). "
                f"`planner study {name} --json --out docs/studies/{name}.json` runs it.")
        return
    c = verdict_counts(res)
    rule = res.get("rule") or getattr(mod, "RULE", "")
    st.markdown(f"**{c['yes']}** reproduced, **{c['partly']}** partly, **{c['no']}** not"
                + calibrations_note(c) + gaps_note(res)
                + (" — a quick run" if res.get("quick") else "")
                + (f" (this run leaves out: {res['cut']})" if res.get("cut") else "") + ".")
    if rule:
        st.markdown(f"Policy: {md_code(rule)}.")
    cut = " ... (in full below the table)"
    rows = [{LABELS[k]: (studies.verdict_label(r) if k == "reproduced" else
                         studies.value_text(studies.short_why(r[k], cut) if k == "why" else r[k])) for k in ORDER}
            for r in res["rows"]]
    # a static Markdown table (long claims and reasons wrap): no table widget, whose code (Arrow's,
    # 1.0 MB) a first load would otherwise fetch and compile (appkit.tables)
    st.markdown(md_table(rows, code_spans=True))
    reasons(res["rows"])
    link = getattr(mod, "PLANNER", None)
    if link:
        cols = st.columns([1, 4])
        if cols[0].button("Open in Planner", key=f"papers_open_{name}"):
            # a paper's setting can take minutes: Run starts it; over the defaults, not the session's knobs
            state.open_in_planner(link, autorun=False, fresh=True)
        cols[1].caption("Opens the Planner on " + getattr(mod, "PLANNER_NOTE", "the paper's setting")
                        + "; press Run there.")


scroll_wide()  # the tables below scroll sideways in a narrow window
view = state.pick_view(VIEWS, "papers_view", "overview", "Paper",
                       "The five papers' verdicts at a glance (Overview), one paper's claims and reasons, or all "
                       "five. In the URL: a link opens it.")
if view == "overview":
    overview()
for name in STUDIES if view == "all" else [view] if view in STUDIES else []:
    paper(name)
