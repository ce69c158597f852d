"""Contradiction heuristics, `conflicts [--check] [--json]`, and the notice on capture."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memex.core import model
from memex.core.ulid import new_ulid
from memex.workflows import conflicts
from tests.helpers import invoke, invoke_json

ROOT = Path(__file__).resolve().parent.parent


def mem(body: str, tags: tuple[str, ...] = ("t",), paths: tuple[str, ...] = (),
        **kw: object) -> model.Memory:
    return model.Memory(id=new_ulid(), scope="project", body=body, tags=list(tags),
                        paths=list(paths), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("a,b,rule", [
    ("Never push directly to main.", "Push hotfixes directly to main.", "negation"),
    ("Enable strict mode in tsconfig.", "Disable strict mode in tsconfig.", "antonym"),
    ("CI uses Node 18.", "CI uses Node 20.", "value"),
    ("We use pnpm, not npm.", "Install packages with npm.", "alternative"),
])
def test_rules_fire_and_explain(a: str, b: str, rule: str) -> None:
    found = conflicts.find([mem(a), mem(b)])
    assert len(found) == 1
    assert found[0].reasons[0].rule == rule and found[0].reasons[0].detail


@pytest.mark.parametrize("a,b", [
    ("We use pnpm.", "Run pnpm install --frozen-lockfile in CI."),
    ("CI runs Node 18 and 20.", "Local development uses Node 20."),
    ("Never commit secrets.", "Secrets come from Vault."),
])
def test_compatible_pairs(a: str, b: str) -> None:
    assert conflicts.find([mem(a), mem(b)]) == []


def test_gate_needs_a_shared_tag_or_overlapping_paths() -> None:
    a, b = "Enable caching.", "Disable caching."
    assert conflicts.find([mem(a, ("x",)), mem(b, ("y",))]) == []
    assert conflicts.find([mem(a, (), ("src/api/**",)), mem(b, (), ("src/api/cache.py",))])
    assert not conflicts.find([mem(a, (), ("src/api/**",)), mem(b, (), ("docs/**",))])


def test_retired_and_linked_pairs() -> None:
    a, b = mem("Enable caching."), mem("Disable caching.")
    assert conflicts.find([a, b.copy(status="archived")]) == []
    assert conflicts.find([a.copy(related=[b.id]), b]) == []
    acknowledged = conflicts.find([a.copy(contradicts=[b.id]), b])
    assert len(acknowledged) == 1 and acknowledged[0].acknowledged


def test_labelled_pairs_precision_and_recall() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "conflicts.py")],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    line = proc.stdout.strip().splitlines()[-1]
    precision = float(line.split("precision ")[1].split()[0])
    recall = float(line.split("recall ")[1].split()[0])
    assert precision >= 0.9 and recall >= 0.8, line
    rows = [json.loads(x) for x in (ROOT / "bench" / "conflict_pairs.jsonl").read_text()
            .splitlines()]
    assert len(rows) >= 40 and {r["label"] for r in rows} == {"contradicts", "compatible"}


def test_cli_conflicts_check_and_capture_notice(repo: Path) -> None:
    invoke_json("capture", "--tag", "flags", "Enable the checkout flag in staging")
    assert invoke("conflicts", "--check").exit_code == 0
    result = invoke("capture", "--tag", "flags", "Disable the checkout flag in staging")
    assert result.exit_code == 0
    assert "may contradict" in result.stderr and "Both stay active" in result.stderr
    listed = invoke_json("conflicts")
    assert len(listed) == 1 and listed[0]["reasons"][0]["rule"] == "antonym"
    assert invoke("conflicts", "--check").exit_code == 1
    statuses = {m["status"] for m in invoke_json("list")}
    assert statuses == {"active"}  # both stay active
    assert invoke("link", listed[0]["a"], "contradicts", listed[0]["b"]).exit_code == 0
    after = invoke_json("conflicts")
    assert after[0]["acknowledged"] is True
    assert invoke("conflicts", "--check").exit_code == 0


def test_capture_json_lists_possible_conflicts(repo: Path) -> None:
    first = invoke_json("capture", "--tag", "node", "Production runs Node 18")
    second = invoke_json("capture", "--tag", "node", "Production runs Node 22")
    assert second["possible_conflicts"][0]["id"] == first["id"]
