"""Pure rules: no I/O, nothing of ours below it."""
