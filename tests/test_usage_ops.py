"""The usage log's operation names and who writes them: reads are logged by the library
(whatever adapter asked), and every name a reader tests for is one something writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from memex.search import engine
from memex.storage import homes, usage
from memex.workflows import reads
from tests.helpers import invoke

PACKAGE = Path(__file__).resolve().parents[1] / "memex"


def _entries(ws: homes.Workspace) -> list[tuple[str, list[str]]]:
    return [(str(e["op"]), list(e["ids"])) for e in usage.entries(ws.home)]  # type: ignore[call-overload]


def test_library_reads_are_logged_whatever_the_caller(repo: Path) -> None:
    for text in ("the staging database runs on port 5433",
                 "deploys go out on Tuesdays after the freeze",
                 "the CI cache key includes the lockfile hash"):
        assert invoke("capture", "--scope", "personal", text).exit_code == 0
    ws = homes.workspace()
    usage.log_path(ws.home).unlink(missing_ok=True)

    items, _ = reads.each_listed(ws, limit=2)
    listed = [str(json.loads(i)["id"]) for i in items]
    shown, _ = reads.show(ws, listed[0])
    page, total, _ = reads.newest_page(ws, 1, offset=1)
    found = reads.search(ws, engine.SearchRequest(query="staging database port"))

    assert _entries(ws) == [
        ("list", listed),
        ("read", [shown.id]),
        ("list", [page[0].id]),
        ("search", [h.id for h in found.hits]),
    ]
    assert len(listed) == 2 and total == 3 and found.hits


def test_a_stream_left_early_logs_what_it_handed_out(repo: Path) -> None:
    for n in range(3):
        result = invoke("capture", "--scope", "personal", f"note number {n} about caching")
        assert result.exit_code == 0
    ws = homes.workspace()
    usage.log_path(ws.home).unlink(missing_ok=True)
    items, _ = reads.each_listed(ws)
    first = json.loads(next(items))
    items.close()  # type: ignore[attr-defined]
    assert _entries(ws) == [("list", [first["id"]])]


def test_an_internal_search_is_not_a_read(repo: Path) -> None:
    result = invoke("capture", "--scope", "personal", "the cache lives in /var/cache")
    assert result.exit_code == 0
    ws = homes.workspace()
    usage.log_path(ws.home).unlink(missing_ok=True)
    engine.search(ws, engine.SearchRequest(query="cache"))
    assert _entries(ws) == []


def _written_ops() -> set[str]:
    written: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        written |= set(re.findall(r"usage\.record(?:_in)?\([^)]*?usage\.Op\.([A-Z]+)",
                                  path.read_text(encoding="utf-8"), re.S))
    return written


def test_every_operation_name_is_written_somewhere() -> None:
    assert {op.name for op in usage.Op} == _written_ops()


def test_no_adapter_writes_the_usage_log() -> None:
    adapters = PACKAGE / "adapters"
    offenders = [str(p.relative_to(PACKAGE)) for p in adapters.rglob("*.py")
                 if "usage.record" in p.read_text(encoding="utf-8")]
    assert offenders == []
