"""The distribution name: free on PyPI (git-memex there is another project), and nothing
we ship tells anyone to install a bare name that resolves to someone else's package."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

import memex.adapters
from tests.helpers import invoke

ROOT = Path(__file__).resolve().parent.parent
NAME = "memex-git"
# `pip install git-memex`, `'git-memex[mcp]'`, `git-memex==1`: the other project's package.
BARE = re.compile(r"pip install\s+(-\S+\s+)*['\"]?git[-_.]memex(\[|['\"\s=<>~]|$)", re.M)


def test_pyproject_names_the_free_distribution() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert meta["name"] == NAME
    assert "git-memex" in meta["scripts"]  # the commands keep their names


def test_nothing_shipped_installs_the_taken_name() -> None:
    files = [ROOT / "README.md", *(ROOT / "docs").iterdir(), *(ROOT / "memex").rglob("*.py"),
             *(ROOT / "man").iterdir(), ROOT / ".pre-commit-hooks.yaml"]
    found = [f"{path}: {m.group(0)}" for path in files if path.is_file()
             for m in BARE.finditer(path.read_text("utf-8").replace("\\-", "-"))]
    assert not found
    assert BARE.search("pip install 'git-memex[mcp]'") and BARE.search("pip install git-memex")
    assert not BARE.search("pip install 'memex-git[mcp] @ git+https://h/git-memex@v1'")


def test_ci_example_installs_this_distribution_from_its_repository() -> None:
    workflow = yaml.safe_load((ROOT / "docs" / "ci-example.yml").read_text("utf-8"))
    source = workflow["env"]["GIT_MEMEX_SOURCE"]
    assert source.startswith("git+https://")
    runs = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    install = next(r for r in runs if r.startswith("pip install"))
    spec = install.removeprefix("pip install").strip().strip('"').replace(
        "${GIT_MEMEX_SOURCE}", source)
    requirement = Requirement(spec)
    assert requirement.name == NAME and requirement.url == source


def test_mcp_without_the_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                                    repo: Path) -> None:
    monkeypatch.setitem(sys.modules, "memex.adapters.mcp_server", None)  # import fails
    # an earlier test in this process may have imported it: `from memex.adapters import
    # mcp_server` would then find the package attribute and never ask sys.modules
    monkeypatch.delattr(memex.adapters, "mcp_server", raising=False)
    result = invoke("mcp")
    assert result.exit_code == 1
    assert f"{sys.executable} -m pip install 'mcp>=2,<3'" in result.stderr
    assert "git-memex[" not in result.stderr
