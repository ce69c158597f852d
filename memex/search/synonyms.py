"""Words the porter stemmer cannot join: coding vocabulary people spell two ways, and
English irregular forms (pure).

Each group's words are alternatives for one query term: a query word in a group
also matches the group's other words (`db` finds "database", "k8s" finds
"kubernetes", "meet" finds "met"). Only single tokens as the query alphabet produces
them; kept short on purpose: a wrong synonym costs precision everywhere.
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
dep deps dependency dependencies
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

# Irregular verb forms and plurals ("when did she go" is answered by "we went").
# Left out: forms that are other words in code or common speech (left, bit, lit,
# fed, led, shot, saw, mean/meant, lay, found/founded, read, set, put, cost, won as
# in "won't", men for man pages, shook for tree shaking, go the language, make
# the tool). No word is in two groups.
_IRREGULAR = """
meet met
buy bought
take took taken
give gave given
feel felt
see seen
tell told
begin began begun
think thought
keep kept
lose lost
write wrote written
run ran
come came
bring brought
teach taught
catch caught
build built
send sent
spend spent
hold held
sell sold
grow grew grown
know knew known
draw drew drawn
fly flew flown
drive drove driven
ride rode ridden
eat ate eaten
fall fell fallen
choose chose chosen
speak spoke spoken
break broke broken
forget forgot forgotten
pay paid
hear heard
sing sang sung
swim swam swum
become became
stand stood
understand understood
sit sat
wear wore worn
throw threw thrown
hide hid hidden
steal stole stolen
wake woke woken
lend lent
sleep slept
fight fought
seek sought
dig dug
learn learnt
dream dreamt
child children kid kids
person people
woman women
foot feet
tooth teeth
mouse mice
"""

def _groups(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(line.split()) for line in text.strip().splitlines()
                 if len(line.split()) > 1)


GROUPS = _groups(_GROUPS) + _groups(_IRREGULAR)


def _table(groups: tuple[tuple[str, ...], ...]) -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for group in groups:
        for word in group:
            bucket = table.setdefault(word, [])
            bucket.extend(w for w in group if w != word and w not in bucket)
    return {word: tuple(alts) for word, alts in table.items()}


TABLE = _table(GROUPS)
IRREGULAR = _table(_groups(_IRREGULAR))  # also looked up by a query word's stem


def alternatives(word: str) -> tuple[str, ...]:
    """The other spellings of a query word (empty when it has none)."""
    return TABLE.get(word, ())
