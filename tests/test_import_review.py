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


PRIVATE_TITLE, PRIVATE_BODY = "deploy <private>alpha secretword1", "secretword2 </private> after"
PEM_BEGIN = "-----BEGIN " + "RSA PRIVATE" + " KEY-----"
PEM_KEY = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu"
PEM_END = "-----END " + "RSA PRIVATE" + " KEY-----"


def test_a_private_block_over_title_and_body_is_captured_masked(repo: Path,
                                                                memex_home: Path) -> None:
    proc = run_cli(str(BIN / "git-memex"), "capture", "--json", "--title", PRIVATE_TITLE,
                   PRIVATE_BODY, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    stored = _files(memex_home)
    assert "deploy [REDACTED]" in stored and "[REDACTED] after" in stored
    for shown in (stored, proc.stdout.decode(), proc.stderr.decode()):
        assert "secretword" not in shown and "alpha" not in shown
    assert data["redacted"] == ["private-block"]


def test_a_block_over_fields_is_imported_masked_with_the_rest(repo: Path, tmp_path: Path,
                                                              memex_home: Path) -> None:
    texts = [_text(_ulid(1), f'title: "{PRIVATE_TITLE}"\n', PRIVATE_BODY),
             _text(_ulid(2), f"aliases: [{PEM_BEGIN}, {PEM_KEY}, {PEM_END}]\n"),
             _text(_ulid(3), body="a clean note after them")]
    archive = _archive(tmp_path / "in.jsonl", texts)
    proc = run_cli(str(BIN / "git-memex"), "import", str(archive), "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [i["id"] for i in report["imported"]] == [_ulid(1), _ulid(2), _ulid(3)]
    stored = _files(memex_home)
    assert stored.count("\nid: ") == 3
    assert "deploy [REDACTED]" in stored and "[REDACTED] after" in stored
    for shown in (stored, proc.stdout.decode(), proc.stderr.decode()):
        assert "secretword" not in shown and "alpha" not in shown
        assert PEM_KEY[8:] not in shown
    assert any("masked 1 secret (pem-private-key)" in n for n in report["notices"])


@pytest.mark.parametrize("parts", [
    [PRIVATE_TITLE, PRIVATE_BODY],
    ["t <private>one", "two", "three </private>end"],
    ["t", "b", PEM_BEGIN, PEM_KEY, PEM_END],
    ["t <private>one", "b", PEM_BEGIN, PEM_KEY, "</private> x " + PEM_END]])
def test_redact_parts_gives_every_part_back_masked(parts: list[str]) -> None:
    pieces, joined = redact.redact_parts(parts)
    assert len(pieces) == len(parts) and joined.changed
    for word in ("secretword", "alpha", "one", "two", "three", PEM_KEY[8:]):
        assert not any(word in piece for piece in pieces)
    assert not any(redact.find_secrets(piece) for piece in pieces)


def test_the_masking_notice_is_said_before_a_refusal_it_caused() -> None:
    """An entry made invalid by masking (before redact_parts kept every field apart, a
    PEM key given as aliases became one alias over lines) says both, as main did."""
    from memex.core.errors import MemexError
    from memex.workflows import portable

    report = portable.ImportReport()
    ready = portable._Prepared(memory_id=_ulid(1), masked=f"{_ulid(1)}: masked 1 secret",
                               late=MemexError("invalid after masking"))
    with pytest.raises(MemexError, match="invalid after masking"):
        portable._import_one(None, None, ready, report, set(), False, None)  # type: ignore[arg-type]
    assert report.notices == [f"{_ulid(1)}: masked 1 secret"]
