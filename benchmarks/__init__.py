"""Benchmarks of deltainc against a naive full recompute, Structured Streaming and a read-only floor.

Run `make bench` (or `python -m benchmarks.run --help`); the results go to benchmarks/results/RESULTS.md.
"""
