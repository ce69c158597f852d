"""git's habits: listings page through core.pager on a terminal (and only there),
`list --limit`, scores in fixed-point notation."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

import pytest

from memex.adapters.cli import _render
from tests.conftest import BIN
from tests.helpers import git, invoke, invoke_json


def test_scores_are_fixed_point() -> None:
    assert _render.score(2.42e-06) == "0.00000242"
    assert _render.score(0.5) == "0.500" and _render.score(0) == "0.000"
    assert _render.score(12.3456) == "12.346"
    assert "e" not in _render.score(1.386e-06)


def test_search_prints_no_exponent(repo: Path) -> None:
    invoke("capture", "Deploys go through the staging cluster")
    out = invoke("search", "staging", "--explain").stdout
    assert "staging" in out and "e-0" not in out


def test_list_limit(repo: Path) -> None:
    ids = [invoke_json("capture", f"Fact number {n}")["id"] for n in range(3)]
    result = invoke("list", "--limit", "2")
    assert result.exit_code == 0
    assert ids[2][:10] in result.stdout and ids[0][:10] not in result.stdout
    assert "the newest 2 of 3 shown" in result.stderr
    shown = invoke_json("list", "--limit", "1")
    assert [m["id"] for m in shown] == [ids[2]]
    assert invoke("list", "--limit", "0").exit_code == 2


def _run_on_a_terminal(argv: list[str], cwd: Path) -> bytes:
    main, sub = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=sub,
                            stderr=subprocess.DEVNULL, env=dict(os.environ))
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(main)
    return out


def test_listings_use_core_pager_on_a_terminal_only(repo: Path, tmp_path: Path) -> None:
    invoke("capture", "Paged like git log")
    paged = tmp_path / "paged.txt"
    git("config", "core.pager", f"cat > {paged}", cwd=repo)
    _run_on_a_terminal([str(BIN / "git-memex"), "list"], repo)
    assert "Paged like git log" in paged.read_text(encoding="utf-8")
    paged.unlink()
    piped = subprocess.run([str(BIN / "git-memex"), "list"], cwd=repo, capture_output=True,
                           text=True)
    assert "Paged like git log" in piped.stdout and not paged.exists()
    os.environ["GIT_PAGER"] = "cat"  # git's own override wins over core.pager
    try:
        shown = _run_on_a_terminal([str(BIN / "git-memex"), "search", "paged"], repo)
    finally:
        del os.environ["GIT_PAGER"]
    assert b"Paged like git log" in shown and not paged.exists()


def test_import_is_a_summary_with_a_bar_on_a_terminal(repo: Path, tmp_path: Path,
                                                     memex_home: Path) -> None:
    for n in range(5):
        invoke("capture", f"Exported fact {n}")
    archive = tmp_path / "all.jsonl"
    archive.write_text(invoke("export").stdout, encoding="utf-8")
    for path in memex_home.rglob("*.md"):
        path.unlink()
    quiet = invoke("import", str(archive))
    assert quiet.exit_code == 0 and quiet.stdout == ""
    assert quiet.stderr.strip().splitlines()[-1].startswith("5 imported, 0 unchanged")
    for path in memex_home.rglob("*.md"):
        path.unlink()
    loud = invoke("import", str(archive), "--verbose")
    assert len(loud.stdout.splitlines()) == 5
    for path in memex_home.rglob("*.md"):
        path.unlink()
    main, sub = pty.openpty()
    proc = subprocess.run([str(BIN / "git-memex"), "import", str(archive)], cwd=repo,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=sub,
                          env=dict(os.environ), timeout=60)
    os.close(sub)
    seen = os.read(main, 65536).decode("utf-8", "replace")
    os.close(main)
    assert proc.returncode == 0 and proc.stdout == b""
    assert "importing" in seen and "5 imported" in seen


def test_tables_measure_cjk_and_fit_the_terminal() -> None:
    rows = [["01", "部署先走预发布环境然后再上线生产环境并通知团队"], ["02", "plain title"]]
    text = _render.table(rows, ("ID", "TITLE"), columns=30)
    lines = text.splitlines()
    assert all(_render.width(line) <= 30 for line in lines)
    assert lines[2].endswith("\u2026") and lines[3].endswith("plain title")
    wide = _render.table([["雪", "x"], ["ab", "y"]], ("A", "B"), columns=0)
    starts = [_render.width(line[:line.index(c)])
              for line, c in zip(wide.splitlines()[2:], "xy", strict=True)]
    assert starts == [5, 5]  # 雪 takes two columns: B lines up on the screen


def test_no_color_turns_styling_off(monkeypatch: pytest.MonkeyPatch, nogit_dir: Path) -> None:
    from click.testing import CliRunner

    from memex.adapters.cli.main import cli

    styled = CliRunner().invoke(cli, ["demo"], color=True).output
    assert "\x1b[1m" in styled
    monkeypatch.setenv("NO_COLOR", "1")
    plain = CliRunner().invoke(cli, ["demo"], color=True).output
    assert "\x1b[" not in plain and "$ git memex capture" in plain


def test_a_large_first_read_says_what_it_is_doing(repo: Path) -> None:
    from memex.adapters.cli import _common
    from tests.helpers.memfiles import memory, write

    for n in range(_common.INDEX_PROGRESS_MIN):
        write(repo, memory(title=f"Bulk fact {n}", body=f"bulk body {n}"))
    exe = str(BIN / "git-memex")
    main, sub = pty.openpty()
    proc = subprocess.run([exe, "list", "--limit", "1"], cwd=repo, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=sub, env=dict(os.environ),
                          timeout=120)
    os.close(sub)
    seen = os.read(main, 65536).decode("utf-8", "replace")
    os.close(main)
    assert proc.returncode == 0 and "indexing memories" in seen  # a bar on a terminal
    write(repo, memory(title="One more", body="one more body"))
    small = subprocess.run([exe, "list", "--limit", "1"], cwd=repo, capture_output=True,
                           text=True)
    assert "indexed" not in small.stderr  # a small refresh says nothing
    rebuilt = subprocess.run([exe, "reindex", "--full"], cwd=repo, capture_output=True,
                             text=True)
    assert rebuilt.returncode == 0
    (repo / ".git" / "memex").rename(repo / ".git" / "memex-old")  # as after a clone
    first = subprocess.run([exe, "list", "--limit", "1"], cwd=repo, capture_output=True,
                           text=True)
    assert f"git-memex: indexed {_common.INDEX_PROGRESS_MIN + 1} memory files" in first.stderr


def test_quiet_silences_chatter_not_data(repo: Path, tmp_path: Path) -> None:
    loud = invoke("init", "--yes")
    assert loud.exit_code == 0 and loud.stdout
    again = invoke("init", "--yes", "-q")
    assert again.exit_code == 0 and again.stdout == "" and again.stderr == ""
    memory = invoke_json("capture", "Quiet please")["id"]
    archive = tmp_path / "a.jsonl"
    archive.write_text(invoke("export").stdout, encoding="utf-8")
    imported = invoke("import", str(archive), "--quiet")
    assert imported.exit_code == 0 and imported.stdout == "" and imported.stderr == ""
    assert invoke("reindex", "-q").stderr == ""
    submitted = invoke("submit", memory, "-q")
    assert submitted.exit_code == 0 and "submitted" not in submitted.stdout
    data = invoke_json("reindex", "-q")  # --json output is data: it stays
    assert data


def test_log_diff_and_show_page_like_gits(repo: Path, tmp_path: Path) -> None:
    """git pages `git log`, `git diff` and `git show` on a terminal; so do these."""
    invoke_json("init", "--yes")
    memory = invoke_json("capture", "Paged like git show")["id"]
    invoke("submit", memory)
    invoke("update", memory, "--title", "Paged like git diff")
    paged = tmp_path / "paged.txt"
    git("config", "core.pager", f"cat >> {paged}", cwd=repo)
    for step in (["log", memory], ["diff"], ["show", memory]):
        shown = _run_on_a_terminal([str(BIN / "git-memex"), *step], repo)
        assert b"Paged like git" not in shown, step
    text = paged.read_text(encoding="utf-8")
    assert text.count(memory[:10]) >= 3 and "title: Paged like git show -> " in text
