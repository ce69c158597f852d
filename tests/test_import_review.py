"""Review fixes of the import (stop 26): nothing a report shows holds a secret the
stored file masks (one masking step), and a private block or key spanning two fields
is masked in both, never lost and never a crash (capture and import alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memex.core import redact
from tests.conftest import BIN, run_cli

TOKENS = ["ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
          "github_pat_" + "11ABCDEFG0" + "abcdefghijKLMNOPQRSTuv_" + "0123456789" * 5,
          "AKIA" + "QYLPMN5HFIQR7XYA",
          "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"]


def _ulid(n: int) -> str:
    return f"01J{n:023d}"


def _archive(path: Path, texts: list[str]) -> Path:
    lines = [json.dumps({"format": "git-memex-export", "version": 1})]
    for text in texts:
        mid = text.split("\n")[1].removeprefix("id: ")
        lines.append(json.dumps({"home": "personal", "name": f"{mid}.md", "text": text}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _text(mid: str, lines: str = "", body: str = "a plain note") -> str:
    return (f"---\nid: {mid}\nschema_version: 2\nrevision: 1\nscope: personal\n{lines}"
            "created_at: 2026-11-01T00:00:00Z\nupdated_at: 2026-11-01T00:00:00Z\n"
            f"---\n\n{body}\n")


def _files(home: Path) -> str:
    return "".join(p.read_text() for p in sorted(home.rglob("*.md")))


@pytest.mark.parametrize("field", ["approved_by", "proposed_by", "review_history"])
def test_no_report_shows_a_secret_the_file_masks(repo: Path, tmp_path: Path,
                                                 memex_home: Path, field: str) -> None:
    texts = []
    for n, token in enumerate(TOKENS, start=1):
        if field == "review_history":
            lines = ("trust_level: reviewed\nreview_history:\n  - {at: 2026-11-01T00:00:00Z, "
                     f"by: local:{token}, from: none, to: none, note: x}}\n")
        else:
            lines = f"trust_level: reviewed\n{field}: local:{token}\n"
        texts.append(_text(_ulid(n), lines))
    archive = _archive(tmp_path / "in.jsonl", texts)
    for extra in ((), ("--json",)):
        proc = run_cli(str(BIN / "git-memex"), "import", str(archive), *extra, cwd=repo,
                       env={"GIT_MEMEX_HOME": str(tmp_path / f"home{len(extra)}")})
        assert proc.returncode == 0, proc.stderr
        shown = proc.stdout.decode() + proc.stderr.decode()
        assert "untrusted draft" in shown
        stored = _files(tmp_path / f"home{len(extra)}")
        assert stored.count("imported from") == len(TOKENS)
        for token in TOKENS:
            assert token not in stored
            assert token not in shown, (field, token)
        assert not redact.find_secrets(shown)
