"""The docs' study tables are what the committed runs give (planner.studies.docs), and the pieces
of the BFTrainer and ModelArts studies that the tables rest on, computed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.studies import bftrainer, common, docs, modelarts


def test_committed_docs_equal_what_the_generator_makes_from_the_committed_json():
    stale = [rel for rel, (cur, new) in docs.expected().items() if cur != new]
    assert not stale, f"run python -m planner.studies.docs: {stale} differ from docs/studies/*.json"


def test_every_study_has_its_table_block_in_papers_md():
    text = (common.ROOT / "docs" / "papers.md").read_text()
    for name in ("bftrainer", "modelarts", "ibm", "optimus", "elan"):
        assert f"<!-- study:{name}:table:begin -->" in text and f"<!-- study:{name}:table:end -->" in text


def test_render_fills_a_block_and_says_when_a_run_is_missing():
    res = {"paper": "modelarts", "quick": False, "cut": "", "rule": "r",
           "rows": [common.row("c", "m", 1.0, "ps", 2.0, "s", "partly", "because")]}
    text = ("a\n<!-- study:modelarts:table:begin -->\nold\n<!-- study:modelarts:table:end -->\n"
            "<!-- study:ibm:table:begin -->\n<!-- study:ibm:table:end -->\n")
    out = docs.render(text, {"modelarts": res})
    assert "old" not in out and "| c | m | 1 | ps | 2 | s | partly | Because |" in out
    assert "0 reproduced, 1 partly, 0 not" in out
    assert "No full run of `ibm` is committed yet" in out
    assert docs.render(out, {"modelarts": res}) == out  # idempotent


def test_extra_jobs_is_fig_11s_count_at_greedys_100th_completion():
    greedy = [float(i) for i in range(1, 151)]          # greedy's 100th completion at t = 100
    other = [0.5 * i for i in range(1, 301)]            # 200 completions by t = 100
    assert modelarts.extra_jobs(greedy, other) == 100.0
    assert modelarts.extra_jobs(greedy, greedy) == 0.0
    assert modelarts.extra_jobs(greedy[:99], other) is None  # greedy never reaches 100


def test_the_modelarts_setting_has_the_papers_job_statistics():
    s = modelarts.job_stats()
    assert s["jobs"] == 447 and s["all_jobs"] == 1252
    assert 220 <= s["mean_training_min"] <= 245        # paper: 232.6 min
    assert s["top5_demand_share"] < 0.5                 # no handful of jobs holds most of the demand
    assert abs(s["all_jobs_short_share"] - 0.64) < 0.01  # paper: 64 % shorter than 5 minutes
    specs = modelarts.jobs("base")
    assert all(sp.nmin == 1 and sp.nmax == 16 and sp.meta["logged_s"] >= 300 for sp in specs)
    assert max(sp.submit_s for sp in specs) == pytest.approx(modelarts.CAL_SPAN_H * 3600)


def test_harsh_marks_the_papers_shares_and_hangs_within_five_minutes():
    specs = modelarts.jobs("base")
    h = modelarts.harsh(specs, seed=0)
    bugs = [s for s in h if "hang_at_frac" in s.meta]
    kills = [s for s in h if "kill_at_frac" in s.meta]
    noisy = [s for s in h if s.meta["eta_factor"] != 1.0]
    assert 0.10 < len(bugs) / len(h) < 0.20 and 0.06 < len(kills) / len(h) < 0.14
    assert 0.68 < len(noisy) / len(h) < 0.82 and all(0.9 <= s.meta["eta_factor"] <= 1.1 for s in h)
    # the hang comes within 5 minutes of the job's logged run
    assert all(s.meta["hang_at_frac"] * s.meta["logged_s"] <= 300.0 + 1e-6 for s in bugs)
    assert modelarts.harsh(specs, seed=0) == h


class _Pool:
    def __init__(self, times, leaves):
        self.times, self.leaves = np.asarray(times, float), [np.arange(n) for n in leaves]


def test_fig_7a_readings_on_a_hand_made_pool():
    # events at 0, 100, 150, 400; nodes leave at 150 and 400
    pool = _Pool([0, 100, 150, 400], [0, 0, 1, 2])
    s = bftrainer.preemption_shares(pool, 60.0)
    # events followed by a leave within 60 s: only the one at 100 (leave at 150): 1 of 4
    assert s["leaves_after_event"] == pytest.approx(0.25)
    # gaps 100, 50, 250: one of three within 60 s
    assert s["any_after_event"] == pytest.approx(1 / 3)
    # the leaves at 150 (50 s after 100) and 400 (250 s after 150): one of two within 60 s
    assert s["preemptions_within"] == pytest.approx(0.5)


def test_replay_preemptions_within_counts_from_the_decision_before():
    dec = pd.DataFrame({"t_s": [0.0, 100.0, 150.0, 400.0]})
    pre = pd.DataFrame({"t_s": [150.0, 400.0, 400.0]})
    assert bftrainer.replay_preemptions_within(dec, pre, 60.0) == pytest.approx(0.5)
    assert bftrainer.replay_preemptions_within(dec, pre.iloc[:0], 60.0) is None


def _cell(pool, every=1, variant="base", extra=1.0, mean=0.05, mx=0.5, over=0, queue=-20.0):
    return dict(variant=variant, pool=pool, every=every, greedy_queue_min=7.0, horizon_queue_min=5.0,
                queue_change_pct=queue, total_change_pct=-10.0, extra_jobs=extra, decisions=100,
                decision_mean_s=mean, decision_median_s=mean, decision_p95_s=mx, decision_max_s=mx,
                decisions_over_max=over)


def test_modelarts_rules_by_hand():
    # noise/delay (Figs. 13, 15): the paper's range widened by one whole job; the paper's pools for a yes
    assert modelarts._verdict_shift([0.0], 0.6, 2.4, all_pools=False) == "partly"
    assert modelarts._verdict_shift([0.0] * 7, 0.6, 2.4, all_pools=True) == "yes"
    assert modelarts._verdict_shift([-0.5], 0.6, 2.4, all_pools=True) == "no"
    assert modelarts._verdict_shift([], 0.6, 2.4, all_pools=True) == "no"
    # decision time: the 70-node mean against 0.4 s and its max against 2.48 s
    assert modelarts._verdict_decision(0.06, 0.8) == "yes"
    assert modelarts._verdict_decision(0.06, 3.0) == "partly" and modelarts._verdict_decision(0.5, 3.0) == "no"
    # queueing: the same rule whatever the number of pools run
    assert modelarts._verdict_queue(-32.0, any_worse=False, any_lower=True) == "yes"
    assert modelarts._verdict_queue(-10.0, any_worse=False, any_lower=True) == "partly"


def test_modelarts_rows_state_their_pools_and_rules():
    # the decision-time verdict comes from the 70-node decisions, not from slow ones at other pools
    full = [_cell(70), _cell(110), _cell(150, mx=5.0, over=9), _cell(110, variant="eta-noise-10", extra=1.0)]
    rows = {r["claim"]: r for r in modelarts._rows(full, quick=False)}
    dec = next(r for c, r in rows.items() if c.startswith("Decisions take"))
    assert dec["reproduced"] == "yes" and "Rule: yes when at 70 nodes" in dec["why"]
    noise = next(r for c, r in rows.items() if c.startswith("+-10 % ETA noise"))
    assert noise["reproduced"] == "partly" and "110 nodes only" in noise["why"]
    assert "base minus variant" in noise["metric"]
    cal = next(r for r in rows.values() if r.get("kind") == "calibration")
    assert "calibration" in cal["why"].lower()
    # the quick run: one pool standing for 150 stands in for 110 and 70, and says so
    quick = modelarts._rows([_cell(50, every=3, queue=-32.0, extra=0.0)], quick=True)
    at110 = next(r for r in quick if r["claim"] == modelarts.AT110_CLAIMS["base"])
    assert "no pool for 110 nodes" in at110["why"] and "standing for 150" in at110["setting"]
    q = next(r for r in quick if r["claim"].startswith("The optimal allocator always reduces"))
    assert q["reproduced"] == "yes" and "Rule:" in q["why"]
    assert "no pool for 110 or 70 nodes, so the rows about" in modelarts._cut((150,), ("base",), 1)


def test_a_calibration_row_is_shown_as_such_and_not_counted():
    cal = dict(common.row("fit", "m", 7.2, "ps", 7.25, "s", "yes", "fitted"), kind="calibration")
    res = {"paper": "modelarts", "rows": [cal, common.row("c", "m", 1.0, "ps", 2.0, "s", "partly", "b")]}
    assert docs.verdict_counts(res) == {"yes": 0, "partly": 1, "no": 0, "calibration": 1}
    assert "1 headlines: 0 reproduced, 1 partly, 0 not (1 calibration row not counted)" in docs.readme_block(
        {"modelarts": res})
    assert "| calibration (holds: yes) |" in common.markdown_table(res)


def test_a_long_why_is_cut_in_the_table_and_given_in_full_under_its_anchor():
    """docs/papers.md: a why over WHY_CHARS is cut at a sentence end in its table cell with a link to its
    row's section, where the experiments' table (most closing first) and every paragraph of the why are."""
    long_why = "Verdict: yes at 2x. " + "Measured: " + "x" * 300 + ". Not yet explained."
    e = {"key": "a", "change": "A|B", "unit": "x", "before": 1.0, "after": 1.5, "paper": 2.0, "closes": 0.5}
    rows = [common.row("c1", "m", 2.0, "ps", 1.0, "s", "partly", long_why), common.row("c2", "m", 1, "ps", 1, "s",
                                                                                    "yes", "short")]
    rows[0]["experiments"] = [e, dict(e, key="b", change="B", after=1.1, closes=0.1)]
    res = {"paper": "optimus", "rows": rows}
    table = common.markdown_table(res, "optimus")
    assert "| Verdict: yes at 2x. Measured: ... ([in full](#optimus-why-1)) |" in table and "| Short |" in table
    text = common.markdown_reasons("optimus", res)
    assert text.startswith('<a id="optimus-why-1"></a>**1. c1 — partly (paper 2, ours 1)**')
    assert "| 1 | 50 | explains (50-150 %) | 1.00x → 1.50x (paper 2x) | A\\|B |" in text  # a | kept as text
    assert text.index("| 2 | 10 |") > text.index("| 1 | 50 |")
    assert all(p in text for p in common.why_paragraphs(long_why)) and '<a id="optimus-why-2"></a>' in text
    assert f"| {long_why} |" in common.markdown_table(res)  # without a name: the whole why, as before


def test_gaps_explained_count_the_unreproduced_headlines_a_one_change_experiment_explains():
    """explained_gaps: the partly / no headlines (not calibration rows), and those with an experiment that
    closes 50-150 % of the gap; one fitted to the figure or past 150 % explains nothing."""
    def r(verdict, *closes, fitted=False):
        out = common.row("c", "m", 2.0, "ps", 1.0, "s", verdict, "w")
        out["experiments"] = [{"key": str(c), "change": "x", "before": 1.0, "after": 1.0 + c, "paper": 2.0,
                               "closes": c, "fitted": fitted} for c in closes]
        return out

    res = {"rows": [r("yes", 1.0), r("partly", 0.2, 0.6), r("no", 2.0), r("no", 1.0, fitted=True), r("partly"),
                    dict(r("partly", 1.0), kind="calibration")]}
    assert docs.explained_gaps(res) == (1, 4)
    assert docs.gaps_note(res) == "; 1 of 4 gaps explained by a one-change experiment"
    assert docs.gaps_note({"rows": [r("yes")]}) == ""
    assert "2 not (1 calibration row not counted); 1 of 4 gaps explained by a one-change experiment." in \
        docs.readme_block({"optimus": res})
