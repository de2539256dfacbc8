"""bench_sweep: a thin caller of planner.bench.sweep_scaling (the benchmark lives in the library;
benchmarks/run_all.py runs this file in its own process).

    python benchmarks/bench_sweep.py [options: --help]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.bench.sweep_scaling import main, run  # noqa: E402, F401  (run: the suite's entry)

if __name__ == "__main__":
    raise SystemExit(main())
