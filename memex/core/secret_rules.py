"""The token formats :mod:`memex.core.redact` recognises without any surrounding context.

Each rule is written from the format a provider documents or visibly uses: a literal prefix
(``ghp_``, ``xoxb-``, ``dop_v1_``), then a body of a known alphabet and length, sometimes a
fixed separator or suffix.  Nothing here runs on its own: :mod:`memex.core.redact` compiles the
table once, checks each rule's *needles* (plain substrings) before running its pattern, so a text
that holds none of a rule's needles never pays for it (the keyword prefilter), and applies the
rule's *checks* to what the pattern matched, which is what tells ``ghp_<36 random>`` from the
``ghp_xxxx...`` of a README.

Secrets whose format has no prefix are found by their context (``token = ...``, ``the password is
...``) in :mod:`memex.core.redact`, or, when they stand alone, by their randomness in
:mod:`memex.core.bare_secrets`, which spares the shapes of ids (a 40-character hex string is a
commit hash there, a UUID an id).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TokenRule", "TOKEN_RULES", "DIGIT", "MIXED", "CASES", "LETTER", "NOT_FILLER",
           "KNOWN_PUBLIC", "NEAR_MISSES", "NAMED_FORMATS", "PUBLIC_ADDRESSES"]

# Checks on the matched secret (after ``skip`` characters of fixed prefix).
DIGIT = 1  # at least one digit (a run of letters only is a word or a placeholder)
MIXED = 2  # a digit, an upper- and a lower-case letter
CASES = 4  # an upper- and a lower-case letter
LETTER = 8  # at least one letter
NOT_FILLER = 16  # not a placeholder filler: mostly one of x X 0 1 * # (runs such as xxxx or 0000)

# Characters that, right before a prefix, make it the middle of a longer word.
WORD_BEFORE = "A-Za-z0-9_"
TOKEN_BEFORE = "A-Za-z0-9_+/.-"


@dataclass(frozen=True)
class TokenRule:
    """One format: ``prefix`` (a regex, ``width`` characters long) then ``body``.

    ``needles`` are plain substrings, one of which every match contains; ``before`` is the
    character class that may not precede the prefix.  When ``secret`` is set the masked span is
    the named group ``s`` of ``body`` (a webhook URL whose host is not secret)."""

    kind: str
    prefix: str
    body: str
    needles: tuple[str, ...]
    checks: int = NOT_FILLER
    width: int = 0
    before: str = TOKEN_BEFORE
    skip: int = -1  # characters of the match not checked (default: the prefix)
    secret: bool = False


def _r(kind: str, prefix: str, body: str, *needles: str, checks: int = NOT_FILLER,
       width: int = 0, before: str = TOKEN_BEFORE, secret: bool = False) -> TokenRule:
    return TokenRule(kind, prefix, body, needles or (prefix,), checks, width, before,
                     secret=secret)


_END = "(?![A-Za-z0-9])"
_END_B64URL = "(?![A-Za-z0-9_-])"

TOKEN_RULES: tuple[TokenRule, ...] = (
    # --- cloud providers
    _r("aws-access-key-id", "(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])", "[A-Z0-9]{16}" + _END,
       "AKIA", "ASIA", "ABIA", "ACCA", "A3T", width=4,
       before="A-Za-z0-9"),
    _r("aws-bedrock-api-key", "ABSK", "[A-Za-z0-9+/]{100,}={0,2}", checks=NOT_FILLER | DIGIT),
    # short-lived: base64 of a presigned URL, which starts with the host bedrock.amazonaws.com
    _r("aws-bedrock-api-key", "bedrock-api-key-" "YmVkcm9jay5hbWF6b25hd3MuY29t",
       "[A-Za-z0-9+/]*={0,2}", "bedrock-api-key-", checks=0),
    _r("google-api-key", "AIza", "[A-Za-z0-9_-]{35}" + _END_B64URL),
    _r("alibaba-access-key-id", "LTAI", "[A-Za-z0-9]{20}" + _END, checks=NOT_FILLER | DIGIT),
    _r("azure-ad-client-secret", r"(?:[A-Za-z0-9_~.]{3}[0-9]Q~)", "[A-Za-z0-9_~.-]{31,34}"
       + r"(?![A-Za-z0-9_~.-])", "Q~", width=6, before="A-Za-z0-9_~.-"),
    _r("digitalocean-token", "do[opr]_v1_", "[a-f0-9]{64}" + _END, "_v1_", width=7),
    _r("heroku-api-key", "HRKU-AA", "[A-Za-z0-9_-]{58}" + _END_B64URL),
    _r("databricks-token", "dapi", "[a-f0-9]{32}(?:-[0-9])?" + _END, checks=NOT_FILLER | DIGIT),
    _r("dynatrace-token", "dt0c01\\.", "[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}" + _END, "dt0c01."),
    _r("doppler-token", "dp\\.(?:pt|st|ct|sa|scim|audit)\\.", "[A-Za-z0-9]{40,44}" + _END,
       "dp."),
    _r("flyio-token", "fm[12][ar]?_", "[A-Za-z0-9+/]{100,}={0,3}", "fm1", "fm2"),
    _r("flyio-token", "fo1_", "[A-Za-z0-9_-]{43}" + _END_B64URL),
    _r("hashicorp-terraform-token", "[A-Za-z0-9]{14}\\.atlasv1\\.", "[A-Za-z0-9_=-]{60,70}",
       "atlasv1", width=23),
    _r("vault-token", "hv[sb]\\.", "[A-Za-z0-9_-]{90,}", "hvs.", "hvb.", width=4),
    _r("vault-token", "s\\.", "[A-Za-z0-9]{24}" + _END, "s.", checks=NOT_FILLER | MIXED, width=2),
    _r("yandex-token", "AQVN", "[A-Za-z0-9_-]{35,38}" + _END_B64URL),
    _r("yandex-token", "YC", "[A-Za-z0-9_-]{38}" + _END_B64URL, checks=NOT_FILLER | MIXED),
    _r("yandex-token", "t1\\.", "[A-Za-z0-9_-]+=*\\.[A-Za-z0-9_-]{86}=*", "t1.", width=3),
    _r("cloudflare-origin-ca-key", "v1\\.0-", "[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-", width=5),
    _r("clickhouse-cloud-key", "4b1d", "[A-Za-z0-9]{38}" + _END, checks=NOT_FILLER | MIXED),
    _r("scalingo-token", "tk-us-", "[A-Za-z0-9_-]{48}" + _END_B64URL),
    _r("openshift-token", "sha256~", "[A-Za-z0-9_-]{43}" + _END_B64URL,
       checks=NOT_FILLER | DIGIT),
    _r("artifactory-key", "AKCp", "[A-Za-z0-9]{69}" + _END),
    _r("artifactory-key", "cmVmd", "[A-Za-z0-9]{59}" + _END),
    _r("age-secret-key", "AGE-SECRET-KEY-1", "[0-9A-Z]{58}" + _END, checks=0),
    _r("1password-secret-key", "A3-", "[A-Z0-9]{6}-[A-Z0-9-]{25,40}" + _END,
       checks=NOT_FILLER | DIGIT),
    _r("1password-service-token", "ops_eyJ", "[A-Za-z0-9+/]{100,}={0,3}"),
    # --- source hosting, packages, CI
    _r("github-token", "gh[pousr]_", "[A-Za-z0-9]{36,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
       width=4, before=WORD_BEFORE),
    _r("github-token", "github_pat_", "[A-Za-z0-9_]{60,}", before=WORD_BEFORE),
    _r("gitlab-token",
       "gl(?:pat|dt|cbt|ffct|ft|imt|agent|oas|ptt|rt|soat)-",
       r"[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*",
       "glpat-", "gldt-", "glcbt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-",
       "glptt-", "glrt-", "glsoat-", checks=NOT_FILLER | DIGIT, width=0, before="A-Za-z0-9_-"),
    _r("gitlab-token", "GR1348941", "[A-Za-z0-9_-]{20}" + _END_B64URL,
       checks=NOT_FILLER | DIGIT | LETTER),
    _r("gitlab-session-cookie", "_gitlab_session=", "[0-9a-z]{32}" + _END, before="A-Za-z0-9"),
    _r("npm-token", "npm_", "[A-Za-z0-9]{36}" + _END, before=WORD_BEFORE),
    _r("pypi-token", "pypi-AgEIcHlwaS5vcmc", "[A-Za-z0-9_-]{50,}"),
    _r("rubygems-token", "rubygems_", "[a-f0-9]{48}" + _END),
    _r("clojars-token", "CLOJARS_", "[a-z0-9]{60}" + _END),
    _r("pulumi-token", "pul-", "[a-f0-9]{40}" + _END),
    _r("prefect-token", "pnu_", "[A-Za-z0-9]{36}" + _END),
    _r("readme-token", "rdme_", "[a-z0-9]{70}" + _END),
    _r("infracost-token", "ico-", "[A-Za-z0-9]{32}" + _END, checks=NOT_FILLER | DIGIT),
    _r("octopus-deploy-key", "API-", "[A-Z0-9]{26}" + _END, checks=NOT_FILLER | DIGIT),
    _r("sourcegraph-token", "sgp_", "(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + _END),
    _r("harness-token", "(?:pat|sat)\\.", "[A-Za-z0-9_-]{22}\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{20}"
       + _END, "pat.", "sat.", width=4),
    _r("grafana-token", "eyJrIjoi", "[A-Za-z0-9]{70,400}={0,2}"),
    _r("grafana-token", "glc_", "[A-Za-z0-9+/]{32,400}={0,2}", before=WORD_BEFORE),
    _r("grafana-token", "glsa_", "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _END),
    _r("atlassian-token", "ATATT3", "[A-Za-z0-9_=-]{180,}"),
    _r("sentry-token", "sntrys_eyJ", "[A-Za-z0-9+/=]{60,}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/])"),
    _r("sentry-token", "sntryu_", "[a-f0-9]{64}" + _END),
    _r("typeform-token", "tfp_", "[A-Za-z0-9_.=-]{59}" + _END),
    _r("linear-api-key", "lin_api_", "[A-Za-z0-9]{40}" + _END),
    _r("notion-token", "ntn_", "[0-9]{11}[A-Za-z0-9]{35}" + _END, checks=NOT_FILLER | LETTER),
    _r("sonar-token", "sq[pua]_", "[A-Za-z0-9]{40}" + _END, "sqp_", "squ_", "sqa_", width=4,
       checks=NOT_FILLER | DIGIT),
    _r("postman-token", "PMAK-", "[A-Za-z0-9]{24}-[A-Za-z0-9]{34}" + _END),
    _r("terraform-cloud-token", "tfc_", "[A-Za-z0-9]{40,}" + _END, checks=NOT_FILLER | DIGIT),
    # --- AI providers
    _r("anthropic-api-key", "sk-ant-", "[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_-]{93}AA" + _END_B64URL,
       before=TOKEN_BEFORE),
    _r("openai-api-key", "sk-", "(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}",
       checks=NOT_FILLER | MIXED, before=TOKEN_BEFORE),
    _r("huggingface-token", "hf_", "[A-Za-z]{34}" + _END, checks=NOT_FILLER | CASES,
       before=WORD_BEFORE),
    _r("huggingface-token", "api_org_", "[A-Za-z]{34}" + _END, checks=NOT_FILLER | CASES,
       before=WORD_BEFORE),
    _r("perplexity-api-key", "pplx-", "[A-Za-z0-9]{48}" + _END),
    # --- chat, mail, messaging
    # bot, user and refresh tokens, whose formats Slack fixes (numeric ids, then the secret)
    _r("slack-token", "xoxb-", "(?:[0-9]{10,13}-[0-9]{10,13}[A-Za-z0-9-]*|[0-9]{8,14}-"
       "[A-Za-z0-9]{18,26})" + _END, checks=NOT_FILLER | DIGIT, before="A-Za-z0-9_-"),
    _r("slack-token", "xox[pe]-", "(?:[0-9]{10,13}-){3}[A-Za-z0-9-]{28,34}" + _END,
       "xoxp-", "xoxe-", checks=NOT_FILLER | DIGIT, width=5, before="A-Za-z0-9_-"),
    _r("slack-token", "xoxe-", "[0-9]-[A-Za-z0-9]{146}" + _END, checks=NOT_FILLER | DIGIT,
       before="A-Za-z0-9_-"),
    # legacy, workspace, app and configuration tokens
    _r("slack-token", "(?:xox[aosr]|xoxe\\.xox[bp]|xapp)-",
       "(?=[A-Za-z0-9-]{15})[0-9]+(?:-[A-Za-z0-9]+)*-[A-Za-z]*[0-9][A-Za-z0-9]*"
       "(?![A-Za-z0-9_#-])",
       "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe.xox", "xapp-", checks=NOT_FILLER | DIGIT,
       width=0, before="A-Za-z0-9_-"),
    _r("slack-webhook", "hooks\\.slack\\.com/(?:services|workflows|triggers)/",
       "(?P<s>[A-Za-z0-9+/_-]{20,})", "hooks.slack.com/", width=0, before="A-Za-z0-9_",
       secret=True),
    _r("teams-webhook", "\\.webhook\\.office\\.com/webhookb2/",
       "(?P<s>[A-Za-z0-9@/._-]{40,})", ".webhook.office.com/", width=0, before="",
       secret=True),
    _r("telegram-bot-token", "[0-9]{5,16}:A", "[A-Za-z0-9_-]{34}" + _END_B64URL, ":A",
       width=0, before="A-Za-z0-9_:"),
    _r("twilio-api-key", "SK", "[0-9a-fA-F]{32}" + _END, checks=NOT_FILLER | DIGIT,
       before="A-Za-z0-9_"),
    _r("sendgrid-api-key", "SG\\.", "[A-Za-z0-9_=.-]{60,70}" + _END_B64URL, "SG.", width=3),
    _r("sendinblue-api-key", "xkeysib-", "[a-f0-9]{64}-[A-Za-z0-9]{16}" + _END),
    _r("mailgun-key", "(?:pub)?key-", "[a-f0-9]{32}" + _END, "key-",
       before="A-Za-z0-9_"),
    _r("mailchimp-api-key", "", "[a-f0-9]{32}-us[0-9]{1,2}" + _END, "-us",
       checks=NOT_FILLER | DIGIT | LETTER, before="A-Za-z0-9_-"),
    # Sidekiq Pro/Enterprise credentials: 8 hex, a colon, 8 hex, wherever they stand (no id
    # has this shape; a pair of 8-digit numbers, a date range, is none)
    _r("sidekiq-secret", "", "[a-f0-9]{8}:[a-f0-9]{8}" + _END, ":",
       checks=NOT_FILLER | LETTER, before="A-Za-z0-9_.:-"),
    _r("facebook-token", "EAA[MC]", "[A-Za-z0-9]{100,}", "EAAM", "EAAC", width=4),
    _r("facebook-token", "[0-9]{15,16}[|]", "[0-9A-Za-z_-]{27,40}" + _END_B64URL, "|",
       checks=NOT_FILLER | LETTER, before="A-Za-z0-9"),
    _r("twitter-bearer-token", "AAAAAAAAAAAAAAAAAAAAA", "A*[A-Za-z0-9%]{80,110}",
       checks=NOT_FILLER | DIGIT),
    # --- payments, commerce
    _r("stripe-key", "[rs]k_(?:live|test|prod)_", "[A-Za-z0-9]{10,}", "k_live_", "k_test_",
       "k_prod_", checks=NOT_FILLER | DIGIT, width=8, before=WORD_BEFORE),
    _r("square-token", "(?:EAAA|sq0atp-|sq0csp-)", "[A-Za-z0-9_-]{22,60}" + _END_B64URL,
       "EAAA", "sq0atp-", "sq0csp-", checks=NOT_FILLER | DIGIT, width=0),
    _r("shopify-token", "shp(?:at|ca|pa|ss)_", "[a-fA-F0-9]{32}" + _END, "shp", width=6),
    _r("shippo-token", "shippo_(?:live|test)_", "[a-fA-F0-9]{40}" + _END, "shippo_", width=0),
    _r("flutterwave-key", "FLW(?:PUB|SEC)K_(?:TEST|LIVE)?-?", "[A-Za-z0-9]{12,32}(?:-X)?" + _END,
       "FLW", width=0, checks=NOT_FILLER | DIGIT),
    _r("gocardless-token", "live_", "[A-Za-z0-9_=-]{40}" + _END_B64URL, checks=NOT_FILLER | DIGIT,
       before=WORD_BEFORE),
    _r("lob-api-key", "(?:live|test)_(?:pub_)?", "[a-f0-9]{31,35}" + _END, "live_", "test_",
       width=0, checks=NOT_FILLER | DIGIT | LETTER, before=WORD_BEFORE),
    _r("duffel-token", "duffel_(?:test|live)_", "[A-Za-z0-9_=-]{43}" + _END_B64URL, "duffel_",
       width=0),
    _r("planetscale-token", "pscale_(?:pw|tkn|oauth)_", "[A-Za-z0-9_=.-]{32,64}", "pscale_",
       width=0),
    _r("frameio-token", "fio-u-", "[A-Za-z0-9_=-]{64}" + _END_B64URL),
    _r("adobe-client-secret", "p8e-", "[A-Za-z0-9]{32}" + _END),
    _r("airtable-token", "pat", "[A-Za-z0-9]{14}\\.[a-f0-9]{64}" + _END, "pat",
       before=WORD_BEFORE),
    _r("authress-key", "(?:sc|ext|scauth|authress)_",
       "[a-z0-9]{5,30}\\.[a-z0-9]{4,6}\\.acc[_-][a-z0-9-]{10,32}\\.[a-z0-9+/_=-]{30,120}",
       ".acc", width=0, before=WORD_BEFORE),
    _r("beamer-token", "b_", "[a-z0-9=_-]{44}" + _END_B64URL, checks=NOT_FILLER | DIGIT,
       before=WORD_BEFORE),
    _r("defined-networking-token", "dnkey-", "[a-z0-9=_-]{26}-[a-z0-9=_-]{52}"),
    _r("easypost-token", "EZ[AT]K", "[A-Za-z0-9]{54}" + _END, "EZAK", "EZTK", width=4),
    _r("intra42-secret", "s-s4t2(?:ud|af)-", "[a-f0-9]{64}" + _END, "s-s4t2", width=0),
    _r("mapbox-token", "[ps]k\\.", "[A-Za-z0-9]{60,}\\.[A-Za-z0-9_-]{20,}", "k.", width=3,
       checks=NOT_FILLER | DIGIT),
    _r("new-relic-key", "NR(?:AK|JS|II)-", "[A-Za-z0-9-]{19,32}" + _END, "NRAK-", "NRJS-",
       "NRII-", width=5, checks=NOT_FILLER | DIGIT),
    _r("plaid-access-token", "access-(?:sandbox|development|production)-",
       "[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}" + _END, "access-sandbox-",
       "access-development-", "access-production-", width=0, before=WORD_BEFORE),
    _r("settlemint-token", "sm_(?:aat|pat|sat)_", "[a-z0-9]{16}" + _END, "sm_", width=7),
    _r("jwt", "ey", "[A-Za-z0-9_-]{10,}\\.ey[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_/+-]*={0,2}", ".ey",
       checks=NOT_FILLER | MIXED),
    _r("jwt", "ZXlK", "[A-Za-z0-9+/]{40,}={0,2}"),
)


# Values a vendor publishes as examples in its own documentation or SDK: public, and a memory
# that quotes the vendor's page keeps them readable.  (AWS's AKIAIOSFODNN7EXAMPLE and its
# secret are spared by their word EXAMPLE.)
KNOWN_PUBLIC: frozenset[str] = frozenset((
    # Microsoft's nuget.config reference, <packageSourceCredentials> example
    "33f!!lloppa", "hal+9ooo_da!sY",
    # test API keys of Google's Firebase Android SDK (firebase/firebase-android-sdk: its
    # tests and google-services.json files)
    "AIzaSyabcdefghijklmnopqrstuvwxyz1234567", "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs",
    "AIzaSyD3asb-2pEZVqMkmL6M9N6nHZRR_znhrh0", "AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A",
    "AIzaSyAdOS2zB6NCsk1pCdZ4-P6GBdi_UUPwX7c", "AIzaSyASWm6HmTMdYWpgMnjRBjxcQ9CKctWmLd4",
    "AIzaSyANUvH9H9BsUccjsu2pCmEkOPjjaXeDQgY", "AIzaSyA5_iVawFQ8ABuTZNUdcwERLJv_a_p4wtM",
    "AIzaSyA4UrcGxgwQFTfaI3no3t7Lt1sjmdnP5sQ", "AIzaSyDSb51JiIcB6OJpwwMicseKRhhrOq1cS7g",
    "AIzaSyBF2RrAIm4a0mO64EShQfqfd2AFnzAvvuU", "AIzaSyBcE-OOIbhjyR83gm4r2MFCu4MJmprNXsw",
))

# Near misses: a token that starts like a fixed-format key (its distinctive prefix) but does
# not fit the format (a character too many or too few, a letter outside the alphabet, a part
# missing) is no key of that provider: the provider issues only keys of its format, so the
# token is a test's malformed input or a shortened example, and neither the bare nor the
# format detectors mask it (under a credential name the assignment still does; the run
# stops at ``=&:@``, so it never spares what follows it).  Each entry: a needle
# (prefilter) and the shape of the family at the start of a run; the format itself is the
# TOKEN_RULES entry of the same prefix.
NEAR_MISSES: tuple[tuple[str, str], ...] = (
    ("AIza", "AIza"),  # Google API keys: AIza + 35
    ("sntryu_", "sntryu_"),  # Sentry user tokens: 64 hex
    ("sntrys_", "sntrys_"),  # Sentry org tokens: base64 JSON, "_", 43
    ("sgp_", "sgp_"),  # Sourcegraph: 40 hex, optionally after 16 hex or "local"
    ("xox", "xox[pbe]-"),  # Slack bot and user tokens: numeric parts, then the secret
    ("dapi", "dapi"),  # Databricks: 32 hex, optional -digit
    (":A", "[0-9]{3,20}:A"),  # Telegram bots: 5-16 digits, ":A", 34
    ("bedrock-api-key-", "bedrock-api-key-"),  # Bedrock short-lived: base64 of its URL
)

# Addresses that hold key-like parts but are public by their format: a token that a format
# rule or the bare detector finds wholly inside one is not masked (a credential name's
# assignment still is: a spare never outranks it).  Each entry: a needle (prefilter) and the
# address's shape.
PUBLIC_ADDRESSES: tuple[tuple[str, str], ...] = (
    # Freenet request URIs, the address a freesite is read by: SSK@ or USK@, a routing key
    # and a crypto key (43 characters of Freenet's base64 each), then the key's settings,
    # AQACAAE (AQABAAE before build 1010).  The insert URI, which holds the private key, has
    # AQECAAE there and stays masked.  Written bare or after the scheme ``freenet:``.
    ("SK@", "(?<![A-Za-z0-9])(?:freenet:)?[SU]SK@[A-Za-z0-9~-]{43},[A-Za-z0-9~-]{43},AQA[BC]AAE"
            "(?![A-Za-z0-9~-])"),
)

# Keys with no prefix whose provider fixes their shape: the value of a name that holds the
# provider's name (not a password) is that provider's key when it fits one of the shapes.
# Where the provider issues no other kind of key (``strict``), a value that does not fit is
# no key of that provider either (a near miss, as above) and the bare detector leaves it
# alone, but only under the provider's api key / access id / access key name (a word of its
# own, with no secret, token, password or webhook word): other detectors still mask.  Each
# entry: the kind, the provider's names (as the provider writes them; key names write them
# so, in lower, upper or capitalised case, or in camel case), the shapes of its keys,
# strict.  (Each name costs a search of every text written: gitleaks' keyword formats
# whose keys are UUIDs or hex beside heroku, hubspot, snyk, squarespace, sendbird, kucoin,
# and airtable's and plaid's alphanumeric ids, were measured at +5% of a 3 KB memory's
# masking for no change in any figure, and are left out.)
_UUID = "[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
NAMED_FORMATS: tuple[tuple[str, tuple[str, ...], str, bool], ...] = (
    # Cisco Meraki API keys: 40 lower-case hex
    ("cisco-meraki-api-key", ("meraki",), "[0-9a-f]{40}", True),
    # Sumo Logic: an access id (su + 12), an access key (64)
    ("sumologic-key", ("sumo",), "su[A-Za-z0-9]{12}|[A-Za-z0-9]{64}", True),
    # Asana: a client id (16 digits), a client secret (32)
    ("asana-key", ("asana",), "[0-9]{16}|[A-Za-z0-9]{32}", False),
    # Discord: an application's public key (64 hex), client id (18 digits), client secret
    # (32); bot tokens have a format of their own
    ("discord-key", ("discord",), "[0-9a-fA-F]{64}|[0-9]{18}|[A-Za-z0-9=_-]{32}", False),
    # MessageBird: an API key (25), a client id (a UUID)
    ("messagebird-key", ("MessageBird", "message_bird", "message-bird"),
     f"[A-Za-z0-9]{{25}}|{_UUID}", False),
)

