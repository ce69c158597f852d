"""What a whole `git-memex search` process loads when no memory file changed since the
last refresh: nothing that reads, parses or forks for files (the front-matter parser,
the forked build), no OpenSSL (hashlib's) for the two digests it takes, no pattern it
does not use compiled, and no class docstring written by dataclasses (from the class's
inspect.signature, ~0.3 ms each). A change on disk loads the parser (the control)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from memex.core import clock, fingerprint, model, ulid
from memex.index import tokens
from memex.search import answers
from memex.storage import configfile, homes, store
from tests.helpers import invoke_json, memfiles

CODE = """
import inspect, sys
signatures = []  # dataclasses asks for one to write a class's missing docstring
real = inspect.signature
inspect.signature = lambda obj, *a, **k: signatures.append(repr(obj)) or real(obj, *a, **k)
sys.argv = ["git-memex", "search", "deploy"]
from memex.adapters.cli.main import main
try:
    main()
except SystemExit:
    pass
import json, re
compiled = [key[1] for key in re._cache if isinstance(key[1], str)]
sys.stderr.write("\\nLOADED " + json.dumps([sorted(sys.modules), compiled, signatures]) + "\\n")
"""
# (memex.index.ahead is loaded: the walk asks its fork gate; what a fork needs is not)
NOT_LOADED = ("memex.core.frontmatter", "pickle", "queue", "_hashlib", "hashlib",
              "memex.storage.journal")


# Patterns of modules a search imports that only writes, time options, git config
# files or id prefixes use: compiled where first used (memex.core.lazyre).
UNUSED_PATTERNS = [clock._RFC3339, clock._RELATIVE, ulid.ULID_RE, model._TAG_RE,
                   model._CONTROL, fingerprint._FENCE_LINE, tokens._CJK_QUESTION,
                   ulid.PREFIX_RE, configfile._SECTION, configfile._ENTRY,
                   configfile._CONTROL,
                   # what holds an answer: looked for only in a question's candidates
                   *(kind.pattern for kind in answers.KINDS if kind.pattern is not None)]


def _search_process(cwd: Path) -> tuple[str, set[str], set[str], list[str]]:
    # Without coverage in the child (the README command starts it in every Python
    # process that sees these): coverage loads hashlib itself.
    env = {k: v for k, v in os.environ.items()
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run([sys.executable, "-c", CODE], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    loaded, compiled, signatures = json.loads(done.stderr.rsplit("LOADED ", 1)[1])
    return done.stdout, set(loaded), set(compiled), signatures


def test_a_no_change_search_loads_no_parser_and_no_openssl(repo: Path) -> None:
    mid = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    for home in store.homes(homes.workspace(repo)):  # an hour old: no racy stamp
        for path in home.path.glob("*.md"):
            os.utime(path, (time.time() - 3600, time.time() - 3600))
    assert [h["id"] for h in invoke_json("search", "deploy")] == [mid]  # the index is made
    out, loaded, compiled, signatures = _search_process(repo)
    assert mid[:10] in out
    assert "memex.search.engine" in loaded and "sqlite3" in loaded
    assert sorted(set(NOT_LOADED) & loaded) == []
    assert sorted({p.pattern for p in UNUSED_PATTERNS} & compiled) == []
    assert tokens._WORD.pattern in compiled  # control: the query's own are compiled
    # every dataclass it makes has a docstring: none costs an inspect.signature
    assert signatures == []
    # control: a file added since the last refresh is read, so the parser loads
    memfiles.put(memfiles.outbox(repo), "Deploy on Fridays only after the freeze")
    out, loaded, _, _ = _search_process(repo)
    assert out.count("\n") > 1 and "memex.core.frontmatter" in loaded
