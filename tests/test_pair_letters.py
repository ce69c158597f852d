"""``user:password`` pairs (issue 14, item 4).

* A quoted password after ``user:`` (``user:'...'``): the unquoted pair, one run of token
  characters, was masked whole by the bare-token detector; the quoted one left its user
  readable (the quote ends the run).
* A password of random letters only (no digit, no symbol) in a pair was tried as a rule
  and not kept: every way of telling it from a name that was tried also masked CamelCase
  names of short acronyms and Polish or Czech words (``a:dbXmlSchwarzDB``,
  ``a:dbZdenekGetDB``, ``a:ioAGetSchwarzBY``, found by the property test below).  The
  readable cases and the property stay as guards.

Everything here is generated from a fixed seed or typed by hand: none is a real
credential."""

from __future__ import annotations

import random
import string

from hypothesis import given
from hypothesis import strategies as st

from memex.core import redact

_RNG = random.Random(2614)
SENTENCES = ("{}", "use {} here", "- `{}`", "login with {}.", "auth: '{}'")
def _masked(text: str, secret: str) -> bool:
    """``secret`` is gone and every character of it after its fourth changed."""
    out = redact.redact(text).text
    start = text.index(secret)
    return secret not in out and all(
        o != t or o == "x" for o, t in zip(out[start + 4 : start + len(secret)],
                                           text[start + 4 : start + len(secret)], strict=True))


def _user() -> str:
    return "".join(_RNG.choice(string.ascii_lowercase) for _ in range(_RNG.randint(4, 10)))


def test_a_quoted_password_after_a_user_is_masked_with_its_user() -> None:
    alnum = string.ascii_letters + string.digits
    for quote in "'\"":
        for _ in range(10):
            password = "".join(_RNG.choice(alnum) for _ in range(18))
            pair = f"{_user()}:{quote}{password}"
            for sentence in SENTENCES[:3]:
                assert _masked(sentence.format(pair), pair), sentence.format(pair)
                assert _masked(sentence.format(pair + quote), pair), pair


READABLE = [
    "user:tmXBMajorLengthF",  # an identifier with an acronym and a lone capital
    "id:Zmarszczka", "miasto:Pszczyna_Pszczyna", "gmina:Szczebrzeszyn",
    "name:SzczepanskiBrzeczyszczykiewicz", "obec:StrcPrstSkrzKrk",
    "C:UsersAdminDocuments", "js:getXMLHttpRequest", "type:HTMLInputElement",
    "mode:ReadWriteOnce", "kind:PersistentVolumeClaim", "see module:ElementTree.",
    "label:'AbCdEfGhIjKlMn'",  # typed in alphabet order
    "theme:aBcDxXxXxXxXxX", "status:NotModifiedSinceLastRun",
    "fixup:IOErrorOSErrorEOFError", "std::unique_ptrMyClass",
    "sha256:'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
    "commit:'3f9c2a1e7b4d5c6a8f0e1d2c3b4a5f6e7d8c9b0a'",
    "{'key':'value'}", '{"name":"pszczynaGetBy"}', "url:'https://example.org/a/b'",
]


def test_words_ids_and_digests_after_a_colon_stay_readable() -> None:
    for text in READABLE:
        assert redact.redact(text).text == text, text


_WORDS = ["get", "set", "user", "account", "by", "id", "http", "request", "value", "length",
          "major", "minor", "input", "element", "read", "write", "once", "source", "to",
          "from", "json", "xml", "html", "url", "io", "os", "a", "of", "is", "on", "max",
          "schwarz", "strumpf", "pszczyna", "wszczynac", "krzysztof", "brno", "plzen", "db",
          "gc", "vm", "fs", "tx", "rx", "qa", "tz", "i", "x", "zdenek", "chrzaszcz"]


@given(st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=10),
       st.lists(st.sampled_from(_WORDS), min_size=2, max_size=5),
       st.sampled_from(["lower", "upper", "title"]), st.sampled_from(["", "'", '"']))
def test_a_name_after_a_colon_is_no_pair(user: str, words: list[str], first: str,
                                          quote: str) -> None:
    # a CamelCase name of words (acronyms in capitals) after ``user:`` is never taken for
    # a user:password pair (the bare-token detector judges it as it judges any name)
    head = getattr(words[0], first)()
    name = head + "".join(w.upper() if len(w) <= 2 else w.capitalize() for w in words[1:])
    text = f"{user}:{quote}{name}{quote}"
    assert "basic-auth" not in [f.kind for f in redact.find_secrets(text)]
