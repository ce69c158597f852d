"""Secrets that the spares of false positives (near misses, strict provider names,
number/checksum names, binary JSON payloads) must never leave readable: a spare never
outranks a credential name or another detector (issue 14, review of i14c)."""
import base64
import json

import pytest

from memex.core.redact import redact

READABLE_BEFORE = {
    # near misses: the run stopped at = & : @, only the token that starts with the prefix
    "near-password-after-aiza":
        ("curl 'https://maps.example.com/cb?key=AIzaYOUR_KEY&password=Zq8t3LmX9vR2pK7w'",
         "Zq8t3LmX9vR2pK7w"),
    "near-secret-after-slack":
        ("curl 'https://x.example.com/cb?token=xoxb-your-token"
         "&client_secret=9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c'",
         "9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c"),
    "near-sgp-password": ("password=sgp_7Kq9zX2mV8pL4nR6tY1wB3cF5hJ0",
                          "7Kq9zX2mV8pL4nR6tY1wB3cF5hJ0"),
    "near-dapi-token": ("export API_TOKEN=dapi_7Kq9zX2mV8pL4nR6tY1wB3cF5hJ0",
                        "7Kq9zX2mV8pL4nR6tY1wB3cF5hJ0"),
    "near-telegram-secret": ("SECRET=1234:AbQ9zX2mV8pL4nR6tY1wB3cF", "AbQ9zX2mV8pL4nR6tY1wB3cF"),
    # strict provider names
    "meraki-webhook-secret": ("MERAKI_WEBHOOK_SECRET=q8Zt3LmX9vR2pK7wN4sYb6HjW1cF",
                              "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "sumo-http-token": ("SUMO_HTTP_TOKEN=q8Zt3LmX9vR2pK7wN4sYb6HjW1cF",
                        "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "sumo-url-credentials": ("SUMO_URL=https://sumo:S3cr3tPassw0rdXyZ9@collector.example.com/",
                             "S3cr3tPassw0rdXyZ9"),
    "consumo-api-token": ("consumo_api_token=q8Zt3LmX9vR2pK7wN4sYb6HjW1cF",
                          "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "sumo-access": ("sumo_access: q8Zt3LmX9vR2pK7wN4sYb6HjW1cF", "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    # one list of secret-name words (review item 3 of stop 24): a strict provider's spare
    # now also yields to ``dsn``, the number-name spare to ``sign``
    "sumo-dsn-api-key": ("SUMO_DSN_API_KEY=q8Zt3LmX9vR2pK7wN4sYb6HjW1cF",
                         "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "signing-total": ("signing_total: 3f9a2c1e7b5d4a6c8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0"
                      "b1c2d", "3f9a2c1e7b5d4a6c8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"),
    # number/checksum names
    "password-count": ("db_password_count=q8Zt3LmX9vR2pK7wN4sYb6HjW1cF",
                       "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "webhook-sum": ("webhook_sum: q8Zt3LmX9vR2pK7wN4sYb6HjW1cF", "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "dsn-total": ("dsn_total: q8Zt3LmX9vR2pK7wN4sYb6HjW1cF", "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "api-key-size": ("apiKeySize: q8Zt3LmX9vR2pK7wN4sYb6HjW1cF", "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    "count": ("count: q8Zt3LmX9vR2pK7wN4sYb6HjW1cF", "q8Zt3LmX9vR2pK7wN4sYb6HjW1cF"),
    # Slack near misses under a credential name
    "slack-token-name":
        ("token: xoxp-123456789-123456789012-1234567890123-0123456789abcdef0123456789abcdef",
         "0123456789abcdef0123456789abcdef"),
    "slack-short-secret": ("SLACK_TOKEN=xoxp-16441374532-16441374548-16520617843-dd6a8f2c71",
                           "dd6a8f2c71"),
    "slack-bot-letters": ("SLACK_TOKEN=xoxb-T01234567-B09876543-q8Zt3LmX9vR2pK7wN4sYb6Hj",
                          "q8Zt3LmX9vR2pK7wN4sYb6Hj"),
    "slack-long-secret":
        ("SLACK_TOKEN=xoxp-16441374532-16441374548-16520617843-dd6a8f2c71e84b9a01f35c",
         "dd6a8f2c71e84b9a01f35c"),
    "slack-refresh":
        ("SLACK_TOKEN=xoxe-1-My0xLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMy1hYmNkZWZnaGlqa2xtbm9w",
         "My0xLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMy1hYmNkZWZnaGlqa2xtbm9w"),
}


@pytest.mark.parametrize("name", sorted(READABLE_BEFORE))
def test_a_spare_leaves_no_secret_readable(name: str) -> None:
    text, secret = READABLE_BEFORE[name]
    assert secret not in redact(text).text


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])
def test_a_credential_after_the_sample_of_a_binary_json_payload_is_masked(
        separators: tuple[str, str]) -> None:
    payload = json.dumps({"type": "config", "description": "x" * 800,
                          "password": "Zq8t3LmX9vR2pK7wN4sYb6Hj"}, separators=separators).encode()
    line = "payload: " + base64.b64encode(b"\x92\xa1\x01\xc4" + payload).decode()
    assert redact(line).text != line


def test_a_short_binary_json_payload_with_a_spaced_credential_is_masked() -> None:
    # the credential key was looked for only as '"name":"' without a hyphen or a space
    payload = b'{"kind":"app","client-secret": "Zq8t3LmX9vR2pK7wN4sYb6Hj"}'
    line = "payload: " + base64.b64encode(b"\x92\xa1\x01\xc4" + payload).decode()
    assert redact(line).text != line


def test_the_spares_still_hold_where_no_credential_is() -> None:
    # a near miss alone, a strict provider's api key that does not fit, a number's name
    for text in ("key=AIzaYOUR_KEY", "meraki_api_key = not-a-real-meraki-key-value",
                 "itemCount: 1234567890123456789012345"):
        assert redact(text).text == text
