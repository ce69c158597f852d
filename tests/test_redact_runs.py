"""The secret detector's faster scans find exactly what the regular expressions they
replace find: the long runs of token characters (redact.runs against redact._RUN)."""

from __future__ import annotations

import importlib
import re
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.core import bare_secrets, redact
from tests.test_secret_families import FAMILIES

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
    """Tried at their places (sparse) or one scan of the whole text (dense): both ways."""
    low = "".join(parts)
    expected = [m.span() for m in redact._ASSIGN_KEY.finditer(low)]
    for dense in (0, 10**9):  # a place per 0 characters: always dense; per 10**9: never
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(redact, "_DENSE_KEYS", dense)
            assert [m.span() for m in redact.assign_keys(low)] == expected


def _key_word_alternatives() -> list[str]:
    depth, start, alternatives = 0, 0, []
    source = redact._ASSIGN_WORD
    for at, char in enumerate(source):
        depth += char in "([" and source[at - 1 : at] != "\\"
        depth -= char in ")]" and source[at - 1 : at] != "\\"
        if char == "|" and depth == 0:
            alternatives.append(source[start:at])
            start = at + 1
    alternatives.append(source[start:])
    return alternatives


def test_every_key_word_alternative_holds_a_needle() -> None:
    """assign_keys searches only around the needles: a key word added to _ASSIGN_WORD
    without one would never be found (add its word to _ASSIGN_NEEDLES)."""
    alternatives = _key_word_alternatives()
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
    """Both ways: from the text's pairs of characters (short) and by each head (long)."""
    joined = "".join(parts)
    expected = sorted({i for needle, rules in redact._NEEDLES if needle in joined
                       for i in rules})
    assert redact.active_rules(joined) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "_PAIRS_UP_TO", -1 if len(joined) <= 600 else 10**6)
        assert redact.active_rules(joined) == expected


@settings(max_examples=300, deadline=None)
@given(st.from_regex(re.compile(redact._ASSIGN_SUFFIX.pattern, redact._ASSIGN_SUFFIX.flags),
                     fullmatch=True))  # the pattern itself (compiled on first use)
def test_every_suffix_the_pattern_matches_starts_in_the_precheck(suffix: str) -> None:
    """Drawn from _ASSIGN_SUFFIX itself (not from a list kept beside it): a word added to
    the pattern whose first letter _SUFFIX_FIRST lacks fails here."""
    assert not suffix or suffix[0] in redact._SUFFIX_FIRST, suffix


# Letters a case-blind regex folds onto ASCII ones, header and option words, blanks
_FOLD_PARTS = ["İ", "ı", "ſ", "K", "I", "i", "s", "S", "k", "authorization", "AUTHORIZATION",
               "Authorization", "authorızation", "AUTHORİZATION", "author", ": ", "=", " ",
               "\t", "\n", "'", '"', "Bearer ", "basic ", "-u", "--user", "-", "u", "user:",
               ":", "a1B2c3D4e5F6g7H8", "pa55w0rd!", "x", "é", "依", "{", "}"]


def test_lowered_folds_every_letter_a_case_blind_regex_folds() -> None:
    """lowered keeps one character for one, and gives each character the ASCII letter a
    case-blind regex matches it with (İ, ı, ſ, the Kelvin sign): _FOLDED is complete."""
    ascii_letter = re.compile("[a-z]", re.IGNORECASE)
    folded = 0
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        low = redact.lowered(char)
        assert len(low) == 1, hex(code)
        if ascii_letter.fullmatch(char):
            assert [letter for letter in string.ascii_lowercase
                    if re.fullmatch(letter, char, re.IGNORECASE)] == [low], hex(code)
            folded += not char.isascii()
    assert folded == 4  # İ ı ſ K


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_FOLD_PARTS), max_size=25))
def test_headers_and_curl_users_matched_at_their_words_are_the_regexes_matches(
        parts: list[str]) -> None:
    text = "".join(parts)
    low = redact.lowered(text)
    assert len(low) == len(text)
    assert [m.span() for m in redact.auth_headers(text, low)] == \
        [m.span() for m in redact._AUTH_HEADER.finditer(text)]
    assert [m.span() for m in redact.curl_users(text)] == \
        [m.span() for m in redact._CURL_USER.finditer(text)]


_KEY_HEADER_PARTS = ["x-", "X-", "api-key", "API-KEY", "private-token", "auth-token",
                     "Access-Token", "-token", "-key", "api", "auth", ": ", ":", '"', " ",
                     "qzvtkmrwpxbnhgfdqz", "QZVTKMRWPXBNHGFDLKJHGF", "İ", "\n", "a"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_KEY_HEADER_PARTS), max_size=20))
def test_key_headers_found_from_their_dash_words_are_each_names_matches(
        parts: list[str]) -> None:
    """One search for each word after the dash (-key, -token) finds at each header name
    what a search for each name finds."""
    text = "".join(parts)
    low = redact.lowered(text)
    expected = []
    for name in redact._KEY_HEADER_NAMES:
        for at in [m.start() for m in re.finditer(re.escape(name), low)]:
            start = at - 2 if low.startswith("x-", at - 2) and at >= 2 else at
            m = redact._KEY_HEADER.match(text, start)
            if m is not None and redact._header_letters(text, m.group("s"), m.end("s")):
                expected.append((m.start("s"), m.end("s")))
    found: list[redact._Cand] = []
    redact._key_header_candidates(text, low, 0, found)
    assert sorted((start, end) for _p, start, end, _k, _m in found) == sorted(expected)


_ROUTING = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789~-abcde"  # 43 characters
_ADDRESS = st.builds(  # a request URI or a near miss of one: each part or a wrong one
    lambda *parts: "".join(parts),
    st.sampled_from(["", "freenet:", "xfreenet:", "freenet", "a"]),
    st.sampled_from(["SSK@", "USK@", "KSK@", "SK@"]),
    st.sampled_from([_ROUTING, _ROUTING[:-1], _ROUTING + "a"]), st.sampled_from([",", ""]),
    st.sampled_from([_ROUTING, _ROUTING[1:]]), st.just(","),
    st.sampled_from(["AQACAAE", "AQABAAE", "AQECAAE"]), st.sampled_from(["", "/site/1", "a"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_ADDRESS, st.sampled_from([" ", "a", "~", "S", "\n"])), max_size=6))
def test_public_addresses_found_from_their_needles_are_the_shapes_matches(
        parts: list[str]) -> None:
    """A public address is matched only near its needle: every match of its shape holds
    the needle at most _PUBLIC_HEAD characters after its start."""
    text = "".join(parts)
    expected = sorted({m.span() for _needle, shape in redact._PUBLIC_ADDRESSES
                       for m in shape.finditer(text)})
    assert redact._public_addresses(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Key", "key", "apiKey", "aKey", "1Key", "Keys", "KEY", " ",
                                 "_", "İ", "Keyboard", "x"]), max_size=20))
def test_camel_keys_matched_where_key_stands_are_the_regexes_matches(parts: list[str]) -> None:
    text = "".join(parts)
    places = [m.start() for m in re.finditer("Key", text)]
    assert [m.span() for m in redact._matches_at(redact._CAMEL_KEY, text, places)] == \
        [m.span() for m in redact._CAMEL_KEY.finditer(text)]


_RULE_PARTS = sorted({secret for _kind, secret in FAMILIES} |
                     {needle for needle, _ in redact._NEEDLES} |
                     {"Zq8vN3xLp2Rk7Wd" + "mT4s", "a" * 16, "x1" * 9, " ", "\n", ":",
                      "-", "_", "/", "|", "=", "A1b2C3d4", "0123456789", "@"})


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_RULE_PARTS), max_size=40))
def test_token_rules_run_over_the_runs_with_a_needle_find_what_the_whole_scan_finds(
        parts: list[str]) -> None:
    """Each token rule is run only over the runs that hold one of its needles (when they
    are under a quarter of the runs): the candidates are those of one scan of all runs."""
    text = "".join(parts)
    windowed: list[redact._Cand] = []
    redact._run_candidates(text, windowed)
    whole: list[redact._Cand] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "needle_runs", lambda *_args: None)
        redact._run_candidates(text, whole)
    assert windowed == whole


def _lowered_as_ascii(text: str, fold: bool = True) -> str:
    """What ascii_lowered must give: lowered (or, not folding, the key words' lower case:
    only "İ" made "i") with every character outside ASCII as "?"."""
    low = redact.lowered(text) if fold else text.replace("\u0130", "i").lower()
    return "".join(char if char.isascii() else "?" for char in low)


def test_ascii_lowered_of_every_character_is_lowered_or_a_question_mark() -> None:
    """Each code point alone, folded and not: _LOWER_TO_ASCII and _FOLDED are every letter
    outside ASCII that lower-casing or a case-blind regex turns into an ASCII letter."""
    for code in range(0x80, 0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        plain = char.encode("ascii", "replace")
        for fold in (True, False):
            assert redact.ascii_lowered(char, plain, fold) == _lowered_as_ascii(char, fold), \
                (hex(code), fold)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_FOLD_PARTS + _KEY_PARTS + ["\u212a", "KEY", "İ" * 3]),
                max_size=25))
def test_ascii_lowered_texts_and_their_key_words(parts: list[str]) -> None:
    """The ASCII lower case of a text is lowered's, "?" outside ASCII; the key words found
    in it (and those outside ASCII in the text) are the regex's matches over the key
    words' lower case of the text, spans and words."""
    text = "".join(parts)
    plain = text.encode("ascii", "replace")
    assert redact.ascii_lowered(text, plain) == _lowered_as_ascii(text)
    key_low = redact.ascii_lowered(text, plain, fold=False)
    assert key_low == _lowered_as_ascii(text, fold=False)
    expected = [(m.span(), m.group()) for m in
                redact._ASSIGN_KEY.finditer(text.replace("\u0130", "i").lower())]
    for dense in (0, 10**9):  # always or never one scan of the whole text
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(redact, "_DENSE_KEYS", dense)
            assert [(m.span(), m.group()) for m in redact.assign_keys(key_low, text)] == \
                expected


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_FOLD_PARTS + _KEY_PARTS + ["\u212a", "KEY", "İ" * 3, "ı" * 3,
                                                            "ſ", "ıkey", "ſecret"]),
                max_size=25),
       st.sampled_from([0, 1, 2, 10**6]))
def test_the_key_words_lower_case_and_places_come_from_the_folded_ones(
        parts: list[str], few: int) -> None:
    """A text's lower cases are patched at the places of the letters outside ASCII (or, with
    more than _FEW_PLACES of one, made over); the key words' lower case comes from the folded
    one, and the key words' places in it from theirs in the folded one."""
    text = "".join(parts)
    plain = text.encode("ascii", "replace")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "_FEW_PLACES", few)
        low = redact.ascii_lowered(text, plain)
        assert low == _lowered_as_ascii(text)
        key_low = redact.ascii_lowered(text, plain, fold=False)
        assert key_low == _lowered_as_ascii(text, fold=False)
        many = max(text.count("ı"), text.count("ſ")) > few
        assert redact.unfolded(low, text) == (None if many else key_low)
    known: dict[str, list[int]] = {}
    places = redact.key_places(low, key_low, known, [i for i, c in enumerate(text) if c in "ıſ"])
    assert set(places) == {*redact._ASSIGN_ASCII_FOUND, "key"}
    for word, found in places.items():
        assert found == redact._all_places(key_low, word), word
        assert known[word] == redact._all_places(low, word), word


def test_every_key_word_alternative_starts_with_a_needle_or_a_key_head() -> None:
    """assign_keys tries the regex only at a needle, or before "key" at a word of
    _KEY_HEAD: an alternative that starts elsewhere would never be found."""
    alternatives = _key_word_alternatives()
    heads = re.findall(r"[a-z]+", redact._KEY_HEAD.pattern.split(")")[0])
    assert len(alternatives) > 10 and len(heads) == 5
    for alternative in alternatives:
        head = re.fullmatch(r"([a-z]+)\[_-\]\?key", alternative)
        assert any(alternative.startswith(needle) for needle in redact._ASSIGN_NEEDLES) or \
            (head is not None and head.group(1) in heads), alternative


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["://", "://u:pa55@host", "https://key@o1.ingest/2", ":", "/",
                                 "//", "@", "a", "user", "pa55", " ", "\n", '"', "<", "host",
                                 "[", "::1", "postgres", "é"]),
                max_size=30))
def test_url_credentials_are_the_regexes_matches(parts: list[str]) -> None:
    text = "".join(parts)
    expected = [m.span() for m in redact._URL_CRED.finditer(text)]
    for many in (1, 2, 64):  # the regex's own search past this many "://"
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(redact, "_MANY_URLS", many)
            assert [m.span() for m in redact.url_credentials(text)] == expected


_BLOCK_PARTS = ["-----BEGIN ", "-----BEGIN CERTIFICATE-----", "-----BEGIN RSA PRIVATE KEY-----",
                "-----END CERTIFICATE-----", "-----END", "-----", "--", "CERTIFICATE", "PGP ",
                "PRIVATE", " ", "\n", "MIIB", "x", "é"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_BLOCK_PARTS), max_size=25))
def test_public_blocks_are_the_regexes_matches(parts: list[str]) -> None:
    text = "".join(parts)
    assert bare_secrets.public_blocks(text) == \
        [m.span() for m in bare_secrets._PUBLIC_BLOCK.finditer(text)]


_K8S_PARTS = ["kind:", "KIND:", "Kind: ", "k\u0130nd:", "kınd:", "\u212aind:", " ", "\t", "\n",
              "\r\n", "secret", "Secret", "ſecret", "SECRET", '"', "'", "x", "kind", ":",
              "data:", "ConfigMap", "\v", "\u2028", "\u3000"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_K8S_PARTS), max_size=20))
def test_a_kubernetes_secret_found_from_its_kind_words_is_the_regexes_finding(
        parts: list[str]) -> None:
    text = "".join(parts)
    low = redact.ascii_lowered(text, text.encode("ascii", "replace"))
    assert redact.k8s_secret(text, low) == (redact._K8S_KIND.search(text) is not None)


_PEM_LINES = ["-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----",
              "-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----END PRIVATE KEY-----",
              "-----END RSA PRIVATE KEY-----", "-----BEGIN PUBLIC KEY-----", "-----BEGIN",
              "-----END", "-----BEGIN x PRIVATE KEY-----", "------BEGIN PRIVATE KEY-----",
              "\n", "MIIEvQ", "-", " "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PEM_LINES), max_size=12), st.data())
def test_private_key_lines_found_from_their_dashes_are_the_regexes_matches(
        parts: list[str], data: st.DataObject) -> None:
    text = "".join(parts)
    pos = data.draw(st.integers(0, len(text)))
    for regex, head in ((redact._PEM_BEGIN, "-----BEGIN"), (redact._PEM_END, "-----END")):
        found = redact._search_from(regex, head, text, pos)
        expected = regex.search(text, pos)
        assert (found and found.span()) == (expected and expected.span())


_WORD_PARTS = ["key", "Key", "KEY", "-key", "-", "token", "-token", "auth", "authorization",
               "Authorization", "author", "kind:", "x", " ", "\u212aey", "İ", "密码", "密",
               "密钥", "码", "パスワード", "パ", "暗証番号", "비밀번호", "비", "a"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_WORD_PARTS), max_size=25))
def test_words_taken_from_the_places_of_shorter_words_are_each_words_places(
        parts: list[str]) -> None:
    """Places searched once for all detectors (and those derived from them: -key from
    key, authorization from auth, Key in the text from key) are each word's own places;
    a rare first character's search finds every place of a CJK key word."""
    text = "".join(parts)
    low = redact.ascii_lowered(text, text.encode("ascii", "replace"))
    known: redact._Places = {}
    for word, base, offset in (("-key", "key", 1), ("-token", "token", 1),
                               ("authorization", "auth", 0)):
        assert redact._places_around(low, word, base, offset, known) == \
            redact._all_places(low, word)
    for needle in redact._ASSIGN_WIDE:
        assert redact._rare_places(text, needle) == redact._all_places(text, needle)
    assert [at for at in redact._places(low, "key", known) if text.startswith("Key", at)] \
        == redact._all_places(text, "Key")
    found: list[redact._Cand] = []
    redact._assignment_candidates(text, low, 0, found, known)
    alone: list[redact._Cand] = []
    redact._assignment_candidates(text, low, 0, alone)
    assert found == alone


def test_an_assignment_starts_only_with_a_character_of_its_first_set() -> None:
    """_ASSIGN_VALUE is tried after a key word only when the next character is in
    _ASSIGN_VALUE_FIRST: every other character (each code point, before each way an
    assignment or a sentence goes on) starts no match, and each of the set starts one."""
    tails = ["", " ", "=", ": x", " is x", " = x", '" x', "'x", ">x", "：x", "是x", "x",
             " for db is x", ",\"x\"", "\t=>x"]
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        if char in redact._ASSIGN_VALUE_FIRST:
            continue
        for tail in tails if code < 0x3100 else tails[:2]:
            assert redact._ASSIGN_VALUE.match(char + tail) is None, (hex(code), tail)
    for char in redact._ASSIGN_VALUE_FIRST:
        assert any(redact._ASSIGN_VALUE.match(char + tail) for tail in
                   ["x", "=x", "* = x", "_=x", " is x", '"x', "'x", "x\"", "x'", "value=\"x"]), char


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_FOLD_PARTS + _KEY_PARTS + ["ı" * 3, "ſ", "ıkey", "ſecret",
                                                            "paſs", "tokın", "credı"]),
                max_size=25))
def test_key_word_places_dropped_at_the_unfolded_letters_are_those_found_again(
        parts: list[str]) -> None:
    """key_places told where the key words' lower case differs from the folded one drops
    the places that hold one of those: the places a search of the key words' lower case
    finds."""
    text = "".join(parts)
    low = redact.ascii_lowered(text, text.encode("ascii", "replace"))
    changed: list[int] = []
    key_low = redact.unfolded(low, text, changed)
    if key_low is None:
        return
    assert sorted(changed) == [i for i, c in enumerate(text) if c in "ıſ"]
    each_place_tried = {word: [at for at in redact._all_places(low, word)
                               if key_low.startswith(word, at)] for word in redact._KEY_WORDS}
    assert redact.key_places(low, key_low, {}, changed) == each_place_tried


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FOLD_PARTS + ["-u", "-U", " -u ", "--user", " --USER ",
                                               "a:b!1", "://", "https://u:pa55@h", "ı", "İ"]),
                max_size=25))
def test_curl_users_and_url_credentials_found_in_the_lower_case_are_the_regexes_matches(
        parts: list[str]) -> None:
    text = "".join(parts)
    low = redact.ascii_lowered(text, text.encode("ascii", "replace"))
    assert [m.span() for m in redact.curl_users(text, low)] == \
        [m.span() for m in redact._CURL_USER.finditer(text)]
    assert [m.span() for m in redact.url_credentials(text, low)] == \
        [m.span() for m in redact._URL_CRED.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*_RULE_PARTS, "AIza" + "Q8vN3xLp2Rk7Wd" * 3, "\n", " "]),
                max_size=40))
def test_token_rules_over_each_distinct_run_once_find_what_each_run_alone_gives(
        parts: list[str]) -> None:
    """The token rules run over each distinct run once, its candidates put at every place
    it stands: what every rule run over each run alone (its own string) finds there."""
    text = "".join(parts) * 2  # every run at least twice, one of them first in the text
    found: list[redact._Cand] = []
    redact._run_candidates(text, found)
    expected: list[redact._Cand] = []
    for start, end in redact.runs(text):
        alone: list[redact._Cand] = []
        for i, rule in enumerate(redact._TOKEN_RULES):
            redact._token_candidates(text[start:end], i + 1, rule, alone)
        expected += [(p, s + start, e + start, k, m) for p, s, e, k, m in alone]
    assert sorted(found) == sorted(expected)


def _newline_seers(pattern: str, flags: int = 0) -> list[str]:
    """The elements of PATTERN that can match or look at a newline: an anchor (``^ $ \\A
    \\Z \\b``, which tell a newline from the end of the string or a run from another), a
    character, class or ``.`` (under DOTALL) that matches ``\\n``, or an element this walk
    does not know. None: wherever it is tried, the pattern sees a newline as it sees the
    end of the string (both fail every element), so a run's matches depend on the run
    alone."""
    sre = importlib.import_module("re._constants")  # the parser's own (not typed)
    parser = importlib.import_module("re._parser")

    def matches_newline(items: Any) -> bool:
        negate = False
        hit = False
        for op, av in items:
            if op is sre.NEGATE:
                negate = True
            elif op is sre.LITERAL:
                hit = hit or av == ord("\n")
            elif op is sre.RANGE:
                lo, hi = av
                hit = hit or lo <= ord("\n") <= hi
            elif op is sre.CATEGORY:  # \s \S \d \D \w \W: ask the category itself
                hit = hit or any(av is code and re.match(f"[{cls}]", "\n") is not None
                                 for cls, code in _CATEGORIES(sre).items())
            else:
                return True  # unknown: counted as seeing it
        return hit != negate

    seen: list[str] = []

    def walk(sub: Any, flags: int) -> None:
        for op, av in sub:
            if op is sre.SUBPATTERN:
                _group, add, remove, inner = av
                walk(inner, (flags | add) & ~remove)
            elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
                walk(av[2], flags)
            elif op is sre.BRANCH:
                for branch in av[1]:
                    walk(branch, flags)
            elif op in (sre.ASSERT, sre.ASSERT_NOT):
                walk(av[1], flags)
            elif op is sre.ATOMIC_GROUP:
                walk(av, flags)
            elif op is sre.GROUPREF:
                pass  # matches what its group matched: that group is walked
            elif op is sre.ANY:
                if flags & re.DOTALL:
                    seen.append("'.' under DOTALL")
            elif op is sre.LITERAL:
                if av == ord("\n"):
                    seen.append("a newline")
            elif op is sre.NOT_LITERAL:
                if av != ord("\n"):
                    seen.append(f"[^{chr(av)}]")
            elif op is sre.IN:
                if matches_newline(av):
                    seen.append(f"class {av}")
            else:
                seen.append(f"{op} {av}")  # AT (an anchor) and anything not known here

    parsed = parser.parse(pattern, flags)
    walk(list(parsed), parsed.state.flags)
    return seen


def _CATEGORIES(sre: Any) -> dict[str, Any]:
    return {r"\s": sre.CATEGORY_SPACE, r"\S": sre.CATEGORY_NOT_SPACE,
            r"\d": sre.CATEGORY_DIGIT, r"\D": sre.CATEGORY_NOT_DIGIT,
            r"\w": sre.CATEGORY_WORD, r"\W": sre.CATEGORY_NOT_WORD}


def test_no_token_rule_can_match_or_look_at_a_newline() -> None:
    """_run_candidates runs the token rules over each distinct run once, the runs joined
    by newlines, and puts a run's candidates at every place it stands: right only while no
    rule can match or look at a newline (what stands beside a run in the joined string
    must not change its matches)."""
    for rule in redact._TOKEN_RULES:
        assert _newline_seers(rule.regex.pattern, rule.regex.flags) == [], rule.kind


@pytest.mark.parametrize("pattern, flags", [
    (r"xox[bp]-\s*[0-9]{10}", 0), (r"^ghp_[A-Za-z0-9]{36}", 0), (r"ghp_[A-Za-z0-9]{36}$", 0),
    (r"\Aghp_\w{36}\Z", 0), (r"\bghp_[A-Za-z0-9]{36}", 0), (r"ghp_[^ ]{36}", 0),
    (r"ghp_[\W0-9]{36}", 0), (r"(?<![\s_])ghp_x", 0), (r"ghp_\D", 0), (r"ghp_.{36}", re.DOTALL),
    (r"(?s:ghp_.{36})", 0), (r"(?i)ghp_(?:a|[\x00-\x20])", 0), (r"ghp_x$", re.MULTILINE),
    (r"ghp_\n", 0)])
def test_a_rule_that_can_see_a_newline_is_told(pattern: str, flags: int) -> None:
    """The check above fails on a rule with ``\\s``, ``^``, ``[^ ]``, ``.`` under DOTALL..."""
    assert _newline_seers(pattern, flags)


@pytest.mark.parametrize("pattern", [
    r"(?i)(?<![a-z].{4})ghp_[A-Za-z0-9_-]{36}(?![A-Za-z0-9])",  # '.' without DOTALL
    r"(?<!\S)ghp_x", r"ghp_[^\n]"])  # \n and the string's end both fail these
def test_a_rule_blind_to_newlines_passes(pattern: str) -> None:
    assert _newline_seers(pattern) == []


def _names_parts() -> list[str]:
    """Each name of a provider with several (message_bird, message-bird...), its head, in
    lower, upper and mixed case, cut short, and what stands around a name."""
    parts = ["", " ", "=", "\n", "_", "-", "ı", "İ", "K", "x1"]
    for kind, names, _shape, _strict in redact._NAMED_FORMATS:
        head = redact._NAMED_HEADS[kind]
        for name, forms in names:
            mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(name))
            parts += [name, name.upper(), mixed, *forms, name[:-1], name[len(head):]]
        parts += [head, head.upper(), head[: len(head) // 2], head[len(head) // 2:]]
    return parts


def _names_found_alone(low: str, head: str, names: list[str]) -> None:
    assert redact._names_places(low, head, names) == [
        redact._all_places(low, name) for name in names], (low, head, names)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_names_parts()), max_size=30))
def test_names_found_from_their_shared_head_are_each_names_own_places(
        parts: list[str]) -> None:
    """MessageBird's names are found with one search of their head: the places each name
    found alone has (names repeated, touching, overlapping, at the text's ends, in any
    case: the search is in the lowered text)."""
    text = "".join(parts)
    low = redact.lowered(text)
    shared = [kind for kind, head in redact._NAMED_HEADS.items() if head]
    assert shared  # messagebird's
    for kind, names, _shape, _strict in redact._NAMED_FORMATS:
        if redact._NAMED_HEADS[kind]:
            _names_found_alone(low, redact._NAMED_HEADS[kind], [n for n, _ in names])


def test_names_that_overlap_themselves_would_be_told() -> None:
    """The check above fails for a name (or head) that overlaps itself: the head's places
    then hold places a search of the name alone steps over, or miss some it finds."""
    with pytest.raises(AssertionError):  # a name overlapping itself: 0 and 2 vs 0
        _names_found_alone("ababab", "ab", ["abab", "abc"])
    with pytest.raises(AssertionError):  # a head overlapping itself: misses 1
        _names_found_alone("aaab", "aa", ["aab", "aac"])
    _names_found_alone("ab abab abc", "ab", ["ab_x", "abab", "abc"])


def test_blanks_after_a_key_word_go_on_only_as_the_assignment_regex_can() -> None:
    """_ASSIGN_VALUE is tried after a key word and blanks only when one of _AFTER_BLANKS
    follows them (_may_assign): every code point after one or two blanks, before each way
    an assignment or a sentence goes on, starts a match only where _may_assign allows it;
    and the regex is skipped in prose ("the token comes from")."""
    tails = ["", " ", "x", "=x", " x", "tring x", "r x", "s x", "as x", "re x", "or db is x",
             "f x", "n x", "har *x", "str x", "\"x", "\"x\"", ": x", "= x", "x is x"]
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        for blanks in (" ", "\t", " \t "):
            for tail in tails if code < 0x3100 else tails[:3]:
                text = blanks + char + tail
                if redact._ASSIGN_VALUE.match(text) is not None:
                    assert redact._may_assign(text, 0), (hex(code), blanks, tail)
    for prose in ("token comes from", "key rotation", "secret UPLOAD_TOKEN", "token  bucket"):
        assert not redact._may_assign(prose, prose.index(" "))
    for code_like in ("token = x", "token is x", "key\tstring = x", "token : x", "token ：x"):
        assert redact._may_assign(code_like, code_like.index(next(
            c for c in code_like if c in " \t")))


_ASSIGN_PARTS = [*_KEY_PARTS, " ", "\t", "  ", "str", "string", "String", "&str", "char *",
                 "=", ":", "?=", ".=", "+=", "=>", ",", "：", "is", "was", "are", "for", "of",
                 "on", "in", "set to", "是", "は", "\"", "'", "`", "**", "__", ">",
                 "value=", "comes", "rotation", "Xk9#mQ2!vL7@", "hunter2024", "s3cr3tV4lu3Q",
                 "admin:", "deploy:Winter2024!", "u:p@ss", "~", "#", "&", "^", "%", "$"]


def _old_may_assign(text: str, at: int) -> bool:
    """The test before _may_assign: the first character only."""
    return text[at : at + 1] in redact._ASSIGN_VALUE_FIRST


def _old_active_rules(joined: str) -> list[int]:
    """active_rules before: a set of the pairs made, then intersected with the heads."""
    active: set[int] = set()
    if len(joined) <= redact._PAIRS_UP_TO:
        pairs = set(zip(joined, joined[1:], strict=False)) & redact._HEAD_PAIRS.keys()
        for members in [*(redact._HEAD_PAIRS[pair] for pair in pairs), *redact._SHORT_GROUPS]:
            for needle, rules in members:
                if needle in joined:
                    active.update(rules)
        return sorted(active)
    return [i for i, rule in enumerate(redact._TOKEN_RULES)
            if any(needle in joined for needle in rule.needles)]


_PROVIDER_PARTS = ["meraki", "Meraki", "MERAKI", "sumo", "SUMO_", "asana", "discord",
                   "MessageBird", "message_bird", "message-bird", "MESSAGE", "message",
                   "_api_key", "_client_id", "AccessID", "consumo", "ApiKey"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_ASSIGN_PARTS + _PROVIDER_PARTS),
                          st.sampled_from(_RULE_PARTS)), max_size=30))
def test_masking_is_what_the_paths_before_the_prefilters_give(parts: list[str]) -> None:
    """Differential: the blank check before the assignment regex, the provider names'
    one-word gate, the pairs intersected as an iterator and the password marks' test
    before the standing-alone pairs give what the old code paths (each put back here)
    give: the same findings and the same masked text."""
    text = "".join(parts)
    findings, masked = redact.find_secrets(text), redact.redact(text).text
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "_may_assign", _old_may_assign)
        patch.setattr(redact, "_NAMED_GATES", dict.fromkeys(redact._NAMED_GATES, ""))
        patch.setattr(redact, "active_rules", _old_active_rules)
        patch.setattr(redact, "_may_pair", lambda low: True)
        assert redact.find_secrets(text) == findings
        assert redact.redact(text).text == masked


def test_each_provider_gate_stands_in_every_name_of_its_provider() -> None:
    """A text without a provider's gate word holds none of its names (so none is looked
    for): the gate is in each name, lower-cased as they are searched."""
    for kind, names, _shape, _strict in redact._NAMED_FORMATS:
        gate = redact._NAMED_GATES[kind]
        assert gate, kind  # every provider has one today
        assert all(gate in name for name, _forms in names), kind


def test_a_standing_alone_password_holds_one_of_the_marks_tested_first() -> None:
    """_pair_candidates runs only when the text holds one of _PAIR_MARKS (_may_pair): each
    code point makes a password of ``:ab1?cd`` only if it is one of them."""
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        found = redact._PAIR_PASSWORD.search(f"u:ab1{char}cd ") is not None
        assert found == (char in redact._PAIR_MARKS), hex(code)
    assert not redact._may_pair("id: 01JD5V3K8Q2W9X7Y6Z5A4B3C2D\ntitle: plain words")
    assert redact._may_pair("deploy:winter2024!")
