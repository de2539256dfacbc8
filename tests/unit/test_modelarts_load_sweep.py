"""The ModelArts load sweep's readings (issue 22, row 4: where the bell peaks), hand-computed: where a
curve is largest, the split of the cells at the paper's 7.2-min queue, and the noise and delay rows at
the bell's load (bell_cells' pairs read back from a draws file)."""

import json

from planner.studies import modelarts as m


def test_largest_names_one_pool_a_run_of_pools_or_a_list():
    assert m._largest({"70": 0, "90": 6, "110": 12, "130": 11}) == "110"
    assert m._largest({"70": 0, "90": 6, "110": 12, "130": 12, "150": 11}) == "110-130"
    assert m._largest({"70": 10, "90": 6, "110": 7, "130": 4, "170": 10}) == "70, 170"
    assert m._largest({"70": None, "90": -1}) == "90"


def sweep(curves: dict, at_110: dict) -> dict:
    cell = (lambda e, q: {"extra": e, "greedy_queue_min": q})
    return {"id": "load-sweep", "variants": ["base"],
            "after": {"curves": {s: {p: cell(*v) for p, v in c.items()} for s, c in curves.items()},
                      "at_110": {s: cell(*v) for s, v in at_110.items()}}}


def test_the_contention_split_counts_each_cell_once_at_the_papers_queue():
    # the curve at 10 h holds its own 110-node cell: at_110's 10 h is not counted again; 1.5 h is
    d = sweep({"10.0": {"110": (12.0, 1.5), "150": (11.0, 1.4)}}, {"10.0": (12.0, 1.5), "1.5": (1.0, 50.0)})
    table = [{"variant": "base", "pool": 110, "extra_jobs": 1.0, "greedy_queue_min": 32.0},
             {"variant": "base", "pool": 150, "extra_jobs": 12.0, "greedy_queue_min": 7.2},  # not over 7.2
             {"variant": "harsh", "pool": 110, "extra_jobs": 8.0, "greedy_queue_min": 30.0}]  # another variant
    note = m._contention_note(d, table)
    # over 7.2 min: the run's 110 (+1) and 1.5 h (+1); 7.2 or less: +12, +11 and the run's 150 (+12)
    assert "Of these 5 cells, the 2 where greedy's mean queue at the pool is over 7.2 min" in note
    assert "count +1 to +1 (median +1); the 3 where it is 7.2 min or less count +11 to +12 (median +12)" in note
    assert note.endswith("in the run greedy queues 32 min at 110 nodes, where the paper's curve peaks.")


def test_the_bell_note_reads_base_minus_variant_per_pool_against_the_widened_range(tmp_path, monkeypatch):
    monkeypatch.setattr(m.common, "STUDIES_DIR", tmp_path / "docs" / "studies")
    path = tmp_path / "docs" / "studies" / "modelarts_delay.json"
    path.parent.mkdir(parents=True)
    monkeypatch.setattr(m, "delay_path", lambda: path)
    cells = m.bell_cells("delay-15s")
    assert len(cells) == 2 * len(m.POOLS) and all(c["span_h"] == m.BELL_SPAN_H for c in cells)
    assert m._bell_note("delay-15s", -0.9, 1.8) == ""  # before the pairs ran
    # base 10 at every pool; the variant 10 (difference 0) except 9 at 70 (+1) and 14 at 190 (-4)
    xs = {70: 9.0, 190: 14.0}
    draws = [{"cell": c, "extra_jobs": 10.0 if c["variant"] == "base" else xs.get(c["pool"], 10.0)} for c in cells]
    path.write_text(json.dumps({"paper": "modelarts", "draws": draws}))
    note = m._bell_note("delay-15s", -0.9, 1.8)
    assert "70 nodes: base +10, variant +9, difference +1; 90 nodes: base +10, variant +10, difference +0" in note
    assert "190 nodes: base +10, variant +14, difference -4" in note
    assert note.endswith(f": {len(m.POOLS) - 1} of {len(m.POOLS)} pools inside the widened range (-1.9 to 2.8), "
                         "so the load does not explain it")
    assert "docs/studies/modelarts_delay.json" in note
    # the committed-arrivals readers leave the bell's pairs out
    assert m.committed_delay() == []


def test_the_bell_spread_note_reads_row_4s_jittered_pairs_in_both_loads(tmp_path, monkeypatch):
    path = tmp_path / "modelarts_spread.json"
    monkeypatch.setattr(m, "spread_path", lambda: path)
    cells = m.bell_spread_cells()
    n = len(m.SPREAD["jitter_seeds"])
    assert len(cells) == 2 * n and [("span_h" in c) for c in cells] == [False] * n + [True] * n
    assert m._bell_spread_note() == ""  # before the pairs ran
    counts = [1.0, 2.0, 3.0, 1.0, 2.0][:n] + [10.0, 20.0, 15.0, 11.0, 14.0][:n]
    path.write_text(json.dumps({"paper": "modelarts", "draws": [{"cell": c, "extra_jobs": e}
                                                                for c, e in zip(cells, counts)]}))
    note = m._bell_spread_note()
    assert "at 110 nodes +1, +2, +3, +1, +2 in the calibrated load and +10, +20, +15, +11, +14 at 10 h" in note
    assert "(mean 14.0)" in note
    assert m.committed_spread() == [x for x in m.committed_draws(path) if "span_h" not in x["cell"]]
    assert len(m.committed_spread()) == n  # the bell's pairs are left out of the noise/delay rows' spread
