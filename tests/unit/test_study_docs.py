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
