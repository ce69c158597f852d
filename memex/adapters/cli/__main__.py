"""`python -m memex.adapters.cli STEP ...`: the dispatcher, for hosts where git-memex is not
on PATH."""

from __future__ import annotations

from memex.adapters.cli.main import main

if __name__ == "__main__":
    main()
