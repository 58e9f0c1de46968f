"""RESULTS.md, by part: what a run measured (results), the goals judged (verdicts), a section per scenario (daily,
growth, floor, reload, stream, fixed_cost, connect; the others keep the Markdown their module returns), and the
page that assembles them (render). The report names no module above it: the harness imports it, never the reverse."""
