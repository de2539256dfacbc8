"""The Idle page's two toggles in AppTest (issue 25: outages and the warm-up excluded from harvestable
capacity by default, put back by the operator), on the hand-counted job log of tests/helpers.py
(OUTAGE_SWF: 61 idle node-hours, of which 30 an outage and 16 the warm-up, 15 harvestable)."""

from __future__ import annotations

import pytest

from planner import logs
from planner.store import db
from tests.helpers import OUTAGE_SWF


@pytest.fixture(scope="module")
def outage_db(tmp_path_factory):
    d = tmp_path_factory.mktemp("outagedb")
    (d / "outage.swf").write_text(OUTAGE_SWF)
    con = db.connect(d / "planner.duckdb")
    logs.ingest(con, d / "outage.swf", name="outage")
    con.close()
    return d / "planner.duckdb"


def _idle_nh(at) -> str:
    m = {x.label: x.value for x in at.metric}
    return m["idle node-hours (node-h)"]


def test_outage_and_warmup_toggles_put_them_back_by_hand(outage_db, open_app):
    at = open_app(outage_db, "idle", query={"log": "outage"})
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert at.selectbox(key="idle_log").value == "outage"
    assert at.toggle(key="idle_inc_out").value is False and at.toggle(key="idle_inc_warm").value is False
    assert _idle_nh(at) == "15"  # harvestable only: 2-8 h 6 + 11-20 h 9
    assert any("harvestable capacity only" in c.value for c in at.caption)
    at.toggle(key="idle_inc_out").set_value(True).run()
    assert not at.exception and _idle_nh(at) == "45"  # + the 3 h outage on 10 nodes
    at.toggle(key="idle_inc_warm").set_value(True).run()
    assert not at.exception and _idle_nh(at) == "61"  # + the warm-up's 16: every idle node-hour
    at.toggle(key="idle_inc_out").set_value(False).run()
    assert not at.exception and _idle_nh(at) == "31"  # the warm-up alone: 15 + 16
