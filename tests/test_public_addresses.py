"""Addresses whose parts look like keys but are public by their format (issue 14, item 4).

A Freenet request URI (``SSK@`` or ``USK@``, a routing key, a crypto key, then the key's
settings ``AQACAAE``, or ``AQABAAE`` before Freenet build 1010) is the address readers fetch
a freesite by: shared on purpose, like a URL.  The same site's insert URI, whose settings are
``AQECAAE``, holds the private key and stays masked, as does a request URI given to a
credential name.  Every key part here is generated at run time from a fixed seed."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from memex.core import redact

_RNG = random.Random(2912)
_FREENET64 = string.ascii_letters + string.digits + "~-"  # Freenet's modified base64


def _part() -> str:
    return "".join(_RNG.choice(_FREENET64) for _ in range(43))


def _uri(kind: str, settings: str) -> tuple[str, str, str]:
    routing, crypto = _part(), _part()
    return f"{kind}@{routing},{crypto},{settings}/site/3", routing, crypto


_REQUEST = [_uri(kind, settings) for kind in ("USK", "SSK") for settings in ("AQACAAE", "AQABAAE")
            for _ in range(5)]
_INSERT = [_uri(kind, "AQECAAE") for kind in ("USK", "SSK") for _ in range(5)]
_FORMS = ("{}", "fetch freenet:{} for the docs", '<Trust Identity="{}" Value="100"/>',
          "- `{}`")


@pytest.mark.parametrize("form", _FORMS)
def test_a_freenet_request_uri_is_public(form: str) -> None:
    for uri, _routing, _crypto in _REQUEST:
        text = form.format(uri)
        assert redact.redact(text).text == text


@pytest.mark.parametrize("form", _FORMS)
def test_a_freenet_insert_uri_is_masked(form: str) -> None:
    for uri, routing, crypto in _INSERT:
        out = redact.redact(form.format(uri)).text
        assert routing not in out and crypto not in out, out


def test_a_request_uri_under_a_credential_name_is_masked() -> None:
    uri, routing, _crypto = _REQUEST[0]
    for text in (f"password = {uri}", f'FREENET_SECRET="{uri}"'):
        assert routing not in redact.redact(text).text, text


def test_a_near_miss_of_the_uri_is_judged_as_before() -> None:
    # one character short of a routing key: not a request URI, so its random parts are masked
    uri, routing, crypto = _REQUEST[1]
    text = uri.replace(routing, routing[:-1])
    out = redact.redact(text).text
    assert crypto not in out, out


def test_a_provider_token_put_in_the_uri_is_masked() -> None:
    """Review of stop 29: a token with a format's literal prefix in the routing key's place
    was spared whole, as a part of the address; only shapes a random key part can hold by
    chance (two-character needles) are spared there."""
    _uri0, _routing, crypto = _REQUEST[0]
    token = "glpat-" + "".join(_RNG.choice(string.ascii_letters + string.digits)
                               for _ in range(37))
    for form in _FORMS:
        out = redact.redact(form.format(f"SSK@{token},{crypto},AQACAAE/site/3")).text
        assert token not in out and token[:4] in out, out


_KEY_PART = st.text(st.sampled_from(_FREENET64), min_size=43, max_size=43)
_LONG_NEEDLES = sorted({needle for needle, _ in redact._NEEDLES if len(needle) > 2})


@given(_KEY_PART, _KEY_PART, st.sampled_from(("USK", "SSK")),
       st.sampled_from(("AQACAAE", "AQABAAE")), st.sampled_from(_FORMS))
def test_any_request_uri_is_left_whole(routing: str, crypto: str, kind: str, settings: str,
                                       form: str) -> None:
    # whatever its parts hold by chance (a key word, a two-character shape), no shape
    # detector masks them; a format's longer literal prefix is a token put there
    assume(not any(needle in routing + "," + crypto for needle in _LONG_NEEDLES))
    text = form.format(f"{kind}@{routing},{crypto},{settings}/site/3")
    assert redact.redact(text).text == text
