"""The job's state: the run log (which carries the watermark), the lock and the settings it remembers."""
