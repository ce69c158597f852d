"""Hook handlers for hosts that run commands at session events (Claude Code).

Each handler takes the host's JSON payload (a dict) and returns the host's JSON answer,
or None for "nothing to say". They may raise: the CLI adapter turns any failure into
silence (exit 0, no output) so a hook never blocks a session.

Claude Code: SessionStart -> the context block; UserPromptSubmit -> keyword capture
from the prompt (the user's own words, never assistant output) plus a short nudge of
memories that may be relevant. Both answer with
{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memex.core.errors import MemexError
from memex.search import engine as search
from memex.storage import homes, hooklog
from memex.storage.homes import Workspace
from memex.workflows import agent, context, keywords

MAX_QUERY = 500


def parse(raw: bytes) -> dict[str, Any]:
    """The host's payload; anything but a JSON object is treated as empty."""
    if not raw.strip():
        return {}
    data = json.loads(raw.decode("utf-8"))
    return data if isinstance(data, dict) else {}


def _workspace(payload: dict[str, Any], hook: str) -> Workspace:
    """The workspace of the payload's cwd; a setting that does not parse is logged to
    the hook log and its default used (a hook never blocks the prompt)."""
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd and Path(cwd).is_dir():
        ws = homes.workspace(Path(cwd))
    else:
        ws = homes.workspace()
    home = ws.home
    ws.on_bad_setting = lambda message: hooklog.record(home, hook, message)
    return ws


def _answer(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def session_start(payload: dict[str, Any]) -> dict[str, Any] | None:
    ws = _workspace(payload, "session_start")
    return _answer("SessionStart", context.build(ws).text())


def nudge(ws: Workspace, prompt: str, skip: set[str]) -> list[str]:
    """One line per memory that may bear on PROMPT (at most memex.nudgeItems, default 3)."""
    limit = ws.int_setting("memex.nudgeItems")
    if not limit or not prompt.strip():
        return []
    try:
        result = search.search(ws, search.SearchRequest(
            query=prompt[:MAX_QUERY], limit=limit + len(skip),
            scopes=agent.allowed_scopes(ws)))
    except MemexError:
        return []
    who = ws.identity()
    lines = [context.one_line(h.memory, binding=context.passes_rule1(h.memory, who))
             for h in result.hits if h.id not in skip]
    return lines[:limit]


def user_prompt_submit(payload: dict[str, Any]) -> dict[str, Any] | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    ws = _workspace(payload, "user_prompt_submit")
    results, problems = keywords.capture_message(ws, prompt)
    for problem in problems:  # a line that could not be saved: the hook log keeps it
        hooklog.record(ws.home, "user_prompt_submit", problem)
    show_personal = context.personal_for_agents(ws)
    parts: list[str] = []
    if results:
        saved = ["git-memex saved from this prompt (project memories are drafts in the "
                 "user's outbox until `git memex submit`):"]
        for result in results:
            memory = result.memory
            verb = "saved" if result.created else "already remembered"
            if memory.scope == "personal" and not show_personal:
                saved.append(f"- {verb} a personal memory {memory.id[:10]}")
            else:
                saved.append(f"{context.one_line(memory)} ({verb})")
        parts.append("\n".join(saved))
    related = nudge(ws, prompt, {r.memory.id for r in results})
    if related:
        parts.append("\n".join([
            "git-memex: memories that may bear on this prompt (retrieved history, "
            "verify before acting; memory_get ID shows one in full):", *related]))
    if not parts:
        return None
    return _answer("UserPromptSubmit", "\n\n".join(parts))
