"""The harness behind `python -m benchmarks.run`: what a scenario's run gets (context), the scenarios in the order
they run, with their goals and how each runs (registry), the command line (cli) and the run itself (runner)."""
