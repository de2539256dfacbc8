"""The reader registry (planner.logs.registry) and load deduplication on content + options."""

from __future__ import annotations

import pytest

from planner import logs
from planner.errors import InputError
from planner.logs import registry
from planner.store import db
from tests.helpers import TINY_NODE_LOG

SWF = ("; MaxNodes: 8\n" + "1 0 0 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
       "2 50 0 100 3 -1 -1 3 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
SACCT = "JobID|Start|End|NNodes|NodeList\n1|2021-01-01T00:00:00|2021-01-01T01:00:00|1|n1\n"
JOBCSV = "start,end,nodes\n0,100,2\n50,150,1\n"


def test_one_record_per_format():
    assert set(registry.FORMATS) == {"swf", "slurm", "slurm_json", "nodestate", "csv"} == set(logs.FORMATS)
    for name, r in registry.READERS.items():
        assert r.name == name and r.kind in ("node", "jobs") and r.description and callable(r.read)
    assert registry.READERS["slurm"].options == ("tz",) and registry.READERS["csv"].options == ("mapping",)


@pytest.mark.parametrize("text,fmt", [(SWF, "swf"), (SACCT, "slurm"), (TINY_NODE_LOG, "nodestate"),
                                      (JOBCSV, "csv")])
def test_detection_goes_through_the_registry(write_file, text, fmt):
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert registry.detect(lines) == fmt
    assert logs.detect_format(write_file("x.log", text)) == fmt


def test_options_a_format_does_not_take_are_refused(write_file):
    p = write_file("x.swf", SWF)
    with pytest.raises(InputError, match="option tz does not apply to the swf format"):
        logs.ingest(db.connect(":memory:"), p, tz="Europe/Paris")
    with pytest.raises(InputError, match="unknown format 'pbs'"):
        logs.ingest(db.connect(":memory:"), p, format="pbs")


def test_same_content_other_options(write_file):
    """Same content, other options: under the same name, one line saying what happened and
    what to do; under another name, loaded again with the new options and a note."""
    con = db.connect(":memory:")
    p = write_file("j.swf", SWF)
    first = logs.ingest(con, p)
    assert first["nodes"] == 8 and not first["already_loaded"]
    with pytest.raises(InputError, match="already loaded as 'j.swf' with other options"):
        logs.ingest(con, p, machine_nodes=16)
    second = logs.ingest(con, p, machine_nodes=16, name="j16")
    assert second["nodes"] == 16 and not second["already_loaded"]
    assert any("same content as log 'j.swf'" in n for n in second["notes"])
    again = logs.ingest(con, write_file("j.swf.gz", SWF, gz=True), machine_nodes=16)
    assert again["already_loaded"] and again["log"] == "j16" and again["nodes"] == 16
    assert len(logs.list_logs(con)) == 2
