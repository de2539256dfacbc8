"""The replay engine behind planner.replay.simulator.simulate (rules in planner.replay.simulator's docstring).

engine.Replay   the event loop, one method per phase
runs.TrainerRun one Trainer's bookkeeping (size, progress, pending costs, fate)
records         typed records (Decision, Preemption, Counters, Timeline) and the frames
hooks           the replaceable steps: NodeMapper (counts -> node ids), TfwdRule (T_fwd per decision)
checks          invariant checks (simulate(check=True))
"""
