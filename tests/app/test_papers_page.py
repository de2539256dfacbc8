"""The Papers page (AppTest): it reads the committed study runs, says plainly which are missing,
and its "Open in Planner" fills the Planner with the paper's setting."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from appkit.uploads import md, md_code
from planner.studies import STUDIES, common
from tests.helpers import pictures


@pytest.fixture
def papers_app(summit_db, open_app, tmp_path_factory):
    d = tmp_path_factory.mktemp("papersdb")
    shutil.copy(summit_db, d / "planner.duckdb")
    return lambda: open_app(d / "planner.duckdb", "papers", timeout_s=120)


def test_papers_page_opens_on_the_five_papers_verdicts_then_one_paper_at_a_time_kept_in_the_url(papers_app):
    """The overview first: one row per paper with its verdict counts (docs.verdict_counts) and policy; a
    paper's view draws that paper alone; the view is in the URL (a link opens it; an unknown one is
    ignored with a note)."""
    from appkit.tables import md_table_rows
    from planner.studies.docs import TITLES, explained_gaps, verdict_counts

    at = papers_app()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["view"] in ("overview", ["overview"]) and not at.subheader
    (table,) = [t for m in at.markdown if (t := md_table_rows(m.value))]
    assert [r["paper"] for r in table] == [TITLES[n] for n in STUDIES]
    for r, name in zip(table, STUDIES):
        if common.json_path(name).exists():
            c = verdict_counts(json.loads(common.json_path(name).read_text()))
            assert (r["reproduced"], r["partly"], r["not"]) == (str(c["yes"]), str(c["partly"]), str(c["no"]))
            assert r["headlines"] == str(c["yes"] + c["partly"] + c["no"])
            res = json.loads(common.json_path(name).read_text())
            assert r["gaps explained"] == "{} of {}".format(*explained_gaps(res))
    at.button_group(key="papers_view").set_value("modelarts").run()
    assert [s.value for s in at.subheader] == ["ModelArts"] and at.query_params["view"] in ("modelarts", ["modelarts"])
    # one claims table (the experiments' tables sit in the rows' expanders)
    assert len([t for m in at.markdown if (t := md_table_rows(m.value)) and "claim" in t[0]]) == 1
    at.query_params.update({"view": "elan"})  # a link or a reload names another paper
    at.run()
    assert [s.value for s in at.subheader] == ["Elan"]
    at.query_params.update({"view": "nature"})
    at.run()
    assert any("view='nature' ignored" in w.value for w in at.warning) and [s.value for s in at.subheader] == ["Elan"]


def test_papers_page_shows_committed_runs_and_says_which_are_missing(papers_app):
    at = papers_app()
    at.button_group(key="papers_view").set_value("all").run()  # all five papers at once
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Papers"
    subheaders = [s.value for s in at.subheader]
    assert subheaders == ["BFTrainer", "ModelArts", "IBM", "Optimus", "Elan"]
    committed = [n for n in STUDIES if common.json_path(n).exists()]
    from appkit.tables import md_table_rows

    # the claims tables (Markdown tables, appkit.tables); each row's experiments are a table of their own
    tables = [t for m in at.markdown if (t := md_table_rows(m.value)) and "claim" in t[0]]
    assert len(tables) == len(committed)
    missing = [i.value for i in at.info]
    assert len(missing) == len(STUDIES) - len(committed)
    assert all("No full run of this study is committed yet" in m for m in missing)
    for table, name in zip(tables, committed):
        df = pd.DataFrame(table)
        res = json.loads(common.json_path(name).read_text())
        assert list(df.columns) == ["claim", "paper", "ours", "reproduced", "why", "metric", "paper's setting",
                                    "our setting"]
        # every text drawn inert (md_table escapes Markdown), so `p*k*0.8^log2(k)` keeps its asterisks
        assert list(df["claim"]) == [r["claim"] for r in res["rows"]]
        # a calibration row (a fitted setting checked, not a headline) says so in place of a bare verdict
        assert list(df["reproduced"]) == [f"calibration (holds: {r['reproduced']})" if r.get("kind") == "calibration"
                                          else r["reproduced"] for r in res["rows"]]
        for cell, r in zip(df["why"], res["rows"]):  # the whole reason, or its start and a pointer to it
            assert cell == r["why"] or (cell.endswith(" ... (in full below the table)")
                                        and r["why"].startswith(cell.split(" ... (in full")[0]))
        if name == "modelarts":
            assert any("p*k*0.8^log2(k)" in c for c in df["our setting"])
    # every reason in full, in its row's expander (code spans drawn as code, the rest inert)
    full = "\n".join(m.value for m in at.markdown)
    if any(r.get("kind") == "calibration" for r in json.loads(common.json_path("modelarts").read_text())["rows"]):
        assert "(1 calibration row not counted)" in full  # and left out of the counts (docs.verdict_counts)
    rows = [r for name in committed for r in json.loads(common.json_path(name).read_text())["rows"]]
    labels = [e.label for e in at.expander]
    assert len(labels) == len(rows)
    for r, label in zip(rows, labels):
        assert "\n\n".join(md_code(t) for t in common.why_paragraphs(r["why"])) in full, r["claim"]
        assert md(f"{r['claim']} — {common.verdict_label(r)} (paper ") in label, label
    # a row's experiments: a summary sentence, a picture and a table, the one that closes most first
    exp_tables = [t for m in at.markdown if (t := md_table_rows(m.value)) and "#" in t[0]]
    with_exps = [r for r in rows if r.get("experiments")]
    pics = pictures(at)
    assert len(exp_tables) == len(with_exps) == len(pics)
    for r, t in zip(with_exps, exp_tables):
        ranked = sorted(r["experiments"], key=lambda e: -e["closes"])
        assert [row["one change from our setting"] for row in t] == [e["change"] for e in ranked]
        assert [int(row["closes (% of the gap)"]) for row in t] == [round(100 * e["closes"]) for e in ranked]
        assert common.experiments_summary(r) in full
    for r, pic in zip(with_exps, pics):  # one bar per experiment, its value printed
        assert pic.count("<title>") == len(r["experiments"]) + 1  # and the shaded band's
        for e in r["experiments"]:
            assert f">{round(100 * e['closes'])} %</text>" in pic


def test_open_in_planner_carries_the_papers_setting(papers_app):
    from planner.studies import bftrainer

    assert common.json_path("bftrainer").exists()  # the committed full run
    from appkit import state

    at = papers_app()
    at.button_group(key="papers_view").set_value("bftrainer").run()
    # knobs left from an earlier paper's link (IBM's drop mode and admission) do not stay set
    at.session_state["scenario"] = dict(state.DEFAULTS, drop=True, admission="min-fits", batch_choice="random")
    at.button(key="papers_open_bftrainer").click().run()
    assert not at.exception, [e.value for e in at.exception]
    sc = at.session_state["scenario"]
    for k in ("log", "pool_size", "allocator", "baseline", "tfwd", "pj_max", "workload"):
        assert sc[k] == bftrainer.PLANNER[k], k
    assert (sc["drop"], sc["admission"], sc["batch_choice"]) == (False, "fcfs", "elastic")
    assert float(sc["hours"]) == 168.0


def test_open_in_planner_carries_modelarts_cadence_and_constraint_15(papers_app):
    """ModelArts' link fills the Planner's decision cadence (every 5 min) and constraint (15) (URL fields
    with widgets of their own); the Planner's URL then carries them, so a reload keeps them."""
    from planner.studies import modelarts

    at = papers_app()
    at.button_group(key="papers_view").set_value("modelarts").run()
    at.button(key="papers_open_modelarts").click().run()
    assert not at.exception, [e.value for e in at.exception]
    sc = at.session_state["scenario"]
    assert (sc["cadence"], float(sc["step_min"]), sc["min_every_step"]) == ("interval", modelarts.STEP_MIN, True)
    assert (sc["allocator"], sc["baseline"], float(sc["rup"]), float(sc["rdw"])) == ("horizon-milp", "greedy", 0, 0)
    at.switch_page("app_pages/planner.py").run()  # the Planner draws its widgets from the scenario
    assert at.selectbox(key="pl_cadence").value == "interval" and at.number_input(key="pl_step_min").value == 5.0
    assert at.checkbox(key="pl_min_every_step").value is True
    assert at.query_params["cadence"] in ("interval", ["interval"])
    assert at.query_params["min_every_step"] in ("True", ["True"])


def test_every_papers_planner_link_is_planner_fields_with_the_papers_baseline():
    """Open in Planner keeps only the Planner's URL fields (appkit.state.open_in_planner): a key that is not
    one would be dropped without a word; each value is one the field accepts; and each paper is compared
    against its own baseline, not the Planner's default equal share where the paper names another."""
    from appkit import state
    from planner.studies import module

    baselines = {"bftrainer": "equal-share", "modelarts": "greedy", "optimus": "drf", "elan": "static"}
    for name in STUDIES:
        link = module(name).PLANNER
        assert set(link) <= set(state.FIELDS), (name, set(link) - set(state.FIELDS))
        sc, notes = state.scenario_from_params(state.scenario_to_params(dict(state.DEFAULTS, **link)))
        assert not notes, (name, notes)  # every value one its field accepts (bounds, choices)
        assert {k: sc[k] for k in link} == link, name
        if name in baselines:
            assert link.get("baseline") == baselines[name], name
    # IBM's Random-BS is no allocator the Planner can compare against: its caption says what the run is and is not
    note = module("ibm").PLANNER_NOTE
    assert "dp against equal share" in note and "nor its Random-BS baseline" in note
