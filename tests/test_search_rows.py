"""A search reads eligibility and boosts from its candidate rows: no Memory is made per
candidate (a common word matches thousands of memories, and the MCP server searches on
every call). Which memories are eligible is tested in test_search.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from memex.core import model
from memex.search import engine
from memex.storage import homes
from tests.helpers import memfiles
from tests.helpers.spies import record_calls


def test_a_search_makes_no_memory_per_candidate_row(repo: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    folder = memfiles.personal()
    for i in range(40):
        memfiles.put(folder, f"Deploy note {i}: every deploy goes through staging",
                     scope="personal")
    memfiles.put(folder, "A deploy that expired", scope="personal",
                 expires_at="2026-01-02T00:00:00Z")
    ws = homes.workspace(repo)
    request = engine.SearchRequest(query="deploy", limit=5)
    first = engine.search(ws, request)  # builds the index
    made = record_calls(monkeypatch, model.Memory, "__init__")
    again = engine.search(ws, request)
    assert len(again.hits) == 5
    assert [h.id for h in again.hits] == [h.id for h in first.hits]
    assert made == []  # main made two per candidate (eligibility, then the boosts)
