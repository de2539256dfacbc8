"""Fuzzing the readers: a mutated valid log either loads or raises InputError (one line, naming
the file), never anything else, and a failed load leaves the database unchanged."""

from __future__ import annotations

import random

import pytest

from planner import db, logs
from planner.errors import InputError
from tests.conftest import TINY_NODE_LOG
from tests.test_fragments import SWF
from tests.test_logs_slurm import SACCT

CSV = "start,end,nodes,node_list\n0,100,2,h[1-2]\n50,80,1,h3\n60,90,1,h4\n"
SEEDS = [("n.csv", TINY_NODE_LOG), ("s.swf", SWF), ("a.sacct", SACCT), ("j.csv", CSV)]
TOKENS = [",", "|", "[", "]", "-", "x", "9", "\n", ".", " ", "nan", "inf", "-1", "0", ";", "1e309",
          "Unknown", "2021-13-45", "\t", '"', "\x00", "é"]


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        i = rng.randrange(len(text) + 1)
        if op == 0 and text:
            text = text[:i] + text[i + 1:]
        elif op == 1:
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        elif op == 2:
            lines = text.split("\n")
            rng.shuffle(lines)
            text = "\n".join(lines)
        elif op == 3:
            text = text[:i]
        elif op == 4:
            lines = text.split("\n")
            k = rng.randrange(len(lines))
            lines.insert(k, lines[rng.randrange(len(lines))])
            text = "\n".join(lines)
        else:
            j = rng.randrange(len(text) + 1)
            text = text[:min(i, j)] + text[max(i, j):]
    return text


def run_fuzz(n: int, tmp_path, seed: int = 0):
    rng = random.Random(seed)
    con = db.connect(":memory:")
    loaded = errors = 0
    for k in range(n):
        name, base = SEEDS[k % len(SEEDS)]
        p = tmp_path / f"f{k}-{name}"
        p.write_bytes(mutate(base, rng).encode("utf-8", "surrogatepass"))
        before = db.table_counts(con)
        try:
            logs.ingest(con, p)
            loaded += 1
        except InputError as e:
            errors += 1
            msg = str(e)
            assert "\n" not in msg and (p.name in msg or "machine-nodes" in msg or "field" in msg), msg
            assert db.table_counts(con) == before
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"{type(e).__name__} on {p.name}: {e}\n---\n{p.read_text(errors='replace')}")
        p.unlink()
    con.close()
    return loaded, errors


def test_fuzz_quick(tmp_path):
    loaded, errors = run_fuzz(100, tmp_path)
    assert loaded > 0 and errors > 0


@pytest.mark.slow
def test_fuzz_10k(tmp_path):
    run_fuzz(10_000, tmp_path, seed=1)
