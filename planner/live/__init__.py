"""A live Slurm cluster: source (sinfo/squeue or slurmrestd snapshots), states (harvestable or not),
store (snapshots into the DuckDB log), runner (the polling loop), advisor (recommendations), report
(what the Live page shows).
"""
