"""The Live page without a cluster (AppTest): it renders, refuses bad settings naming the form field, keeps
good ones in the workspace only, and with a recording (made by the library from captured Slurm JSON)
shows the per-partition table and turns the recording into a workspace log."""

from __future__ import annotations

import json
from pathlib import Path

from planner.live.runner import Poller
from planner.live.source import Snapshot
from planner.logs import slurm_json

DATA = Path(__file__).resolve().parents[1] / "unit" / "data" / "slurm"


def test_live_page_settings_and_recording(open_app, loaded_db, tmp_path):
    at = open_app(loaded_db, "live")
    assert at.title[0].value == "Live" and not at.exception
    assert any("No recording yet" in i.value for i in at.info)
    at.text_input[0].set_value(str(tmp_path / "missing.conf"))
    at.button[0].click().run()
    assert any("field 'SLURM_CONF'" in e.value for e in at.error), [e.value for e in at.error]
    at.text_input[0].set_value("")
    at.text_area[0].set_value('{"trainers": [{"id": "a"}]}')
    at.button[0].click().run()
    assert any("Elastic jobs" in e.value and "curve" in e.value for e in at.error), [e.value for e in at.error]
    at.text_area[0].set_value(json.dumps({"trainers": [{"id": "a", "model": "resnet18", "nmin": 1, "nmax": 2}]}))
    at.text_input[2].set_value("batch")
    at.button[0].click().run()
    assert not at.error and any("Saved" in s.value for s in at.success)
    # a recording of two captured snapshots, written by the library into this workspace's live/ folder
    from appkit import live, workspace
    ws = workspace.path(Path(tmp_path / "sessions"), at.query_params["ws"])
    assert live.settings(ws)["partitions"] == "batch"
    nodes = slurm_json.nodes(json.loads((DATA / "sinfo_22.05.json").read_text()))
    jobs = slurm_json.jobs(json.loads((DATA / "squeue_22.05.json").read_text()))
    p = Poller(live.recording_path(ws), live.RECORDING_LOG, None, ["batch"], warn=lambda m: None)
    p.apply(Snapshot(t_s=1795625000.0, nodes=nodes, jobs=jobs))
    p.apply(Snapshot(t_s=1795625030.0, nodes=nodes, jobs=[]))
    at.run()
    assert not at.exception
    parts = at.dataframe[0].value.set_index("partition")
    assert parts.loc["batch", "drained"] == 1 and parts.loc["batch", "reserved"] == 1
    assert parts.loc["gpu", "offered"] == "no"
    at.text_input[-1].set_value("rec1")
    at.button[-1].click().run()
    assert any("Log 'rec1' made from 2 polls" in s.value for s in at.success), [e.value for e in at.error]
    assert "rec1" in workspace.log_files(ws)
