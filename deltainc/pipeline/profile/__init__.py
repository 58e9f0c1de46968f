"""`profile`: the delays of a job's sources measured with Spark (`delays.py`), their percentiles and
suggested settings, pure (`histogram.py`)."""
