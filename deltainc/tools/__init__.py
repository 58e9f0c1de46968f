"""Tools around the pipeline: the delay profiler, the demo and its generated sample data."""
