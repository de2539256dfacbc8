"""One shape for the studies' experiments (issue 22): every committed study JSON keeps its isolating
experiments on the rows they explain (rows[i]["experiments"], explain()'s shape), and its whys are
what `planner study NAME --rewhy` regenerates from what the JSON stores (nothing replayed)."""

from __future__ import annotations

import re

import pytest

from planner.studies import STUDIES
from planner.studies.common import EXPERIMENT_KEYS, load, rewhy


@pytest.mark.parametrize("name", STUDIES)
def test_committed_whys_are_rewhys_output(name):
    committed = load(name)
    assert "experiments" not in committed  # the rows carry them
    again = rewhy(name, write=False)
    assert [r["why"] for r in again["rows"]] == [r["why"] for r in committed["rows"]], (
        f"docs/studies/{name}.json's whys differ from its stored experiments': run `planner study {name} --rewhy`")
    assert [r.get("experiments") for r in again["rows"]] == [r.get("experiments") for r in committed["rows"]]
    for r in committed["rows"]:
        for e in r.get("experiments", []):
            assert set(EXPERIMENT_KEYS) <= set(e), (name, r["claim"], e)
        # every sentence starts with a capital letter (abbreviations aside), and so does every claim
        assert r["claim"][0].isupper() or not r["claim"][0].isalpha(), (name, r["claim"][:40])
        assert r["why"][0].isupper() or not r["why"][0].isalpha(), r["why"][:40]
        assert not re.search(r"(?<!Sec|Fig|Tab|e\.g|i\.e|.vs)\. [a-z]", r["why"]), (name, r["why"])
