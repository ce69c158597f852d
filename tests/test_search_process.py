"""What a whole `git-memex search` process loads when no memory file changed since the
last refresh: nothing that reads, parses or forks for files (the front-matter parser,
the forked build), and no OpenSSL (hashlib's) for the two digests it takes. A change
on disk loads the parser (the control)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import invoke_json, memfiles

CODE = """
import sys
sys.argv = ["git-memex", "search", "deploy"]
from memex.adapters.cli.main import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nLOADED " + " ".join(sorted(sys.modules)) + "\\n")
"""
NOT_LOADED = ("memex.core.frontmatter", "memex.index.ahead", "_hashlib", "hashlib")


def _search_process(cwd: Path) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", CODE], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True, check=True)
    loaded = done.stderr.rsplit("LOADED ", 1)[1].split()
    return done.stdout, set(loaded)


def test_a_no_change_search_loads_no_parser_and_no_openssl(repo: Path) -> None:
    mid = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    assert [h["id"] for h in invoke_json("search", "deploy")] == [mid]  # the index is made
    out, loaded = _search_process(repo)
    assert mid[:10] in out
    assert "memex.search.engine" in loaded and "sqlite3" in loaded
    assert sorted(set(NOT_LOADED) & loaded) == []
    # control: a file added since the last refresh is read, so the parser loads
    memfiles.put(memfiles.outbox(repo), "Deploy on Fridays only after the freeze")
    out, loaded = _search_process(repo)
    assert out.count("\n") > 1 and "memex.core.frontmatter" in loaded
