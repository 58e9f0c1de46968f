"""The join layer: the incremental join engine, its settings, JoinType, the output layout and time units.

Pure Spark transformations over two DataFrames; no table I/O, no state (that is `deltainc.pipeline`).
"""
