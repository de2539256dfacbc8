"""One harvestable rule (planner.idle.states.classify) for every reader that carries node states:
the live Slurm reader (sinfo/slurmrestd JSON through planner.live.store.view) and an ingested
node-state log (`time,node,state`, sinfo's words and suffix flags). Each case counted by hand.

The cases, one node each, in partition 'batch' unless named (T = 1.7e9 s, H = 1 h):

    node  Slurm JSON (state + flags)      log word at 0 h   state          harvestable
    a     IDLE                            idle              idle           yes
    b     IDLE + DRAIN                    IDLE+DRAIN        drained        no
    c     IDLE + RESERVED                 resv              reserved       no
    d     IDLE + MAINTENANCE (+RESERVED)  idle$             planned_down   no
    e     IDLE + POWERED_DOWN             idle~             down           no
    f     IDLE + NOT_RESPONDING           idle*             down           no
    g     IDLE, partition 'gpu' only      -                 idle           no (not offered: --partitions batch)
    h     MIXED                           mix               allocated      no

In the log every node is plain `idle` from 1 h to 2 h (end), so its idle node-hours are
a: 2, b..f and h: 1 each -> 8 in all; the split: drained 1, reserved 1, planned down 1, down 2,
allocated 1, idle 8 (16 node-h).
"""

from __future__ import annotations

import pytest

from planner import logs
from planner.idle import split
from planner.idle import states as S
from planner.idle.window import Window
from planner.live.store import view
from planner.logs import slurm_json

T = 1_700_000_000
H = 3600

CASES = [  # node, JSON state, JSON flags, partitions, log word, state, harvestable with --partitions batch
    ("a", "idle", [], ["batch"], "idle", S.IDLE, True),
    ("b", "idle", ["DRAIN"], ["batch"], "IDLE+DRAIN", S.DRAINED, False),
    ("c", "idle", ["RESERVED"], ["batch"], "resv", S.RESERVED, False),
    ("d", "idle", ["MAINTENANCE", "RESERVED"], ["batch"], "idle$", S.PLANNED_DOWN, False),
    ("e", "idle", ["POWERED_DOWN"], ["batch"], "idle~", S.DOWN, False),
    ("f", "idle", ["NOT_RESPONDING"], ["batch"], "idle*", S.DOWN, False),
    ("g", "idle", [], ["gpu"], None, S.IDLE, False),
    ("h", "mixed", [], ["batch"], "mix", S.ALLOCATED, False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_live_reader_applies_the_rule(case):
    name, st, flags, parts, _word, want, harv = case
    for doc_state in (st, [st.upper(), *flags]):  # 22.05 (state + state_flags) and 23.02+ (a list)
        node = {"name": name, "state": doc_state, "partitions": parts, "cpus": 2, "alloc_cpus": 0}
        if isinstance(doc_state, str):
            node["state_flags"] = flags
        v = view(slurm_json.node_row(node), harvest_partitions=("batch",))
        assert (v.state, v.harvestable) == (want, harv), (name, doc_state)
        # every partition offered: only the partition case changes
        v_all = view(slurm_json.node_row(node))
        assert v_all.harvestable == (want == S.IDLE)


@pytest.mark.parametrize("case", [c for c in CASES if c[4]], ids=[c[0] for c in CASES if c[4]])
def test_a_log_word_means_what_the_live_flags_mean(case):
    _name, st, flags, parts, word, want, _harv = case
    assert S.state_of(word) == want
    assert S.classify(S.words_of(word), parts) == S.classify({st.upper(), *flags}, parts)
    assert S.harvestable(word, parts, ("batch",)) is (want == S.IDLE)
    assert S.harvestable(word, parts, ("gpu",)) is False  # not offered


def test_suffix_flags_and_compound_words_by_hand():
    assert S.state_of("idle") == S.IDLE and S.state_of("IDLE") == S.IDLE
    for w, want in (("idle*", S.DOWN), ("idle~", S.DOWN), ("idle%", S.DOWN), ("idle!", S.DOWN),
                    ("idle#", S.PLANNED_DOWN), ("idle$", S.PLANNED_DOWN), ("idle@", S.PLANNED_DOWN),
                    ("idle^", S.PLANNED_DOWN), ("idle-", S.PLANNED_DOWN), ("mix-", S.ALLOCATED),
                    ("alloc*", S.DOWN), ("drain*", S.DOWN), ("drng", S.ALLOCATED), ("drained", S.DRAINED),
                    ("MIXED+DRAIN", S.ALLOCATED), ("IDLE+DRAIN", S.DRAINED), ("IDLE+RESERVED", S.RESERVED),
                    ("MIXED+MAINT", S.ALLOCATED), ("IDLE+MAINT+RESERVED", S.PLANNED_DOWN),
                    ("idle+power_down", S.DOWN), ("0", S.ALLOCATED), ("1", S.IDLE)):
        assert S.state_of(w) == want, w
    assert S.state_of("sleeping") is None and S.state_of("idle+sleeping") is None and S.state_of("") is None
    # Slurm flags the rule does not know are ignored beside a known state; alone they are down
    assert S.classify({"IDLE", "DYNAMIC_NORM"}) == (S.IDLE, True)
    assert S.classify({"DYNAMIC_NORM"}) == (S.DOWN, False)


def test_an_ingested_state_log_counts_only_harvestable_idle(mem_con, write_file):
    rows = ["time,node,state"]
    rows += [f"{T},{c[0]},{c[4]}" for c in CASES if c[4]]
    rows += [f"{T + H},{c[0]},idle" for c in CASES if c[4] and c[4] != "idle"]
    rows += [f"{T + 2 * H},a,idle"]  # closes the log at 2 h
    logs.ingest(mem_con, write_file("rule.csv", "\n".join(rows) + "\n"), name="rule")
    s = split.split(mem_con, Window("rule"))
    nh = s["node_hours"]
    assert s["nodes"] == 7 and s["span_h"] == pytest.approx(2.0)
    assert nh["idle"] == pytest.approx(8.0) == pytest.approx(s["harvestable_node_hours"])
    assert (nh["drained"], nh["reserved"], nh["planned_down"], nh["down"], nh["allocated"]) == \
        pytest.approx((1.0, 1.0, 1.0, 2.0, 1.0))
    # the node events the replay reads: idle (harvestable) only where the rule says so
    idle0 = dict(mem_con.execute(
        "SELECT n.name, e.idle FROM node_events e JOIN nodes n USING (log_id, node_idx) JOIN logs l USING (log_id) "
        "WHERE l.name = 'rule' AND e.t_s = ?", [T]).fetchall())
    assert idle0 == {"a": True, "b": False, "c": False, "d": False, "e": False, "f": False, "h": False}
