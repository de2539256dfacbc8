"""Harvest planner: plan elastic deep-learning training on idle cluster capacity.

The module map (the one map; README.md and docs link here). The library imports no Streamlit.

Entry points and cross-cutting leaves at the root (nothing else lives there):
  cli, __main__   the `planner` command (one module per subcommand in commands/)
  errors          InputError: the one bad-input error, a one-line message naming file/line/field
  paths           where things live: shipped datasets, the default database, artifacts
  times           the one time parser and the one ISO formatter

Folders, one concept each:
  store/          db: the DuckDB connection, the one schema and window queries;
                  catalog: which log a command means (the shipped default) and open_log
  logs/           readers (SWF, node-state events, Slurm sacct, generic CSV) -> store.db tables
  idle/           idle capacity of a log: window (Window: log, start, hours, pool_size, subset,
                  seed: the one value every idle function and a log pool take), fragments (N(t),
                  events, fragments, T_fwd suggestion),
                  views and job_views (the operator views of XDMoD/sreport/Grafana), warmup (a job
                  log's warm-up: detect, and the one rule for excluding it that every page applies),
                  states (the node-state vocabulary and THE harvestable rule: logs, live, JSON)
  workload/       trainers (scaling curves, Trainer specs), generators (hpo, diverse, philly,
                  Trainer CSV), fitcurve and learning (Optimus' speed model), runtimes (rescale costs)
  allocators/     one module per allocator behind allocate(name, state, options) (the records
                  hold the functions themselves); instances
                  (random and Fig. 5 decisions for tests and benchmarks)
  replay/         the event-driven replay: pool (the idle node ids over time), simulator
                  (simulate()), config (ReplayConfig: a replay's settings; ReplayHooks), engine,
                  hooks (node mapper, T_fwd rule, admission, cadence), records, result, metrics,
                  estimate (how long a replay or a grid will take, before it starts)
  predict/        survival (the idle-time model), replay_hooks (its use in replays), evaluate
                  (time-based evaluation; evaluate_log: the Idle page's figures)
  scenario/       schema (every knob of a replay declared once: type, default, bounds, help),
                  defaults (BFTrainer's T_fwd, Rup, Rdw: the leaf the schema and the allocators read),
                  record (Scenario, run_scenario), pair (a scenario with its baseline: run_pair;
                  Pair: the replays, then their limits), forked (independent calls at once by fork)
  sweep/          scenario grids on local processes or a Dask cluster; compare (a comparison
                  grid's axes, defined once, its defaults and result shaping: the Compare page)
  studies/        each paper's comparison as the paper states it (`planner study NAME`)
  live/           a running Slurm read live (`planner live`): source (sinfo/squeue --json or
                  slurmrestd), store (snapshots appended as a node log + live tables; harvestable
                  by idle/states' one rule), advisor (allocators + survival model -> grow/shrink),
                  runner (the polling loop, back-off, scoring); the JSON adapter is logs/slurm_json
  report/         glossary: label, unit, scale and better/worse of every headline metric (the app,
                  the CLI's human output and the study tables read it); headline (a run's headline
                  table and which allocators answered)
  bench/          the benchmarks behind `planner bench`: suite (allocator_calls: the Fig. 5 grid's
                  calls, also the Solver page's), sweep_scaling, large (benchmarks/ has thin callers)
  commands/       one module per `planner` subcommand

Names used for one concept everywhere: `tfwd_s` (T_fwd, seconds; only the user-facing scenario
field and CLI option keep the short `tfwd` / `--tfwd`, as in links and grid files), `pool_size`
(K harvested nodes), `pj_max` (Pj_max), `step_min` (the decision step f: interval cadence and
horizon-milp), `log` (a log's name in the store), `rup_s` / `rdw_s` (a Trainer's rescale costs;
the scenario fields `rup` / `rdw`), `win` (an idle.window.Window). Defaults are named DEFAULT_* in
scenario/defaults.py; the live advisor's own look-ahead is live.advisor.ADVISOR_TFWD_S (600 s).

Defaults are declared once, in scenario/schema.py (FIELDS), and read from there; BFTrainer's
T_fwd and Rup/Rdw, which the allocators and workloads read too, in the leaf scenario/defaults.py
(re-exported by the schema; a leaf so that no import cycle forms). A replay's settings travel in one record
(replay.config.ReplayConfig), its replaceable steps in another (ReplayHooks).

Imports sit at the top of each module. A function-level import is kept only where it keeps a heavy
library (Pyomo, scikit-survival, Dask, SciPy) or ~0.1 s of ssl/http out of every `planner` command
(the CLI loads all subcommand modules to build its parser); each ends with `# lazy: <why>`, and
tests/unit/test_layout.py checks that, and that the import graph (package __init__ files
included) has no cycle. Package __init__ files re-export nothing that would import back.
"""

__version__ = "0.1.0"
