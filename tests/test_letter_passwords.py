"""Generated passwords of letters only (issue 14, item 4): a NuGet ``ClearTextPassword`` or a
Terraform password standing alone, with no digit and no case flip in a short stretch, is
masked when a cluster of five consonants marks it; words, identifiers and lower-case
encodings that hold such a cluster stay readable.

Every password here is generated at run time from a fixed seed: none is a real one."""

from __future__ import annotations

import random
import re
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memex.core import bare_secrets
from memex.core.redact import redact

_RNG = random.Random(2514)
SENTENCES = ("{}", "use {} here", "the value {} is in the config")


def _word(n: int) -> str:
    """A capital and ``n - 1`` random lower-case letters, as a password generator makes them."""
    return _RNG.choice(string.ascii_uppercase) + "".join(
        _RNG.choice(string.ascii_lowercase) for _ in range(n - 1))


def _nuget_shaped() -> str:
    """The shape of a NuGet source password: two capitalised words joined by ``-`` or ``%``,
    or run together with a digit at the end."""
    kind = _RNG.randrange(3)
    if kind == 0:
        return f"{_word(10)}-{_word(8)}"
    if kind == 1:
        return f"{_word(10)}%{_word(8)}"
    return f"{_word(9)}{_word(8)}{_RNG.choice(string.digits)}"


def _masked(text: str, secret: str) -> bool:
    out = redact(text).text
    at = text.find(secret)
    return secret not in out and set(out[at + 4 : at + len(secret) - 1]) <= {"x"}


def test_generated_letter_passwords_are_masked_bare() -> None:
    """Random letters are not an English word: most generated passwords hold a cluster of
    five consonants and enough unusual letter pairs (132 of these 180 texts; main masked 0).
    The rest are left to their key word: in a NuGet.config's ``value=`` they are masked
    whatever their shape."""
    passwords = [_nuget_shaped() for _ in range(60)]
    masked = [p for p in passwords for s in SENTENCES if _masked(s.format(p), p)]
    assert len(masked) >= 2 / 3 * len(passwords) * len(SENTENCES)


# letters no two of which make a pair English words hold (bare_secrets.COMMON_BIGRAMS):
# every pair of such a password is an anomaly, so it is masked whatever the draw
_NO_PAIR = "zqjkvxhb"


@given(st.text(_NO_PAIR, min_size=11, max_size=40), st.integers(0, 39),
       st.sampled_from(SENTENCES))
def test_a_password_of_unpaired_letters_is_masked(rest: str, capital: int,
                                                  sentence: str) -> None:
    """A capital, then letters no two of which pair in English, one more capital inside."""
    at = capital % len(rest)
    password = "Q" + rest[:at] + rest[at].upper() + rest[at + 1 :]
    pairs = {a + b for a, b in zip(password.lower(), password.lower()[1:], strict=False)}
    assert not pairs & bare_secrets.COMMON_BIGRAMS
    if re.search(r"(.)\1{3}", password.lower()) or bare_secrets.entropy(password) < 2.9:
        return  # a placeholder run (``xxxx``) or low entropy: spared by design
    assert _masked(sentence.format(password), password)


@pytest.mark.parametrize("text", [
    "the strengths and lengths of rhythms",
    "see Modules/cjkcodecs and audioop.adpcm2lin",
    "self.rpcsubproc = None",
    "Schwarzschild radius",
    "Geschwindigkeitsbegrenzung",
    "HttpsConnectionPool and getXMLHttpRequest",
    "BackgroundScheduler.add_job",
    "vzcyrzragngvba cenpgvpnyvgl pbzcyvpngrq",  # rot13 of English words: lower case
    "the NuGet.config holds a packageSourceCredentials section",
    "TestSourcePassword",  # the sample's own value: a readable identifier, left to its key word
])
def test_words_with_consonant_clusters_stay_readable(text: str) -> None:
    assert redact(text).text == text


def test_a_key_word_still_masks_a_readable_password() -> None:
    text = '<add key="ClearTextPassword" value="TestSourcePassword" />'
    assert "TestSourcePassword" not in redact(text).text


@given(st.text("bkqaBKQA19_-. ", max_size=40))
@example("BKBKB1A1AAAA")  # a cluster first, then a digit suspect, no lower case
def test_the_cluster_suspect_never_drops_a_run(text: str) -> None:
    """Adding the consonant suspect only adds runs: every run the digit and case suspects
    find is still found (a cluster-only run before them must not hide them)."""
    with_clusters = set(bare_secrets._runs(text))
    original = bare_secrets._clusters
    try:
        bare_secrets._clusters = lambda _text: []  # type: ignore[assignment]
        without = set(bare_secrets._runs(text))
    finally:
        bare_secrets._clusters = original  # type: ignore[assignment]
    assert without <= with_clusters


def test_lower_case_letters_alone_are_never_a_random_token() -> None:
    """A lower-case run of letters is read as a word, whatever its consonants."""
    rng = random.Random(7)
    for _ in range(200):
        word = "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(12, 30)))
        assert bare_secrets.spans(f"see {word} here") == []
