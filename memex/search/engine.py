"""Query -> eligible, ranked, explained hits, from the FTS5 index.

The interface here (SearchRequest, Hit, SearchResult, search) is what every caller
uses (CLI, MCP, context). search() refreshes the index (memex.index), reduces the
query to plain terms (memex.index.tokens), and runs BM25 lanes: memories that
hold every term first, then every term but one, then any term, filling up to the limit.
Terms found in most memories are left out of the any-term lane (they cost the most
and rank the least); a term the index has never seen is tried as a prefix.
Eligibility is policy.eligible on the chain-completed memory, the same rule `list`
uses; SQL only narrows the candidates first.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import itertools
import json
import math
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memex.core import clock, model, policy
from memex.core.digest import blake2b
from memex.core.errors import UsageError
from memex.index import bodies, build, schema, termcounts, tokens
from memex.index.views import as_read
from memex.search import answers, synonyms
from memex.search import dense as embed
from memex.storage import homes, store
from memex.storage.homes import Workspace

if TYPE_CHECKING:
    from memex.search.dense import vectors

LANE = "bm25"
# A term in more than this share of memories is dropped from the any-term lane ...
UBIQUITOUS_SHARE = 0.2
# ... once the index holds at least this many memories (below it, nothing is costly).
UBIQUITY_MIN_MEMORIES = 2000
# The all-but-one lane is tried for questions of up to this many terms.
QUORUM_MAX_TERMS = 8
# ... and all but 2, ..., all but QUORUM_DROP (each for questions of QUORUM_DROP + 2
# terms or more).
QUORUM_DROP = 1
# Query words also match their other spellings (index.synonyms).
SYNONYMS = True
# Re-rank within each lane by the share of the query's idf a memory holds (0: off).
COVERAGE_POWER = 2.0
COVERAGE_DEPTH = 30  # candidates re-ranked
COVERAGE_ACROSS_LANES = True
# A memory holding the kind of answer the question asks for (a time for "when", a
# number for "how many", a place or path for "where": index.answers) scores
# ANSWER_BOOST times more; such questions re-rank ANSWER_DEPTH candidates (0: off).
ANSWER_BOOST = 2.0
ANSWER_DEPTH = 60
# Candidates fetched per lane before boosts re-rank them (more than needed, so that
# ineligible ones can be dropped).
MIN_CANDIDATES = 30
FETCH_MARGIN = 20

REVIEW_BOOST = {"published": 1.25, "approved": 1.25, "proposed": 1.1}
IMPORTANCE_BOOST = {"high": 1.2, "normal": 1.0, "low": 0.85}
NOT_ACTIVE_FACTOR = 0.5
PATH_BOOST = 1.15
RECENCY_MAX = 0.1  # up to +10% for a memory updated today, halving every 30 days
RECENCY_HALF_LIFE_DAYS = 30.0
ACCESS_MAX = 0.05  # up to +5% for memories read often

# The vector lane (memex.search.dense), on only when memex.embeddings names a provider.
FUSION_MODE = "weighted"  # see embed.fusion.MODES
FUSION_WEIGHT = 0.5  # the vector part's share (tuned on bench/paraphrase's tuning half)
FUSION_DEPTH = 50  # BM25 candidates fused
DENSE_DEPTH = 50  # nearest vectors fused
ONLY_WHEN_WEAK = False  # fuse only when BM25 lacks a full page of all-term matches


@dataclass
class SearchRequest:
    """A search: its query, filters and options."""

    query: str
    limit: int = 10
    scopes: tuple[str, ...] | None = None  # None: this project + personal (+ org)
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # all must be present
    statuses: tuple[str, ...] = ()
    as_of: str | None = None
    include_all: bool = False
    explain: bool = False
    record_access: bool = True  # bump access counts in the index (never a file)
    vectors: bool = True  # use the vector lane when one is configured
    refresh: bool = True  # False: the caller refreshed the index a moment ago
    # Run the query beside the refresh (a whole CLI process: see _Ahead); its hits are
    # kept only if the refresh left the index as the query read it.
    ahead: bool = False


@dataclass
class Hit:
    """One memory a search found, with its score and the lane that found it."""

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
            "id": self.id, "score": rounded(self.score), "lane": self.lane,
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
    """A search's hits, warnings and what the query was reduced to."""

    hits: list[Hit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    quarantined: list[store.Quarantined] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)  # what the query was reduced to
    stale: bool = False  # another process held the index: results may lag the files


def rounded(value: float) -> float:
    """Four significant digits (BM25 scores of a tiny index are very small)."""
    return float(f"{value:.4g}")


def terms(text: str) -> list[str]:
    """The search terms of a query (see tokens.query_terms)."""
    return tokens.query_terms(text)


def project_workspace(ws: Workspace, spec: str) -> Workspace:
    """Another project, asked for by `--repo`: a checkout's path, or its origin URL
    (then only its outbox drafts on this machine are visible)."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return homes.workspace(path, home=ws.home)
    repo_id = homes.repo_id_for(spec, ws.cwd)
    other = Workspace(cwd=ws.cwd, home=ws.home, repo=None, repo_id=repo_id,
                      config=dict(ws.config))
    if not other.outbox_dir.is_dir():
        raise UsageError(f"no project {spec!r} here: give a path to its checkout, "
                         "or the origin URL of a project with drafts on this machine")
    return other


def search(ws: Workspace, req: SearchRequest) -> SearchResult:
    if not req.query.strip():
        raise UsageError("the query is empty")
    if req.limit < 1:
        raise UsageError("--limit must be 1 or more")
    moment = _moment(req.as_of)
    # A query of nothing but stop words ("the who") still searches for them.
    wanted = tokens.query_terms(req.query) or tokens.query_terms(req.query, True)
    ahead = None
    if req.ahead and req.refresh and wanted and not (req.vectors and enabled(ws)):
        ahead = _Ahead(lambda: _query_ahead(ws, req, wanted, moment))
    try:
        with build.open_index(ws, refresh=req.refresh) as index:
            result = SearchResult(
                warnings=index.report.warnings + build.read_warnings(index.conn),
                quarantined=index.report.quarantined, terms=wanted,
                stale=index.report.stale)
            if not wanted and not (req.vectors and enabled(ws)):
                result.warnings.append("nothing searchable is left in the query "
                                       "(only stop words, symbols or operators)")
                return result
            hits = ahead.hits(build.generation(index.conn)) if ahead is not None else None
            if hits is None:
                dense = dense_query(ws, index.conn, req.query, result.warnings) \
                    if req.vectors else None
                hits = run_query(index.conn, ws, req, wanted, moment, dense)
            result.hits = hits
            if req.record_access and result.hits:
                record_access(index.conn, [h.id for h in result.hits])
    finally:
        if ahead is not None:
            ahead.join()  # its connection closed before this process may exit
    return result


# Whether the query ahead runs in a thread (tests set False: it then runs at once,
# before the refresh, the order a slow refresh gives).
AHEAD_THREAD = True


class _Ahead:
    """A search's query run beside its refresh, on a connection of its own to the
    index as it is: the refresh's stat walk is Python work between system calls and
    the query is mostly SQLite's (both let go of the interpreter lock), so on a free
    core the query costs no wall time. Its hits are taken only when the index's
    generation after the refresh is the one the query read from start to end: the
    refresh wrote nothing, and no other process wrote meanwhile. Else the query runs
    again, as it always did, after the refresh."""

    def __init__(self, work: Callable[[], tuple[str, list[Hit]] | None]) -> None:
        self._work = work
        self._done: tuple[str, list[Hit]] | None = None
        self._thread: threading.Thread | None = None
        if AHEAD_THREAD:
            self._thread = threading.Thread(target=self._run, name="memex-query-ahead",
                                            daemon=True)
            self._thread.start()
        else:
            self._run()

    def _run(self) -> None:
        try:
            self._done = self._work()
        except Exception:  # any trouble: the query runs again after the refresh
            self._done = None

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def hits(self, current: str | None) -> list[Hit] | None:
        """The hits found ahead, if they were found at generation CURRENT."""
        self.join()
        if self._done is None or current is None or self._done[0] != current:
            return None
        return self._done[1]


def _query_ahead(ws: Workspace, req: SearchRequest, wanted: list[str],
                 moment: str | None) -> tuple[str, list[Hit]] | None:
    """The BM25 hits of the index as it is, and the generation they were read at (None
    when there is no index to read, or another process wrote it meanwhile)."""
    conn = build.peek(ws)
    if conn is None:
        return None
    try:
        before = build.generation(conn)
        hits = run_query(conn, ws, req, wanted, moment)
        if before is None or build.generation(conn) != before:
            return None
        return before, hits
    finally:
        conn.close()


def _moment(as_of: str | None) -> str | None:
    if as_of is None:
        return None
    try:
        return clock.normalise_time(as_of)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# ---------------------------------------------------------------- the query


@dataclass
class _Term:
    """A query term and how many memories hold it."""

    word: str
    df: int
    prefix: bool = False
    alts: tuple[str, ...] = ()  # synonyms matched in its place (index.synonyms)


def _phrase(term: _Term) -> str:
    if not term.alts:
        return tokens.fts_phrase(term.word, term.prefix)
    words = [tokens.fts_phrase(term.word, term.prefix)] + [tokens.fts_phrase(w)
                                                           for w in term.alts]
    return "(" + " OR ".join(words) + ")"


# Each word as the index's tokenizer sees it: the index layer's (a capture's check
# asks it without loading the search).
stems = termcounts.stems


def term_stats(conn: sqlite3.Connection, words: list[str]) -> list[_Term]:
    """How many memories hold each term (counted by its stem); a word the index has
    never seen is tried as a prefix ('config' finds 'configuration'); a word of the
    synonym table also matches the table's other spellings the index holds."""
    alternatives = {w: _alternatives(conn, w) if SYNONYMS else () for w in words}
    by_word = stems(conn, [*words, *(a for alts in alternatives.values() for a in alts)])
    counts = _counts(conn)
    if counts is not None:  # all at once: most are kept by the index (termcounts)
        asked = [st for its in by_word.values() for st in its if (False, st) not in counts]
        counts.update(((False, st), n) for st, n in build.term_counts(conn, asked).items())
    out: list[_Term] = []
    for word in words:
        df = min((_df(conn, stem, counts) for stem in by_word[word]), default=0)
        found = []
        for alt in alternatives[word]:
            alt_df = min((_df(conn, st, counts) for st in by_word[alt]), default=0)
            if alt_df and by_word[alt] != by_word[word]:
                found.append(alt)
                df = max(df, alt_df)
        alts = tuple(found)
        if df == 0 and len(word) >= 3 and not tokens.has_cjk(word):
            prefix_df = _prefix_df(conn, word, counts)
            if prefix_df:
                out.append(_Term(word, prefix_df, prefix=True))
                continue
        out.append(_Term(word, df, alts=alts))
    return out


_BY_STEM: dict[str, tuple[str, ...]] = {}  # an irregular form's stem -> its other forms


def _alternatives(conn: sqlite3.Connection, word: str) -> tuple[str, ...]:
    """The table's alternatives for a word; an inflected word also finds its irregular
    forms through its stem ("teaches" -> "teach" -> "taught"). Only the irregular
    forms: coding spellings by stem would join "settings" to "set"."""
    found = synonyms.alternatives(word)
    if found:
        return found
    if not _BY_STEM:
        _BY_STEM.update(_irregular_by_stem(conn))
    for stem in stems(conn, [word])[word]:
        if stem in _BY_STEM and _inflected(word, stem):
            return tuple(w for w in _BY_STEM[stem] if w != word)
    return ()


def _irregular_by_stem(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    """The irregular forms by their stems. Stemming the table costs ~10 ms, once per
    process: it is kept in the index's meta under a digest of the table and the
    tokenizer (written when missing, never waiting for the lock; a rebuilt index or
    another table makes it again)."""
    table = json.dumps([schema.TOKENIZER, synonyms.IRREGULAR], sort_keys=True)
    sign = blake2b(table.encode("utf-8"), digest_size=8).hexdigest()
    stored = schema.meta(conn, "irregular_stems")
    with contextlib.suppress(ValueError, TypeError, KeyError):
        kept = json.loads(stored) if stored else {}
        if kept.get("sign") == sign:
            return {str(stem): tuple(forms) for stem, forms in kept["by_stem"].items()}
    by_stem: dict[str, list[str]] = {}
    for form, its_stems in stems(conn, list(synonyms.IRREGULAR)).items():
        for stem in its_stems:
            bucket = by_stem.setdefault(stem, [])
            bucket.extend(w for w in (form, *synonyms.IRREGULAR[form]) if w not in bucket)
    build.write_if_free(conn, "INSERT OR REPLACE INTO meta (key, value) VALUES "
                        "('irregular_stems', ?)", (json.dumps({"sign": sign, "by_stem": by_stem}),))
    return {stem: tuple(forms) for stem, forms in by_stem.items()}


def _inflected(word: str, stem: str) -> bool:
    """Whether a word is its stem plus an inflection ("teaches", "running"), not
    another word sharing the stem ("personal" -> "person")."""
    if not word.startswith(stem):
        return False
    ending = word[len(stem):]
    if ending and ending[0] == stem[-1:]:
        ending = ending[1:]  # a doubled consonant: running, stopped
    return ending in ("", "s", "es", "ed", "d", "ing")


# How many memories hold a term, per connection and index generation: a count is the
# index's, not the query's (fts5vocab finds it by reading the term's whole doclist,
# ~0.1-0.5 ms a common term), so a long-lived process (the MCP server) asks each
# term once until the index is written. {id(conn): (generation, {(prefix?, term): count})}
_DF: dict[int, tuple[str, dict[tuple[bool, str], int]]] = {}
DF_CACHE_MAX = 50_000  # terms kept per index generation


def _counts(conn: sqlite3.Connection) -> dict[tuple[bool, str], int] | None:
    """The term counts kept for CONN's index as it is now (None: not kept, as for an
    index with no generation yet, or a bare connection)."""
    try:
        gen = build.generation(conn)
    except sqlite3.OperationalError:  # no meta table
        return None
    if gen is None:
        return None
    cached = _DF.get(id(conn))
    if cached is None or cached[0] != gen or len(cached[1]) > DF_CACHE_MAX:
        if len(_DF) > 8:
            _DF.clear()
        cached = _DF[id(conn)] = (gen, {})
    return cached[1]


def _df(conn: sqlite3.Connection, stem: str,
        counts: dict[tuple[bool, str], int] | None = None) -> int:
    if counts is not None and (False, stem) in counts:
        return counts[False, stem]
    df = termcounts.vocab_count(conn, stem)
    if counts is not None:
        counts[False, stem] = df
    return df


def _prefix_df(conn: sqlite3.Connection, head: str,
               counts: dict[tuple[bool, str], int] | None = None) -> int:
    """The most memories any indexed term starting with `head` is in."""
    if counts is not None and (True, head) in counts:
        return counts[True, head]
    row = conn.execute(
        "SELECT coalesce(max(doc), 0) FROM fts_terms WHERE term >= ? AND term < ?",
        (head, head + "\U0010ffff")).fetchone()
    df = int(row[0])
    if counts is not None:
        counts[True, head] = df
    return df


_COLUMNS = (
    "m.rowid, m.id, m.path, m.home, m.scope, m.type, m.status, m.review_state, "
    "m.importance, m.created_at, m.updated_at, m.retired_at, m.valid_from, m.valid_until, "
    "m.expires_at, m.superseded_by, m.eff_status, m.eff_retired_at, m.eff_superseded_by, "
    "m.paths, coalesce(a.count, 0), m.text_key"
)


# The memories of a list of rowids, with their access counts. NOT INDEXED: each is
# looked up by its rowid. With the filters' scope (an index's first column) SQLite
# walked every memory of the scopes and probed the list: at 10,000 memories ~3 ms of a
# ~13 ms search, ten times that at 100,000.
_BY_ROWID = "memories m NOT INDEXED LEFT JOIN access a ON a.id = m.id"


def _filters(req: SearchRequest, at: str, moment: str | None) -> tuple[str, list[object]]:
    """SQL that narrows candidates; policy.eligible still decides each one."""
    sql = ["m.shadowed = 0"]
    args: list[object] = []
    if req.scopes is not None:
        sql.append(f"m.scope IN ({', '.join('?' * len(req.scopes))})")
        args.extend(req.scopes)
    if req.types:
        sql.append(f"m.type IN ({', '.join('?' * len(req.types))})")
        args.extend(req.types)
    if req.statuses:
        sql.append(f"coalesce(m.eff_status, m.status) IN ({', '.join('?' * len(req.statuses))})")
        args.extend(req.statuses)
    for tag in req.tags:
        sql.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)")
        args.append(tag)
    if req.include_all:
        pass
    elif moment is not None:
        sql.append("(m.created_at IS NULL OR m.created_at <= ?)")
        sql.append("(coalesce(m.eff_retired_at, m.retired_at) IS NULL "
                   "OR coalesce(m.eff_retired_at, m.retired_at) > ?)")
        sql.append("(m.valid_from IS NULL OR m.valid_from <= ?)")
        sql.append("(m.valid_until IS NULL OR m.valid_until > ?)")
        sql.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        args.extend([moment] * 5)
    else:
        sql.append("coalesce(m.eff_status, m.status) IN ('active', 'deprecated')")
        sql.append("(m.review_state IS NULL OR m.review_state <> 'rejected')")
        sql.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        sql.append("(m.valid_until IS NULL OR m.valid_until > ?)")
        sql.append("(m.valid_from IS NULL OR m.valid_from <= ?)")
        args.extend([at] * 3)
    return " AND ".join(sql), args


# The best-ranked FTS matches looked at first, as a multiple of the rows wanted: only
# when the filters leave too few of them is every match joined with its memory.
NARROW_FACTOR = 4
NARROW_MIN = 100


JOIN_SLICE_MAX = 2000  # rows joined with memories per statement
_RANKED = (f"SELECT rowid, bm25(fts, {', '.join(str(w) for w in schema.WEIGHTS)}) AS rank "
           "FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?")


def _candidates(conn: sqlite3.Connection, match: str, where: str, args: list[object],
                limit: int, exclude: set[int]) -> list[tuple[Any, ...]]:
    """The best `limit` matches passing WHERE, not in EXCLUDE (rowids an earlier lane
    found, so passing WHERE): the best `limit` + len(EXCLUDE) passing WHERE, less
    those in EXCLUDE. First from the best ranked matches alone (a common word matches
    thousands of memories); that is the full answer whenever enough of them pass (any
    other match ranks below all of them), else every match is ranked. Only the rows
    needed are joined with their memories, in rank order (each join reads that
    memory's row page; EXCLUDE's are counted, not joined), and bm25 runs once per
    ranking (the ranked list's length says whether it held every match)."""
    wanted = limit + len(exclude)
    narrow = max(wanted * NARROW_FACTOR, NARROW_MIN)
    ranked = conn.execute(_RANKED, (match, narrow)).fetchall()
    rows, passed = _passing(conn, ranked, where, args, wanted, exclude)
    if passed < wanted and len(ranked) >= narrow:
        # the filters left too few of the best: look at every match
        rows, _ = _passing(conn, conn.execute(_RANKED, (match, -1)).fetchall(), where,
                           args, wanted, exclude)
    return rows


def _passing(conn: sqlite3.Connection, ranked: list[tuple[int, float]], where: str,
             args: list[object], wanted: int, known: set[int]
             ) -> tuple[list[tuple[Any, ...]], int]:
    """Of the first WANTED ranked (rowid, rank) pairs whose memories pass WHERE (those
    in KNOWN pass), the rows of _COLUMNS and the rank of those not in KNOWN, in rank
    order, and how many passed. Joined a slice at a time, each slice as long as the
    rows still wanted (the filters rarely drop any), at most JOIN_SLICE_MAX (a
    statement's parameters are limited: 32,766 by default)."""
    out: list[tuple[Any, ...]] = []
    passed = start = 0
    while passed < wanted and start < len(ranked):
        part = ranked[start: start + min(max(wanted - passed, 8), JOIN_SLICE_MAX)]
        start += len(part)
        asked = [rowid for rowid, _ in part if rowid not in known]
        found = {row[0]: row for row in conn.execute(
            f"SELECT {_COLUMNS} FROM {_BY_ROWID} "
            f"WHERE m.rowid IN ({', '.join('?' * len(asked))}) AND {where}",
            [*asked, *args])} if asked else {}
        for rowid, rank in part:
            if rowid in known:
                passed += 1
            elif rowid in found:
                out.append((*found[rowid], rank))
                passed += 1
            if passed == wanted:
                break
    return out, passed


def lane_queries(stats: list[_Term], total: int) -> list[tuple[str, str]]:
    """The MATCH expressions tried in order: every term; every term but one (a
    question rarely has all its words in the answer); any term. The last two leave
    out the terms most memories hold (they cost the most and rank the least)."""
    phrases = [_phrase(t) for t in stats]
    lanes = [("all terms", " AND ".join(phrases))]
    if len(phrases) < 2:
        return lanes
    kept = stats
    if total >= UBIQUITY_MIN_MEMORIES:
        kept = [t for t in stats if t.df <= UBIQUITOUS_SHARE * total]
        if not kept:
            kept = [min(stats, key=lambda t: t.df)]
    rare = [_phrase(t) for t in kept]
    for drop in range(1, QUORUM_DROP + 1):
        if drop + 2 <= len(rare) <= QUORUM_MAX_TERMS:
            groups = [" AND ".join(p for j, p in enumerate(rare) if j not in left_out)
                      for left_out in itertools.combinations(range(len(rare)), drop)]
            name = "all terms but one" if drop == 1 else f"all terms but {drop}"
            lanes.append((name, " OR ".join(f"({g})" for g in groups)))
    lanes.append(("any term", " OR ".join(rare)))
    return lanes


def run_query(conn: sqlite3.Connection, ws: Workspace, req: SearchRequest,
              words: list[str], moment: str | None,
              dense: DenseQuery | None = None) -> list[Hit]:
    """BM25 lanes over an open, refreshed index, fused with the vector lane when one
    is on; returns at most req.limit hits."""
    at = clock.now_str()
    stats = [t for t in term_stats(conn, words) if t.df > 0]
    if not stats and dense is None:
        return []
    where, args = _filters(req, at, moment)
    depth = max(req.limit, FUSION_DEPTH) if dense is not None else req.limit
    if COVERAGE_POWER:
        depth = max(depth, COVERAGE_DEPTH)
    kind = answers.kind_of(req.query) if ANSWER_BOOST != 1.0 else None
    if kind is not None:
        depth = max(depth, ANSWER_DEPTH)
    total = build.memory_count(conn)
    ranked = _bm25_ranked(conn, ws, req, stats, where, args, at, moment, depth, total)
    if COVERAGE_POWER and len(stats) >= 2:
        ranked = _by_coverage(conn, stats, ranked, total)
    if kind is not None:
        ranked = _by_answer_kind(conn, kind, ranked)
    if dense is not None and not (ONLY_WHEN_WEAK and _strong(ranked, req.limit)):
        ranked = _fused(conn, ws, req, ranked, dense, where, args, at, moment)
    top = ranked[: req.limit]
    if req.explain:
        _add_matched_terms(conn, top, stats)
    return _make_hits(conn, top)


@dataclass
class _Candidate:
    """A memory a lane found, scored, before the page is cut."""

    score: float
    row: tuple[Any, ...]
    explain: dict[str, Any]
    factor: float  # the product of the boosts
    match: str  # which BM25 lane found it ("" for the vector lane alone)
    lane: str = LANE


def _bm25_ranked(conn: sqlite3.Connection, ws: Workspace, req: SearchRequest,
                 stats: list[_Term], where: str, args: list[object], at: str,
                 moment: str | None, depth: int, total: int) -> list[_Candidate]:
    """The lanes in order, each filling what the last left, up to `depth`."""
    if not stats:
        return []
    fetch = max(depth + FETCH_MARGIN, MIN_CANDIDATES)
    seen: set[int] = set()
    out: list[_Candidate] = []
    for lane_name, match in lane_queries(stats, total):
        rows = _candidates(conn, match, where, args, fetch, seen)
        seen.update(r[0] for r in rows)
        ranked = sorted((_hit_parts(row, ws, req, lane_name, at)
                         for row in _eligible_rows(rows, req, at, moment)),
                        key=lambda c: -c.score)
        out.extend(ranked[: depth - len(out)])
        if len(out) >= depth:
            break
    return out


# A term held by at most this many memories per rowid asked about is looked up by
# reading its matches (~0.1 us a match), not by a seek per rowid (~25 us each): at 10k
# a near-duplicate check's 32 terms cost 13 ms instead of 25 (capture30).
SCAN_PER_ROWID = 150


def _holding(conn: sqlite3.Connection, term: _Term, rowids: list[int]) -> set[int]:
    """Which of these memories hold the term. `rowid IN` hands each rowid to FTS5 as a
    seek of its own (the MATCH evaluated once per rowid: ~0.4-1 ms for 30 of them,
    however rare the term); `+rowid IN` reads the term's matches once and keeps those
    asked about: the cheaper for a term few memories hold (its df, a prefix term's
    union of words excepted). The same rows either way."""
    marks = ", ".join("?" * len(rowids))
    matches = term.df * (1 + len(term.alts))  # an OR of its alternatives: at most this
    rowid = "+rowid" if not term.prefix and matches <= SCAN_PER_ROWID * len(rowids) \
        else "rowid"
    return {found for (found,) in conn.execute(
        f"SELECT rowid FROM fts WHERE fts MATCH ? AND {rowid} IN ({marks})",
        [_phrase(term), *rowids])}


def _by_coverage(conn: sqlite3.Connection, stats: list[_Term],
                 ranked: list[_Candidate], total: int) -> list[_Candidate]:
    """Within each lane, BM25 times the share of the query's idf a memory holds, to
    the power COVERAGE_POWER (a soft coordination factor)."""
    total = max(total, 1)
    idf = {t.word: math.log(1 + total / max(t.df, 1)) for t in stats}
    whole = sum(idf.values()) or 1.0
    # All-term matches hold the whole query: only the others need looking at.
    held: dict[int, float] = {c.row[0]: whole for c in ranked if c.match == "all terms"}
    rowids = [c.row[0] for c in ranked if c.row[0] not in held]
    if not rowids:
        return ranked
    for term in stats:
        for rowid in _holding(conn, term, rowids):
            held[rowid] = held.get(rowid, 0.0) + idf[term.word]
    for c in ranked:
        factor = (held.get(c.row[0], 0.0) / whole) ** COVERAGE_POWER
        c.score *= factor
        if c.explain:
            c.explain["coverage"] = rounded(factor)
    return _resorted(ranked)


def _resorted(ranked: list[_Candidate]) -> list[_Candidate]:
    """By score, across the lanes or (COVERAGE_ACROSS_LANES off) within each lane."""
    if COVERAGE_ACROSS_LANES:
        return sorted(ranked, key=lambda c: -c.score)
    lane_order = {name: i for i, name in enumerate(dict.fromkeys(c.match for c in ranked))}
    return sorted(ranked, key=lambda c: (lane_order[c.match], -c.score))


def _by_answer_kind(conn: sqlite3.Connection, kind: answers.AnswerKind,
                    ranked: list[_Candidate]) -> list[_Candidate]:
    """Memories that hold the kind of answer the question asks for move up."""
    if not ranked:
        return ranked
    rowids = [c.row[0] for c in ranked]
    marks = ", ".join("?" * len(rowids))
    texts = {rowid: build.fts_body(title or "", bodies.body_text(zbody))
             for rowid, title, zbody in conn.execute(
                 f"SELECT rowid, json_extract(doc, '$.title'), zbody FROM memories "
                 f"WHERE rowid IN ({marks})", rowids)}
    for c in ranked:
        if kind.answered_by(texts.get(c.row[0], "")):
            c.score *= ANSWER_BOOST
            if c.explain:
                c.explain["boosts"][f"answer:{kind.name}"] = ANSWER_BOOST
    return _resorted(ranked)


def _strong(ranked: list[_Candidate], limit: int) -> bool:
    """BM25 alone is trusted when a full page of memories holds every query term."""
    return len(ranked) >= limit and all(c.match == "all terms" for c in ranked[:limit])


# Where the fields eligibility and the boosts read sit in a row of _COLUMNS.
_STATUS, _REVIEW, _IMPORTANCE, _CREATED, _UPDATED, _RETIRED = 6, 7, 8, 9, 10, 11
_VALID_FROM, _VALID_UNTIL, _EXPIRES, _EFF_STATUS, _EFF_RETIRED = 12, 13, 14, 16, 17


def _eligible_rows(rows: list[tuple[Any, ...]], req: SearchRequest, at: str,
                   moment: str | None) -> list[tuple[Any, ...]]:
    """The rows policy.eligible keeps, read from the row's own fields (the chain's
    effective status and retirement first), with no Memory made per row."""
    if req.include_all:
        return rows
    eligible = policy.eligible_fields
    return [r for r in rows
            if eligible(r[_EFF_STATUS] or r[_STATUS], r[_REVIEW], r[_CREATED] or "",
                        r[_EFF_RETIRED] or r[_RETIRED], r[_VALID_FROM], r[_VALID_UNTIL],
                        r[_EXPIRES], at, moment)]


def _hit_parts(row: tuple[Any, ...], ws: Workspace, req: SearchRequest, lane_name: str,
               at: str) -> _Candidate:
    relevance = -float(row[-1])
    review_state, status = row[_REVIEW], row[_EFF_STATUS] or row[_STATUS]
    boosts: dict[str, float] = {}
    review = REVIEW_BOOST.get(review_state or "")
    if review:
        boosts[f"review:{review_state}"] = review
    importance = IMPORTANCE_BOOST.get(row[_IMPORTANCE], 1.0)
    if importance != 1.0:
        boosts[f"importance:{row[_IMPORTANCE]}"] = importance
    recency = _recency(row[_UPDATED], at)
    if recency > 1.0005:
        boosts["recency"] = round(recency, 4)
    if row[19] != "[]" and _paths_match(json.loads(row[19]), ws):
        boosts["paths match cwd"] = PATH_BOOST
    accessed = int(row[20])
    if accessed:
        boosts["accessed"] = round(1 + ACCESS_MAX * min(math.log2(1 + accessed), 4) / 4, 4)
    if status != "active":
        boosts[status] = NOT_ACTIVE_FACTOR
    product = 1.0
    for factor in boosts.values():
        product *= factor
    score = relevance * product
    explain: dict[str, Any] = {}
    if req.explain:
        explain = {"lane": LANE, "match": lane_name, "bm25": rounded(relevance),
                   "boosts": boosts, "score": rounded(score)}
    return _Candidate(score, row, explain, product, lane_name)


def _recency(updated_at: str | None, at: str) -> float:
    if not updated_at:
        return 1.0
    try:
        age = (_parse_at(at) - _parse(updated_at)).total_seconds() / 86400
    except ValueError:
        return 1.0
    decay: float = 0.5 ** (max(age, 0.0) / RECENCY_HALF_LIFE_DAYS)
    return 1.0 + RECENCY_MAX * decay


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@functools.lru_cache(maxsize=4)
def _parse_at(at: str) -> datetime:
    """The query's moment, parsed once for all its candidates."""
    return _parse(at)


def _paths_match(globs: list[str], ws: Workspace) -> bool:
    """A memory's `paths` match when the cwd is inside one of them (not at the top)."""
    if not globs or ws.repo is None:
        return False
    try:
        rel = ws.cwd.resolve().relative_to(ws.repo.toplevel.resolve())
    except ValueError:
        return False
    if not rel.parts:
        return False
    here = rel.as_posix()
    for glob in globs:
        glob = model.glob_pattern(glob)
        if fnmatch.fnmatch(here, glob) or fnmatch.fnmatch(here + "/x", glob):
            return True
        static: list[str] = []
        for part in glob.split("/"):
            if any(ch in part for ch in "*?["):
                break
            static.append(part)
        if static and rel.parts[: len(static)] == tuple(static):
            return True
    return False


def _make_hits(conn: sqlite3.Connection, ranked: list[_Candidate]) -> list[Hit]:
    """The hits, each memory as reads see it (chain completed), in one query."""
    if not ranked:
        return []
    rowids = [c.row[0] for c in ranked]
    stored = {rowid: (doc, zbody) for rowid, doc, zbody in conn.execute(
        f"SELECT rowid, doc, zbody FROM memories WHERE rowid IN ({', '.join('?' * len(rowids))})",
        rowids)}
    hits: list[Hit] = []
    for c in ranked:
        if c.explain:
            c.explain["score"] = rounded(c.score)  # after coverage, answer kind, fusion
        memory = as_read(*stored[c.row[0]], *c.row[16:19])
        hits.append(Hit(
            id=memory.id, score=c.score, lane=c.lane, scope=memory.scope,
            status=memory.status, review_state=memory.review_state, title=memory.title,
            summary=memory.summary, path=c.row[2], memory=memory, explain=c.explain))
    return hits


def _add_matched_terms(conn: sqlite3.Connection, ranked: list[_Candidate],
                       stats: list[_Term]) -> None:
    if not ranked:
        return
    rowids = [c.row[0] for c in ranked]
    for term in stats:
        found = _holding(conn, term, rowids)
        label = term.word + ("*" if term.prefix else "")
        for c in ranked:
            if c.row[0] in found:
                c.explain.setdefault("matched", []).append(label)


def record_access(conn: sqlite3.Connection, ids: list[str]) -> None:
    """Bump access counts in the index; skipped (never waited for) when it is busy.
    build's rule for a hint: the connection's wait for the lock is put back after (it
    was left at none, so the next refresh of a kept connection, an MCP server's next
    search, gave up at once while any other process wrote the index)."""
    at = clock.now_str()
    build.write_many_if_free(
        conn, "INSERT INTO access (id, count, last_access) VALUES (?, 1, ?) ON CONFLICT (id) "
        "DO UPDATE SET count = count + 1, last_access = excluded.last_access",
        [(i, at) for i in ids])


# ---------------------------------------------------------------- the vector lane


@dataclass
class DenseQuery:
    """A query's vector and the provider's stored vectors, for run_query."""

    provider: str
    vector: list[float]
    table: vectors.Table


_PROVIDERS: dict[str, embed.Provider] = {}
_TOLD: set[str] = set()  # messages already given by this process


def _tell(warnings: list[str], message: str) -> None:
    if message not in _TOLD:
        _TOLD.add(message)
        warnings.append(message)


enabled = embed.enabled  # the provider memex.embeddings turns on, or None when off


def provider(name: str) -> embed.Provider:
    """The provider for this process (a model is loaded once)."""
    if name not in _PROVIDERS:
        _PROVIDERS[name] = embed.provider_for(name)
    return _PROVIDERS[name]


def dense_query(ws: Workspace, conn: sqlite3.Connection, text: str,
                warnings: list[str]) -> DenseQuery | None:
    """The vector lane for this search, or None (and a message, once per process)
    when it is off, cannot run here, or has nothing embedded yet."""
    name = enabled(ws)
    if name is None:
        return None
    try:
        prov = provider(name)
    except embed.ProviderUnavailable as exc:
        _tell(warnings, f"{exc}; searching with BM25 alone")
        return None
    from memex.search.dense import vectors  # the vector lane only

    table = vectors.load(vectors.db_path(ws), prov.name)
    if not table.rows:
        _tell(warnings, f"no memory is embedded with {prov.name} yet: run `git memex embed`;"
                        " searching with BM25 alone")
        return None
    return DenseQuery(prov.name, prov.query(text[: tokens.MAX_QUERY_CHARS]), table)


_KEYS: dict[int, tuple[str | None, dict[str, list[int]]]] = {}


def _all_keys(conn: sqlite3.Connection) -> dict[str, list[int]]:
    """text key -> rowids of the visible memories, kept per index generation."""
    gen = build.generation(conn)
    cached = _KEYS.get(id(conn))
    if cached is not None and cached[0] == gen:
        return cached[1]
    by_key: dict[str, list[int]] = {}
    for rowid, key in conn.execute("SELECT rowid, text_key FROM memories WHERE shadowed = 0"):
        by_key.setdefault(key, []).append(rowid)
    _KEYS[id(conn)] = (gen, by_key)
    return by_key


def _fused(conn: sqlite3.Connection, ws: Workspace, req: SearchRequest,
           ranked: list[_Candidate], dense: DenseQuery, where: str, args: list[object],
           at: str, moment: str | None) -> list[_Candidate]:
    from memex.search.dense import fusion, vectors  # the vector lane only

    by_key = _all_keys(conn)
    sims = vectors.similarities(dense.table, dense.vector, list(by_key))
    nearest = sorted(sims, key=lambda k: -sims[k])[: DENSE_DEPTH * 2]
    known = {c.row[0] for c in ranked}
    extra_ids = [r for k in nearest for r in by_key[k] if r not in known]
    candidates = {c.row[0]: c for c in ranked}
    if extra_ids:
        marks = ", ".join("?" * len(extra_ids))
        rows = conn.execute(
            f"SELECT {_COLUMNS}, 0.0 FROM {_BY_ROWID} "
            f"WHERE m.rowid IN ({marks}) AND {where}", [*extra_ids, *args]).fetchall()
        for row in _eligible_rows(rows, req, at, moment):
            candidates[row[0]] = _hit_parts(row, ws, req, "", at)
    cosine = {rowid: sims[c.row[21]] for rowid, c in candidates.items() if c.row[21] in sims}
    dense_order = [r for k in nearest for r in by_key[k] if r in candidates][:DENSE_DEPTH]
    fused = fusion.fuse([(c.row[0], c.score) for c in ranked], cosine, dense_order,
                        FUSION_MODE, FUSION_WEIGHT)
    out: list[_Candidate] = []
    for f in fused:
        if f.lane == "vector" and f.score <= 0:
            continue  # the farthest of the nearest: no evidence at all
        c = candidates[f.key]
        c.score = f.score * c.factor
        c.lane = f.lane
        if req.explain:
            c.explain.update({"lane": f.lane, "score": rounded(c.score),
                              "fusion": FUSION_MODE, "bm25_part": rounded(f.bm25_part)})
            if f.vector_part is not None:
                c.explain["vector_part"] = rounded(f.vector_part)
                c.explain["cosine"] = rounded(cosine[f.key])
            if not c.match:
                c.explain["match"] = "nearest vectors"
                c.explain.pop("bm25", None)
        out.append(c)
    return out
