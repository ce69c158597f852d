"""What the MCP server tells hosts about itself: tool schemas that validate against the
JSON Schema metaschema and state what the server enforces, honest annotations, prompts
and resources that exist, a parse error for a line that is not JSON; and what an agent
is told when it writes outside git."""

from __future__ import annotations

from pathlib import Path

from memex.storage import homes
from memex.workflows import agent


def test_add_outside_git_is_personal_and_says_so(nogit_dir: Path) -> None:
    out = agent.add(homes.workspace(), "Prefers tabs over spaces")
    assert out["scope"] == "personal"
    assert any("not in a git repository" in n and "personal" in n for n in out["notices"])
    asked = agent.add(homes.workspace(), "A local project fact", scope="project")
    assert asked["scope"] == "project"
    assert any("stay local on this machine" in n for n in asked["notices"])
