"""Workloads: the Trainers a replay runs.

trainers (scaling curves, Trainer specs), generators, fitcurve and learning (Optimus speed model),
runtimes (rescale costs).
"""
