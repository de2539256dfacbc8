"""Harvest planner: plan elastic deep-learning training on idle cluster capacity.

The library imports no Streamlit. Modules:
  db          DuckDB connection and the one schema every log kind lands in
  logs/       readers (SWF, node-state events, Slurm sacct, generic CSV)
  fragments   idle series, fragments, event rates, T_fwd suggestion
  pool        the pool trace (idle node ids over a window) the simulator replays
  trainers    scaling curves, Trainer specs
  workloads   workload generators (hpo, diverse, philly) and the Trainer CSV reader
  allocators/ one module per allocator, one call: allocate(name, state, options)
  scenario    every knob of one replay (the `planner simulate` options); run_scenario
  simulator   event-driven replay
  metrics     U, resource integral, queueing and run times, costs
  sweep       scenario grids on local processes or a Dask cluster
  cli         the `planner` command
"""

__version__ = "0.1.0"
