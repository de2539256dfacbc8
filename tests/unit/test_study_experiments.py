"""The isolating experiments' pieces (issue 22), hand-computed: the gap an experiment closes, the
`why` text's rule (an explanation only where one change closed at least half of the gap),
Optimus' peaked speed model, the fixed-share DRF variant and Elan's job-size knob."""

from __future__ import annotations

import pytest

from planner.allocators.base import AllocOptions, AllocState, TrainerState
from planner.studies import elan, optimus
from planner.studies.common import closes, explain
from planner.workload.trainers import Curve


def lin(per_node: float, nmax: int = 64) -> Curve:
    return Curve(tuple(range(nmax + 1)), tuple(per_node * k for k in range(nmax + 1)))


def test_closes_by_hand():
    assert closes(-5.0, -24.0, -43.0) == pytest.approx(0.5)  # half of the way from -5 to -43
    assert closes(0.72, 2.39, 2.39) == pytest.approx(1.0)
    assert closes(1.02, 1.0, 1.63) < 0  # moved away from the paper
    assert closes(2.0, 3.0, 2.0) == 0.0


def test_explain_only_what_closed_half_the_gap():
    e = [{"key": "a", "change": "A", "before": -5.0, "after": -24.0, "paper": -43, "closes": 0.5},
         {"key": "b", "change": "B", "before": -5.0, "after": -6.0, "paper": -43, "closes": 0.026}]
    why = explain(e, {"a": "because of A"})
    assert why.startswith("explained by experiment") and "A: -24.0 %" in why and "Because of A" in why
    assert "B: -6.0 %" in why.split("less than half of the gap")[1]
    why = explain(e[1:], {"b": "never shown"})
    assert why.startswith("not yet explained") and "B: -6.0 % (ours -5.0 %, paper -43 %" in why
    assert "never shown" not in why
    assert explain([{**e[0], "unit": "share", "before": 67.7, "after": 90.8, "paper": 90}]).endswith(
        "A: 90.8 % (ours 67.7 %, paper 90 %; closes 50 % of the gap)")
    assert explain([{**e[0], "unit": "x", "before": 0.72, "after": 1.06, "paper": 2.39}]).endswith(
        "A: 1.06x (ours 0.72x, paper 2.39x; closes 50 % of the gap)")


def test_peaked_speed_model_by_hand():
    c = optimus.peaked(lin(10.0), peak=8)
    # O(w) = O(1) (1 + 1/64) / (1/w + w/64): O(1) = 10, O(8) = 10 * (65/64) / (2/8) = 40.625, O(16) = O(4)
    assert c(1) == pytest.approx(10.0)
    assert c(8) == pytest.approx(40.625)
    assert c(16) == pytest.approx(c(4)) == pytest.approx(10 * (65 / 64) / (1 / 4 + 4 / 64))
    assert max(range(1, 65), key=c) == 8


def test_drf_static_keeps_running_shares_and_blocks_fifo():
    c = lin(1.0, 16)
    a = TrainerState(id="a", nmin=1, nmax=16, curve=c, current=tuple(range(7)), submit_s=0.0)
    b = TrainerState(id="b", nmin=1, nmax=16, curve=c, submit_s=1.0)
    d = TrainerState(id="d", nmin=1, nmax=16, curve=c, submit_s=2.0)
    # 10 nodes, 3 jobs present: the fair share is floor(10 / 3) = 3; a keeps its 7, b gets 3, d waits
    res = optimus.drf_static(AllocState(pool=tuple(range(10)), trainers=(a, b, d)), AllocOptions())
    assert res.counts == {"a": 7, "b": 3, "d": 0}
    # 12 nodes: share 4, but only 5 free: b gets 4, d (4 > 1 free) is blocked
    res = optimus.drf_static(AllocState(pool=tuple(range(12)), trainers=(a, b, d)), AllocOptions())
    assert res.counts == {"a": 7, "b": 4, "d": 0}


@pytest.mark.slow  # reads the Philly log: about 2 s
def test_elan_size_factor_keeps_gpu_hours():
    base = elan.workload("elan", every=50)
    big = elan.workload("elan", every=50, size_factor=4)
    assert [s.submit_s for s in base] == [s.submit_s for s in big]
    for s, t in zip(base, big):
        assert t.request_nodes == min(4 * s.request_nodes, elan.NODES) and t.nmin == 1
        hours = s.work_samples / s.curve(s.request_nodes) * s.request_nodes
        if t.request_nodes == 4 * s.request_nodes:  # the same GPU-hours at req_res
            assert t.work_samples / t.curve(t.request_nodes) * t.request_nodes == pytest.approx(hours)
    assert all(s.rup_s == 80.0 for s in elan.workload("stop-restart", every=50, rescale_s=80.0))


def _e(closes_: float, key: str = "k") -> dict:
    # ours 10, the paper's 20: `after` lands where `closes_` of the gap was closed
    return {"key": key, "change": key.upper(), "unit": "number", "before": 10.0, "after": 10.0 + 10.0 * closes_,
            "paper": 20.0, "closes": closes_}


def test_explain_rule_three_cases_and_boundaries():
    from planner.studies.common import EXPLAINS, verdict_of

    assert EXPLAINS == (0.5, 1.5)
    # by hand: ours 10, paper 20 (gap 10); within half the gap of 20 means 15..25 = closes 50..150 %
    assert closes(10.0, 15.0, 20.0) == pytest.approx(0.5) and closes(10.0, 25.0, 20.0) == pytest.approx(1.5)
    assert [verdict_of(_e(c)) for c in (0.499, 0.5, 1.0, 1.5, 1.501, 8.71, -0.3)] == [
        "miss", "explains", "explains", "explains", "past", "past", "miss"]
    # 150 % explains (lands 5 past the paper's 20, half the gap): listed as the explanation
    why = explain([_e(1.5, "a")], {"a": "because of A"})
    assert why.startswith("explained by experiment") and "A: 25.000 (ours 10.000, paper 20; closes 150 %" in why
    assert why.endswith(". Because of A")
    # 871 %: our value far past the paper's: the direction, not the size; the gap is not explained
    why = explain([_e(8.71, "a"), _e(0.2, "b")], {"a": "a moves it"})
    assert why.startswith("not yet explained. Moves past the paper's value (closes over 150 % of the gap: "
                          "the direction, not the size): A: 97.100")
    assert "closes 871 % of the gap). A moves it. The other changes closed less than half of the gap: B: 12.000" in why
    # under 50 %: as before
    why = explain([_e(0.499, "b")])
    assert why == ("not yet explained. Experiments that did not explain it (one change each, none closes half of "
                   "the gap): B: 14.990 (ours 10.000, paper 20; closes 50 % of the gap)")
    # all three at once: explained first, then past, then the rest
    why = explain([_e(0.2, "c"), _e(2.0, "b"), _e(0.8, "a")])
    assert why.index("A: 18.000") < why.index("Moves past") < why.index("B: 30.000") < why.index(
        "The other changes") < why.index("C: 12.000")
    assert why.startswith("explained by experiment (one change each from our setting): A: 18.000")


def test_every_sentence_of_a_why_starts_with_a_capital():
    from planner.studies.common import capitalize_sentences, row

    assert capitalize_sentences("not a confirmed setting. the other changes (Sec. 4.3, e.g. the mix). then "
                                "Fig. 5 vs. b") == ("Not a confirmed setting. The other changes (Sec. 4.3, e.g. the "
                                                    "mix). Then Fig. 5 vs. b")
    assert capitalize_sentences("x; not yet explained. experiments", first=False) == "x; not yet explained. Experiments"
    assert row("c", "m", 1, "p", 2, "s", "no", "measured: a. b").get("why") == "Measured: a. B"


def test_drf_fixed_request_keeps_running_jobs_and_blocks_fifo():
    c = lin(1.0, 16)
    a = TrainerState(id="a", nmin=1, nmax=16, curve=c, current=tuple(range(7)), submit_s=0.0)
    b = TrainerState(id="b", nmin=1, nmax=16, curve=c, submit_s=1.0)
    d = TrainerState(id="d", nmin=1, nmax=3, curve=c, submit_s=2.0)
    st = AllocState(pool=tuple(range(10)), trainers=(a, b, d))
    # 3 free nodes: request 2 -> b gets 2, d's 2 > 1 free waits (FIFO: nothing behind it could pass)
    assert optimus.drf_fixed(2)(st, AllocOptions()).counts == {"a": 7, "b": 2, "d": 0}
    assert optimus.drf_fixed(1)(st, AllocOptions()).counts == {"a": 7, "b": 1, "d": 1}
    # request 4 > 3 free: b blocks d, even though d's Nmax 3 would fit
    assert optimus.drf_fixed(4)(st, AllocOptions()).counts == {"a": 7, "b": 0, "d": 0}


def test_experiment_rows_rank_by_the_gap_closed_and_write_each_unit_by_hand():
    """The Papers page's table of a row's experiments: the most closing first, numbered; each value in
    its unit ("x" a ratio to 2 places, "per100" a signed count, "%" a signed change); the reading by
    EXPLAINS (fitted ones apart, whatever they close); the summary counts each reading once."""
    from planner.studies.common import experiment_rows, experiment_values, experiments_summary, ranked_experiments

    es = [dict(_e(0.1, "miss"), unit="x", before=0.72, after=0.887, paper=2.39),
          dict(_e(2.0, "past"), unit="per100", before=1.0, after=33.8, paper=17.4),
          dict(_e(0.8, "hit"), unit="%"),
          dict(_e(1.0, "fit"), fitted=True)]
    row = {"experiments": es}
    assert [e["key"] for e in ranked_experiments(row)] == ["past", "fit", "hit", "miss"]
    assert experiment_values(es[0]) == ("0.72x", "0.89x", "2.39x")
    assert experiment_values(es[1]) == ("+1.0 per 100", "+33.8 per 100", "+17.4 per 100")
    assert experiment_values(es[2]) == ("+10.0 %", "+18.0 %", "+20 %")
    table = experiment_rows(row)
    assert [(t["#"], t["one change from our setting"], t["closes (% of the gap)"]) for t in table] == [
        (1, "PAST", 200), (2, "FIT", 100), (3, "HIT", 80), (4, "MISS", 10)]
    assert [t["reading"] for t in table] == ["past the paper (> 150 %)", "fitted to the figure", "explains (50-150 %)",
                                             "under half (< 50 %)"]
    assert [t["ours → after the change"] for t in table] == [
        "+1.0 → +33.8 (paper +17.4) per 100", "10.000 → 20.000 (paper 20)", "+10.0 → +18.0 (paper +20) %",
        "0.72x → 0.89x (paper 2.39x)"]
    assert experiments_summary(row) == ("4 one-change experiments: 1 explains the gap (close 50-150 % of it), "
                                        "1 moves past the paper's value, 1 fitted to this figure (no explanation) "
                                        "and 1 closes less than half of it.")
    assert experiments_summary({"experiments": []}) == "" and experiment_rows({}) == []


def test_a_why_cut_into_paragraphs_at_its_parts_keeps_its_text():
    from planner.studies.common import why_paragraphs

    why = ("Verdict: yes at 2x (Fig. 3). Not yet explained. Measured (seed 0): the Rule: held. Fig. 4 agrees. "
           "Experiments that did not explain it: A; B")
    assert why_paragraphs(why) == ["Verdict: yes at 2x (Fig. 3).", "Not yet explained.",
                                   "Measured (seed 0): the Rule: held. Fig. 4 agrees.",
                                   "Experiments that did not explain it: A; B"]
    assert why_paragraphs("one part") == ["one part"]
