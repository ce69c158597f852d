"""Secrets with no format: a random token told apart from the tokens coding text holds.

Many keys have no prefix: 32 random lower-case letters and digits, 40 random mixed-case
characters, base64.  Nothing but their randomness marks them, and coding text is full of
other long tokens: git object ids, ULIDs, UUIDs, identifiers in snake, camel and kebab case,
paths, version strings, digests.  This module finds the random ones and spares the rest
(:func:`spans`); :mod:`memex.core.redact` masks what it returns, and the scan reports it, so
the one rule serves both.

A run of token characters (letters, digits, ``_ + / = ~ . -``) at least
:data:`MIN_RUN` long is cut into pieces at its separators and at nothing else.  A piece is

* *spared* when its shape is one coding text uses for ids: hexadecimal of a git object id's
  length (7-12 abbreviated, 40 SHA-1; 64, SHA-256, only where its line names a digest), a
  ULID, digits only, or a placeholder
  (a run of five equal or consecutive characters, ``xxxx``, ``example``, low entropy);
* *random* when it is at least :data:`MIN_PIECE` characters long and shows at least
  :data:`MIN_ANOMALIES` anomalies, at least one for every :data:`MAX_CHARS_PER_ANOMALY`
  characters.  An anomaly is a switch between letters and digits, a letter standing alone
  between digits or case changes (``q`` in ``6q8``, ``D`` in ``3D0``), or a pair of
  letters that English words seldom hold (``qz``, ``xk``; :data:`COMMON_BIGRAMS`).  Words,
  abbreviations and identifiers (``fnmatch``, ``getUserById``, ``all-minilm-l6-v2``) show a
  handful at most; random text shows one every two or three characters;
* *neutral* otherwise (short pieces: ``sk``, ``v1``, ``9vf``).

The span masked runs from the first random piece to the last, widened over the neutral
pieces beside them, so a random key cut by ``_`` or ``/`` is masked whole while the path or
identifier around it is kept.  Runs that follow a digest or public-key marker
(``sha512-``, ``h1:``, ``ssh-ed25519``), the bodies of armoured blocks that hold no private
key, the parts of a SOPS ``ENC[...]`` value and base64 of text are not secrets and are
skipped (also base64 of a binary message that holds a JSON object); so are runs that say
they are placeholders and values whose name says they are ids, public, signatures or not
real (``wrongLength``, ``fake_key``), and digits or digest-length hex under a name that says
number or checksum and holds no credential word (``sumOfValues``, ``md5sum``).  A run of short
groups with no random piece (``8-4-4-4-12`` with letters past ``f``) is judged as the string
its groups make together.

The figures behind the thresholds (how many secrets each catches, how many ordinary texts
each touches) are in docs/benchmarks.md and docs/decisions.md; ``bench/redact_normal.py``
and ``bench/secrets_recall.py`` measure them.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string

from memex.core import lazyre

__all__ = ["COMMON_BIGRAMS", "KIND", "MIN_RUN", "anomalies", "placeholder_run", "spans",
           "typed_sequence"]

KIND = "random-token"
MIN_RUN = 12
MIN_PIECE = 8
MIN_ANOMALIES = 4
MAX_CHARS_PER_ANOMALY = 3.4
MIN_ENTROPY = 2.9  # bits per character; 12 random characters of 36 give about 3.3
_SAMPLE = 256  # characters of a long piece that are judged

# Letter pairs that make up ordinary English and code words (every pair at least 2 in 10,000
# of the letter pairs in this repository's own prose and comments).  A pair outside this set
# is an anomaly.
COMMON_BIGRAMS = frozenset((
    "ab", "ac", "ad", "af", "ag", "ai", "ak", "al", "am", "an", "ap", "ar", "as", "at", "au", "av",
    "aw", "ax", "ay", "ba", "be", "bi", "bl", "bm", "bo", "br", "bs", "bu", "by", "ca", "cc", "ce",
    "ch", "ci", "ck", "cl", "co", "cp", "cr", "ct", "cu", "cy", "da", "dd", "de", "di", "do", "dr",
    "ds", "du", "dy", "ea", "eb", "ec", "ed", "ee", "ef", "eg", "ei", "ej", "el", "em", "en", "ep",
    "eq", "er", "es", "et", "ev", "ew", "ex", "ey", "fa", "fe", "ff", "fi", "fl", "fo", "fr", "ft",
    "fu", "fy", "ga", "ge", "gh", "gi", "gl", "gn", "go", "gr", "gs", "gu", "ha", "he", "hi", "ho",
    "hr", "hs", "ht", "hu", "hy", "ia", "ib", "ic", "id", "ie", "if", "ig", "il", "im", "in", "io",
    "ip", "ir", "is", "it", "iv", "ix", "iz", "je", "jo", "js", "ke", "ki", "kn", "ks", "la", "ld",
    "le", "lf", "li", "ll", "lo", "lr", "ls", "lt", "lu", "lv", "ly", "ma", "mb", "mc", "md", "me",
    "mi", "ml", "mm", "mo", "mp", "ms", "mu", "na", "nc", "nd", "ne", "nf", "ng", "ni", "nk", "nl",
    "nn", "no", "ns", "nt", "nu", "nv", "ny", "oa", "ob", "oc", "od", "oe", "of", "og", "oi", "oj",
    "ok", "ol", "om", "on", "oo", "op", "or", "os", "ot", "ou", "ov", "ow", "ox", "pa", "pd", "pe",
    "ph", "pi", "pl", "po", "pp", "pr", "ps", "pt", "pu", "py", "qu", "ra", "rc", "rd", "re", "rg",
    "ri", "rk", "rl", "rm", "rn", "ro", "rr", "rs", "rt", "ru", "rv", "rw", "ry", "sa", "sc", "se",
    "sh", "si", "sk", "so", "sp", "sq", "ss", "st", "su", "sw", "sy", "ta", "tb", "tc", "td", "te",
    "th", "ti", "tl", "to", "tr", "ts", "tt", "tu", "tw", "ty", "ua", "ub", "uc", "ud", "ue", "ug",
    "ui", "ul", "um", "un", "up", "ur", "us", "ut", "va", "ve", "vi", "wa", "we", "wh", "wi", "wn",
    "wo", "wr", "ws", "xa", "xc", "xe", "xi", "xp", "xt", "ye", "ym", "yn", "yo", "yp", "ys", "yt",
    "yw", "ze",
))

_TOKEN_CHARS = r"A-Za-z0-9_+/=~.:\-!#$%&*@^"
_TOKEN_SET = frozenset(string.ascii_letters + string.digits + "_+/=~.:-!#$%&*@^")
_RUN_REST = lazyre.compile(f"[{_TOKEN_CHARS}]+")
_TRAILING = ".!#$%&*@^"
_PIECE = lazyre.compile(r"[A-Za-z0-9]+")
# The prefilter: random text of a dozen characters almost always holds one of these (digits on
# both sides of letters, case flipping inside a word); prose and most identifiers hold none,
# so a text without one costs one pass.
#   [0-9][A-Za-z]{1,12}[0-9]   and   [A-Z](?:[A-Z][a-z]|[a-z]{1,2})[A-Z]
# Both are found on the text's bytes, one per character (``encode("ascii", "replace")``: the
# offsets are the text's), translated to classes: ``d`` a digit, ``U`` a capital, ``l`` a small
# letter. The patterns then start with a literal, which the regex engine finds fast; on the
# text itself it tests a character class at every position (~40 us each on a 3 KB memory).
_CLASS_TABLE = bytes(
    ord("d") if 48 <= b <= 57 else
    ord("U") if 65 <= b <= 90 else ord("l") if 97 <= b <= 122 else ord(".")
    for b in range(256))
_SUSPECTS = (lazyre.compile(rb"d[Ul]{1,12}d"), lazyre.compile(rb"U(?:Ul|l{1,2})U"))
# a word, an acronym, a digit group; ``IPv4``, ``v2`` (a version marker) is one part
PARTS = lazyre.compile(r"[A-Z]*v[0-9]+|[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_PARTS = PARTS  # words, acronyms and digit groups of a piece
_HEX = lazyre.compile(r"[0-9a-f]+|[0-9A-F]+")
_HEX_NUMBER = lazyre.compile(r"0[xX][0-9a-fA-F]+")
_ULID = lazyre.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
_GIT_ID_LENGTHS = frozenset((*range(7, 13), 40))
# 64 hexadecimal characters are a SHA-256 digest or a 256-bit key: a digest is spared where
# its line says so (``sha256``, ``digest``, ``checksum``, ``commit``...) or in the output of
# ``sha256sum`` (the digest, two spaces, a file name); a key is masked.
_HEX64 = lazyre.compile(r"[0-9a-f]{64}|[0-9A-F]{64}")  # (a piece of the run)
_DIGEST_WORDS = lazyre.compile(
    r"sha-?256|sha-?2|sha3|blake|digest|checksum|hash|commit|object|blob|tree|oid|integrity"
    r"|fingerprint|image|layer|manifest", re.IGNORECASE)
_SUM_LINE = lazyre.compile(r"[ \t][ *][^\s]")  # sha256sum: "<digest>  name" / "<digest> *name"
_PLACEHOLDER = lazyre.compile(
    r"example|dummy|sample|placeholder|redacted|changeme|your|fake|xxxx|\.\.", re.IGNORECASE)
# ``name=value`` inside one run (``primaryKey=...``, ``?token=...``): the name is not random
_NAME_IN_RUN = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_.-]*=(?=[^=])")
# A file name: the run ends in an extension (``main.3f9a2c1e7b.js``, ``report-<md5>.pdf``)
_FILE_NAME = lazyre.compile(r"\.[a-z][a-z0-9]{0,4}$")
# A digest or a public key is not a secret: what follows these is spared.
_SPARED_BEFORE = lazyre.compile(
    r"(?:\b(?:sha(?:1|224|256|384|512)|md5|h1|blake2[bs]?|integrity)[:=-]|ENC\[[^\]\s]*|"
    r";base64,|"
    r"\b(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)[ \t]+)"
    r"[\"']?$",
    re.IGNORECASE,
)
# digests, and Stripe's publishable keys (public by design)
_SPARED_PREFIX = lazyre.compile(
    r"(?i:sha(?:1|224|256|384|512)|md5|blake2[bs]?|h1)[:=-]|pk_(?:live|test)_")
_BASE64 = lazyre.compile(r"[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2}")
# An armoured block that holds no private key: a certificate, a public key, a signature,
# an encrypted message (``-----BEGIN PGP MESSAGE-----``, SOPS' PGP section).
_PUBLIC_BLOCK = lazyre.compile(
    r"-----BEGIN (?![A-Z0-9 ]*PRIVATE)[A-Z0-9 ]{1,40}-----.*?(?:-----END[^\n]*-----|\Z)",
    re.DOTALL,
)
_PUBLIC_HEAD = lazyre.compile(r"-----BEGIN (?![A-Z0-9 ]*PRIVATE)[A-Z0-9 ]{1,40}-----")


def public_blocks(text: str) -> list[tuple[int, int]]:
    """The spans of ``_PUBLIC_BLOCK.finditer(text)``, from searches for its literals: the
    regex's lazy body tried the END at every character up to it (~3 ms for a 2 MB text that
    quotes one BEGIN line and no END, whose block runs to the end)."""
    out: list[tuple[int, int]] = []
    at = text.find("-----BEGIN ")
    while at != -1:
        head = _PUBLIC_HEAD.match(text, at)
        if head is None:
            at = text.find("-----BEGIN ", at + 1)
            continue
        end = _block_end(text, head.end())
        out.append((at, end))
        at = text.find("-----BEGIN ", end)
    return out


def _block_end(text: str, pos: int) -> int:
    """Where the block's body and END (``_PUBLIC_BLOCK``'s lazy tail) matched at ``pos``
    end: after the last dashes on the first END line that has some after its END, else at
    the end of the text."""
    end = text.find("-----END", pos)
    while end != -1:
        eol = text.find("\n", end + 8)
        last = text.rfind("-----", end + 8, len(text) if eol == -1 else eol)
        if last != -1:
            return last + 5
        end = text.find("-----END", end + 1)
    return len(text)

# The short last line of a key wrapped over lines, after a line of 40 or more: base64 with
# its padding or a PGP armour checksum (``XI=``, ``=8xQN``).
_MIN_WRAPPED = 40
_WRAP_TAIL = lazyre.compile(
    r"[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9+/]{0,79}=)[A-Za-z0-9+/]*={1,2}[A-Za-z0-9+/]*"
    r"(?<=[A-Za-z0-9+/=]{4})(?=\s|$)")
_WORD_END = frozenset(" \t\r\n\"'`<>()[]{}|,;")
# ``name = value``, ``name: value``, ``"name": "value"``, ``name => value`` right before a run
_NAME_BEFORE = lazyre.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*(?:=>|:?=|:)[ \t]*[\"']?$")
# Names that say their value is not a real one: a test's wrong, invalid or fake input
# (``wrongLength := "AkCp..."``, ``nonMatchingToken``, ``fake_key``); lower case.
FAKE_NAME = r"wrong|invalid|non_?matching|not_?matching|mismatch|fake|dummy|mock|bogus"
# Names whose values are ids, names, digests, signatures or public values, not secrets.
_PUBLIC_NAME = lazyre.compile(
    r"(?i:csrf|xsrf|authenticity|public|publishable|primary|foreign|partition|sort[_-]?key"
    r"|checksum|digest|hash|etag|nonce|uuid|guid|(?<!not_)(?<!not)commit|revision|accessor"
    r"|signature"
    f"|{FAKE_NAME})"
    r"|(?:^|[_.-])(?i:id|name|sha|rev|version)$|[a-z0-9](?:Id|ID|Name|Sha|Version)$"
)
# Names that say their value is a number or a checksum (sumOfValues, md5sum, itemCount,
# total, length): spared only when the value has that shape (digits, or hex of a digest's
# length) and the name holds no credential word (``db_password_count``, ``apiKeySize``)
_NUMBER_NAME = lazyre.compile(
    r"(?:(?<![A-Za-z])(?:sum|count|total|size|length)|(?<=[a-z0-9])(?:Sum|Count|Total|Size"
    r"|Length))(?![a-z])")
_NUMBER_VALUE = lazyre.compile(
    r"[0-9]+|[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{56}|[0-9a-fA-F]{64}|[0-9a-fA-F]{96}"
    r"|[0-9a-fA-F]{128}")
# The one list of the words that make a name a secret's.  ``key`` is kept apart: a
# provider's api key name holds it, and a strict provider's spare (redact) asks whether the
# name is of another credential kind.  The JSON key inside base64 and an encoded name count
# the credential words with ``key``; a name whose value is a secret counts all of them.
CREDENTIAL_WORDS = "pass|pwd|secret|token|auth|cred"
SECRET_NAME_WORDS = CREDENTIAL_WORDS + "|dsn|webhook|session|cookie|private|sign"
_CREDENTIAL_WORDS = "key|" + CREDENTIAL_WORDS
_SECRET_NAME_WORD = lazyre.compile("key|" + SECRET_NAME_WORDS, re.IGNORECASE)
# An HTML/XML element naming its value: ``<input name="authenticity_token" value="...``
_ATTRIBUTE_NAME = lazyre.compile(
    r"""\bname=["'](?P<name>[^"'<>]{1,80})["'][^<>]{0,200}?\bvalue=["']$""")

# Letters or digits in alphabet order, as a person types them in place of a key
# ("abcdefghij", "12345678"); a generated key never holds eight in a row.
MIN_TYPED_RUN = 8
_TYPED = lazyre.compile("|".join(
    re.escape(seq[i : i + MIN_TYPED_RUN])
    for seq in (string.ascii_lowercase, string.digits + "0")
    for i in range(len(seq) - MIN_TYPED_RUN + 1)))

# piece classes
_SPARED, _NEUTRAL, _RANDOM = 0, 1, 2


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    n = len(value)
    if n == 0:
        return 0.0
    log2 = math.log2
    return log2(n) - sum(c * log2(c) for c in map(value.count, set(value))) / n


def typed_sequence(value: str) -> bool:
    """Does ``value`` hold :data:`MIN_TYPED_RUN` letters or digits in alphabet order?"""
    return _TYPED.search(value.lower()) is not None


def placeholder_run(piece: str) -> bool:
    """Five equal or consecutive characters in a row (``00000``, ``12345``, ``abcde``)."""
    same = up = down = 1
    for a, b in zip(piece, piece[1:], strict=False):
        d = ord(b) - ord(a)
        same = same + 1 if d == 0 else 1
        up = up + 1 if d == 1 else 1
        down = down + 1 if d == -1 else 1
        if same >= 5 or up >= 5 or down >= 5:
            return True
    return False


def anomalies(piece: str) -> int:
    """Digit groups after letters, lone letters and pairs, and uncommon letter pairs in
    ``piece``."""
    count = 0
    previous_digit: bool | None = None
    for part in _PARTS.findall(piece):
        digit = part[0].isdigit()
        if digit and previous_digit is False:
            count += 1  # one per digit group: "list2cmdline", "IPv4" are words around a digit
        previous_digit = digit
        if digit or part[-1].isdigit():
            continue
        if len(part) <= 2:
            count += 1  # a lone letter or pair between case changes or digits: "Sd", "FZ"
            continue
        low = part.lower()
        pairs = sum(low[i : i + 2] not in COMMON_BIGRAMS for i in range(len(low) - 1))
        # an acronym (JSONRPC, HTTPS) is read letter by letter: its pairs count half
        count += pairs // 2 if part.isupper() else pairs
    return count


def _classify(piece: str, digests: bool = False) -> int:
    n = len(piece)
    if piece.isdigit() or _HEX_NUMBER.fullmatch(piece):
        return _SPARED
    if (n in _GIT_ID_LENGTHS or (digests and n == 64)) and _HEX.fullmatch(piece):
        return _SPARED
    if n == 26 and _ULID.fullmatch(piece):
        return _SPARED
    if n < MIN_PIECE:
        return _NEUTRAL
    piece = piece[:_SAMPLE]  # a long piece is judged by its start: linear time on any input
    n = len(piece)
    found = anomalies(piece)
    if found < MIN_ANOMALIES or found * MAX_CHARS_PER_ANOMALY < n:
        return _SPARED
    if placeholder_run(piece) or entropy(piece) < min(MIN_ENTROPY, math.log2(n) - 0.6):
        return _SPARED
    return _RANDOM


def _run_span(run: str, digests: bool = False) -> tuple[int, int] | None:
    """The random part of one run (offsets in ``run``), or None.  A run that is mostly
    random (half of its letters and digits or more) is masked whole.  ``digests``: the line
    says its 64-hex pieces are digests."""
    pieces = [(m.start(), m.end(), _classify(m.group(), digests))
              for m in _PIECE.finditer(run)]
    randoms = [i for i, p in enumerate(pieces) if p[2] == _RANDOM]
    if not randoms:
        return _dashed_span(run, pieces)
    first, last = randoms[0], randoms[-1]
    random_chars = sum(pieces[i][1] - pieces[i][0] for i in randoms)
    if random_chars * 2 >= sum(p[1] - p[0] for p in pieces) or _grouped(run, pieces):
        first, last = 0, len(pieces) - 1
    while first > 0 and pieces[first - 1][2] == _NEUTRAL:
        first -= 1
    while last + 1 < len(pieces) and pieces[last + 1][2] == _NEUTRAL:
        last += 1
    start = 0 if first == 0 else pieces[first][0]
    end = len(run) if last == len(pieces) - 1 else pieces[last][1]
    while end > start and run[end - 1] in _TRAILING:
        end -= 1  # sentence punctuation after the token
    return start, end


def _grouped(run: str, pieces: list[tuple[int, int, int]]) -> bool:
    """Is ``run`` one key cut into groups by dashes (``acd3c08b-74e8-...-80694le24f46``,
    no word among the groups): a random group makes the whole run random, a hex group of
    a short commit id's length included."""
    return len(pieces) >= 3 and _DASHED_GROUPS.fullmatch(run) is not None and \
        not _holds_a_word(run, pieces)


def _holds_a_word(run: str, pieces: list[tuple[int, int, int]]) -> bool:
    """Is one of RUN's pieces a word (letters only, three or more, nothing random in
    them): a name's part (project__remote__9c570c1e24d2), not a key's group."""
    return any(run[start:end].isalpha() and end - start >= 3 and not anomalies(run[start:end])
               for start, end, _ in pieces)


_DASHED_GROUPS = lazyre.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")


def _dashed_span(run: str, pieces: list[tuple[int, int, int]]) -> tuple[int, int] | None:
    """A key cut into short groups (``8-4-4-4-12`` with letters past ``f``: not a UUID) is
    judged as the string its groups make together; a UUID (all hexadecimal) stays spared."""
    if len(pieces) < 3 or any(end - start >= MIN_PIECE * 2 for start, end, _ in pieces):
        return None
    if _holds_a_word(run, pieces):
        return None
    joined = "".join(run[start:end] for start, end, _ in pieces)
    if len(joined) < MIN_PIECE * 2 or _HEX.fullmatch(joined) or _classify(joined) != _RANDOM:
        return None
    return pieces[0][0], pieces[-1][1]


def _encoded_text(run: str) -> bool:
    """Is ``run`` base64 of text: prose, a name, a JSON/XML document (``aGVsbG8gd29ybGQ=``,
    ``ZGF0YS12YWx1ZTE=``, ``eyJhbGciOiJIUzI1NiJ9``)?  Encoded text is data; key material
    decodes to bytes."""
    if not _BASE64.fullmatch(run):
        return False
    body = run.rstrip("=")[: _SAMPLE * 4]  # whole quads: the start decodes on its own
    try:
        raw = base64.b64decode(body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return False
    try:
        decoded = raw.decode("utf-8")
    except ValueError:
        decoded = ""
    if not decoded or not decoded.isprintable():
        # a binary container that holds a JSON document (a signed message, msgpack with
        # a JSON payload): structured data; key material is random bytes
        # (the whole run is searched for a credential key, not the sample only)
        if _JSON_INSIDE.search(raw) is None:
            return False
        whole = raw if len(body) == len(run.rstrip("=")) else _decoded_bytes(run)
        return whole is not None and _JSON_CREDENTIAL.search(whole) is None
    if " " in decoded or decoded[:1] in "{[<":
        return True
    # a name (``data-value1``), not a password or ``user:password`` that an Authorization
    # header or a Kubernetes secret encodes
    return _ENCODED_NAME.fullmatch(decoded) is not None and \
        _CREDENTIAL_WORD.search(decoded) is None and _is_name(decoded)


def _decoded_bytes(run: str) -> bytes | None:
    """The bytes of the whole base64 ``run`` (its last partial quad dropped); None when it
    does not decode."""
    body = run.rstrip("=")
    body = body[: len(body) - len(body) % 4]
    try:
        return base64.b64decode(body.replace("-", "+").replace("_", "/"))
    except (binascii.Error, ValueError):
        return None


_ENCODED_NAME = lazyre.compile(r"[A-Za-z0-9_.-]+")
_JSON_INSIDE = lazyre.compile(rb'\{"[A-Za-z_][A-Za-z0-9_]{0,40}":["{\[0-9tfn]')
# ... unless it gives a credential a value ({"auth":"..."} of a Docker config)
_JSON_CREDENTIAL = lazyre.compile(
    rb'"[A-Za-z_-]{0,30}(?:' + _CREDENTIAL_WORDS.encode() + rb')[A-Za-z_-]{0,30}"[ \t\r\n]*:'
    rb'[ \t\r\n]*"', re.IGNORECASE)
_CREDENTIAL_WORD = lazyre.compile(_CREDENTIAL_WORDS, re.IGNORECASE)


def _is_name(name: str) -> bool:
    """An identifier of words (``primaryKey``, ``csrf-token``), not a random piece."""
    pieces = _PIECE.findall(name)
    return any(p.isalpha() and len(p) >= 3 and not anomalies(p) for p in pieces) and \
        all(_classify(p) != _RANDOM for p in pieces)


def _in_url(text: str, start: int, end: int) -> bool:
    """Is the token at ``start:end`` part of a URL (``https://host/path?q=...``)?"""
    first = start
    while first > 0 and start - first < 300 and text[first - 1] not in _WORD_END:
        first -= 1
    return "://" in text[first:end]


def _public_value(text: str, start: int, value: str) -> bool:
    """Is ``value``, the run at ``start``, the value of a name that says it is public, an
    id or not a real value (or a number or checksum that has that shape)?"""
    for m in (_NAME_BEFORE.search(text, max(0, start - 80), start),
              _ATTRIBUTE_NAME.search(text, max(0, start - 300), start)):
        if m is not None and _public_name(m.group("name"), value):
            return True
    return False


def _public_name(name: str, value: str) -> bool:
    """Does ``name`` say that ``value`` is public, an id, not real, or a number/checksum
    (then only of that shape, under no credential word)?"""
    return _PUBLIC_NAME.search(name) is not None or (
        _NUMBER_NAME.search(name) is not None and _NUMBER_VALUE.fullmatch(value) is not None
        and _SECRET_NAME_WORD.search(name) is None)


def _digest_line(text: str, start: int, stop: int) -> bool:
    """Does the line of the run at ``start:stop`` say its 64-hex pieces are digests?"""
    line = text.rfind("\n", 0, start) + 1
    return _DIGEST_WORDS.search(text, max(line, start - 80), stop) is not None or \
        (_SUM_LINE.match(text, stop) is not None and not text[line:start].strip())


def _in_sops_value(text: str, start: int) -> bool:
    """Is ``start`` inside a SOPS ``ENC[AES256_GCM,data:...,iv:...,tag:...]`` value (its
    parts are ciphertext, nonce and tag: encrypted data, not a key)?"""
    line = text.rfind("\n", 0, start) + 1
    opening = text.rfind("ENC[", line, start)
    return opening != -1 and "]" not in text[opening:start]


# ``user:'password'``: a quoted password is masked with its user, as ``user:password`` (one
# run) is when the password makes half of it or more
_QUOTED_PAIR = lazyre.compile(r"(?<![\w.:/@~$%-])[A-Za-z][A-Za-z0-9_.-]{0,39}:[\"']$")


def _quoted_pair_start(text: str, begin: int, end: int) -> int:
    """Where the user starts when the random run at ``begin:end`` is the quoted password of
    a ``user:'...'`` pair no longer than it; else ``begin``."""
    if begin < 3 or text[begin - 1] not in "'\"" or text[begin - 2] != ":":
        return begin
    user = _QUOTED_PAIR.search(text, max(0, begin - 42), begin)
    return user.start() if user is not None and begin - 2 - user.start() <= end - begin \
        else begin


def _suspects(text: str, plain: bytes | None = None) -> list[int]:
    """Where the prefilter's suspects start in ``text``, in order (``plain``: ``text``
    encoded as here, when the caller has it)."""
    if plain is None:
        plain = text.encode("ascii", "replace")  # a byte a character
    classes = plain.translate(_CLASS_TABLE)
    return sorted({m.start() for suspect in _SUSPECTS for m in suspect.finditer(classes)})


def _runs(text: str, plain: bytes | None = None) -> list[tuple[int, int]]:
    """The runs of token characters (at least :data:`MIN_RUN` long) that hold a suspect,
    found from the suspects outwards, so the cost follows the suspects, not the text."""
    out: list[tuple[int, int]] = []
    end = 0
    for at in _suspects(text, plain):
        if at < end:
            continue  # inside the run just taken
        start = at
        while start > 0 and text[start - 1] in _TOKEN_SET:
            start -= 1
        found = _RUN_REST.match(text, at)
        end = found.end() if found else at
        if end - start >= MIN_RUN:
            out.append((start, end))
    return out


# Runs that are exactly a ULID or an RFC 3339 UTC time (the id and the times of every
# memory's front matter) are never masked: a ULID is one piece that _classify spares, a
# time splits into pieces under MIN_PIECE whose joined string has 3 anomalies (8 digits,
# T, 6 digits, Z), fewer than MIN_ANOMALIES, whatever its digits. Told at once, they skip
# the judging that would come to that (~35 us a file).
_SPARED_SHAPE = lazyre.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z|[0-7][0-9A-HJKMNP-TV-Z]{25}")


def spans(text: str, plain: bytes | None = None) -> list[tuple[int, int]]:
    """The random tokens of ``text`` as (start, end) offsets; tokens on consecutive lines
    (a key wrapped at 64 columns) are one span. ``plain``: ``text.encode("ascii",
    "replace")`` when the caller has it (one byte a character)."""
    out: list[tuple[int, int]] = []
    runs = _runs(text, plain)
    if not runs:
        return out
    skip: list[tuple[int, int]] = []
    if "-----BEGIN" in text:
        skip = public_blocks(text)
    for start, stop in runs:
        run = text[start:stop]
        if _SPARED_SHAPE.fullmatch(run):
            continue  # an id or a time: every front matter holds some
        if _PLACEHOLDER.search(run) or typed_sequence(run) or _FILE_NAME.search(run) or \
                _encoded_text(run):
            continue
        named = _NAME_IN_RUN.match(run)
        if named and _is_name(named.group()[:-1]):
            if _public_name(named.group()[:-1], run[named.end() :]):
                continue
            run, start = run[named.end() :], start + named.end()
        found = _run_span(run, _HEX64.search(run) is not None and
                          _digest_line(text, start, start + len(run)))
        if found is None:
            continue
        if _SPARED_PREFIX.match(run) or _SPARED_BEFORE.search(text, max(0, start - 40), start) \
                or _in_sops_value(text, start):
            continue
        if skip and any(a <= start < b for a, b in skip):
            continue
        begin, end = start + found[0], start + found[1]
        if _in_url(text, begin, end) or _public_value(text, start, run):
            continue
        if begin == start:
            begin = _quoted_pair_start(text, begin, end)
        if out and not text[out[-1][1] : begin].strip() and \
                text.count("\n", out[-1][1], begin) == 1:
            begin = out.pop()[0]
        if end - begin >= _MIN_WRAPPED:
            tail = _WRAP_TAIL.match(text, end)
            end = tail.end() if tail else end
        out.append((begin, end))
    return out
