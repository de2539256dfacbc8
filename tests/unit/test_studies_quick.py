"""`planner study bftrainer|modelarts --quick --json` end to end (slow tier): the result's shape
(the rows of planner.studies.common), what it cut, and a number each verdict rests on."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from planner.studies.common import OPTIONAL_ROW_KEYS, ROW_KEYS, VERDICTS

pytestmark = pytest.mark.slow


def study(name: str, env: dict) -> dict:
    p = subprocess.run([sys.executable, "-m", "planner", "study", name, "--quick", "--json"], env=env,
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)


@pytest.fixture
def env(summit_db, tmp_path):
    db = tmp_path / "planner.duckdb"
    shutil.copy(summit_db, db)
    return {**os.environ, "PLANNER_DB": str(db)}


def check_shape(res: dict, name: str):
    assert res["paper"] == name and res["quick"] is True and res["cut"]
    assert res["rows"]
    for r in res["rows"]:
        assert tuple(r)[:len(ROW_KEYS)] == ROW_KEYS and set(r) <= set(ROW_KEYS + OPTIONAL_ROW_KEYS)
        assert r["reproduced"] in VERDICTS and r["why"]
        # every sentence starts with a capital letter, as in the committed whys (test_study_rewhy)
        assert not re.search(r"(?<!Sec|Fig|Tab|e\.g|i\.e|.vs)\. [a-z]", r["why"]), r["why"]


def test_bftrainer_quick(env):
    res = study("bftrainer", env)
    check_shape(res, "bftrainer")
    assert res["setting"]["hours"] == 24.0
    by = {(x["allocator"], x["tfwd_s"]): x for x in res["tfwd"]}
    # the MILP's exact form beats equal share, and rescales far more cheaply per event (Fig. 7b, 9)
    assert by[("dp", 120)]["U"] > by[("equal-share", 120)]["U"]
    assert by[("equal-share", 120)]["rescale_cost_per_event_samples"] > \
        10 * by[("dp", 10)]["rescale_cost_per_event_samples"]
    # Fig. 7a's readings rise with T_fwd; per-6 h samples add up to the replay's total
    f = res["fig7a"]
    assert f["10"]["first_1024"]["preemptions_within"] < f["170"]["first_1024"]["preemptions_within"]
    assert by[("dp", 120)]["periods_samples_over_total"] == pytest.approx(1.0, abs=0.02)


def test_modelarts_quick(env):
    res = study("modelarts", env)
    check_shape(res, "modelarts")
    t = res["table"][0]
    # the quick cut: one job in 3 (149) on 50 nodes, standing for the paper's 150
    assert (t["pool"], t["every"]) == (50, 3) and t["greedy_completed"] == t["horizon_completed"] == 149
    assert "one job in 3 (149 of 447) on 50 nodes, standing for 150" in res["cut"]
    # the calibrated load holds at the cut: greedy queues near the paper's 7.2 minutes
    assert 5.0 <= t["greedy_queue_min"] <= 9.5
    assert res["stats"]["jobs"] == 447 and res["stats"]["top5_demand_share"] < 0.5
    assert t["extra_jobs"] is not None
