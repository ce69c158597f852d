"""AGENTS.md distillation: approved, trusted, stable project instructions as a diff.

Only what DESIGN.md's rule 1 lets into an agent's instructions qualifies: role
instruction, instruction_state approved, trust_level reviewed or trusted, review
approved or published, status active, not expired, never personal, never
source inference, and no open contradiction. The result is one marked section of
AGENTS.md that `--write` replaces in place, so running it twice changes nothing.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from memex.core import clock, model, policy
from memex.core.errors import MemexError
from memex.storage import store
from memex.storage.homes import Workspace
from memex.workflows import conflicts, reads

# The marker style of clients.py's AGENTS.md block (`<!-- git-memex: begin ...`), with
# an end marker of its own so neither block's end can be taken for the other's.
BEGIN = "<!-- git-memex: begin distilled instructions (git memex distill --write) -->"
END = "<!-- git-memex: end distilled instructions -->"
# Spellings written before; recognised when reading, replaced by the next --write.
LEGACY_MARKERS = (("<!-- git-memex:begin distilled instructions (git memex distill --write) -->",
                   "<!-- git-memex:end -->"),)
HEADING = "## Project instructions from git-memex"
NOTE = ("Approved project memories (`role: instruction`). Edit or supersede the memory, "
        "then run `git memex distill --write`; edits to this block are overwritten.")


@dataclass
class Distilled:
    path: Path
    chosen: list[store.Loaded]
    skipped: list[tuple[str, str]]  # (id, why not)
    old_text: str
    new_text: str

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        name = self.path.name
        return "".join(difflib.unified_diff(
            model.text_lines(self.old_text, keepends=True),
            model.text_lines(self.new_text, keepends=True),
            fromfile=f"a/{name}", tofile=f"b/{name}"))

    def shown_diff(self) -> str:
        """The diff as a terminal may print it: every control character of a line
        escaped (`model.escape_text`: the file's own lines arrive by git), a CRLF line
        end shown as a newline."""
        out = []
        for line in model.text_lines(self.diff(), keepends=True):
            end = "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""
            out.append(model.escape_text(line[:len(line) - len(end)]) + ("\n" if end else ""))
        return "".join(out)


def why_not(item: store.Loaded, at: str) -> str | None:
    m = item.memory
    if m.role != "instruction":
        return None  # not an instruction: not even listed as skipped
    if m.scope == "personal":
        return "personal: binds only its owner, never proposed for AGENTS.md"
    if m.source == "inference":
        return "inferred by an agent: never distilled"
    if m.instruction_state != "approved":
        return f"instruction_state {m.instruction_state or 'draft'} (promote --instruction)"
    if m.trust_level not in ("reviewed", "trusted"):
        return f"trust_level {m.trust_level}"
    if m.review_state not in ("approved", "published"):
        return f"review_state {m.review_state}"
    if m.status != "active" or not policy.eligible(m, at):
        return f"not current ({m.status})"
    return None


def _line(item: store.Loaded) -> str:
    m = item.memory
    body = " ".join(m.body.split())
    title = " ".join(m.title.split())
    text = body if not title or body.lower().startswith(title.lower()) else f"{title}: {body}"
    # masked as a write stores a memory: a token in a teammate's file (reported by
    # verify, never rewritten) is not copied into a Markdown file the team commits
    from memex.core import redact  # writes only: its patterns compile for a distill

    text = redact.redact(text).text
    # escaped as `show` prints them: what arrived by git hides no text from the person
    # who reads AGENTS.md (a bidi override) and moves no cursor when it is printed
    return f"- {model.escape_controls(text)} <!-- memex:{m.id} -->"


def section(chosen: list[store.Loaded]) -> str:
    lines = [BEGIN, HEADING, "", NOTE, ""]
    lines += [_line(i) for i in chosen]
    lines.append(END)
    return "\n".join(lines) + "\n"


def _marked(text: str) -> tuple[int, int] | None:
    """(start, end) of the distilled section in any spelling of its markers, or None."""
    for begin, end_marker in ((BEGIN, END), *LEGACY_MARKERS):
        start = text.find(begin)
        end = text.find(end_marker, start + len(begin)) if start != -1 else -1
        if start != -1 and end != -1:
            return start, end + len(end_marker)
    return None


def splice(old: str, block: str) -> str:
    """Replace the marked section, or append it; everything else stays byte for byte."""
    found = _marked(old)
    if found is not None:
        start, end = found
        tail = old[end:]
        tail = tail[1:] if tail.startswith("\n") else tail
        return old[:start] + block + tail
    if not old:
        return "# AGENTS.md\n\n" + block
    sep = "" if old.endswith("\n\n") else "\n" if old.endswith("\n") else "\n\n"
    return old + sep + block


def plan(ws: Workspace) -> Distilled:
    if ws.repo is None:
        raise MemexError("distill needs a git repository: AGENTS.md lives at its top level")
    path = ws.repo.toplevel / "AGENTS.md"
    at = clock.now_str()
    view = reads.load_view(ws)
    chosen: list[store.Loaded] = []
    skipped: list[tuple[str, str]] = []
    candidates = [i for i in view.items if i.memory.role == "instruction"]
    open_conflicts = {x for c in conflicts.find(i.memory for i in view.items)
                      if not c.acknowledged for x in (c.a, c.b)}
    for item in candidates:
        reason = why_not(item, at)
        if reason is None and not item.home.in_git:
            reason = "still a draft in the outbox (submit it first)"
        if reason is None and item.id in open_conflicts:
            reason = "has an open contradiction (git memex conflicts)"
        if reason:
            skipped.append((item.id, reason))
        else:
            chosen.append(item)
    chosen.sort(key=lambda i: (i.memory.created_at, i.id))
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise MemexError(f"cannot read {path}: {exc}") from None
    new = old if not chosen and _marked(old) is None else splice(old, section(chosen))
    return Distilled(path, chosen, skipped, old, new)


def write(result: Distilled) -> None:
    if result.changed:
        store.write_atomic(result.path, result.new_text)
