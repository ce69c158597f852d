"""The secret detector's faster scans find exactly what the regular expressions they
replace find: the long runs of token characters (redact.runs against redact._RUN)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.core import bare_secrets, redact

# Run characters, their neighbours in ASCII, a space, a line break and non-ASCII text.
_ALPHABET = "aZ09_.~+/=:@%|-!#$&*'\" \n\t,;()[]{}<>?^`\\é依\x7f\x00"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_ALPHABET), st.integers(1, 20)), max_size=30))
def test_runs_are_the_regular_expressions_matches(parts: list[tuple[str, int]]) -> None:
    text = "".join(char * count for char, count in parts)
    assert redact.runs(text) == [m.span() for m in redact._RUN.finditer(text)]


def test_runs_at_the_edges_of_a_text() -> None:
    token = "A1b2" * 4  # 16 run characters: the shortest run
    for text in (token, " " + token, token + " ", token[:-1], f"{token}:{token} {token}é",
                 f"x {token[:-1]} y", "", "é" + token, token + "\n" + token):
        assert redact.runs(text) == [m.span() for m in redact._RUN.finditer(text)], text


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_NEVER = re.compile(r"(?!)")


@st.composite
def _front_matter_runs(draw: st.DrawFn) -> str:
    """Text holding ULIDs and times (any digits, not only real dates) beside the
    characters that join runs or end them, other tokens and key words."""
    ulid = st.builds(lambda first, rest: first + "".join(rest), st.sampled_from("01234567"),
                     st.lists(st.sampled_from(_CROCKFORD), min_size=25, max_size=25))
    digits = st.text("0123456789", min_size=14, max_size=14)
    time = digits.map(lambda d: f"{d[:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:]}Z")
    pieces = st.lists(st.one_of(
        ulid, time, st.sampled_from([
            "\n", " ", ", ", ":", "=", "-", ".", "id: ", "at: ", "token=", "x", "9",
            "sha256 ", "https://h/", "Zq8vN3xLp2Rk7Wd", "a" * 12, "ENC[", "{", "}"])),
        max_size=12)
    return "".join(draw(pieces))


@settings(max_examples=400, deadline=None)
@given(_front_matter_runs())
def test_ids_and_times_told_at_once_are_spared_as_the_judging_spares_them(text: str) -> None:
    """bare_secrets skips a run that is exactly a ULID or a time without judging it:
    the spans are those of the full judging (the shortcut turned off)."""
    fast, findings = bare_secrets.spans(text), redact.find_secrets(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bare_secrets, "_SPARED_SHAPE", _NEVER)
        assert bare_secrets.spans(text) == fast
        assert redact.find_secrets(text) == findings


_KEY_PARTS = ["password", "passwd", "pwd", "passphrase", "secret", "token", "api_key",
              "api-key", "apikey", "access_key", "auth_key", "account-key", "private_key",
              "credential", "creds", "key", "auth", "login", "pass", "cred", "密码", "口令",
              "密钥", "パスワード", "暗証番号", "비밀번호", " is ", " was ", " ", "_", "-", ".",
              "=", ":", "\n", "a", "z", "1", "monkey", "author", "é", "x" * 9]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_KEY_PARTS), max_size=25))
def test_key_words_found_in_windows_are_the_whole_texts_matches(parts: list[str]) -> None:
    low = "".join(parts)
    assert [m.span() for m in redact.assign_keys(low)] == \
        [m.span() for m in redact._ASSIGN_KEY.finditer(low)]


def test_every_key_word_alternative_holds_a_needle() -> None:
    """assign_keys searches only around the needles: a key word added to _ASSIGN_WORD
    without one would never be found (add its word to _ASSIGN_NEEDLES)."""
    depth, start, alternatives = 0, 0, []
    source = redact._ASSIGN_WORD
    for at, char in enumerate(source):
        depth += char in "([" and source[at - 1 : at] != "\\"
        depth -= char in ")]" and source[at - 1 : at] != "\\"
        if char == "|" and depth == 0:
            alternatives.append(source[start:at])
            start = at + 1
    alternatives.append(source[start:])
    assert len(alternatives) > 10
    for alternative in alternatives:
        assert any(needle in alternative for needle in redact._ASSIGN_NEEDLES), alternative


def test_the_suffix_precheck_holds_every_first_character_of_a_suffix() -> None:
    """_SUFFIX_FIRST is every character a non-empty _ASSIGN_SUFFIX starts with: a
    separator, a digit, or the first letter of one of its words in any case (``ſ`` and
    the Kelvin sign among them); outside it the suffix regex is not run."""
    first = re.compile(r"[_.-]|(?i:[kvsta])|[0-9]")
    found = {chr(c) for c in range(0x110000)
             if not 0xD800 <= c < 0xE000 and first.fullmatch(chr(c))}
    assert found == set(redact._SUFFIX_FIRST)
    for c in map(chr, range(0x3000)):
        if c not in redact._SUFFIX_FIRST:
            for rest in ("ey", "alue", "ecret", "oken", "ccess_key", "tring", "tr", "", "1"):
                suffix = redact._ASSIGN_SUFFIX.match(c + rest)
                assert suffix is not None and suffix.end() == 0, c + rest


_NEEDLE_PARTS = sorted({needle for needle, _ in redact._NEEDLES} |
                       {needle[:2] for needle, _ in redact._NEEDLES} |
                       {needle[:-1] for needle, _ in redact._NEEDLES} | {"\n", "a", "Z", "9"})


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_NEEDLE_PARTS), max_size=30))
def test_needle_groups_give_the_rules_every_needle_gives(parts: list[str]) -> None:
    joined = "".join(parts)
    assert redact.active_rules(joined) == sorted(
        {i for needle, rules in redact._NEEDLES if needle in joined for i in rules})


@settings(max_examples=300, deadline=None)
@given(st.from_regex(re.compile(redact._ASSIGN_SUFFIX.pattern, redact._ASSIGN_SUFFIX.flags),
                     fullmatch=True))  # the pattern itself (compiled on first use)
def test_every_suffix_the_pattern_matches_starts_in_the_precheck(suffix: str) -> None:
    """Drawn from _ASSIGN_SUFFIX itself (not from a list kept beside it): a word added to
    the pattern whose first letter _SUFFIX_FIRST lacks fails here."""
    assert not suffix or suffix[0] in redact._SUFFIX_FIRST, suffix
