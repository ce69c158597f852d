"""health's pairwise findings on a generated store stay what they were: the near-duplicate
pairs (`hygiene.duplicate_pairs`) and the contradictions (`conflicts.find`) of ~3,000
memories, held in health_findings.json, written by the code before the joins were made
linear (issue 18). The store mixes what the faster passes must not get wrong: texts of 1
to ~400 words, families of edited copies on both sides of the threshold, words common to
every memory and words of one, upper case, digits, underscores and non-ASCII words
(accents, ß, a dotted İ, Greek, CJK), two scopes, retired and pinned memories, and
contradiction material (alternatives, antonyms, values, negations) under shared tags and
paths."""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import pytest

from memex.core import model
from memex.storage import store
from memex.workflows import conflicts, hygiene, pairs

EXPECTED = Path(__file__).with_name("health_findings.json")

_LETTERS = "abcdefghiklmnoprstuvwy"
_ODD = ["Straße", "İstanbul", "ΣΟΦΙΑ", "café", "naïve", "依赖管理", "用", "pnpm", "date-fns",
        "turn-on", "snake_case", "v3.12", "ÆON", "Ωmega", "x86_64", "ﬁle", "Ⅻ", "١٢٣"]
_SENTENCES = [
    "Use pnpm for the {w} workspace", "We use npm for {w}", "Never use yarn in {w}",
    "Enable caching for {w}", "Disable caching for {w}", "The {w} timeout is 30s",
    "The {w} timeout is 60s", "Format {w} with black", "Format {w} with ruff",
    "Do not commit {w} files", "Commit the {w} lock file", "Run {w} before the build",
    "Run {w} after the build", "The default branch for {w} is main",
    "The default branch for {w} is develop", "{w} requires node 18", "{w} requires node 20",
    "Store {w} dates in UTC", "Store {w} dates in local time",
    "Prefer date-fns over moment for {w}", "Turn-on the {w} flag",
    "Never deploy {w} migrations on a friday", "Deploy {w} migrations on a friday",
    "Do not squash {w} history when merging", "Squash {w} history when merging",
]
_TAGS = ["build", "ci", "db", "api", "auth", "style", "deploy", "cache"]
_PATHS = ["src/api/*.py", "src/api/v2/", "docs/**", "web/src/", "web/*.ts", "infra/"]


def _vocabulary(rng: random.Random) -> list[str]:
    words = sorted({"".join(rng.choice(_LETTERS) for _ in range(rng.randint(3, 8)))
                    for _ in range(1500)})
    rng.shuffle(words)
    return words


def _text(rng: random.Random, vocab: list[str], n: int) -> str:
    out = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.3:  # a word nearly every memory holds
            out.append(rng.choice(("the", "a", "of", "to", "and", "is", "in")))
        elif roll < 0.33:
            out.append(rng.choice(_ODD))
        elif roll < 0.36:
            out.append(f"id{rng.randrange(10**6)}")  # a word of one memory
        elif roll < 0.38:
            out.append(rng.choice(vocab).upper())
        else:
            out.append(vocab[min(int(rng.paretovariate(0.7)) - 1, len(vocab) - 1)])
    return " ".join(out)


def _edit(rng: random.Random, vocab: list[str], text: str) -> str:
    words = text.split()
    for _ in range(rng.choice((0, 1, 1, 2, 3, 5, 8)) * max(1, len(words) // 40)):
        if words and rng.random() < 0.5:
            words.pop(rng.randrange(len(words)))
        else:
            words.insert(rng.randrange(len(words) + 1), rng.choice(vocab + _ODD))
    return " ".join(words)


def generated_store(count: int = 3000, seed: int = 18) -> list[model.Memory]:
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    memories: list[model.Memory] = []
    bodies: list[str] = []
    for i in range(count):
        roll = rng.random()
        if bodies and roll < 0.25:  # an edited copy of an earlier memory
            body = _edit(rng, vocab, rng.choice(bodies[-200:]))
        elif roll < 0.4:
            sentences = rng.sample(_SENTENCES, rng.randint(1, 3))
            body = ". ".join(s.format(w=rng.choice(vocab[:300])) for s in sentences) + "."
            if rng.random() < 0.5:
                body += " " + _text(rng, vocab, rng.randint(0, 30))
        else:
            size = rng.choice((rng.randint(1, 12), rng.randint(10, 80), rng.randint(60, 420)))
            body = _text(rng, vocab, size)
        bodies.append(body)
        status = "active" if rng.random() < 0.9 else rng.choice(("archived", "deprecated"))
        memories.append(model.Memory(
            id=f"M{i:05d}", scope="project" if rng.random() < 0.8 else "personal",
            title=rng.choice(("", "", _text(rng, vocab, rng.randint(1, 6)))), body=body,
            tags=rng.sample(_TAGS, rng.randint(0, 2)),
            paths=rng.sample(_PATHS, rng.choice((0, 0, 0, 1))), status=status,
            pinned=rng.random() < 0.03))
    return memories


def findings(memories: list[model.Memory], shared: bool = False) -> dict[str, object]:
    """Both passes; `shared`: as health runs them, one word pass and one word count."""
    home = store.Home("project", Path("/nowhere"))
    items = [store.Loaded(m, Path(f"/nowhere/{m.id}.md"), home) for m in memories]
    live = [i for i in items if i.memory.is_live]
    words = pairs.WordIds() if shared else None
    counts = pairs.counts(words[pairs.paired_text(i.memory.title, i.memory.body)]
                          for i in live) if words else None
    return {"duplicates": [list(p) for p in hygiene.duplicate_pairs(
                hygiene.offerable(items), words, counts)],
            "conflicts": [c.as_json() for c in
                          conflicts.find((i.memory for i in live), words, None, counts)]}


@pytest.mark.parametrize("shared", [False, True])
def test_health_findings_on_a_generated_store_are_unchanged(shared: bool) -> None:
    found = findings(generated_store(), shared)
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert found["duplicates"] == expected["duplicates"]
    assert found["conflicts"] == expected["conflicts"]


def test_word_set_splits_as_the_pattern_does() -> None:
    # every ASCII character inside, before and after a word, and random ASCII runs
    texts = [f"Ab{chr(c)}cD {chr(c)}x{chr(c)}" for c in range(128)]
    rng = random.Random(1)
    texts += ["".join(chr(rng.randrange(128)) for _ in range(rng.randint(0, 60)))
              for _ in range(300)]
    texts += [" ".join(rng.sample(_ODD, 4)) + " İSTANBUL ǅemal ΣΊΣΥΦΟΣ" for _ in range(20)]
    for text in texts:
        assert pairs.word_set(text) == {w.lower() for w in re.findall(r"\w+", text)}, text


def test_words_share_one_object_per_word() -> None:
    """pairs.Words gives each text word_set's words, and a word seen in several texts is
    one object in all their sets (the pair passes compare words by identity first)."""
    words = pairs.Words()
    texts = ["Deploy the API", "the api is up", "İstanbul deploy", "UP up"]
    sets = [words[text] for text in texts]
    assert sets == [pairs.word_set(text) for text in texts]
    spelling: dict[str, str] = {}
    for found in sets:
        for word in found:
            assert spelling.setdefault(word, word) is word, word
    assert words[texts[0]] is sets[0]  # kept: one word pass per text


@pytest.mark.parametrize("shared", [1, 2, 4, 7])
def test_the_near_duplicate_join_is_exact_for_any_k(shared: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # families of edited copies, 1 to 90 words, over a Zipf vocabulary: brute force agrees
    monkeypatch.setattr(hygiene, "SHARED_IN_PREFIX", shared)
    rng = random.Random(shared)
    vocab = [f"w{i}" for i in range(300)]
    texts: list[str] = []
    for _ in range(40):
        words = [vocab[min(int(rng.paretovariate(0.6)), 299)] for _ in range(rng.randint(1, 90))]
        for _ in range(rng.randint(1, 5)):
            edited = list(words)
            for _ in range(rng.randint(0, 1 + len(words) // 8)):
                if edited and rng.random() < 0.5:
                    edited.pop(rng.randrange(len(edited)))
                else:
                    edited.append(rng.choice(vocab))
            texts.append(" ".join(edited))
    sets = [pairs.word_set(t) for t in texts]
    for threshold in (0.5, 0.8, 0.9, 1.0):
        expected = {(i, j) for i, j in itertools.combinations(range(len(sets)), 2)
                    if sets[i] | sets[j] and
                    len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= threshold}
        found = {(i, j) for i, j, _ in hygiene.near_duplicates(texts, threshold)}
        assert found == expected


@pytest.mark.parametrize("rare", [2, 4, 32])
def test_rare_keys_bring_the_candidate_pairs_of_all_keys(rare: int) -> None:
    memories = generated_store(600, seed=rare)
    sets = [pairs.word_set(f"{m.title}\n{m.body}") for m in memories]
    where = [conflicts.gates(m.tags, m.paths) for m in memories]
    every = [conflicts.pair_keys(s) for s in sets]
    fewer = conflicts.rare_keys(sets, rare)
    assert all(mine <= theirs for mine, theirs in zip(fewer, every, strict=True))
    assert pairs.rare_pairs(fewer, where, rare=rare) == pairs.rare_pairs(every, where, rare=rare)
    focus = set(range(0, 600, 7))
    assert (pairs.rare_pairs(fewer, where, focus, rare)
            == pairs.rare_pairs(every, where, focus, rare))


@pytest.mark.parametrize(("rare", "small"), [(2, 4), (4, 12), (32, 0), (32, 32)])
def test_near_duplicates_are_the_alike_pairs_sharing_a_rare_word_or_both_small(
        rare: int, small: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """duplicate_pairs finds exactly the pairs at least NEAR_DUPLICATE alike that share a
    word at most pairs.RARE memories hold, or whose sets both have at most SMALL words
    (brute force over every pair, with a pair of SMALL and of SMALL + 1 common words);
    update_duplicate_pairs after a change agrees."""
    monkeypatch.setattr(pairs, "RARE", rare)
    monkeypatch.setattr(hygiene, "SMALL", small)
    home = store.Home("project", Path("/nowhere"))
    memories = [m for m in generated_store(500, seed=rare + small) if m.is_live]
    held = pairs.counts(pairs.word_set(pairs.paired_text(m.title, m.body))
                        for m in memories).most_common()
    for n, size in enumerate((small, small, small + 1, small + 1)):  # common words only
        body = " ".join(word for word, _ in held[:size])
        memories.append(model.Memory(id=f"S{n}", scope="project", title="", body=body))
    items = [store.Loaded(m, Path(f"/nowhere/{m.id}.md"), home) for m in memories]
    sets = [pairs.word_set(pairs.paired_text(i.memory.title, i.memory.body)) for i in items]
    counts = pairs.counts(sets)
    common = {w for w, n in counts.items() if n > rare}
    expected: dict[tuple[str, str], float] = {}
    lost = 0
    for (x, a), (y, b) in itertools.combinations(enumerate(items), 2):
        if a.memory.scope != b.memory.scope or not sets[x] | sets[y]:
            continue
        score = len(sets[x] & sets[y]) / len(sets[x] | sets[y])
        if score < hygiene.NEAR_DUPLICATE:
            continue
        if max(len(sets[x]), len(sets[y])) <= small or not (sets[x] & sets[y]) <= common:
            expected[(a.id, b.id)] = score
        else:
            lost += 1
    found = hygiene.duplicate_pairs(items)
    assert {(a, b): score for a, b, score in found} == expected
    assert expected and lost and (small == 0 or ("S0", "S1") in expected)  # not empty
    ids = pairs.WordIds()  # the word ids and their counts, as health gives them
    id_counts = pairs.counts(ids[ids.text(i.memory.title, i.memory.body)] for i in items)
    for changed in items[::25] + items[-4:]:
        earlier = [p for p in found if changed.id not in p[:2]]
        again = hygiene.update_duplicate_pairs(earlier, items, {changed.id}, words=ids,
                                               counts=id_counts)
        assert {frozenset(p[:2]) for p in again} == {frozenset(p[:2]) for p in found}
