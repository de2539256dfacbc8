"""BFTrainer's settings, the defaults of a replay that low-level modules need (a leaf: no imports).

The scenario schema (planner.scenario.schema) declares every knob; these three values are its
defaults that the allocators' TrainerState, TrainerSpec, the built-in workloads and the runtime
presets read too. They sit in this leaf so that those modules can read them without importing
the schema, which itself reads their registries for its choices (that would be a cycle).
"""

DEFAULT_TFWD_S = 120.0  # T_fwd, the look-ahead of a decision (the schema's `tfwd` default)
DEFAULT_RUP_S = 18.0  # a Trainer's scale-up cost (Elastic Horovod on Summit, BFTrainer)
DEFAULT_RDW_S = 12.0  # a Trainer's scale-down cost
