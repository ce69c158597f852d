"""What the secret masking costs ordinary memory text (issue 14, item 4).

The masking must change secrets and nothing else.  This bench runs :func:`redact` over text
that holds no secret and counts the texts it touches:

    python bench/redact_normal.py [--shared DIR] [--examples N] [--source NAME]

Sources (one text each):

* docs: every paragraph of this repository's Markdown (README, CHANGELOG, docs/);
* comments: every comment and docstring of the package's code (``memex/``);
* code: the package's code in chunks of 30 lines (what a snippet in a memory looks like);
* git-log: every commit of this repository as ``git log`` prints it (hash, author, message),
  the text that cites commit hashes;
* coding-set: the memories of ``bench/coding_set.json`` (title and body);
* open-memex: the memory files of the shared open-memex store (front matter included: ULIDs,
  repo ids, hashes);
* locomo: every dialog turn of LoCoMo (conversational English);
* cmrc: every paragraph of CMRC 2018 (Simplified Chinese);
* stdlib: the Python standard library's own code (tests left out) in chunks of 30 lines:
  much more code than this repository, identifiers of every style, hex and base64 literals.

The shared data is read from ``../shared/bench`` beside the repository (``--shared``),
never copied into it.  A text is touched when any character changed; the report gives the
count per source and per finding kind, and with ``--examples`` the touched spans.
``<private>`` blocks are redacted by design and not counted as touches.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sysconfig
import tokenize
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from memex.core.redact import redact

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def _paragraphs(text: str) -> Iterator[str]:
    for para in text.split("\n\n"):
        if para.strip():
            yield para


def docs() -> Iterator[str]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for path in files:
        if path.is_file():
            yield from _paragraphs(path.read_text(encoding="utf-8"))


def _python_files() -> list[Path]:
    return sorted((ROOT / "memex").rglob("*.py"))


def comments() -> Iterator[str]:
    for path in _python_files():
        source = path.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            docstring = tok.type == tokenize.STRING and tok.string.lstrip("rbuRBU")[:3] in (
                '"""', "\'\'\'")
            if tok.type == tokenize.COMMENT or docstring:
                yield tok.string


def code() -> Iterator[str]:
    for path in _python_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for i in range(0, len(lines), 30):
            yield "\n".join(lines[i : i + 30])


def git_log() -> Iterator[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "log", "--no-color", "-z"],
                         capture_output=True, text=True, check=False).stdout
    yield from (c for c in out.split("\0") if c.strip())


def coding_set() -> Iterator[str]:
    data = json.loads((ROOT / "bench" / "coding_set.json").read_text(encoding="utf-8"))
    for memory in data["memories"]:
        yield f"{memory['title']}\n\n{memory['body']}"


def open_memex(shared: Path) -> Iterator[str]:
    for path in sorted((shared / "bench" / "open-memex-store").rglob("*")):
        if path.is_file() and path.suffix in (".md", ".jsonl", ".json"):
            yield path.read_text(encoding="utf-8")


def locomo(shared: Path) -> Iterator[str]:
    data = json.loads((shared / "bench" / "locomo10.json").read_text(encoding="utf-8"))
    for sample in data:
        conversation = sample["conversation"]
        for key, session in conversation.items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    yield turn["text"]


def cmrc(shared: Path) -> Iterator[str]:
    data = json.loads((shared / "bench" / "cmrc2018_trial.squad.json").read_text(
        encoding="utf-8"))
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            yield paragraph["context"]


def stdlib() -> Iterator[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        parts = set(path.relative_to(root).parts)
        if parts & {"test", "tests", "site-packages", "idle_test"} or path.name.startswith(
                "test_"):
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for i in range(0, len(lines), 30):
            yield "\n".join(lines[i : i + 30])


def sources(shared: Path) -> dict[str, list[str]]:
    return {
        "docs": list(docs()),
        "comments": list(comments()),
        "code": list(code()),
        "git-log": list(git_log()),
        "coding-set": list(coding_set()),
        "open-memex": list(open_memex(shared)),
        "locomo": list(locomo(shared)),
        "cmrc": list(cmrc(shared)),
        "stdlib": list(stdlib()),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--examples", type=int, default=0, help="print N touched spans")
    parser.add_argument("--source", help="only this source")
    args = parser.parse_args()
    total_texts = total_touched = 0
    kinds: Counter[str] = Counter()
    examples: list[str] = []
    print(f"{'source':12} {'texts':>7} {'touched':>8} {'%':>7}")
    for name, texts in sources(args.shared).items():
        if args.source and name != args.source:
            continue
        touched = 0
        for text in texts:
            findings = [f for f in redact(text).findings if f.kind != "private-block"]
            if not findings:
                continue
            touched += 1
            for f in findings:
                kinds[f.kind] += 1
                if len(examples) < args.examples:
                    examples.append(f"{name:10} {f.kind:22} {text[f.start : f.end][:90]!r}")
        total_texts += len(texts)
        total_touched += touched
        print(f"{name:12} {len(texts):7} {touched:8} {100 * touched / max(len(texts), 1):6.2f}%")
    print(f"{'all':12} {total_texts:7} {total_touched:8} "
          f"{100 * total_touched / max(total_texts, 1):6.2f}%")
    print("findings by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    for line in examples:
        print(line)


if __name__ == "__main__":
    main()
