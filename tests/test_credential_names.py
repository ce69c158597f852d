"""A text that names a credential masks its value whatever the value's shape (issue 14,
item 4): a credential noun phrase before "is" in a sentence, an assignment in any syntax to
a token-named element or property, a provider's name in the variable, curl's user and
password in any quoting.  Ordinary prose after such a noun phrase stays readable.

The values are made up here; none is a real key."""

from __future__ import annotations

import pytest

from memex.core.redact import redact
from tests.helpers.spies import record_calls


def _masked(text: str, secret: str) -> bool:
    """``secret`` is gone and every character of it after the 4th is changed."""
    out = redact(text).text
    if secret in out or len(out) != len(text):
        return secret not in out
    at = text.index(secret)
    return all(out[i] != text[i] or text[i] == "x"
               for i in range(at + 4, at + len(secret)))


# The word after "is" in a sentence: any shape but a word of the sentence
PROSE = {
    "digits": "8816203457719405",
    "low-entropy digits": "4433221144332211",
    "hex pair": "f00dcafe:beadfeed",
    "random letters": "zqxvkjwpmf",
    "password word": "adminpasswd",
    "camel password word": "StagingDbPassword",
    "hyphenated password word": "Staging-Password",
    "percent password word": "Staging%Password%",
    "legacy token of one digit": "xoxa-4-733333333",
    "user and quoted password": "deploy:'q8Zt3LmX9vR2pK7w",
    "braced user and password": '{9b1e2c4d-55aa-4c3e-9d1f-0e2a4b6c8d0f}":"{Hq7Tz2Lw9Xc4Vb}',
    "password ending in a colon": "q8Zt3Lm!X9:",
}


@pytest.mark.parametrize("name", sorted(PROSE))
@pytest.mark.parametrize("sentence", ["the deploy key is {} for now",
                                      "The staging password is {}.",
                                      "our API token was {} until Monday"])
def test_the_word_after_a_credential_noun_phrase_is_masked(name: str, sentence: str) -> None:
    secret = PROSE[name]
    text = sentence.format(secret)
    if sentence.endswith("{}.") and secret.endswith(":"):
        secret = secret[:-1]
    assert _masked(text, secret), redact(text).text


# What follows a credential noun phrase in ordinary prose
ORDINARY_PROSE = [
    "the key is to run tests first",
    "The key is consistency.",
    "the password is incorrect for that user",
    "the secret is hardcoded in config.py",
    "the API key is required for every request",
    "the token is refreshed automatically",
    "the deploy key is read-only",
    "the password is stored in Vault",
    "the key is JavaScript-specific",
    "the session token is HttpOnly",
    "the access token is short-lived",
    "the password is bcrypt-hashed",
    "the password is case-sensitive",
    "the token is kubernetes-managed",
    "the key is PostgreSQL-compatible",
    "the password is passwordless now",
    "the secret is secretly shared",
    "the token is getToken() in the client",
    "each time a new token is found.\"\"\"",
    '{"the secret is hardcoded": true}',
    "the primary key is user_id_12345 here",
    "the cache key is repo:path:sha",
    "the password is 8 characters long",
    "the key was deprecated in v2.3.1",
    "the secret was rotated on 2024-05-01",
    "the token is None here",
    "the password is ${DB_PASSWORD}",
    "the key is <your-api-key>",
    "the key is 12345678 in the docs",
    "the token is 00000000 when unset",
]


# An assignment to a token-named element or property, in the syntaxes of item 1, of a value
# that is only digits (an id-like client secret) or a low-entropy literal
_DIGITS = "4433221144332211"
ASSIGNMENTS = [(text, _DIGITS) for text in (
    f'$vendorToken .= "{_DIGITS}"',
    f"<vendorToken>\n    {_DIGITS}\n</vendorToken>",
    f'System.setProperty("VENDOR_TOKEN", "{_DIGITS}")',
    f'var vendorToken string = "{_DIGITS}"',
    f'vendor_token := "{_DIGITS}"',
    f'VENDOR_TOKEN ?= "{_DIGITS}"',
    f'"vendor_secret" => "{_DIGITS}"',
    f'<add key="Password" value="{_DIGITS}" />',
)] + [('client_secret = "f00dcafe:beadfeed"', "f00dcafe:beadfeed")]

# Code that names a credential without giving one
ORDINARY_CODE = [
    'token = "12345678"',  # typed in order: a placeholder
    'token = "00000000"',
    "max_tokens = 40960000",  # an unquoted number in code: a limit, not a secret
    "TOKEN_TTL = 86400",
    'credentials = "same-origin"',
    'token_type = "bearer"',
    'token = "access_token"',
]

# A provider's name in the variable (its keyword format), written as the provider writes it
# or in camel case, in any assignment syntax; a value that does not fit the provider's
# shape is still masked when it is a literal that an assignment would mask
PROVIDER = [
    ('const MessageBirdClientID = "12345678-ABCD-ABCD-ABCD-1234567890AB"',
     "12345678-ABCD-ABCD-ABCD-1234567890AB"),
    ('const messageBirdClientId = "55120934-KQZT-WMRX-BPLN-0934871265CD"',
     "55120934-KQZT-WMRX-BPLN-0934871265CD"),
    ("<discordClientId>\n    290417385562918374\n</discordClientId>", "290417385562918374"),
    ('System.setProperty("DISCORD_CLIENT_ID", "290417385562918374")', "290417385562918374"),
    ('$discordClientId .= "290417385562918374"', "290417385562918374"),
    ('var discordClientId string = "290417385562918374"', "290417385562918374"),
    # a strict provider's near-miss spare keeps to the separators it had (=, :, =>, ?=):
    # an element or setProperty does not widen it
    ("<meraki_api_key>Tr0ub4dor&3x</meraki_api_key>", "Tr0ub4dor&3x"),
    ('System.setProperty("sumo_access_key", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO")',
     "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO"),
    # a colon with no space after a provider's name, as before this stop
    ("discord_client_id:290417385562918374", "290417385562918374"),
    ("meraki_api_key:5cb4a5f04cd412fe946667b17f0129ba17aeb2e0",
     "5cb4a5f04cd412fe946667b17f0129ba17aeb2e0"),
]

ORDINARY_PROVIDER = [
    'discord_channel = "general"',
    "MessageBird is the SMS provider we use",
    "Asana is where the roadmap lives",
]

# (a memorable password: the random-token detector alone does not see it)
CURL = [
    ('curl -X POST --user "{9b1e2c4d-55aa-4c3e-9d1f-0e2a4b6c8d0f}":"{winter-harbor-42}" '
     "https://api.example.com/v1", "winter-harbor-42"),
    ("curl --user deploy:'winter-harbor-42' -iX PATCH https://api.example.com",
     "winter-harbor-42"),
    ('curl -u deploy:"winter-harbor-42" https://api.example.com', "winter-harbor-42"),
]


@pytest.mark.parametrize(("text", "secret"), ASSIGNMENTS + PROVIDER + CURL)
def test_a_value_given_to_a_credential_name_is_masked_in_any_syntax(text: str,
                                                                     secret: str) -> None:
    """A literal of any shape under a credential name, a provider's name in the variable,
    curl's password in any quoting."""
    assert _masked(text, secret), redact(text).text


@pytest.mark.parametrize("text", ORDINARY_PROSE + ORDINARY_CODE + ORDINARY_PROVIDER + [
    'curl -u "{username}":"{password}" https://api.example.com',  # a template
])
def test_text_that_names_a_credential_without_giving_one_is_left_alone(text: str) -> None:
    assert redact(text).text == text


# Review of stop 24 (the merged change against main 3caedde): each failed before its fix.
@pytest.mark.parametrize("text", [
    'password="402918334567120"',  # a literal's digits holding "34567": main masked it
    '"client_secret": "8812904456789023"',
    "<secret>559012345551234</secret>",
    "the api token is 300000098124556",
    "the password is xK9#mQ2!",  # a password's own "!" is not the sentence's
    "my secret is Tr0ub4!!",
    "密码是Qw3rty!!",
    "The admin password was hunter2!.",
    "DB password for prod is Zq8$wL1?",
])
def test_what_main_masked_stays_masked(text: str) -> None:
    out = redact(text).text
    assert out != text
    assert "xxxx" in out


@pytest.mark.parametrize("text", [
    "The password is {password}.",
    "token is {token_value}",
    "the password is incorrect!",
])
def test_a_template_placeholder_or_a_word_stays_readable(text: str) -> None:
    assert redact(text).text == text


def test_a_repeated_provider_name_is_judged_once_per_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """"discord=" * 2000 took the rest of the line again at each name (quadratic)."""
    from memex.core import redact as module
    calls = record_calls(monkeypatch, module, "_code_value")
    redact("discord=" * 500)
    assert len(calls) < 10
