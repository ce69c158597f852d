"""What a whole `git-memex show / update / capture` process loads (issue 18: these run
on every prompt of a hook or an agent, and a module a step does not use costs each run
its import). `show` writes nothing, so it loads neither the writer nor the ~100 secret
patterns redaction compiles; the plain forms of `update` and `capture` run without
click, as search, show and context do (their click paths are the control)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import invoke_json

CODE = """
import sys
sys.argv = ["git-memex", *sys.argv[1:]]
from memex.adapters.cli.main import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nLOADED " + __import__("json").dumps(sorted(sys.modules)) + "\\n")
"""


def _loaded(cwd: Path, *argv: str) -> tuple[str, set[str]]:
    """stdout of a whole `git-memex ARGV` process and the modules it had loaded."""
    env = {k: v for k, v in os.environ.items()  # coverage in the child loads its own
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run([sys.executable, "-c", CODE, *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout, set(json.loads(done.stderr.rsplit("LOADED ", 1)[1]))


WRITER = ("memex.workflows.writes", "memex.core.redact", "memex.core.secret_rules",
          "memex.core.bare_secrets")


def test_show_loads_no_writer_and_no_secret_patterns(repo: Path) -> None:
    mid = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    out, loaded = _loaded(repo, "show", mid)
    assert "staging VPN" in out
    assert sorted(set(WRITER) & loaded) == []
    out, loaded = _loaded(repo, "show", mid, "--json")
    assert json.loads(out)["id"] == mid and sorted(set(WRITER) & loaded) == []
    # control: a write loads them
    _, loaded = _loaded(repo, "pin", mid)
    assert set(WRITER) <= loaded


COMPILED = """
import json, re, sys
from re import _compiler
import memex.adapters.cli  # its compiler first (codecache: kept code), counted through
made = []
compile_ = _compiler.compile
def counting(p, flags=0):
    made.append(p)
    return compile_(p, flags)
_compiler.compile = counting
sys.argv = ["git-memex", *sys.argv[1:]]
from memex.adapters.cli.main import main
try:
    main()
except SystemExit:
    pass
_compiler.compile = compile_
from memex.core import bare_secrets, redact
rules = {r.regex.pattern for r in redact._TOKEN_RULES}
own = {str(v.pattern) for m in (redact, bare_secrets) for v in vars(m).values()
       if hasattr(v, "fullmatch") and hasattr(v, "pattern")}
made = [str(p) for p in made]
sys.stderr.write("\\nMADE " + json.dumps([len(rules), len(own), sorted(rules & set(made)),
                                          sorted((own - rules) & set(made))]) + "\\n")
"""


def _compiled(cwd: Path, *argv: str) -> tuple[int, int, list[str], list[str]]:
    """How many format rules and other patterns redaction has, and those of each that a
    whole `git-memex ARGV` process compiled."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run([sys.executable, "-c", COMPILED, *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    rules, own, made_rules, made_own = json.loads(done.stderr.rsplit("MADE ", 1)[1])
    return rules, own, made_rules, made_own


def test_a_write_compiles_only_the_secret_patterns_its_text_needs(repo: Path) -> None:
    """Redaction's ~100 format rules and ~90 other patterns cost ~50 ms to compile, in
    every write: each is compiled when a text first needs it (a format rule when its
    prefix occurs), not when the module is imported."""
    rules, own, made_rules, made_own = _compiled(
        repo, "capture", "Deploys go through the staging VPN, see the runbook")
    assert rules >= 90 and own >= 60
    # what is compiled: the rules and patterns the text and the file's other fields need
    # (a time stamp's run holds ":", sidekiq's needle; the home's path a 64-hex run)
    assert len(made_rules) <= 5, made_rules
    assert len(made_own) <= own // 3, made_own
    # the rule a text needs is still compiled and run
    token = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
    rules, own, made_rules, made_own = _compiled(repo, "capture", f"the CI token {token}")
    assert any(p.startswith("gh[pousr]_") for p in made_rules), made_rules
    out = invoke_json("search", "CI token")
    assert token not in json.dumps(out)


def test_a_write_indexes_its_own_file_without_the_helper_process_machinery(
        repo: Path) -> None:
    """A write indexes the one file it wrote (build.note_written) in this process: the
    forked helper of large refreshes (index.ahead, with pickle and queue) is not loaded
    for it; a full reindex of several files still goes through it."""
    first = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    _, loaded = _loaded(repo, "capture", "The release train leaves on Thursdays")
    assert {"memex.index.ahead", "pickle"} & loaded == set()
    _, loaded = _loaded(repo, "update", first, "--tag", "deploy")
    assert {"memex.index.ahead", "pickle"} & loaded == set()
    assert "deploy" in json.loads(_loaded(repo, "show", first, "--json")[0])["tags"]
    _, loaded = _loaded(repo, "reindex", "--full")
    assert "memex.index.ahead" in loaded


SHARING = ("memex.workflows.team", "memex.workflows.hygiene_cache",
           "memex.workflows.word_cache", "memex.storage.rollback", "hashlib")


def test_capture_loads_neither_the_team_workflow_nor_the_health_caches(repo: Path) -> None:
    """capture writes one new draft: the tracked-file guard (team: submit's journal and
    rollback) and the health caches a delete clears are not its to load."""
    out, loaded = _loaded(repo, "capture", "The release train leaves on Thursdays",
                          "--json")
    mid = json.loads(out)["id"]
    assert sorted(set(SHARING) & loaded) == []
    # control: update guards a tracked file (team); a delete clears the caches
    _, loaded = _loaded(repo, "update", mid, "--tag", "release")
    assert "memex.workflows.team" in loaded
    _, loaded = _loaded(repo, "forget", mid, "--hard", "--yes")
    assert "memex.workflows.hygiene_cache" in loaded


def test_a_search_loads_no_archive_modules(repo: Path) -> None:
    """A search is a whole process on every prompt of a hook or an agent (issue 18):
    shutil (which loads bz2, lzma and zlib, ~2 ms) is not imported to find git or to
    ask the width of a stdout that is not a terminal, nor base64 (~0.9 ms) but for an
    unsettled submit's bytes, nor subprocess (~3 ms): its one git process, started
    ahead, is spawned without it; nor shlex, for a message it does not give."""
    mid = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    out, loaded = _loaded(repo, "search", "staging")
    assert mid[:10] in out
    assert {"shutil", "bz2", "lzma", "base64", "subprocess", "shlex"} & loaded == set()
    out, loaded = _loaded(repo, "search", "staging", "--json")
    assert json.loads(out)[0]["id"] == mid
    assert {"shutil", "bz2", "lzma", "base64", "subprocess", "shlex"} & loaded == set()


def test_capture_and_update_load_no_search(repo: Path) -> None:
    """A capture whose near-duplicate check can decide without the search (no memory
    holds enough of its rarest words) and an update load no search engine (~12-25 ms of
    imports a write: answers, synonyms, the engine): the check's word stemming is the
    index layer's (termcounts.stems) and a write asks the embeddings setting of the
    dense lane (dense.enabled). Seen failing: both loaded memex.search.engine. Control:
    a search loads it."""
    invoke_json("capture", "The release train leaves on Thursdays after the freeze")
    out, loaded = _loaded(repo, "capture", "Rotate the signing keys of the nightly "
                          "pipeline every quarter and record who did it", "--json")
    mid = json.loads(out)["id"]
    assert json.loads(out)["near_duplicates"] == []
    assert "memex.search.engine" not in loaded
    _, loaded = _loaded(repo, "update", mid, "--tag", "keys")
    assert "memex.search.engine" not in loaded
    _, loaded = _loaded(repo, "search", "signing")
    assert "memex.search.engine" in loaded


IDLE = "import os\nos.getloadavg = lambda: (0.0, 0.0, 0.0)\n"  # a CPU idle: the gate opens


def test_a_read_on_an_idle_machine_loads_no_fork_machinery(repo: Path) -> None:
    """Review A (stop 33): the lean walk asks index.ahead's fork gate before it lists a
    folder, so on an idle machine every read loaded pickle and queue (~3 ms) although
    only a folder of 20,000 files can fork; ahead now loads them when it forks."""
    mid = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    env = {k: v for k, v in os.environ.items()
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run([sys.executable, "-c", IDLE + CODE, "show", mid], cwd=repo,
                          env=env, capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stderr.rsplit("LOADED ", 1)[1]))
    assert "staging VPN" in done.stdout
    assert "memex.index.ahead" in loaded  # the gate was asked (a CPU idle)
    assert sorted({"pickle", "queue"} & loaded) == []


def test_the_fast_commands_load_no_inspect(repo: Path) -> None:
    """context, show, capture, update and search (the steps that run without click) make
    no dataclass without a docstring, which dataclasses would write from
    inspect.signature: inspect (with ast, dis, tokenize: ~8 ms) stays unloaded."""
    mid = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    for argv in (["context"], ["show", mid], ["capture", "Releases are tagged on Mondays"],
                 ["update", mid, "--importance", "high"], ["search", "deploy"]):
        _, loaded = _loaded(repo, *argv)
        assert sorted({"inspect", "ast", "dis"} & loaded) == [], argv
