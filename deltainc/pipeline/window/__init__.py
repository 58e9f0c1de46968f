"""One window's run: its commit to the target and a stop during it (`commit`), its too-late B rows
(`too_late_writes`), and the step sequence that ties them together and commits the window's run-log row (`run`). It
sits above the layers `job/`, `delta/`, `state/` and `target/`, which it may import and which never import it, and
below the controller, which runs its windows one by one and which it never imports. What it asks of its sources
besides their rows is the prepared job's (`deltainc.pipeline.prepared_job`)."""
