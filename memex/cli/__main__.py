"""`python -m memex.cli STEP ...` as older configs spell it: the same dispatcher."""

from __future__ import annotations

from memex.adapters.cli.main import main

if __name__ == "__main__":
    main()
