"""A small table of coding vocabulary that people spell two ways (pure).

Each group's words are alternatives for one query term: a query word in a group
also matches the group's other words (`db` finds "database", "k8s" finds
"kubernetes"). Only single tokens as the query alphabet produces them; kept short
on purpose: a wrong synonym costs precision everywhere.
"""

from __future__ import annotations

_GROUPS = """
db database databases
repo repository repositories
config configuration configure settings
auth authentication login
env environment
prod production
dev development
deps dependencies dependency
dep dependency
pkg package
k8s kubernetes
js javascript
ts typescript
py python
pr pull
ci pipeline
mac macos osx
win windows
doc docs documentation
msg message
err error
perf performance
spec specification
async asynchronous
cmd command
dir directory folder
lib library
img image
api endpoint
"""

GROUPS: tuple[tuple[str, ...], ...] = tuple(
    tuple(line.split()) for line in _GROUPS.strip().splitlines() if line.strip())


def _table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for group in GROUPS:
        for word in group:
            bucket = table.setdefault(word, [])
            bucket.extend(w for w in group if w != word and w not in bucket)
    return {word: tuple(alts) for word, alts in table.items()}


TABLE = _table()


def alternatives(word: str) -> tuple[str, ...]:
    """The other spellings of a query word (empty when it has none)."""
    return TABLE.get(word, ())
