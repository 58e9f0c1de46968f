"""What the Delta logs answer without a JVM: a job's status (`status.py`), the job checked against its sources'
schemas, a run with nothing pending, `unlock` and the lock taken before Spark starts (`commands.py`).

Starting Spark costs seconds (half a minute on a busy machine); these read the state tables and the sources' logs
with delta-rs in milliseconds. Where the logs cannot answer exactly, the caller's Spark answers instead.
"""
