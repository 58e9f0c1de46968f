"""The demo (`deltainc demo`) and its data: the generated sample sources, their jobs, and the seed example."""
