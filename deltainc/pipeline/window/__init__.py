"""One window's run: its join and what each source read (`join`), its write to the target (`target_writes`),
its too-late B rows (`too_late_writes`), and the run that ties them together and commits the window's
run-log row (`run`). It sits above the layers `job/`, `delta/`, `state/` and `target/`, which it may import and
which never import it, and below the controller, which runs its windows one by one and which it never imports."""
