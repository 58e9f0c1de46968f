"""The target's writers: the two slices' replace, the forward-only MERGE, layout, schema, too-late rows."""
