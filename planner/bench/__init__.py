"""The benchmarks behind `planner bench`: suite runs every benchmarks/*.py and records ok / error / missing."""
