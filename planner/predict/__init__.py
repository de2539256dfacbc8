"""Predicting how long an idle node stays idle.

survival (the model), replay_hooks (its use in replays), evaluate (its evaluation).
"""
