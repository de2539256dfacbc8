"""Small real cell functions for the sweep engine's mechanics tests (importable by workers; no tests here)."""

from __future__ import annotations

import math
import os
import time


def series_cell(params: dict) -> dict:
    """A deterministic computation over the cell's params: partial sums of a decaying series.

    Fails (ValueError) when params['n'] is negative, so error handling can be tested; kills its
    own process (SIGKILL) when params['n'] == params['die_at'].
    """
    n = int(params["n"])
    rate = float(params.get("rate", 1.0))
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    total = sum(math.exp(-rate * k / max(n, 1)) for k in range(n))
    if params.get("die_at") is not None and n == int(params["die_at"]):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)  # like the out-of-memory killer
    delay = float(params.get("sleep_s", 0.0))
    if delay:
        time.sleep(delay)
    return {"n_terms": n, "total": total, "nested": {"max": n * rate, "min": 0.0},
            "label": f"n{n}", "pid": os.getpid()}
