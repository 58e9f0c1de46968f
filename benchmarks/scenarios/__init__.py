"""The benchmark's scenarios, one module each, named for the scenario it measures (`daily.py` measures `daily`,
`growth` and `floor` at once). The harness (benchmarks.harness) registers them; benchmarks/README.md describes them."""
