"""Query -> eligible, ranked, explained hits.

The interface here (SearchRequest, Hit, SearchResult, search) is what every caller
uses (CLI, MCP, context). This first version scans the files; the FTS5 index
replaces its internals behind the same interface.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memex import clock, lifecycle, model, reads, store
from memex.errors import UsageError
from memex.homes import Workspace

_TOKEN = re.compile(r"\w+", re.UNICODE)


@dataclass
class SearchRequest:
    query: str
    limit: int = 10
    scopes: tuple[str, ...] | None = None  # None: this project + personal (+ org)
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # all must be present
    statuses: tuple[str, ...] = ()
    as_of: str | None = None
    include_all: bool = False
    explain: bool = False


@dataclass
class Hit:
    id: str
    score: float
    lane: str
    scope: str
    status: str
    review_state: str | None
    title: str
    summary: str
    path: str
    memory: model.Memory
    explain: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id, "score": round(self.score, 4), "lane": self.lane,
            "scope": self.scope, "status": self.status, "review_state": self.review_state,
            "title": self.title, "summary": self.summary, "path": self.path,
            "type": self.memory.type, "tags": list(self.memory.tags),
        }
        if self.memory.status == "deprecated":
            data["warning"] = "deprecated"
        if self.explain:
            data["explain"] = self.explain
        return data


@dataclass
class SearchResult:
    hits: list[Hit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    quarantined: list[store.Quarantined] = field(default_factory=list)


def terms(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def search(ws: Workspace, req: SearchRequest) -> SearchResult:
    if not req.query.strip():
        raise UsageError("the query is empty")
    wanted = terms(req.query)
    view = reads.load_view(ws, req.scopes, include_all=True)
    result = SearchResult(warnings=view.warnings, quarantined=view.quarantined)
    at = clock.now_str()
    for item in view.items:
        m = item.memory
        if not req.include_all and not reads.eligible(m, at, req.as_of):
            continue
        if req.types and m.type not in req.types:
            continue
        if req.tags and not set(req.tags) <= set(m.tags):
            continue
        if req.statuses and m.status not in req.statuses:
            continue
        words = set(terms(f"{m.title} {' '.join(m.tags)} {m.body}"))
        matched = [t for t in wanted if t in words]
        if not matched:
            continue
        score = len(matched) / max(len(wanted), 1)
        if m.status == "deprecated" or lifecycle.is_expired(m, at):
            score *= 0.5
        result.hits.append(Hit(
            id=m.id, score=score, lane="scan", scope=m.scope, status=m.status,
            review_state=m.review_state, title=m.title, summary=m.summary,
            path=str(item.path), memory=m,
            explain={"matched": matched} if req.explain else {},
        ))
    result.hits.sort(key=lambda h: (-h.score, h.memory.updated_at), reverse=False)
    result.hits = result.hits[: req.limit]
    return result
