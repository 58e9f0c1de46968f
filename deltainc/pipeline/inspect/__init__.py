"""The commands that read a job and write nothing: `status` (`status_from_logs.py` without a JVM,
`status.py` with Spark), `validate` (`validate.py`) and `verify` (`verify.py`)."""
