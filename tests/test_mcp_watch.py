"""The MCP server lives for hours and refreshes from file-system notices: what another
process adds, changes or removes in any memory folder is seen by the very next call
(a real `git-memex mcp`, driven by the official SDK's client)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from memex.core import frontmatter, model
from memex.core.ulid import new_ulid
from tests.conftest import BIN
from tests.helpers.mcp_helpers import Server, make_env, make_repo


def _ids(srv: Server, query: str) -> set[str]:
    return {h["id"] for h in srv.ok("memory_search", {"query": query})["hits"]}


def _shared(repo: Path, body: str) -> tuple[str, Path]:
    memory = model.Memory(id=new_ulid(), scope="project", type="fact", title=body, body=body,
                          review_state="published", trust_level="reviewed",
                          created_at="2026-11-01T10:00:00Z", updated_at="2026-11-01T10:00:00Z")
    folder = repo / ".memex"
    folder.mkdir(exist_ok=True)
    path = folder / f"{memory.id}.md"
    path.write_text(frontmatter.emit(memory), encoding="utf-8")
    return memory.id, path


def test_changes_by_other_processes_are_seen_by_the_next_call(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    repo = make_repo(tmp_path / "repo", env)
    first, path = _shared(repo, "Deploys go through the release train")
    full_env = dict(os.environ, **env)

    def capture(*args: str) -> str:
        done = subprocess.run([str(BIN / "git-memex"), "capture", *args, "--json"], cwd=repo,
                              env=full_env, capture_output=True, text=True, check=True)
        return str(json.loads(done.stdout)["id"])

    with Server(repo, env) as srv:
        assert _ids(srv, "release train") == {first}
        for _ in range(3):  # quiet calls in between: nothing to walk, nothing missed
            assert _ids(srv, "zebra crossing") == set()
        # added by another process, in folders that did not exist when the server started
        draft = capture("Zebra crossings need a lollipop person")
        assert _ids(srv, "zebra crossing") == {draft}
        mine = capture("Zebra stripes are my favourite pattern", "--scope", "personal")
        assert _ids(srv, "zebra") == {draft, mine}
        # changed in place by another process (an editor, git checkout)
        path.write_text(path.read_text(encoding="utf-8").replace("release train", "gondola"),
                        encoding="utf-8")
        assert _ids(srv, "gondola") == {first}
        assert _ids(srv, "release train") == set()
        # removed by another process
        path.unlink()
        assert _ids(srv, "gondola") == set()
        assert "no memory matches" in srv.error("memory_get", {"id": first})
        # the folder itself removed and made again
        (repo / ".memex").rmdir()
        again, _ = _shared(repo, "Gondolas replaced the release train")
        assert _ids(srv, "gondola") == {again}
