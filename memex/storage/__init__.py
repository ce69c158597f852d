"""Files, settings and git: homes, the store's atomic I/O, locks, the usage log."""
