"""Redaction of private blocks and secrets in memory text.

Two operations share one detector:

* :func:`redact` rewrites text before it is stored: every ``<private>...</private>`` block
  (case-insensitive tag, may span lines) becomes ``[REDACTED]`` and every recognised secret is
  masked in place with :func:`mask` (first four characters kept, the rest replaced by ``x``, same
  length, so the surrounding text and the line structure are untouched).
* :func:`scan` reports what :func:`redact` would change without changing anything; it is used on
  files that arrived by git (pre-commit hook, ``verify``).

Secrets are found three ways, in this order of priority: by their format (the token rules of
:mod:`memex.core.secret_rules`, and its keyword formats: a value of the provider's shape
beside the provider's name), by their context (an assignment to a password/secret/token
name, credentials in a URL, an ``Authorization:`` header, a private key block), and, for a
random token standing alone, by its randomness (:mod:`memex.core.bare_secrets`).  A
vendor's published example is masked by no detector; a near miss of a fixed format (a
token that starts with a format's prefix but does not fit it) by neither the bare nor the
format detectors.  A spare never outranks a credential name or another detector: the
assignment to a secret/password/token/key name, URL credentials and headers still mask it.

Both are idempotent by construction: a value that is already masked is never a finding, and
:func:`redact` re-runs the detector over its own output until nothing is left, so
``find_secrets(redact(t).text) == []`` always holds.

The module is pure (stdlib only) and every pattern is compiled once, on its first use
(:mod:`memex.core.lazyre`: a write whose text holds no token prefix compiles none of the
format rules).  Patterns are anchored on literal prefixes, have no ambiguous nested
quantifiers, are tried only at the start of a run of token characters and are skipped
entirely when their prefix does not occur, so large inputs are scanned in linear time.
"""

from __future__ import annotations

import bisect
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from os.path import commonprefix

from memex.core import bare_secrets, lazyre, secret_rules
from memex.core.bare_secrets import entropy

__all__ = ["PLACEHOLDER", "TAG_PLACEHOLDER", "Finding", "Redaction", "as_tag", "mask", "quoted",
           "redact", "redact_parts", "find_secrets"]

_KEEP = 4
_MASK_CHAR = "x"
PLACEHOLDER = "[REDACTED]"
TAG_PLACEHOLDER = "REDACTED"  # a tag is one word: the placeholder without its brackets

_PRIVATE_KIND = "private-block"
_PEM_KIND = "pem-private-key"
_BLOCK_KINDS = (_PEM_KIND, bare_secrets.KIND)  # may span lines: masked with the lines kept
_ASSIGN_KIND = "secret-assignment"


@dataclass(frozen=True)
class Finding:
    """One private block or secret; ``start``/``end`` index the original text."""

    kind: str
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """The result of :func:`redact`."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def changed(self) -> bool:
        return bool(self.findings)

    def notice(self) -> str:
        """One human-readable line describing what was changed (never the secret itself)."""
        blocks = sum(1 for f in self.findings if f.kind == _PRIVATE_KIND)
        secrets = [f for f in self.findings if f.kind != _PRIVATE_KIND]
        parts: list[str] = []
        if blocks:
            parts.append(f"redacted {blocks} private block{'s' if blocks != 1 else ''}")
        if secrets:
            kinds: list[str] = []
            for f in secrets:
                if f.kind not in kinds:
                    kinds.append(f.kind)
            n = len(secrets)
            parts.append(f"masked {n} secret{'s' if n != 1 else ''} ({', '.join(kinds)})")
        return ", ".join(parts) if parts else "nothing redacted"


def mask(secret: str) -> str:
    """Keep the first four characters of ``secret`` and replace the rest by ``x``."""
    if len(secret) <= _KEEP:
        return secret
    return secret[:_KEEP] + _MASK_CHAR * (len(secret) - _KEEP)


def shown(text: str) -> str:
    """TEXT as a report shows it (a file name in a scan or verify finding): every secret
    in it masked, as `redact` masks it; the text itself when it holds none."""
    return redact(text).text if text else text


def quoted(value: object, limit: int | None = None) -> str:
    """VALUE as a message quotes it (its repr) with every secret in it masked, as a write
    would store it: a refusal or notice never shows what the store would not keep. Cut
    to LIMIT characters ("..." at the end) only after masking, so a cut never leaves
    the head of a token readable that its whole would have masked."""
    text = repr(redact(value).text) if isinstance(value, str) else redact(repr(value)).text
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


_FIRST_VISIBLE = lazyre.compile(rf"(?:\s*\S){{{_KEEP}}}")
_VISIBLE_RUN = lazyre.compile(r"\S+")
_UNMASKED = lazyre.compile(rf"[^\s{_MASK_CHAR}]")


def _is_masked(value: str) -> bool:
    """Is ``value`` already the output of :func:`mask` (nothing left to hide)?"""
    return not value[_KEEP:].lstrip(_MASK_CHAR)


def _mask_run(m: re.Match[str]) -> str:
    return _MASK_CHAR * (m.end() - m.start())


def _mask_block(body: str) -> str:
    """Like :func:`mask`, but whitespace (line breaks) is preserved and not counted."""
    m = _FIRST_VISIBLE.match(body)
    if m is None:
        return body
    return body[: m.end()] + _VISIBLE_RUN.sub(_mask_run, body[m.end() :])


def _is_masked_block(body: str) -> bool:
    """Is ``body`` already the output of :func:`_mask_block`?"""
    m = _FIRST_VISIBLE.match(body)
    return m is None or _UNMASKED.search(body, m.end()) is None


# --------------------------------------------------------------------------------------------
# Patterns.  Order is priority: when two candidates overlap, the earlier rule wins, so a
# specific token inside an assignment is reported once, with its specific kind.


@dataclass(frozen=True)
class _Rule:
    """One secret rule: its pattern and what must hold for a match to be masked."""

    kind: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]  # the regex only runs when one of these occurs in the text
    checks: int
    skip: int  # characters of fixed prefix excluded from the checks
    group: bool  # mask the named group ``s`` rather than the whole match


_META = frozenset("[](){}?*+|^$\\")


def _compile(rule: secret_rules.TokenRule) -> _Rule:
    """``prefix`` then ``body``; a prefix preceded by a ``before`` character is the middle of a
    longer word and does not count.  For a literal prefix the look-behind is placed right after
    it (the literal-prefix search stays fast and only the start of a run is ever tried); a
    pattern prefix gets it in front."""
    literal = rule.prefix.replace("\\.", ".")
    width = rule.width or (len(literal) if literal and not _META & set(literal) else 0)
    if not rule.before:
        pattern = rule.prefix + rule.body
    elif width:
        pattern = f"{rule.prefix}(?<![{rule.before}].{{{width}}}){rule.body}"
    else:
        pattern = f"(?<![{rule.before}]){rule.prefix}{rule.body}"
    skip = width if rule.skip < 0 else rule.skip
    return _Rule(rule.kind, lazyre.compile(pattern), rule.needles, rule.checks, skip, rule.secret)


_TOKEN_RULES: tuple[_Rule, ...] = tuple(_compile(r) for r in secret_rules.TOKEN_RULES)


def _needle_index() -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each distinct needle with the rules it gates (the keyword prefilter)."""
    index: dict[str, list[int]] = {}
    for i, rule in enumerate(_TOKEN_RULES):
        for needle in rule.needles:
            index.setdefault(needle, []).append(i)
    return tuple((needle, tuple(rules)) for needle, rules in index.items())


_NEEDLES = _needle_index()


def _needle_groups() -> tuple[tuple[str, tuple[tuple[str, tuple[int, ...]], ...]], ...]:
    """The needles under their first two characters: a pair that several needles share
    (``gh`` of ``ghp_``, ``gho_``...) is looked for once before them (one search of the
    runs for a needle costs ~0.3 us a 300-character memory's runs)."""
    groups: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for needle, rules in _NEEDLES:
        groups.setdefault(needle[:2], []).append((needle, rules))
    return tuple((head, tuple(members)) for head, members in groups.items())


_NEEDLE_GROUPS = _needle_groups()


# The groups by their pair of first characters, as a pair of characters (a needle of one
# character, ":" or "|", has a group of its own, always looked at)
_HEAD_PAIRS = {(head[0], head[1]): members for head, members in _NEEDLE_GROUPS if len(head) == 2}
_HEAD_PAIR_SET = frozenset(_HEAD_PAIRS)  # intersected with the pairs as made: no set of them
_SHORT_GROUPS = tuple(members for head, members in _NEEDLE_GROUPS if len(head) < 2)
_PAIRS_UP_TO = 600  # longer: each head searched for (the set of pairs costs ~100 ns a pair)


def active_rules(joined: str) -> list[int]:
    """The token rules whose needles occur in ``joined`` (the keyword prefilter), in
    order: what checking every needle of :data:`_NEEDLES` gives. A short ``joined`` (a
    memory's runs: ~60 characters) is read once into its pairs of characters, and only
    the groups whose head is among them are looked at (a search for each of ~90 heads
    cost more than the rest of the token rules)."""
    active: set[int] = set()
    if len(joined) <= _PAIRS_UP_TO:
        pairs = _HEAD_PAIR_SET.intersection(zip(joined, joined[1:], strict=False))
        groups = [*(_HEAD_PAIRS[pair] for pair in pairs), *_SHORT_GROUPS]
        for members in groups:
            for needle, rules in members:
                if needle in joined:
                    active.update(rules)
        return sorted(active)
    for head, members in _NEEDLE_GROUPS:
        if len(members) > 1 and head not in joined:
            continue
        for needle, rules in members:
            if needle in joined:
                active.update(rules)
    return sorted(active)

_PEM_BEGIN = lazyre.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = lazyre.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# Body of a BEGIN without END: the following lines that look like base64 or PEM headers.
_PEM_LOOSE_BODY = lazyre.compile(
    r"(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\r\n]*)(?=[ \t]*(?:\r?\n|$)))*"
)

# An assignment is found from its key word, then matched forwards from the end of that word (the
# rest of the key name, which may be anything like AWS_ or client, does not matter).
_ASSIGN_WORD = (
    r"passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key"
    r"|account[_-]?key|private[_-]?key|credential|key(?<=[a-z0-9][_.-]key)(?![a-z])"
    r"|key(?<=[a-z] key)(?= (?:is|was) )|auth(?<=[a-z0-9][_.-]auth)(?![a-z])"
    r"|creds(?<![a-z]creds)(?![a-z])|login(?<=[a-z0-9][_.-]login)(?![a-z])"
    r"|密码|口令|密钥|パスワード|暗証番号|비밀번호"
)
_ASSIGN_KEY = lazyre.compile(_ASSIGN_WORD)  # run on the lower-cased text
# Every match of _ASSIGN_WORD starts with one of these words, or with one of the words of
# _KEY_HEAD before "key" (at most _NEEDLE_BEFORE characters before it: "account_key"):
# so _ASSIGN_KEY is tried only there, where str.find finds them (assign_keys;
# tests/test_redact_runs.py holds each alternative of _ASSIGN_WORD to this).
_ASSIGN_NEEDLES = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "login",
                   "密码", "口令", "密钥", "パスワード", "暗証番号", "비밀번호")
_KEY_HEAD = lazyre.compile(r"(?:api|access|auth|account|private)[_-]?\Z")
_KEY_HEAD_ENDS = frozenset("isthe")  # the last letters of its words
# A key word in every this many characters or more: the key-word regex is run over the
# whole text (~20 ns a character) rather than tried at each place (~1.5-3 us a place)
_DENSE_KEYS = 64
_NEEDLE_BEFORE = 8
_ASSIGN_ASCII_FOUND = tuple(  # and "key", with its heads
    needle for needle in _ASSIGN_NEEDLES if needle.isascii() and needle != "key")
_ASSIGN_WIDE = tuple(needle for needle in _ASSIGN_NEEDLES if not needle.isascii())
# The words the key detectors look up in the key words' lower case (assign_keys and
# _assignment_candidates): with "ı" or "ſ" in a text, their places there are those in the
# folded lower case that hold neither (every place of a word in the one is one in the other,
# a word holds no "?")
_KEY_WORDS = (*_ASSIGN_ASCII_FOUND, "key")
_PASSWORD_WORD = lazyre.compile(r"pass|pwd|密码|口令|パスワード|暗証|비밀", re.IGNORECASE)
_PASSWORD_KEYS: dict[str, bool] = {}  # each key word met (a few dozen forms): a password's?


def _password_key(word: str) -> bool:
    """Is the key word ``word`` (a match of _ASSIGN_KEY) a password's: does
    _PASSWORD_WORD find it? Asked once a word, not once a place."""
    known = _PASSWORD_KEYS.get(word)
    if known is None:
        known = _PASSWORD_KEYS[word] = _PASSWORD_WORD.search(word) is not None
    return known


_CAMEL_KEY = lazyre.compile(r"(?<=[a-z0-9])Key(?![a-z])")
# Key names that hold ids, names or public values rather than secrets.
_NOT_SECRET_NAME = lazyre.compile(
    r"csrf|xsrf|authenticity|public|publishable|primary|foreign|sort|partition|schema"
    r"|(?<![a-z])bucket"
    r"|cache|idempoten|cursor|lookup|index|unique|composite|surrogate|hash|object|kms|scope"
    r"|key_?vault"  # an Azure Key Vault's name or URL
    f"|{bare_secrets.FAKE_NAME}"
)
_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "_.-$")
_ASSIGN_SUFFIX = lazyre.compile(  # rest of the key name: _KEY, _ACCESS_KEY, Value, s
    r"(?:[_.-]?(?:key|value|secret|token|access[_-]?key|string|str|s(?![a-z])|[0-9]))*",
    re.IGNORECASE,
)
# What a non-empty _ASSIGN_SUFFIX can start with (``ſ`` and the Kelvin sign match ``s``
# and ``k`` when the case is ignored); tests/test_redact_runs.py holds the two together
_SUFFIX_FIRST = frozenset("_.-0123456789kvstaKVSTA\u017f\u212a")
_ASSIGN_VALUE = lazyre.compile(
    r"""
    (?:\*\*|__)?["']?                   # closing **bold** or quote around the key
    (?:[ \t]+(?:string|str|String|&str|char\s*\*))?  # Go / Rust / C declarations
    (?:
        [ \t]*(?:=>|:{1,3}=|\?=|\.=|\+=|=(?!=)|:(?=[ \t"'`*_]|$))  # = := ::= :::= ?= .= => :
      | ["']?[ \t]*,[ \t]*(?=["'])       # setProperty("KEY", "value")
      | ["'][ \t]+value[ \t]*=[ \t]*(?=["'])  # <add key="Password" value="...">
      | (?P<element>>)\s*               # <token>value</token>
      | [ \t]*：                         # full-width colon
      | [ \t]+=[ \t]+
      | (?P<prose>                      # a sentence: the value is the word after it
          [ \t]+(?:is|was|are)[ \t]+(?:(?:set[ \t]+to|now|still)[ \t]+)?
        | [ \t]*(?:是|为|は|が)          # 密码是 / パスワードは
        | [ \t]+(?:for|of|on|in)[ \t]+[A-Za-z0-9_.-]{1,40}[ \t]+(?:is|was|=)[ \t]+
      )
    )
    [ \t]*(?:(?:\*\*|__|`)[ \t]*)?     # "**Password:** value"
    (?P<quote>["'`]?)
    """,
    re.VERBOSE,
)
# What a match of _ASSIGN_VALUE can start with (every alternative takes a character):
# after most key words stands a letter, and the regex is not tried there
# (tests/test_redact_runs.py holds the two together)
_ASSIGN_VALUE_FIRST = frozenset("*_\"' \t=:?.+,>：是为はが")
# After blanks, every alternative of _ASSIGN_VALUE goes on with one of these (a declared
# type, a separator, the word of a sentence): after most key words in prose stand a blank and
# a word, and the regex is not tried there (tests/test_redact_runs.py holds the two together)
_AFTER_BLANKS = ("str", "String", "&str", "char", "=", ":", "?", ".", "+", ",", "：", "is",
                 "was", "are", "for", "of", "on", "in", "是", "为", "は", "が")
_BLANKS = lazyre.compile(r"[ \t]+")


def _may_assign(text: str, at: int) -> bool:
    """Can _ASSIGN_VALUE match at ``at``? False only where it cannot (its first character
    starts no alternative, or blanks are followed by none of :data:`_AFTER_BLANKS`)."""
    first = text[at : at + 1]
    if first not in _ASSIGN_VALUE_FIRST:
        return False
    if first != " " and first != "\t":
        return True
    after = at + 1
    if text[after : after + 1] in (" ", "\t"):
        blanks = _BLANKS.match(text, at)
        after = blanks.end() if blanks else after
    return text.startswith(_AFTER_BLANKS, after)
_UNQUOTED_VALUE = lazyre.compile(  # up to the next query parameter (&user=...), not any "&"
    r"(?:[^\s\"'`<>(){}\[\],;|\\&]|&(?![A-Za-z_][A-Za-z0-9_]*=))+"
)
_QUOTED_VALUE = {q: lazyre.compile(f"[^\\s{q}\\\\]+") for q in "\"'`"}
# A regular expression, not a literal: a character class with a range, a group, a quantifier
_REGEX_SYNTAX = lazyre.compile(
    r"\[[^\]]*[a-z0-9]-[a-z0-9][^\]]*\]|\(\?[:!=<]|\[[a-z]{2,}\]|\{[0-9]+,[0-9]*\}",
    re.IGNORECASE)
_CALL_BEFORE = lazyre.compile(r"\([ \t]*[\"']$")  # setProperty( "KEY" ...
_DOTTED_IDENT = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PLACEHOLDER_WORDS = lazyre.compile(
    r"example|change[_-]?me|placeholder|redacted|your|dummy|xxxx|\*\*\*\*|####|\.\.\.|"
    r"<[a-z]|\$\{|\{\{|%\(|process\.env|getenv|environ",
    re.IGNORECASE,
)
# Ten letters in alphabet order: "abcdefghijklmnop..." is typed, not generated.  (Digits in
# order are not enough: documented sample keys such as 12345678-ABCD-... are masked.)
_ALPHABET_RUN = lazyre.compile("|".join(string.ascii_lowercase[i : i + 10] for i in range(17)))
_DIGIT = lazyre.compile(r"[0-9]")
_UPPER = lazyre.compile(r"[A-Z]")
_LOWER = lazyre.compile(r"[a-z]")
_LETTER = lazyre.compile(r"[A-Za-z]")
_SPECIAL = lazyre.compile(r"[^A-Za-z0-9_.-]")
_MIN_ASSIGN_LEN = 8
_MIN_PEM_BODY = 16  # key material is hundreds of characters; "anything" is prose
_MIN_ASSIGN_ENTROPY = 2.7
_MIN_LITERAL_ENTROPY = 2.0  # a literal after a credential name: only a filler is lower
_MIN_PASSWORD_ENTROPY = 2.5
_MIN_LOGIN_TOKEN = 20  # a login that is a token (sonar.login), not a user name
_MIN_DIGITS_LEN = 15  # an all-digit value: a client id or secret, not a port or a count
_FILLERS = frozenset("xX01*#")  # what documentation writes in place of a key's characters

# Credentials in a URL: scheme://user:password@host (postgres, mysql, mongodb+srv, redis,
# amqp, https...) and a Sentry-style DSN whose user part is the key.
_URL_CRED = lazyre.compile(
    r"://"
    r"(?P<s>[^\s:/@\"'`<>]{0,128}(?::[^\s/@\"'`<>]{1,256})?)@(?=[A-Za-z0-9\[])"
)
# Authorization headers and `curl -u user:password`.
_AUTH_HEADER = lazyre.compile(
    r"authorization[\"']?\s*[:=]\s*[\"']?[ \t]*(?:(?P<k>bearer|basic|token|api-token|digest|"
    r"apikey|key)[ \t]+)?(?P<s>[A-Za-z0-9+/=_.~:@!#$%^&*-]{8,})",
    re.IGNORECASE,
)
# A header that carries a key or token itself (``X-Api-Key: ...``, GitLab's ``PRIVATE-TOKEN:
# ...``), as a header, in ``curl -H`` or in a header map; only its letters-only value is
# judged here (the assignment rule judges the others).
_KEY_HEADER = lazyre.compile(
    r"(?<![\w-])(?:x-)?(?:api-key|private-token|auth-token|access-token)[\"']?[ \t]*:[ \t]*"
    r"[\"']?(?P<s>[A-Za-z]+)(?![\w$.{(\[-])",
    re.IGNORECASE,
)
_CURL_USER = lazyre.compile(  # user:password, "user:password", "user":"password", user:'password'
    r"(?:^|[ \t])(?:-u|--user)[ \t]+(?P<s>\"[^\"\n]*\":\"[^\"\n]*\"|'[^'\n]*':'[^'\n]*'"
    r"|[\"']?[^\s\"':]*:(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s\"']+[\"']?)|\"[^\"\n]+\"|'[^'\n]+')"
)
_BRACED = lazyre.compile(r"\{[^{}]*[0-9][^{}]*\}")  # {a value}, not a template's {password}


def _unwrapped(part: str) -> str:
    """One side of ``user:password`` without its quotes, and without braces around a value
    (curl's ``"{apikey}":"{value}"`` as some docs write a real key; ``{password}`` without a
    digit stays a template)."""
    part = part.strip("\"'")
    return part[1:-1] if _BRACED.fullmatch(part) else part
# A Kubernetes Secret: every value under `data:` / `stringData:` is a secret. The kind in
# any ASCII case (the API server wants `Secret`, but a `kind: secret` document a person wrote
# holds the same values); not `ſecret` or a Kelvin sign, which only Unicode case folding
# makes the word (docs/decisions.md).
_K8S_KIND = lazyre.compile(
    r"^\s*kind:\s*[\"']?(?-i:[Ss][Ee][Cc][Rr][Ee][Tt])[\"']?\s*$", re.IGNORECASE | re.MULTILINE)
_K8S_ANY_KIND = lazyre.compile(r"^\s*kind:\s*[\"']?(\w+)[\"']?\s*$", re.MULTILINE)
_K8S_DATA = lazyre.compile(  # a `data:` key and the lines indented under it
    r"^(?P<i>[ \t]*)(?:data|stringData):[ \t]*\r?\n(?:(?P=i)[ \t]+\S[^\n]*(?:\n|$)"
    r"|[ \t]*#[^\n]*\n)+",
    re.MULTILINE,
)
_K8S_VALUE = lazyre.compile(
    r"^[ \t]+[\"']?[A-Za-z0-9_.-]+[\"']?:[ \t]*(?:[|>][-+]?[ \t]*\r?\n[ \t]+)?[\"']?"
    r"(?P<s>[A-Za-z0-9+/]{8,}={0,2})[\"']?[ \t]*$",
    re.MULTILINE,
)
_SIDEKIQ = lazyre.compile(
    r"CONTRIBSYS__COM[A-Za-z_]*[\"']?\s*(?::{1,3}=|[:=])\s*[\"']?(?P<s>[a-f0-9]{8}:[a-f0-9]{8})"
)

# Vendors' published example values, found by their first four characters.
_KNOWN_PUBLIC: dict[str, tuple[str, ...]] = {}
for _value in sorted(secret_rules.KNOWN_PUBLIC):
    _KNOWN_PUBLIC[_value[:4]] = (*_KNOWN_PUBLIC.get(_value[:4], ()), _value)
# A near miss starts a run of token characters (nothing of a token before it) and runs on
# over the characters of one token: it stops where an assignment, a query's next parameter,
# a user:password pair or a host begins (``=``, ``&``, ``:``, ``@``), so it never reaches a
# secret after the near miss.
_NEAR_MISSES = tuple(
    (needle, lazyre.compile(f"(?:{shape})[A-Za-z0-9_+/~.!#$%*^-]*"))
    for needle, shape in secret_rules.NEAR_MISSES)
# Format rules whose needles are at most two characters (azure's `Q~`, twilio's `SK`): a
# shape a random key part can hold by chance, so spared inside a public address; a rule
# with a longer literal prefix (`glpat-`, `ghp_`) is a token put there, and stays masked.
_CHANCE_SHAPES = frozenset(i + 1 for i, rule in enumerate(_TOKEN_RULES)
                           if max(map(len, rule.needles)) <= 2)
_PUBLIC_ADDRESSES = tuple((needle, lazyre.compile(shape))
                          for needle, shape in secret_rules.PUBLIC_ADDRESSES)
_PUBLIC_HEAD = 9  # "freenet:U" before "SK@" (tests/test_redact_runs.py holds this)
_BEFORE_TOKEN = frozenset(string.ascii_letters + string.digits + "_+/.-")
_MAX_NEAR_HEAD = 20  # characters of a near miss's shape before its needle (the bot id)
_NEAR_BACK = 256  # how far before a candidate a near miss that it overlaps may start
_LONGEST_PUBLIC = max(map(len, secret_rules.KNOWN_PUBLIC))

def _name_forms(name: str) -> frozenset[str]:
    """How key names write a provider's ``name`` (given as the provider writes it,
    ``MessageBird``): in lower, upper or capitalised case, as written, or camel case."""
    return frozenset((name.lower(), name.upper(), name.capitalize(), name,
                      name[0].upper() + name[1:], name[0].lower() + name[1:]))


# A provider named in a key name; the rest of that name (the separator and value after it
# are any of the assignment's, :data:`_ASSIGN_VALUE`, but a sentence's)
_NAMED_FORMATS = tuple(
    (kind, tuple((name.lower(), _name_forms(name)) for name in names), lazyre.compile(shape),
     strict)
    for kind, names, shape, strict in secret_rules.NAMED_FORMATS)
# The names of a provider that has several (message_bird, message-bird) start with one
# head, searched once for all of them (a search of 2 MB costs ~1.5 ms)
_NAMED_HEADS = {kind: commonprefix([name for name, _forms in names]) if len(names) > 1 else ""
                for kind, names, _shape, _strict in _NAMED_FORMATS}
# The word every place of a provider's names holds (the head, or the one name): a text
# without it holds none of them, told by one test rather than the searches for places
_NAMED_GATES = {kind: _NAMED_HEADS[kind] or (names[0][0] if len(names) == 1 else "")
                for kind, names, _shape, _strict in _NAMED_FORMATS}
_NAME_REST = lazyre.compile(r"[A-Za-z0-9_.-]{0,60}")
# The separators under which a strict provider's near miss is spared (those it had when
# the spare was written: an element, setProperty or a declaration do not widen it)
_SPARE_SEPARATOR = lazyre.compile(r"[\"']?[ \t]*(?:=>|:{1,3}=|\?=|=|:)[ \t]*[\"'`]?")
# A value of a named format: (start, end, kind, masked: it fits the provider's shape, or the
# provider is not strict and the value is a secret as an assignment's would be; may be
# spared: it does not fit a strict format and is under the provider's own api key / access
# id / access key name)
_Named = tuple[int, int, str, bool, bool]
# A name that holds the provider's key (what a strict format spares) and the words that make
# it a credential of another kind, which no spare outranks
_PROVIDER_KEY_NAME = lazyre.compile(r"api[_.-]?key|access[_.-]?(?:id|key)", re.IGNORECASE)
_CREDENTIAL_NAME = lazyre.compile(bare_secrets.SECRET_NAME_WORDS, re.IGNORECASE)


def _all_places(text: str, needle: str) -> list[int]:
    out: list[int] = []
    at = text.find(needle)
    while at != -1:
        out.append(at)
        at = text.find(needle, at + len(needle))
    return out


# The places of words in one lowered text, each word searched once for all the detectors
# that look for it (a search of 2 MB for a word of 3-5 letters costs ~1.5-3 ms)
_Places = dict[str, list[int]]


def _places(low: str, word: str, known: _Places | None = None) -> list[int]:
    """``_all_places(low, word)``, taken from ``known`` when searched before (a word that
    does not overlap itself: every place of it)."""
    if known is None:
        return _all_places(low, word)
    found = known.get(word)
    if found is None:
        found = known[word] = _all_places(low, word)
    return found


def _places_around(low: str, word: str, base: str, offset: int, known: _Places | None
                   ) -> list[int]:
    """The places of ``word`` in ``low``, where ``base`` stands ``offset`` characters in
    (``-key`` from ``key``): from the places of ``base``, not a search of its own."""
    if known is None:
        return _all_places(low, word)
    return [at - offset for at in _places(low, base, known)
            if at >= offset and low.startswith(word, at - offset)]


def _rare_places(text: str, word: str) -> list[int]:
    """``_all_places(text, word)`` for a word whose first character is rare (a CJK key
    word in mostly ASCII text): a search for one character costs ~1/50 of a word's."""
    out: list[int] = []
    at = text.find(word[0])
    while at != -1:
        if text.startswith(word, at):
            out.append(at)
            at = text.find(word[0], at + len(word))
        else:
            at = text.find(word[0], at + 1)
    return out


def _names_places(low: str, head: str, names: Sequence[str]) -> list[list[int]]:
    """``_all_places(low, name)`` of each name, from one search of ``head``, the names'
    common start, when they have one (right while neither the head nor a name overlaps
    itself: tests/test_redact_runs.py checks the names of :data:`_NAMED_HEADS`)."""
    if not head:
        return [_all_places(low, name) for name in names]
    heads = _all_places(low, head)
    return [[at for at in heads if low.startswith(name, at)] for name in names]


def _named_values(text: str, low: str) -> list[_Named]:
    """The values of the names that hold a provider of :data:`secret_rules.NAMED_FORMATS`
    (a password of that provider is none: it has no fixed shape); ``low`` is ``text`` in
    lower case (:func:`lowered`)."""
    out: list[_Named] = []
    for kind, names, shape, strict in _NAMED_FORMATS:
        # A place inside the value of an earlier place is judged with that value: taking
        # the rest of a long unspaced line again at each repeated name was quadratic
        # ("discord=" * 2000: 2.5 s).
        gate = _NAMED_GATES[kind]
        if gate and gate not in low:
            continue
        covered = 0
        every_places = _names_places(low, _NAMED_HEADS[kind], [name for name, _ in names])
        for (name, forms), places in zip(names, every_places, strict=True):
            for found in places:  # then the name's forms in ``text``
                if found < covered or text[found : found + len(name)] not in forms:
                    continue
                rest = _NAME_REST.match(text, found + len(name))  # always matches (0-60)
                at = rest.end() if rest else found + len(name)
                value = _code_value(text, found, at)
                if value is None or _PASSWORD_WORD.search(
                        text, _name_start(text, found), value[0]) is not None:
                    continue
                start, end, literal = value
                covered = max(covered, end)
                fits = shape.fullmatch(text, start, end) is not None
                out.append((start, end, kind, fits or (not strict and _valid_assignment(
                    text[start:end], literal=literal)),
                            strict and not fits and _SPARE_SEPARATOR.fullmatch(
                                text, at, start) is not None and
                            _provider_key(text, found, start)))
    return out


# ``discord_client_id:0745...``: after a provider's name a colon needs no space (a key word's
# does: ``http:``, ``sha256:``); the groups of :data:`_ASSIGN_VALUE` that never take part here
_TIGHT_COLON = lazyre.compile(r"[\"']?:(?P<quote>[\"'`]?)(?P<prose>(?!x)x)?(?P<element>(?!x)x)?")


def _code_value(text: str, name: int, at: int) -> tuple[int, int, bool] | None:
    """The value given in code to the name that starts at ``name`` and ends at ``at``
    (any syntax of :data:`_ASSIGN_VALUE` but a sentence's): its span, and whether it is
    written as a literal."""
    m = _ASSIGN_VALUE.match(text, at) or _TIGHT_COLON.match(text, at)
    if m is None or m.group("prose") is not None or _listed(text, name, m):
        return None
    found = _assigned_value(text, m)
    return None if found is None else (*found, _literal(m))


def _provider_key(text: str, found: int, value: int) -> bool:
    """Is the name holding a provider at ``found`` (its value at ``value``) a word of its own
    (``sumo_``, ``SumoApiKey``, not ``consumo``) that names the provider's api key, access
    id or access key and no other credential (not a secret, token, password, webhook)?"""
    if found > 0 and text[found - 1].isalnum() and not (
            text[found].isupper() and text[found - 1].islower()):
        return False
    name = text[_name_start(text, found) : value]
    return _PROVIDER_KEY_NAME.search(name) is not None and _CREDENTIAL_NAME.search(name) is None


def _unspared(text: str, cands: list[_Cand], named: list[_Named]) -> list[_Cand]:
    """``cands`` without what may not be masked: a vendor's published example, and a near
    miss of a fixed format (a token that starts with a format's prefix, which no format rule
    found, or the value of a provider's key name that does not fit the provider's shape).
    A spare never outranks a credential name or another detector: a near miss spares only
    the bare and format candidates inside its own token, a provider's value only the bare
    candidates inside it and the assignment of that same name, a public address
    (:data:`secret_rules.PUBLIC_ADDRESSES`) the bare, standing-alone ``user:password``
    and chance-shape format (``_CHANCE_SHAPES``) candidates inside it; a key word's
    assignment, URL credentials and headers are kept.  Looked for around each candidate
    only, so the cost follows the candidates."""
    spared = [(start, end) for start, end, _kind, _masked, spare in named if spare]
    public = _public_addresses(text)
    formats: bytearray | None = None  # what the format rules found
    bare, assignment = len(_TOKEN_RULES) + 3, len(_TOKEN_RULES) + 2
    kept: list[_Cand] = []
    for cand in cands:
        prio, start, end, kind, _masked = cand
        if public and (prio == bare or prio in _CHANCE_SHAPES or kind == _BASIC_KIND) \
                and any(a <= start and end <= b for a, b in public):
            continue  # a part of a public address (a Freenet request URI), found by its shape
        if _published(text, start, end) or any(
                a <= start and end <= b and (prio == bare or prio == assignment and a == start)
                for a, b in spared):
            continue
        if prio == bare or 0 < prio <= len(_TOKEN_RULES):
            near = [(m.start(), m.end()) for needle, shape in _NEAR_MISSES
                    for m in _near_misses(text, needle, shape, max(0, start - _NEAR_BACK), end)
                    if m.start() <= start and end <= m.end()]
            if near and formats is None:
                formats = bytearray(len(text))
                for f_prio, f_start, f_end, _k, _m in cands:
                    if 0 < f_prio <= len(_TOKEN_RULES):
                        formats[f_start:f_end] = b"\x01" * (f_end - f_start)
            if any(formats is not None and formats.find(1, a, b) == -1 for a, b in near):
                continue
        kept.append(cand)
    return kept


def _public_addresses(text: str) -> list[tuple[int, int]]:
    """The spans of the public addresses in ``text``, each matched only where its needle
    stands (the shape's scan of a whole staged file cost ~80 ms per 2 MB): a match holds
    its needle at most ``_PUBLIC_HEAD`` characters after its start."""
    return sorted({m.span() for needle, shape in _PUBLIC_ADDRESSES
                   for m in _matches_at(shape, text, [
                       start for at in _all_places(text, needle)
                       for start in range(max(0, at - _PUBLIC_HEAD), at + 1)])})


def _published(text: str, start: int, end: int) -> bool:
    """Is ``start:end`` inside a vendor's published example?"""
    for head, values in _KNOWN_PUBLIC.items():
        if text.find(head, max(0, start - _LONGEST_PUBLIC), end) != -1:
            for value in values:
                at = text.find(value, max(0, end - len(value)), start + len(value))
                if at != -1 and at <= start and end <= at + len(value):
                    return True
    return False


def _near_misses(text: str, needle: str, shape: re.Pattern[str], lo: int, hi: int
                 ) -> list[re.Match[str]]:
    """The runs of token characters that start with ``shape`` around a ``needle`` found
    between ``lo`` and ``hi``."""
    out: list[re.Match[str]] = []
    at = text.find(needle, lo, hi)
    while at != -1:
        start = at
        while start > 0 and at - start <= _MAX_NEAR_HEAD and text[start - 1] in _BEFORE_TOKEN:
            start -= 1
        m = shape.match(text, start) if at - start <= _MAX_NEAR_HEAD else None
        if m is not None and m.end() > at:
            out.append(m)
            at = text.find(needle, m.end(), hi)
        else:
            at = text.find(needle, at + 1, hi)
    return out


_PRIVATE_OPEN = lazyre.compile(r"<private\s*>", re.IGNORECASE)
_PRIVATE_CLOSE = lazyre.compile(r"</private\s*>", re.IGNORECASE)


def _is_filler(body: str) -> bool:
    """A placeholder typed in place of a key's characters: mostly (3 in 4) one filler
    character (``ghp_`` then a run of x, ``glc_1111...``, ``00000TUVW``) or half of it in runs
    of four equal characters (``AIzaaaaa...``, ``5555555dAAAAA7777777``); a generated key
    repeats a character four times about once in 4,000 places (hex).  (Letters or digits in
    alphabet order are not enough here: providers' own documented sample keys, which the
    format rules must still mask, are written that way.)"""
    if not body:
        return True
    common = max(_FILLERS, key=body.count)
    if body.count(common) * 4 >= len(body) * 3:
        return True
    repeated = sum(len(m.group()) for m in _REPEATED.finditer(body))
    return repeated * 2 >= len(body)


_REPEATED = lazyre.compile(r"(.)\1{3,}")


def _valid_token(checks: int, body: str) -> bool:
    if checks & secret_rules.NOT_FILLER and _is_filler(body):
        return False
    if checks & secret_rules.DIGIT and _DIGIT.search(body) is None:
        return False
    if checks & secret_rules.LETTER and _LETTER.search(body) is None:
        return False
    if checks & (secret_rules.MIXED | secret_rules.CASES) and not (
            _UPPER.search(body) and _LOWER.search(body)):
        return False
    if checks & secret_rules.MIXED and _DIGIT.search(body) is None:
        return False
    return "EXAMPLE" not in body.upper()


def _valid_assignment(value: str, password: bool = False, literal: bool = False,
                      prose: bool = False) -> bool:
    """Is an assigned value a real secret rather than a placeholder or code?

    ``password``: a quoted value given to a password key, where a memorable password of letters
    only ("TestSourcePassword") is still a password.  ``literal``: the value is written as a
    literal (quoted, an element's text, the word after "is"), not a name in code: then any
    shape but a placeholder is a secret (digits from 8 on, a value with a digit or a symbol
    from :data:`_MIN_LITERAL_ENTROPY`).  ``prose``: the word after "is" in a sentence, where
    letters only are a secret when they are not a word: random letters, or a word that holds
    a password word (rootpasswd, TestSourcePassword); "the key is consistency" is prose."""
    if len(value) < _MIN_ASSIGN_LEN:
        return False
    if value[0] in "$%&*~/.<" or "://" in value:
        return False
    if _PLACEHOLDER_WORDS.search(value) or _ALPHABET_RUN.search(value.lower()):
        return False
    if _DOTTED_IDENT.fullmatch(value) or _REGEX_SYNTAX.search(value):
        return False
    if value.isdigit():
        if literal and not (bare_secrets.placeholder_run(value)
                            or bare_secrets.typed_sequence(value)):
            return True
        # What any assignment's digits need (a literal's placeholder-looking run is still
        # a secret when long and random enough: "4029183345671200" holds "34567")
        return len(value) >= _MIN_DIGITS_LEN and entropy(value) >= _MIN_ASSIGN_ENTROPY - 0.2
    if password:
        return entropy(value) >= _MIN_PASSWORD_ENTROPY
    digit = _DIGIT.search(value) is not None
    special = _SPECIAL.search(value) is not None
    classes = (
        digit + special + (_UPPER.search(value) is not None) + (_LOWER.search(value) is not None)
    )
    if not (digit or special):
        return prose and (_SECRET_IN_WORD.search(value) is not None or
                          bare_secrets.anomalies(value) >= _MIN_WORD_ANOMALIES)
    if classes < 2:
        return False
    return entropy(value) >= (_MIN_LITERAL_ENTROPY if literal else _MIN_ASSIGN_ENTROPY)


# A password word inside a value (rootpasswd, TestSourcePassword), not an English word
# that starts with one ("passwordless", "secretly", "secretary")
_SECRET_IN_WORD = lazyre.compile(
    r"(?i:passw(?:or)?d|pwd|passphrase|secret)(?!less|ly|ary|ari|ive|ion|e)")
_MIN_WORD_ANOMALIES = 2  # English words and names show one at most (bare_secrets.anomalies)


# A candidate: (priority, start, end, kind, already_masked)
_Cand = tuple[int, int, int, str, bool]
# A hit to mask: (start, end, kind)
_Hit = tuple[int, int, str]


def _search_from(regex: re.Pattern[str], head: str, text: str, pos: int
                 ) -> re.Match[str] | None:
    """``regex.search(text, pos)`` for a regex whose every match starts with ``head``:
    tried only where str.find finds it (the regex's own scan of a 2 MB text for its
    prefix cost ~1.5 ms a search, str.find a fifth of that)."""
    at = text.find(head, pos)
    while at != -1:
        m = regex.match(text, at)
        if m is not None:
            return m
        at = text.find(head, at + 1)
    return None


def _pem_candidates(text: str, prio: int, out: list[_Cand]) -> None:
    if "PRIVATE KEY" not in text:
        return
    pos = 0
    end_m: re.Match[str] | None = None
    end_known = False  # end_m is the first END at or after the current position
    while True:
        begin = _search_from(_PEM_BEGIN, "-----BEGIN", text, pos)
        if begin is None:
            return
        if not end_known or (end_m is not None and end_m.start() < begin.end()):
            end_m = _search_from(_PEM_END, "-----END", text, begin.end())
            end_known = True
        nxt = _search_from(_PEM_BEGIN, "-----BEGIN", text, begin.end())
        if end_m is not None and (nxt is None or end_m.start() < nxt.start()):
            body_start, body_end, pos = begin.end(), end_m.start(), end_m.end()
        else:
            loose = _PEM_LOOSE_BODY.match(text, begin.end())
            body_start = begin.end()
            body_end = loose.end() if loose else body_start
            pos = max(body_end, begin.end())
        # trim surrounding whitespace: the finding is the key material itself
        while body_start < body_end and text[body_start].isspace():
            body_start += 1
        while body_end > body_start and text[body_end - 1].isspace():
            body_end -= 1
        if body_end - body_start >= _MIN_PEM_BODY:
            body = text[body_start:body_end]
            out.append((prio, body_start, body_end, _PEM_KIND, _is_masked_block(body)))


def _token_candidates(text: str, prio: int, rule: _Rule, out: list[_Cand],
                      windows: Sequence[tuple[int, int]] | None = None) -> None:
    """The matches of one rule (run only when one of its needles occurs in ``text``), in
    ``windows`` only when given (the runs that hold a needle)."""
    for lo, hi in windows if windows is not None else ((0, len(text)),):
        for m in rule.regex.finditer(text, lo, hi):
            start, end = m.span("s") if rule.group else m.span()
            value = text[start:end]
            body = value if rule.group else value[rule.skip :]
            if not _valid_token(rule.checks, body):
                continue
            out.append((prio, start, end, rule.kind, _is_masked(value)))


def needle_runs(joined: str, starts: list[int], needles: tuple[str, ...]
                ) -> list[tuple[int, int]] | None:
    """The runs of ``joined`` (runs joined by newlines, starting at ``starts``) that hold
    one of ``needles``, as (start, end); None when they are a quarter of the runs or more
    (one scan of the whole string is then cheaper). A rule's match holds its needle and
    never a newline, so it lies inside such a run; a look-behind still sees the newline
    before it and a look-ahead's end of string is that newline's place."""
    limit = len(starts) // 4
    found: set[int] = set()
    for needle in needles:
        at = joined.find(needle)
        while at != -1:
            run = bisect.bisect_right(starts, at) - 1
            found.add(run)
            if len(found) > limit:
                return None
            end = starts[run + 1] - 1 if run + 1 < len(starts) else len(joined)
            at = joined.find(needle, max(at + 1, end))
    return [(starts[run], starts[run + 1] - 1 if run + 1 < len(starts) else len(joined))
            for run in sorted(found)]


# Every token format is a run of these characters at least this long: the token rules only
# ever look at such runs, joined by newlines, so prose costs one pass of one regex.
_RUN_CHARS = "A-Za-z0-9_.~+/=:@%|-"
_RUN_MIN = 16
_RUN = lazyre.compile(f"[{_RUN_CHARS}]{{{_RUN_MIN},}}")
# An ASCII text's bytes with each run character as "a" and any other as " ": its runs are
# then found by bytes.find, ~4x faster than _RUN's scan of prose (which tries the
# repeat at every letter of every word).
_RUN_TABLE = bytes(0x61 if re.fullmatch(f"[{_RUN_CHARS}]", chr(i)) else 0x20
                   for i in range(256))
_RUN_NEEDLE = b"a" * _RUN_MIN


def runs(text: str, plain: bytes | None = None) -> list[tuple[int, int]]:
    """The (start, end) of every _RUN in ``text``, in order: what _RUN.finditer gives.
    A character outside ASCII, never a run character, is encoded as one ``?`` (one byte a
    character: positions are kept); ``plain`` is that encoding when the caller has it."""
    if plain is None:
        plain = text.encode("ascii", "replace")
    marks = plain.translate(_RUN_TABLE)
    out: list[tuple[int, int]] = []
    at = marks.find(_RUN_NEEDLE)
    while at != -1:
        end = marks.find(b" ", at + _RUN_MIN)
        end = len(marks) if end == -1 else end
        out.append((at, end))
        at = marks.find(_RUN_NEEDLE, end)
    return out


def _run_candidates(text: str, out: list[_Cand], plain: bytes | None = None) -> None:
    """The token rules over the long runs of ``text`` (spans mapped back to ``text``;
    ``plain`` is ``text`` as :func:`runs` encodes it)."""
    # Each distinct run is looked at once (a memory repeats its paths, code its names: a
    # needle's search reads the whole string, ~1 ns a character, and a rule's match lies
    # inside one run and depends on it alone), and its candidates are put at every place
    # it stands.
    places: dict[str, list[int]] = {}  # each distinct run and where it starts in ``text``
    for start, end in runs(text, plain):
        places.setdefault(text[start:end], []).append(start)
    if not places:
        return
    joined_starts: list[int] = []  # where each distinct run starts in ``joined``
    pos = 0
    for piece in places:
        joined_starts.append(pos)
        pos += len(piece) + 1
    joined = "\n".join(places)
    pieces = list(places)
    found: list[_Cand] = []
    for i in active_rules(joined):
        rule = _TOKEN_RULES[i]
        _token_candidates(joined, i + 1, rule, found,
                          needle_runs(joined, joined_starts, rule.needles))
    for prio, start, end, kind, masked in found:
        run = bisect.bisect_right(joined_starts, start) - 1
        for at in places[pieces[run]]:
            shift = at - joined_starts[run]
            out.append((prio, start + shift, end + shift, kind, masked))


def _matches_at(regex: re.Pattern[str], text: str, starts: Sequence[int]
                ) -> list[re.Match[str]]:
    """What ``regex.finditer(text)`` gives when its matches can start only at ``starts``
    (any order, repeats allowed): the matches there, each after the end of the one before."""
    out: list[re.Match[str]] = []
    end = 0
    for start in sorted(set(starts)):
        if start >= end:
            m = regex.match(text, start)
            if m is not None:
                out.append(m)
                end = max(m.end(), start + 1)
    return out


def _span_candidates(text: str, prio: int, kind: str, matches: Sequence[re.Match[str]],
                     out: list[_Cand], minimum: int = _MIN_ASSIGN_LEN, offset: int = 0
                     ) -> None:
    """Every ``s`` group of the ``matches`` (of a regex that names it) that is not a
    placeholder (URL, header, k8s value); ``text`` starts at ``offset`` of the whole text."""
    for m in matches:
        start, end = m.span("s")
        value = text[start:end].strip("\"'")
        if kind == _BASIC_KIND:
            value = value.rstrip("`.,;")  # `curl -u user:password`. in prose
        start = text.index(value, start) + offset if value else start + offset
        end = start + len(value)
        head = _unwrapped(value.partition(":")[0]) if kind == _BASIC_KIND else value
        if len(value) < minimum or _PLACEHOLDER_WORDS.search(value) or \
                head[:1] in ("$", "%", "<", "{"):
            continue
        secret = value
        if kind == _AUTH_KIND and (_CODE_NAME.fullmatch(value) or
                                   text[end : end + 1] in ("(", "[")) and \
                not (m.group("k") and _header_letters(text, value, end)):
            continue  # authorization = self.headers.get(...): code, not a header
        if kind in (_URL_KIND, _BASIC_KIND):
            user, _, password = value.partition(":")
            secret = password or user
            if kind == _BASIC_KIND:
                secret = _unwrapped(secret)
                if not _ or len(secret) < 6 or secret[0] in "[<{$":
                    continue
        if secret.lower() in _URL_PLACEHOLDERS or len(secret) < 3:
            continue
        if kind == _URL_KIND and ":" not in value and entropy(value) < _MIN_ASSIGN_ENTROPY:
            continue  # user@host, not a DSN key
        out.append((prio, start, end, kind, _is_masked(value)))


_URL_KIND = "url-credentials"
_AUTH_KIND = "authorization-header"
# A header's token of letters only (``Bearer qzvtkmrwpx...``) is random letters, not a word,
# a name made of words or a filler: long, several letter pairs or lone letters English
# words seldom hold, no credential word inside (``YOURACCESSTOKENHERE``, ``mytoken``).
_MIN_HEADER_LETTERS = 16
_MIN_HEADER_ANOMALIES = 3
_MIN_HEADER_ONE_CASE = 20
_HEADER_PART_LETTERS = 3
# Random letters hold a vowel in 4 or 5 (6 of 26); words and names of words hold one in 3
# at least (``callnonvirtualvoidmethod``, ``nyquistfrequencybounds``, ``tiXAxisFontHeightF``)
_VOWELS = frozenset("aeiouyAEIOUY")
_HEADER_VOWEL_SHARE = 3
_HEADER_WORD = lazyre.compile(r"token|key|secret|pass|auth|bearer|jwt|access|here|value",
                          re.IGNORECASE)


def _header_letters(text: str, value: str, end: int) -> bool:
    """Is ``value`` (letters only, ending at ``end``) a header's token of random letters?
    Fewer vowels than a third; one case only: 20 letters at least; both cases: as many
    case changes as random letters show (a part per 3 letters at least), not a CamelCase
    name of words (``INSnoozeTasksIntentHandling``, ``wysokosciPodkreslania``)."""
    if value.islower() or value.isupper():
        if len(value) < _MIN_HEADER_ONE_CASE:
            return False
    elif len(bare_secrets.PARTS.findall(value)) * _HEADER_PART_LETTERS < len(value):
        return False
    vowels = sum(c in _VOWELS for c in value)
    return value.isalpha() and value.isascii() and len(value) >= _MIN_HEADER_LETTERS and \
        vowels * _HEADER_VOWEL_SHARE < len(value) and \
        text[end : end + 1] not in ("(", "[", ".") and \
        _HEADER_WORD.search(value) is None and _PLACEHOLDER_WORDS.search(value) is None and \
        _ALPHABET_RUN.search(value.lower()) is None and \
        not bare_secrets.placeholder_run(value) and \
        entropy(value) >= _MIN_ASSIGN_ENTROPY and \
        bare_secrets.anomalies(value) >= _MIN_HEADER_ANOMALIES
_CODE_NAME = lazyre.compile(r"[A-Za-z_][A-Za-z_.]*")  # a name or attribute, no digit: not a token
_BASIC_KIND = "basic-auth"
_KEY_HEADER_NAMES = ("api-key", "private-token", "auth-token", "access-token")  # _KEY_HEADER's
_KEY_HEADER_TAILS = tuple(  # ("-token", ("private", "auth", "access")), ...
    (tail, tuple(name[: -len(tail)] for name in _KEY_HEADER_NAMES if name.endswith(tail)))
    for tail in dict.fromkeys("-" + name.rpartition("-")[2] for name in _KEY_HEADER_NAMES))
_URL_PLACEHOLDERS = frozenset({"password", "pass", "passwd", "pwd", "secret", "token", "****",
                               "xxx", "xxxx", "changeme", "user", "username", "login",
                               "test", "admin", "secret123", "password123"})


def _key_header_candidates(text: str, low: str, prio: int, out: list[_Cand],
                           known: _Places | None = None) -> None:
    """A key header's letters-only token, matched only where a header name stands (the
    case-blind regex over a whole staged file would cost more than the rest)."""
    for tail, heads in _KEY_HEADER_TAILS:  # one search for the names ending in -token
        for dash in _places_around(low, tail, tail[1:], 1, known):
            for head in heads:
                at = dash - len(head)
                if at < 0 or not low.startswith(head, at):
                    continue
                start = at - 2 if low.startswith("x-", at - 2) and at >= 2 else at
                m = _KEY_HEADER.match(text, start)
                if m is not None and _header_letters(text, m.group("s"), m.end("s")):
                    out.append((prio, m.start("s"), m.end("s"), _AUTH_KIND, False))


def auth_headers(text: str, low: str, known: _Places | None = None) -> list[re.Match[str]]:
    """What ``_AUTH_HEADER.finditer(text)`` gives, matched only where the word stands in
    ``low`` (:func:`lowered`), not tried at every character by the case-blind regex."""
    return _matches_at(_AUTH_HEADER, text,
                       _places_around(low, "authorization", "auth", 0, known))


_MANY_URLS = 64  # more "://" in a text: the regex's own search, not a step of Python each


def url_credentials(text: str, low: str | None = None) -> list[re.Match[str]]:
    """What ``_URL_CRED.finditer(text)`` finds, from the places of its "://" (one search of
    the text, not a test for "://" and the regex's own search); ``low``, :func:`lowered`
    of ``text``, holds them at the same places (an ASCII string: a search costs less)."""
    source = text if low is None else low
    places: list[int] = []
    at = source.find("://")
    while at != -1:
        if len(places) == _MANY_URLS:
            return list(_URL_CRED.finditer(text, places[0]))
        places.append(at)
        at = source.find("://", at + 3)
    return _matches_at(_URL_CRED, text, places)


def curl_users(text: str, low: str | None = None) -> list[re.Match[str]]:
    """What ``_CURL_USER.finditer(text)`` gives: a match starts at the blank before ``-u``
    or ``--user`` or at the text's start, and only those places are tried (found in
    ``low``, :func:`lowered` of ``text``, when given: an ASCII string)."""
    places = _all_places(text, "-u") if low is None else [
        at for at in _all_places(low, "-u") if text[at + 1] == "u"]
    if not places:
        return []
    return _matches_at(_CURL_USER, text,
                       [start for at in places for start in (at - 2, at - 1) if start >= 0] + [0])


def _generic_candidates(text: str, low: str, prio: int, out: list[_Cand],
                        known: _Places | None = None) -> None:
    if "@" in low:
        _span_candidates(text, prio, _URL_KIND, url_credentials(text, low), out, minimum=3)
    _span_candidates(text, prio, _AUTH_KIND, auth_headers(text, low, known), out)
    _span_candidates(text, prio, _BASIC_KIND, curl_users(text, low), out, minimum=4)
    _key_header_candidates(text, low, prio, out, known)
    if ":" in low and _may_pair(low):
        _pair_candidates(text, prio, out)
    if "contribsys__com" in low and "CONTRIBSYS__COM" in text:
        _span_candidates(text, prio, "sidekiq-secret", list(_SIDEKIQ.finditer(text)), out)
    if "ata:" in low and "ata:" in text and k8s_secret(text, low):
        for block in _K8S_DATA.finditer(text):
            if _k8s_kind_of(text, block.start()):
                _span_candidates(block.group(), prio, "kubernetes-secret",
                                 list(_K8S_VALUE.finditer(block.group())), out,
                                 offset=block.start())


# ``user:password`` standing alone: found from the colon; the password holds a letter, a
# digit and a symbol that a version, image tag, path, time or slice never holds.
_PAIR_PASSWORD = lazyre.compile(
    r":(?P<p>[^\s:\"'`<>()\[\]{},;|\\/]{0,63}[!@#$%^&*~][^\s:\"'`<>()\[\]{},;|\\]{0,63})"
    r"(?=[\s\"'`)\],;]|$)")
_PAIR_USER = lazyre.compile(r"(?<![\w.:/@~$%-])[A-Za-z][A-Za-z0-9_.-]{0,39}$")
_PAIR_MARKS = "!@#$%^&*~"  # a _PAIR_PASSWORD holds one of them, and ``low`` keeps them


def _may_pair(low: str) -> bool:
    """Can _PAIR_PASSWORD match in the text whose :func:`ascii_lowered` is ``low``? Not
    without one of its password's marks (most memories: a test of each, not the regex
    tried at every colon)."""
    return any(mark in low for mark in _PAIR_MARKS)


def _pair_candidates(text: str, prio: int, out: list[_Cand]) -> None:
    for m in _PAIR_PASSWORD.finditer(text):
        password = m.group("p").rstrip(".!?")
        if len(password) < 6 or _DIGIT.search(password) is None or \
                _LETTER.search(password) is None or password[0] in "$%{<~=":
            continue
        user = _PAIR_USER.search(text, max(0, m.start() - 40), m.start())
        if user is None or _PLACEHOLDER_WORDS.search(password) or "://" in password:
            continue
        end = m.start("p") + len(password)
        out.append((prio, user.start(), end, _BASIC_KIND, _is_masked(text[user.start() : end])))


def k8s_secret(text: str, low: str) -> bool:
    """Does ``_K8S_KIND.search(text)`` find a match? Tried only at the start of the lines
    where ``kind:`` stands after blanks in ``low`` (:func:`lowered`): the case-blind
    regex tried at every character of a staged file cost ~25 ms per 2 MB. A match's
    leading blanks may span lines; the last line start among them gives the same match."""
    for at in _all_places(low, "kind:"):
        line = text.rfind("\n", 0, at) + 1
        if (line == at or text[line:at].isspace()) and _K8S_KIND.match(text, line):
            return True
    return False


def _k8s_kind_of(text: str, pos: int) -> bool:
    """Is the YAML document holding ``pos`` a ``kind: Secret`` (not a ConfigMap after a
    Secret in the same file)?"""
    document = max(text.rfind("\n---", 0, pos), 0)
    kinds = list(_K8S_ANY_KIND.finditer(text, document, pos))
    after = _K8S_ANY_KIND.search(text, pos, _next_document(text, pos))
    kind = kinds[-1] if kinds else after
    return kind is not None and kind.group(1).lower() == "secret"


def _next_document(text: str, pos: int) -> int:
    end = text.find("\n---", pos)
    return len(text) if end == -1 else end


def assign_keys(low: str, text: str | None = None, known: _Places | None = None
                ) -> list[re.Match[str]]:
    """What _ASSIGN_KEY.finditer(low) finds, tried only where a match can start: at each
    of the _ASSIGN_NEEDLES (str.find finds them), or before ``key`` where one of the
    words of _KEY_HEAD ends (``api_key``); the regex tried at every letter of prose cost
    ~3x, over merged windows around the needles ~1.5x. ``low`` may be
    :func:`ascii_lowered` of ``text``: the key words outside ASCII are then found in
    ``text`` (a match is all ASCII or all one of them, so the two never overlap)."""
    source = low if text is None else text
    starts: list[int] = []
    for needle in _ASSIGN_ASCII_FOUND:  # none overlaps itself: _places finds every place
        starts += _places(low, needle, known)
    keys = _places(low, "key", known)
    if (len(starts) + len(keys)) * _DENSE_KEYS > len(low):  # one scan of all is cheaper
        found = list(_ASSIGN_KEY.finditer(low))
        if source is low:
            return found  # the key words outside ASCII too
    else:
        starts += keys
        for at in keys:
            before = low[at - 1 : at]  # a head's last letter ("api_": i), "" at the start
            if before == "_" or before == "-":
                before = low[at - 2 : at - 1] if at >= 2 else ""
            if before in _KEY_HEAD_ENDS:
                head = _KEY_HEAD.search(low, max(0, at - _NEEDLE_BEFORE), at)
                if head is not None:
                    starts.append(head.start())
        found = _matches_at(_ASSIGN_KEY, low, starts) if starts else []
    if not source.isascii():
        wide = [m for needle in _ASSIGN_WIDE for at in _rare_places(source, needle)
                if (m := _ASSIGN_KEY.match(source, at)) is not None]
        if wide:
            found = sorted(found + wide, key=lambda m: m.start())
    return found


def _assignment_candidates(text: str, low: str, prio: int, out: list[_Cand],
                           known: _Places | None = None) -> None:
    keys = assign_keys(low, text, known)
    camel = _matches_at(_CAMEL_KEY, text, [  # "Key" in ``text`` is "key" in ``low``
        at for at in _places(low, "key", known) if text.startswith("Key", at)])
    reached = 0  # key words before this were part of an earlier key or value
    for key in sorted([*keys, *camel], key=lambda k: k.start()) if camel else keys:
        if key.start() < reached:
            continue
        reached = key.end()
        if text[reached : reached + 1] in _SUFFIX_FIRST:  # else the suffix is empty
            suffix = _ASSIGN_SUFFIX.match(text, reached)
            reached = suffix.end() if suffix else reached
        m = _ASSIGN_VALUE.match(text, reached) if _may_assign(text, reached) else None
        spaced = False  # --password VALUE: only this rule gives the value
        if m is None:  # most key words in prose: no option either, as a rule
            if not _password_key(key.group()) or not _option(text, key.start()):
                continue
            option = True
            m = _OPTION_VALUE.match(text, reached)
            if m is None:
                continue
            spaced = True
        else:
            option = _password_key(key.group()) and _option(text, key.start())
        if _NOT_SECRET_NAME.search(_key_name(text, key.start(), reached)):
            continue
        if _listed(text, key.start(), m):
            continue
        found = _assigned_value(text, m)
        if found is None:
            continue
        start, end = found
        reached = end
        value = text[start:end]
        if key.group().lower() == "login" and (len(value) < _MIN_LOGIN_TOKEN or "@" in value):
            continue  # SONAR_LOGIN = <token>; a login that is a user name or an email is none
        prose = m.group("prose") is not None
        if prose and _NOT_SECRET_NAME.search(_word_before(text, key.start())):
            continue  # "the primary key is ...", "the cache key is ..."
        quote = m.group("quote")
        password = bool(quote) and _password_key(key.group())
        if option and not _option_password(value):
            if spaced:
                continue
            option = False  # --password=password123: judged as any assignment, as before
        if _is_masked(value):
            out.append((prio, start, end, _ASSIGN_KIND, True))
        elif _valid_assignment(value, password, _literal(m) or option, prose or option):
            out.append((prio, start, end, _ASSIGN_KIND, False))


# A command-line option named for a password (``--password``, ``-Password``,
# ``--http-password``) gives the next word, and a command's argument is a literal: its value
# is judged as a quoted one (a memorable password with a digit or a symbol is masked) and
# letters only as random letters (not a word).  What documentation writes there is not
# one: a metavar in capitals (``--password PASSWORD``), the next option, a placeholder
# (``fakepassword``, ``my-pvk-password``, ``secret99``: a password word inside).  Options
# named for a token or a key are left to the other rules: their values are as often ids
# (``--change-token <uuid>``, ``--next-token``, an S3 object ``--key``).
_OPTION_START = frozenset(" \t\r\n\"'`(")
_OPTION_VALUE = lazyre.compile(
    r"[ \t]+(?P<quote>[\"']?)(?P<prose>(?!x)x)?(?P<element>(?!x)x)?(?=[^\s-])")
_METAVAR = lazyre.compile(r"[A-Z][A-Z0-9_]*")


def _option_password(value: str) -> bool:
    """May ``value``, given to a password option, be a password (not documentation's, nor
    where to read one: openssl's and gpg's ``env:VAR``, ``file:PATH``, ``fd:N``)?"""
    if value[0] == "-" or _METAVAR.fullmatch(value) or _OPTION_PLACEHOLDER.search(value) \
            or _OPTION_SOURCE.match(value):
        return False
    if _DIGIT.search(value) or not any(c.isalpha() for c in value) or \
            any(not c.isalnum() and c not in "_.-" for c in value):
        return True
    # letters only: judged piece by piece (words joined by _ . -, or around a letter of
    # another alphabet: votre_mot_de_passe, contraseña), random pieces as a whole value is
    return _letter_anomalies(value) >= _MIN_WORD_ANOMALIES


def _letter_anomalies(value: str) -> int:
    """bare_secrets.anomalies summed over the ASCII letter pieces of ``value``, a piece of
    one or two letters counted only when it is no common pair ("de", "tu": words)."""
    count = 0
    for piece in _ASCII_LETTERS.findall(value):
        if len(piece) > 2:
            count += bare_secrets.anomalies(piece)
        else:
            count += piece.lower() not in bare_secrets.COMMON_BIGRAMS
    return count


_OPTION_SOURCE = lazyre.compile(r"(?:env|file|fd):", re.IGNORECASE)
_ASCII_LETTERS = lazyre.compile(r"[A-Za-z]+")
_OPTION_PLACEHOLDER = lazyre.compile(
    f"passw|pwd|secret|{bare_secrets.FAKE_NAME}|sample|test", re.IGNORECASE)


def _option(text: str, key: int) -> bool:
    """Is the name holding the key word at ``key`` a command-line option (``--password``,
    ``-Password``: one or two dashes and a letter, at the start of a word)?"""
    first = _name_start(text, key)
    dashes = 2 if text.startswith("--", first) else 1 if text.startswith("-", first) else 0
    return dashes > 0 and text[first + dashes : first + dashes + 1].isalpha() and \
        (first == 0 or text[first - 1] in _OPTION_START)


def _listed(text: str, name: int, m: re.Match[str]) -> bool:
    """Is the separator ``m`` after the name at ``name`` the comma of a list of strings
    (``"a", "b"``), not of ``setProperty("KEY", "value")``?"""
    return "," in m.group() and not _CALL_BEFORE.search(
        text, max(0, name - 80), _name_start(text, name))


def _literal(m: re.Match[str]) -> bool:
    """Does the separator ``m`` give a literal: a quoted value, an element's text, the word
    after "is" in a sentence (not a bare name in code, ``token = other_token``)?"""
    return bool(m.group("quote")) or m.group("prose") is not None or \
        m.group("element") is not None


def _assigned_value(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """The span of the value that the separator ``m`` (of :data:`_ASSIGN_VALUE`) gives: the
    quoted string, the word after "is" in a sentence (all of it up to a space, trailing
    punctuation left out), or the unquoted code value; None for a call, a subscript or a
    shortened example."""
    quote = m.group("quote")
    if quote:
        v = _QUOTED_VALUE[quote].match(text, m.end())
    elif m.group("prose") is not None:
        v = _PROSE_VALUE.match(text, m.end())
    else:
        v = _UNQUOTED_VALUE.match(text, m.end())
    if v is None:
        return None
    start, end = v.span()
    if text[start:end].endswith("...") or text.startswith("...", end):
        return None  # a shortened example ("ops_eyJzaWdu...")
    if m.group("prose") is not None and not quote:
        end = _trimmed_end(text, start, end)
        if "(" in text[start:end] or "[" in text[start:end]:
            return None  # "the token is get_token()": code, not a literal
        if _TEMPLATE_NAME.fullmatch(text, start, end):
            return None  # "the password is {password}": a template's placeholder
    elif not quote:
        if end < len(text) and text[end] in "([":
            return None  # a call or subscript: code, not a literal
        end = start + len(text[start:end].rstrip("."))
    return (start, end) if end > start else None


_PROSE_VALUE = lazyre.compile(r"[^\s]+")
_TEMPLATE_NAME = lazyre.compile(r"\{+[A-Za-z_][\w.-]*\}+")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_QUOTES = "\"'`"
_PROSE_CLOSING = "".join(_CLOSERS) + _QUOTES
_PROSE_TRAILING = ".,;!?" + _PROSE_CLOSING


def _trimmed_end(text: str, start: int, end: int) -> int:
    """``end`` without the sentence's punctuation after a value (``hunter22.``) and the
    quotes or brackets that close after it but did not open in it (one pass: the counts
    are taken once)."""
    value = text[start:end]
    if len(value) > 1 and value[-2] in _PROSE_CLOSING and value.endswith(":"):
        value = value[:-1]  # "the secret is hardcoded": in a quoted key (a user:, kept)
    body = value.rstrip(_PROSE_TRAILING)
    marked = value.rstrip(_PROSE_TRAILING.replace("!", "").replace("?", ""))
    if len(marked) > len(body) and not body.isalpha():
        body = marked  # "xK9#mQ2!": a password's own marks, not the sentence's ("incorrect!")
    opened = {c: body.count(o) - body.count(c) for c, o in _CLOSERS.items()}
    unclosed = {q: body.count(q) % 2 == 1 for q in _QUOTES}
    kept = len(body)
    for char in value[kept:]:
        if char in opened and opened[char] > 0:
            opened[char] -= 1
        elif char in unclosed and unclosed[char]:
            unclosed[char] = False
        else:
            break
        kept += 1
    return start + kept


def _word_before(text: str, start: int) -> str:
    """The word before the key word at ``start`` in a sentence (``primary`` of "the primary
    key is"), lower-cased."""
    head = text[max(0, start - 40) : start].rstrip().lower()
    return head.rsplit(None, 1)[-1] if head and text[start - 1 : start].isspace() else ""


def _name_start(text: str, start: int) -> int:
    """Where the identifier holding the key word at ``start`` begins."""
    first = start
    while first > 0 and start - first < 60 and text[first - 1] in _NAME_CHARS:
        first -= 1
    return first


def _key_name(text: str, start: int, end: int) -> str:
    """The whole identifier around a key word (``OP_SERVICE_ACCOUNT_TOKEN``), lower-cased."""
    return text[_name_start(text, start) : end].lower()


# The letters a case-blind regex matches with an ASCII letter whose lower case is not that
# letter: ``İ`` (its lower case is two characters, ``i`` and a combining dot), the dotless
# ``ı``, the long ``ſ`` (tests/test_redact_runs.py holds the list whole)
_FOLDED = {"\u0130": "i", "\u0131": "i", "\u017f": "s"}


def lowered(text: str) -> str:
    """``text`` in lower case, one character for one (a position in it is the same position
    in ``text``), each letter of :data:`_FOLDED` as the ASCII letter a case-blind regex
    matches it with: a search for an ASCII word in it finds what that regex finds."""
    if text.isascii():
        return text.lower()
    for char, letter in _FOLDED.items():
        if char in text:
            text = text.replace(char, letter)
    return text.lower()


# The letters outside ASCII whose lower case holds an ASCII letter (``İ``: ``i`` and a
# combining dot; the Kelvin sign: ``k``; tests/test_redact_runs.py holds the list whole)
_LOWER_TO_ASCII = {"\u0130": "i", "\u212a": "k"}


_ASCII_FOLDS = {**_LOWER_TO_ASCII, **_FOLDED}
_FEW_PLACES = 256  # more places of one letter: str.replace and a second encoding are cheaper


def _patched(data: bytes, text: str, letters: dict[str, str], places: list[int] | None = None
             ) -> bytes | bytearray | None:
    """``data`` (one byte a character of ``text``) with each place of a key of ``letters``
    in ``text`` set to its value, an ASCII character; None when a key stands in ``text``
    more than :data:`_FEW_PLACES` times (a step of Python a place: ``İ`` all over a
    Turkish text). A few one-character searches and a copy, not a second encoding. The
    places set are added to ``places`` when given."""
    marks: bytearray | None = None
    for char, letter in letters.items():
        at = text.find(char)  # a search for one character: ~1/50 of a word's
        if at == -1:
            continue
        if marks is None:
            marks = bytearray(data)
        code = ord(letter)
        for _ in range(_FEW_PLACES):  # not str.count: it reads the text at ~1/2 of a word's
            marks[at] = code
            if places is not None:
                places.append(at)
            at = text.find(char, at + 1)
            if at == -1:
                break
        else:
            return None
    return data if marks is None else marks


def ascii_lowered(text: str, plain: bytes, fold: bool = True) -> str:
    """``text`` in lower case as an ASCII string, one character for one, from ``plain``
    (``text.encode("ascii", "replace")``): at each character where :func:`lowered` gives
    an ASCII letter, that letter, and ``?`` where it gives none; with ``fold`` False ``ı``
    and ``ſ`` stay ``?`` (the key words' lookarounds see them as no ASCII letter, as
    str.lower leaves them, so "ıcreds=..." stays an assignment: a mask is the safer error).
    A search for an ASCII word in it finds what it finds in :func:`lowered`, without
    lower-casing a text of two-byte characters (~10x the cost of ASCII bytes)."""
    if text.isascii():
        return text.lower()
    folds = _ASCII_FOLDS if fold else _LOWER_TO_ASCII
    patched = _patched(plain, text, folds)
    if patched is not None:
        return patched.lower().decode("ascii")
    letters = text
    for char, letter in folds.items():
        if char in letters:  # a search for one character: ~1/50 of a word's
            letters = letters.replace(char, letter)
    if letters is not text:
        plain = letters.encode("ascii", "replace")
    return plain.lower().decode("ascii")


_UNFOLDED = {"\u0131": "?", "\u017f": "?"}  # the letters of _FOLDED that key words do not fold


def unfolded(low: str, text: str, places: list[int] | None = None) -> str | None:
    """``ascii_lowered(text, plain, fold=False)`` from ``low`` (``ascii_lowered(text,
    plain)``): ``low`` with ``?`` where ``text`` holds ``ı`` or ``ſ``, the only places where
    the two differ, not a second lowering; None when one of them stands in ``text`` more
    than :data:`_FEW_PLACES` times. The places where the two differ are added to
    ``places`` when given."""
    patched = _patched(low.encode("ascii"), text, _UNFOLDED, places)
    return None if patched is None else patched.decode("ascii")


def key_places(low: str, key_low: str, known: _Places, changed: list[int]) -> _Places:
    """The places of the key words (:data:`_KEY_WORDS`) in ``key_low`` (:func:`unfolded`
    of ``low``) from their places in ``low``, searched there once for all detectors.
    ``changed``: the places where the two differ (``unfolded``'s): a word's place is
    dropped only where it holds one, not each place tried in ``key_low``."""
    changed = sorted(changed)
    out: _Places = {}
    for word in _KEY_WORDS:
        places = _places(low, word, known)
        dropped = {at for place in changed
                   for at in places[bisect.bisect_left(places, place - len(word) + 1):
                                    bisect.bisect_right(places, place)]}
        out[word] = [at for at in places if at not in dropped] if dropped else places
    return out


def _detect(text: str) -> list[_Hit]:
    """Unmasked secrets in ``text`` (private blocks already removed), sorted by start."""
    cands: list[_Cand] = []
    plain = text.encode("ascii", "replace")  # one byte a character: runs, bare, ascii_lowered
    if b"PRIVATE KEY" in plain:
        _pem_candidates(text, 0, cands)
    _run_candidates(text, cands, plain)
    low = ascii_lowered(text, plain)
    known: _Places = {}  # the words searched in ``low``
    _generic_candidates(text, low, len(_TOKEN_RULES) + 1, cands, known)
    key_low, key_known = low, known  # the key words' lower case: "ı" and "ſ" not folded
    if "\u0131" in text or "\u017f" in text:
        changed: list[int] = []
        found = unfolded(low, text, changed)
        if found is None:  # "ı" all over: the places in ``low`` would differ too
            key_low, key_known = ascii_lowered(text, plain, fold=False), {}
        else:
            key_low, key_known = found, key_places(low, found, known, changed)
    _assignment_candidates(text, key_low, len(_TOKEN_RULES) + 2, cands, key_known)
    for start, end in bare_secrets.spans(text, plain):  # last: a format or a key word names it
        cands.append((len(_TOKEN_RULES) + 3, start, end, bare_secrets.KIND,
                       _is_masked_block(text[start:end])))
    named = _named_values(text, low)
    for start, end, kind, masked, _spare in named:
        value = text[start:end]
        if masked and _valid_token(secret_rules.NOT_FILLER, value):
            cands.append((len(_TOKEN_RULES) + 1, start, end, kind, _is_masked(value)))
    if not cands:
        return []
    cands = _unspared(text, cands, named)
    cands.sort()
    claimed = bytearray(len(text))
    taken: list[_Cand] = []
    for prio, start, end, kind, masked in cands:
        if claimed.find(1, start, end) != -1:
            inside = _wrapped(text, start, end, kind, taken)
            if not inside:
                if kind == bare_secrets.KIND:  # a random tail glued to a format's key
                    for piece in _unclaimed_bare(text, start, end, claimed):
                        claimed[piece[1]:piece[2]] = b"\x01" * (piece[2] - piece[1])
                        taken.append(piece)
                continue
            # a key wrapped over lines whose first line a format or a key word found: one
            # secret, reported with that kind, masked with its lines kept
            for cand in inside:
                taken.remove(cand)
            kind, masked = inside[0][3], _is_masked_block(text[start:end])
        claimed[start:end] = b"\x01" * (end - start)
        taken.append((prio, start, end, kind, masked))
    return sorted((start, end, kind) for _p, start, end, kind, masked in taken if not masked)


def _unclaimed_bare(text: str, start: int, end: int, claimed: bytearray) -> list[_Cand]:
    """The random tokens the bare detector finds in what no other candidate claimed of a
    bare span at ``start:end`` (a key glued by a dash to a format's key is judged on its
    own, not dropped with the overlapping span)."""
    found: list[_Cand] = []
    at = start
    while at < end:
        free = claimed.find(0, at, end)
        if free == -1:
            break
        stop = claimed.find(1, free, end)
        stop = end if stop == -1 else stop
        for s, e in bare_secrets.spans(text[free:stop]):
            found.append((len(_TOKEN_RULES) + 3, free + s, free + e, bare_secrets.KIND,
                          _is_masked_block(text[free + s : free + e])))
        at = stop
    return found


def _wrapped(text: str, start: int, end: int, kind: str, taken: list[_Cand]) -> list[_Cand]:
    """The candidates a wrapped random block at ``start:end`` continues over more lines:
    all that it overlaps, when it holds each of them whole (else none)."""
    if kind != bare_secrets.KIND or "\n" not in text[start:end]:
        return []
    inside = [c for c in taken if c[1] < end and start < c[2]]
    if all(start <= c[1] and c[2] <= end and "\n" not in text[c[1] : c[2]] for c in inside):
        return inside
    return []


def _apply_masks(text: str, hits: list[_Hit]) -> str:
    pieces: list[str] = []
    pos = 0
    for start, end, kind in hits:
        pieces.append(text[pos:start])
        secret = text[start:end]
        pieces.append(_mask_block(secret) if kind in _BLOCK_KINDS or "\n" in secret
                      else mask(secret))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)



# A removed private block: (original start, original end, start of its placeholder)
_Block = tuple[int, int, int]


def _strip_private(text: str) -> tuple[str, list[_Block]]:
    """Replace every closed ``<private>`` block by the placeholder."""
    if "<" not in text:
        return text, []
    blocks: list[_Block] = []
    pieces: list[str] = []
    pos = 0
    out_len = 0
    close: re.Match[str] | None = None
    while True:
        opening = _PRIVATE_OPEN.search(text, pos)
        if opening is None:
            break
        if close is None or close.start() < opening.end():
            close = _PRIVATE_CLOSE.search(text, opening.end())
            if close is None:
                break  # unclosed: left alone, and no later tag can be closed either
        kept = text[pos : opening.start()]
        pieces.append(kept)
        out_len += len(kept)
        blocks.append((opening.start(), close.end(), out_len))
        pieces.append(PLACEHOLDER)
        out_len += len(PLACEHOLDER)
        pos = close.end()
    if not blocks:
        return text, []
    pieces.append(text[pos:])
    return "".join(pieces), blocks


def _to_original(offset: int, blocks: list[_Block], is_end: bool) -> int:
    """Map an offset in the stripped text back to the original text."""
    lo, hi = 0, len(blocks)
    while lo < hi:  # the last block whose placeholder starts before offset
        mid = (lo + hi) // 2
        if blocks[mid][2] < offset:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return offset
    start, end, placeholder = blocks[lo - 1]
    inside = offset - placeholder
    if inside < len(PLACEHOLDER):
        return end if is_end else start
    return end + inside - len(PLACEHOLDER)


def _findings(text: str, spans: list[_Hit]) -> tuple[Finding, ...]:
    """Attach 1-based line numbers (in ``text``) to sorted spans."""
    out: list[Finding] = []
    line, pos = 1, 0
    for start, end, kind in sorted(spans):
        line += text.count("\n", pos, start)
        pos = start
        out.append(Finding(kind=kind, line=line, start=start, end=end))
    return tuple(out)


def _private_spans(blocks: list[_Block]) -> list[_Hit]:
    return [(start, end, _PRIVATE_KIND) for start, end, _ in blocks]


def _map_hits(hits: list[_Hit], blocks: list[_Block]) -> list[_Hit]:
    if not blocks:
        return hits
    return [
        (_to_original(s, blocks, False), _to_original(e, blocks, True), kind) for s, e, kind in hits
    ]


def redact(text: str) -> Redaction:
    """Replace private blocks by ``[REDACTED]`` and mask every recognised secret in place."""
    stripped, blocks = _strip_private(text)
    hits: list[_Hit] = []
    while True:  # each pass only turns characters into "x", so this terminates
        found = _detect(stripped)
        if not found:
            break
        stripped = _apply_masks(stripped, found)
        hits.extend(found)
    spans = _private_spans(blocks) + _map_hits(hits, blocks)
    return Redaction(text=stripped, findings=_findings(text, spans))


def as_tag(masked: str) -> str:
    """A masked tag as a tag: the one rule for a private block in a tag (every write,
    import, merge and migrate stores it so), since ``[REDACTED]`` is no tag and would
    leave a memory that cannot be tagged or untagged."""
    return masked.replace(PLACEHOLDER, TAG_PLACEHOLDER)


_PART_SEP = "\n\0\n"


def redact_parts(parts: Sequence[str]) -> tuple[list[str], Redaction]:
    """Several texts of one memory (title, body, aliases) through :func:`redact` in
    one pass: the same findings and one notice for all of them."""
    if not parts:
        return [], Redaction(text="", findings=())
    joined = redact(_PART_SEP.join(parts))
    pieces = joined.text.split(_PART_SEP)
    if len(pieces) == len(parts):
        return pieces, joined
    return _parts_apart(parts, joined), joined


def _parts_apart(parts: Sequence[str], joined: Redaction) -> list[str]:
    """Each part masked on its own when a finding of the joined text spans two parts
    (a private block opened in the title and closed in the body, a key given as
    aliases), so the masked joined text does not split back into as many parts:
    every finding's share of a part masked there (a private block's share by
    [REDACTED], a secret's by x), then the part through :func:`redact` alone."""
    out: list[str] = []
    start = 0
    for part in parts:
        end = start + len(part)
        kinds: list[str | None] = [None] * len(part)
        for found in joined.findings:
            for i in range(max(found.start, start), min(found.end, end)):
                if kinds[i - start] != _PRIVATE_KIND:
                    kinds[i - start] = found.kind
        masked: list[str] = []
        for i, char in enumerate(part):
            if kinds[i] == _PRIVATE_KIND:
                if i == 0 or kinds[i - 1] != _PRIVATE_KIND:
                    masked.append(PLACEHOLDER)
            elif kinds[i] is not None and char != "\n":
                masked.append("x")
            else:
                masked.append(char)
        out.append(redact("".join(masked)).text)
        start = end + len(_PART_SEP)
    return out


def find_secrets(text: str) -> list[Finding]:
    """The unredacted private blocks and unmasked secrets in ``text``; ``text`` is unchanged."""
    stripped, blocks = _strip_private(text)
    spans = _private_spans(blocks) + _map_hits(_detect(stripped), blocks)
    return list(_findings(text, spans))
