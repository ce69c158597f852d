"""context reads the index a page at a time: the block must be the one a read of every
memory (reads.load_view) gives, across page boundaries, ties and ineligible rows."""

from __future__ import annotations

import random
from pathlib import Path

from memex.core import model
from memex.storage import homes
from memex.workflows import context, reads
from tests.test_context import ME, approved_instruction, personal, put, shared


def reference(query: str | None) -> context.Block:
    """The block as built from every eligible memory (the code before paging)."""
    ws = homes.workspace()
    caps = context.limits(ws)
    memories = [x.memory for x in reads.load_view(ws, ["project", "org", "personal"]).items]
    instructions = [m for m in memories if context.passes_rule1(m, ws.identity())]
    block = context.Block(query=query, limits=caps)
    block.instructions = [context._line(m, binding=True) for m in instructions[:20]]
    taken = {m.id for m in instructions}
    for name, scopes in (("project", ("project", "org")), ("personal", ("personal",))):
        pool = sorted((m for m in memories if m.scope in scopes), key=context.tier)
        ranked: list[model.Memory] = []
        if query:
            by_id = {m.id: m for m in pool}
            ranked = [by_id[i] for i in context._ranked(ws, query, scopes,
                                                          caps[name] + len(taken))
                      if i in by_id]
        setattr(block, name, [context._line(m) for m in context._pick(pool, ranked,
                                                                       caps[name], taken)])
    return block


def test_paged_block_matches_a_read_of_everything(repo: Path, memex_home: Path) -> None:
    rng = random.Random(3)
    for i in range(150):
        day = f"2026-11-{rng.randint(1, 12):02d}T00:00:00Z"  # many ties: id decides
        fields: dict[str, object] = {}
        if day >= "2026-11-06":
            fields["expires_at"] = "2026-11-20T00:00:00Z"  # the newest ones gone by now
        elif i % 9 == 0:
            fields.update(approved_instruction())
        elif i % 11 == 0:
            fields["status"] = "archived"
        elif i % 13 == 0:
            fields["valid_from"] = "2099-01-01T00:00:00Z"
        if i % 4 == 1:  # issue 12's tiers: proposed after reviewed, drafts capped
            fields["review_state"] = "proposed"
        elif i % 4 == 2:
            fields["review_state"] = "draft"
        put(shared(repo), "project", f"deploy note {i} about staging", day, **fields)
    for i in range(12):
        put(personal(memex_home), "personal", f"my deploy habit {i}",
            f"2026-11-{i % 4 + 1:02d}T00:00:00Z",
            **(approved_instruction(created_by=ME) if i % 5 == 0 else {}))
    ws = homes.workspace()
    for query in (None, "staging deploy note 7"):
        got = context.build(ws, query=query, record=False)
        want = reference(query)
        assert got.ids == want.ids and got.text() == want.text(), query
        assert len(got.project) == 8 and got.instructions


def test_list_json_streams_what_a_full_read_gives(repo: Path, memex_home: Path) -> None:
    import json

    from tests.helpers import invoke

    assert invoke("list", "--json").stdout == "[]\n"
    rng = random.Random(5)
    for i in range(140):
        day = f"2026-11-{rng.randint(1, 9):02d}T00:00:00Z"
        fields: dict[str, object] = {}
        if i % 7 == 0:
            fields["status"] = "archived"
        elif i % 5 == 0:
            fields["expires_at"] = "2026-11-10T00:00:00Z"
        put(shared(repo), "project", f"fact {i} with ünïcode 依赖", day, **fields)
    put(personal(memex_home), "personal", "mine", "2026-11-03T00:00:00Z")
    ws = homes.workspace()
    for args, kwargs in (((), {}), (("--include", "all"), {"include_all": True}),
                         (("--scope", "personal"), {"scopes": ["personal"]}),
                         (("--as-of", "2026-11-05T00:00:00Z"),
                          {"as_of": "2026-11-05T00:00:00Z"})):
        view = reads.load_view(ws, **kwargs)  # type: ignore[arg-type]
        want = json.dumps([reads.as_json(x) for x in view.items], ensure_ascii=False,
                          indent=2, default=str) + "\n"
        got = invoke("list", "--json", *args)
        assert got.exit_code == 0 and got.stdout == want, args
        assert view.items
