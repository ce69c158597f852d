"""Secret masking measured on gitleaks' rule samples, three ways (issue 14, item 4).

Reads the samples from the shared bench folder (never copied into the repo):

    python bench/secrets_recall.py [--data PATH] [--table] [--misses N]

1. texts: every true-positive sample text as gitleaks wrote it;
2. alone: each distinct secret alone in the sentences "the deploy key is S for now", "S" and
   "use S here";
3. fresh: secrets freshly generated from each format with a fixed seed (the format's literal
   prefix and markers kept, every other character replaced by a random one of the same class:
   digit, hex, lower, upper), put into the family's sample texts and the three sentences.
   Families are split in two by name; the detectors were tuned on the "tune" half and the
   figure reported is the "held-out" half.

A secret that gitleaks' capture cuts out of the middle of a longer token (the jwt-base64
rule's pieces) is measured in its own texts only: alone it is not that secret.

Masked: the secret no longer appears and every character after its fourth is changed (an
"x" in the secret that the mask's "x" replaces counts as changed: nothing of it is left; the
"secret" recorded by gitleaks is reduced to its value: quotes, the key of a `key: value`
pair, a webhook URL's host and a PEM armour line are not part of it).  Touched: any character of
a false-positive text changed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
from collections import defaultdict
from pathlib import Path

from memex.core.redact import redact

SHARED = Path(__file__).resolve().parents[2] / "shared"  # beside the repository
DATA = SHARED / "bench" / "secrets" / "gitleaks_samples.json"
SENTENCES = ("the deploy key is {} for now", "{}", "use {} here")
SEED = 14
FRESH_PER_SECRET = 4

# rule-name prefixes that name one provider in two words
_TWO_WORD = ("new-relic", "cisco-meraki", "microsoft-teams", "defined-networking",
             "private-key", "generic-api", "curl-auth", "kubernetes-secret", "jwt-base64")
_FAMILY_ALIAS = {"jwt-base64": "jwt", "private-key": "private-key", "generic-api": "generic"}

# Format literals kept by the fresh generator: a provider's prefix or an inner marker is part
# of the format, everything else is random.
_PREFIXES = sorted((
    "AKIA", "ASIA", "ABIA", "ACCA", "ABSKQmVkcm9ja0FQSUtleS",
    "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", "bedrock-api-key-", "AIza", "LTAI",
    "dop_v1_", "doo_v1_", "dor_v1_", "HRKU-AA", "dapi", "dt0c01.", "dp.pt.", "fm1a_", "fm1r_",
    "fm2_", "fo1_", "hvs.", "hvb.", "s.", "AQVN", "YC", "t1.", "v1.0-", "4b1d", "tk-us-",
    "sha256~", "AKCp", "cmVmd", "AGE-SECRET-KEY-1", "A3-", "ops_eyJ", "ghp_", "gho_", "ghu_",
    "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glcbt-", "glffct-", "glft-", "glimt-",
    "glagent-", "gloas-", "glptt-", "glrt-", "glsoat-", "GR1348941", "_gitlab_session=",
    "npm_", "pypi-AgEIcHlwaS5vcmc", "rubygems_", "CLOJARS_", "pul-", "pnu_", "rdme_", "ico-",
    "API-", "sgp_", "pat.", "sat.", "eyJrIjoi", "glc_", "glsa_", "ATATT3", "sntrys_eyJ",
    "sntryu_", "tfp_", "lin_api_", "ntn_", "PMAK-", "sk-ant-api03-", "sk-ant-admin01-",
    "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-", "hf_", "api_org_", "pplx-", "xoxb-", "xoxp-",
    "xoxe.xoxb-", "xoxe.xoxp-", "xoxe-", "xapp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-",
    "hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/",
    "http://", "https://", "SK", "SG.", "xkeysib-", "key-", "pubkey-", "EAAC", "EAAM",
    "AAAAAAAAAAAAAAAAAAAAA", "rk_live_", "rk_test_", "rk_prod_", "sk_live_", "sk_test_",
    "EAAA", "sq0atp-", "sq0csp-", "shpat_", "shpca_", "shppa_", "shpss_", "shippo_live_",
    "shippo_test_", "FLWPUBK_TEST-", "FLWSECK_TEST-", "live_", "test_pub_", "test_",
    "duffel_test_", "duffel_live_", "pscale_pw_", "pscale_tkn_", "pscale_oauth_", "fio-u-",
    "p8e-", "pat", "sgp_local_", "su", "sc_", "b_", "dnkey-", "EZAK", "EZTK", "s-s4t2ud-",
    "s-s4t2af-", "pk.",
    "NRAK-", "NRJS-", "NRII-", "sm_aat_", "sm_pat_", "sm_sat_", "ZXlK", "eyJ", "-----BEGIN",
    "sqp_", "squ_", "sqa_", "tfc_", "access-sandbox-", "access-development-",
    "access-production-",
), key=len, reverse=True)
_SUFFIXES = ("AA", "-X")  # anthropic keys end in AA, flutterwave keys in -X
_MARKERS = ("T3BlbkFJ", ".atlasv1.", ".acc_", ":A", "Q~", "-us", ".eyJ", "eyJ",
            "PRIVATE KEY", "-----END", "webhookb2/", "@", "IncomingWebhook/")


def family_of(rule: str) -> str:
    for two in _TWO_WORD:
        if rule.startswith(two):
            return _FAMILY_ALIAS.get(two, two)
    return rule.split("-")[0]


def core(secret: str) -> str:
    """The value gitleaks' capture holds, without quotes, key, webhook host or PEM armour."""
    s = secret.strip().strip("\"'`&<\\").strip()
    if s.startswith("-----BEGIN"):
        s = s.split("\n", 1)[1] if "\n" in s else s
        return s.split("\n-----END")[0].strip()
    for marker in ("/services/", "/workflows/", "/triggers/"):
        if "hooks.slack.com" in s and marker in s:
            return s.split(marker, 1)[1]
    m = re.match(r"^[\w.-]+:\s*[|>]?\s*[\"']?(?P<v>\S[^\n]*?)[\"']?$", s.replace("\n", " "))
    if m and " " not in m.group("v") and not re.match(r"^[0-9a-f]{8}:[0-9a-f]{8}$", s) \
            and not s.startswith(("http", "sntrys_")) and "@" not in s and s.count(":") == 1 \
            and re.match(r"^[A-Za-z._-][\w.-]*:\s", s):
        return m.group("v").strip("\"'")
    return s.strip("\"'")


def is_masked(text: str, out: str, secret: str) -> bool:
    if secret in out:
        return False
    if len(out) != len(text):
        return True
    start = text.find(secret)
    while start != -1:
        for i in range(start + 4, start + len(secret)):
            if out[i] == text[i] and out[i] != "x" and not text[i].isspace():
                return False
        start = text.find(secret, start + 1)
    return True


def _fragment(text: str, secret: str) -> bool:
    """Does gitleaks' capture cut ``secret`` out of the middle of a longer token?"""
    i = text.find(secret)
    j = i + len(secret)
    return (i > 0 and text[i - 1].isalnum()) or (j < len(text) and text[j].isalnum())


def _fresh_char(c: str, hex_lower: bool, hex_upper: bool, rng: random.Random) -> str:
    if c.isdigit():
        return rng.choice(string.digits)
    if c.islower() and c.isascii():
        return rng.choice("abcdef" if hex_lower else string.ascii_lowercase)
    if c.isupper() and c.isascii():
        return rng.choice("ABCDEF" if hex_upper else string.ascii_uppercase)
    return c


def fresh(secret: str, rng: random.Random) -> str:
    """A new secret of the same format: literal prefix and markers kept, the rest random."""
    keep = bytearray(len(secret))
    for prefix in _PREFIXES:
        if secret.startswith(prefix):
            keep[: len(prefix)] = b"\x01" * len(prefix)
            break
    for marker in _MARKERS:
        for m in re.finditer(re.escape(marker), secret):
            keep[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    for suffix in _SUFFIXES:
        if secret.endswith(suffix) and len(secret) > 40:
            keep[len(secret) - len(suffix):] = b"\x01" * len(suffix)
    out = []
    for seg in re.finditer(r"[A-Za-z0-9]+|[^A-Za-z0-9]+", secret):
        text = seg.group()
        letters = [c for i, c in enumerate(text, seg.start()) if not keep[i] and c.isalpha()]
        hexadecimal = bool(letters) and len(text) >= 8 and all(c in "abcdefABCDEF"
                                                               for c in letters)
        out.extend(c if keep[i] else _fresh_char(c, hexadecimal, hexadecimal, rng)
                   for i, c in enumerate(text, seg.start()))
    return "".join(out)


def measure(data: dict[str, object]) -> dict[str, dict[str, list[int]]]:
    """family -> measure -> [masked, total]"""
    rng = random.Random(SEED)
    stats: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    rules = data["rules"]
    assert isinstance(rules, list)
    for rule in rules:
        fam = family_of(rule["rule"])
        distinct: dict[str, list[str]] = defaultdict(list)
        for tp in rule["tps"]:
            secret = core(tp["secret"])
            if secret not in tp["text"]:
                secret = tp["secret"]
            out = redact(tp["text"]).text
            row = stats[fam]["texts"]
            row[0] += is_masked(tp["text"], out, secret)
            row[1] += 1
            distinct[secret].append(tp["text"])
        for secret, texts in distinct.items():
            if all(_fragment(text, secret) for text in texts):
                continue  # a piece of a longer token (jwt-base64): measured in its texts only
            for sentence in SENTENCES:
                text = sentence.format(secret)
                row = stats[fam]["alone"]
                row[0] += is_masked(text, redact(text).text, secret)
                row[1] += 1
            for _ in range(FRESH_PER_SECRET):
                new = fresh(secret, rng)
                for text in [*dict.fromkeys(texts), *(s.format(secret) for s in SENTENCES)]:
                    text = text.replace(secret, new)
                    row = stats[fam]["fresh"]
                    row[0] += is_masked(text, redact(text).text, new)
                    row[1] += 1
        for fp in rule["fps"]:
            row = stats[fam]["fp"]
            row[0] += redact(fp).text != fp
            row[1] += 1
    return stats


def held_out(family: str) -> bool:
    return sorted_families.index(family) % 2 == 1


sorted_families: list[str] = []


def pct(row: list[int]) -> str:
    return f"{100 * row[0] / row[1]:.1f}" if row[1] else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--table", action="store_true", help="print the per-family table")
    parser.add_argument("--misses", type=int, default=0, help="print N missed texts")
    args = parser.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    stats = measure(data)
    sorted_families.extend(sorted(stats))
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for fam, rows in stats.items():
        for name, row in rows.items():
            key = name if name != "fresh" else ("fresh-held-out" if held_out(fam) else
                                                "fresh-tune")
            totals[key][0] += row[0]
            totals[key][1] += row[1]
    print(f"families: {len(stats)}")
    tp_texts = {tp["text"] for rule in data["rules"] for tp in rule["tps"]}
    fps = [fp for rule in data["rules"] for fp in rule["fps"]]
    shared = sum(fp in tp_texts for fp in fps)
    own = [fp for fp in fps if fp not in tp_texts]
    own_touched = sum(redact(fp).text != fp for fp in own)
    for name in ("texts", "alone", "fresh-tune", "fresh-held-out", "fp"):
        row = totals[name]
        label = "false positives touched" if name == "fp" else f"{name} masked"
        print(f"{label:28} {row[0]:5}/{row[1]:5}  {pct(row):>6}%")
    print(f"  of the false positives, {shared} are word for word another rule's true-positive "
          "text (masking that text touches them)")
    print(f"{'  the other false positives':28} {own_touched:5}/{len(own):5}  "
          f"{pct([own_touched, len(own)]):>6}%")
    for name in ("texts", "alone", "fresh"):
        low = [f"{f} {pct(r[name])}" for f, r in sorted(stats.items())
               if r[name][1] and r[name][0] / r[name][1] < 0.9]
        print(f"families below 90% ({name}): {len(low)}: {', '.join(low)}")
    if args.table:
        print("\n| family | texts | texts masked % | alone masked % | fresh masked % | "
              "FP texts | FP touched |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for fam in sorted(stats):
            r = stats[fam]
            tag = " (held out)" if held_out(fam) else ""
            print(f"| {fam}{tag} | {r['texts'][1]} | {pct(r['texts'])} | {pct(r['alone'])} | "
                  f"{pct(r['fresh'])} | {r['fp'][1]} | {r['fp'][0]} |")
    if args.misses:
        _print_misses(data, args.misses)


def _print_misses(data: dict[str, object], limit: int) -> None:
    rules = data["rules"]
    assert isinstance(rules, list)
    shown = 0
    for rule in rules:
        for tp in rule["tps"]:
            secret = core(tp["secret"])
            if secret not in tp["text"]:
                secret = tp["secret"]
            if not is_masked(tp["text"], redact(tp["text"]).text, secret) and shown < limit:
                print("MISS", rule["rule"], repr(tp["text"][:160]), "||", repr(secret[:60]))
                shown += 1
        for fp in rule["fps"]:
            out = redact(fp).text
            if out != fp and shown < limit:
                print("FP  ", rule["rule"], repr(fp[:160]), "->", repr(out[:160]))
                shown += 1


if __name__ == "__main__":
    main()
