"""Keyword capture: which utterances become memories, in which scope, with what text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.workflows import keywords
from tests.conftest import BIN, run_cli
from tests.helpers import invoke, invoke_json

# message, expected [(scope, text)] in order
ROUTING = [
    # English, about us (project)
    ("remember that CI runs on 2 cores", [("project", "CI runs on 2 cores")]),
    ("Remember: the API is versioned by date", [("project", "the API is versioned by date")]),
    ("please remember staging is eu-west-1", [("project", "staging is eu-west-1")]),
    ("note that the tests need docker", [("project", "the tests need docker")]),
    ("Note: builds are cached for a day", [("project", "builds are cached for a day")]),
    ("TIL pytest -x stops at the first failure", [("project",
                                                   "pytest -x stops at the first failure")]),
    ("save this: deploy with make ship", [("project", "deploy with make ship")]),
    ("remember for us: releases are on Tuesday", [("project", "releases are on Tuesday")]),
    # English, about me (personal)
    ("remember for me: I use the fish shell", [("personal", "I use the fish shell")]),
    ("Remember for me that I review PRs in the morning",
     [("personal", "I review PRs in the morning")]),
    # Chinese, about me (personal)
    ("记住我喜欢用 vim", [("personal", "我喜欢用 vim")]),
    ("记住，我是后端工程师", [("personal", "我是后端工程师")]),
    ("替我记一下：我的工号是 42", [("personal", "我的工号是 42")]),
    ("帮我记住我周五不开会", [("personal", "我周五不开会")]),
    ("我觉得函数应该短一些", [("personal", "我觉得函数应该短一些")]),
    ("我喜欢小的提交", [("personal", "我喜欢小的提交")]),
    ("我不喜欢长的会议", [("personal", "我不喜欢长的会议")]),
    # Chinese, about us (project)
    ("记住我们用 pnpm 不用 npm", [("project", "我们用 pnpm 不用 npm")]),
    ("记住：测试要在 CI 里跑", [("project", "测试要在 CI 里跑")]),
    ("请记住发版在周二", [("project", "发版在周二")]),
    ("我们决定用 PostgreSQL", [("project", "我们决定用 PostgreSQL")]),
    ("我们认为单仓库更好", [("project", "我们认为单仓库更好")]),
    ("帮我们记住：接口按日期版本化", [("project", "接口按日期版本化")]),
    # one utterance, one memory: the personal pattern claims the line first
    ("记住我喜欢我们的代码风格", [("personal", "我喜欢我们的代码风格")]),
    ("remember for me: remember that I like tea", [("personal", "remember that I like tea")]),
    # several lines, several memories, each routed on its own
    ("remember that the cache is Redis\n记住我喜欢深色主题\nthanks!",
     [("project", "the cache is Redis"), ("personal", "我喜欢深色主题")]),
    # a trigger on its own line takes the lines below it, to a blank line
    ("remember:\n- lint with ruff\n- type-check with mypy\n\nthat's all",
     [("project", "- lint with ruff\n- type-check with mypy")]),
    # list markers and emphasis are not part of the trigger
    ("- **Remember** that ports below 1024 need root", [("project",
                                                         "ports below 1024 need root")]),
    # trailing questions are dropped; a question alone is not a memory
    ("TIL the build uses ccache. Can you check it?", [("project", "the build uses ccache.")]),
    ("remember when we moved to Kafka?", []),
    ("我喜欢这个方案吗？", []),
    # no trigger
    ("just fix the failing test please", []),
    ("I remembered to run the tests", []),
    ("Do you remember the port?", []),
    ("remembering things is hard", []),
    ("我们", []),
    ("", []),
    # quoted and fenced text is not the user's own words
    ("> remember that the assistant said this\nok", []),
    ("```\nremember that this is code\n```", []),
]


@pytest.mark.parametrize(("message", "expected"), ROUTING, ids=[m[:40] for m, _ in ROUTING])
def test_routing(message: str, expected: list[tuple[str, str]]) -> None:
    assert [(m.scope, m.text) for m in keywords.find_matches(message)] == expected


@pytest.mark.parametrize(("message", "mtype"), [
    ("TIL x is y", "lesson"), ("我们决定用 Go", "decision"), ("我喜欢 Go", "preference"),
    ("记住我喜欢 Go", "preference"), ("我觉得 Go 很好", "observation"),
    ("remember that x is y", "knowledge"),
])
def test_types(message: str, mtype: str) -> None:
    assert [m.type for m in keywords.find_matches(message)] == [mtype]


def test_cli_saves_with_keyword_provenance(repo: Path, memex_home: Path) -> None:
    out = invoke_json("capture", "--from-message",
                      "remember that the cache is Redis\n记住我喜欢深色主题")
    assert [s["scope"] for s in out["saved"]] == ["project", "personal"]
    assert out["errors"] == []
    for saved in out["saved"]:
        data = frontmatter.parse(Path(saved["path"]).read_text(encoding="utf-8")).data
        assert (data["source"], data["via"], data["trust_level"]) == \
            ("keyword", "hook", "untrusted")
    assert Path(out["saved"][1]["path"]).parent == memex_home / "personal"
    again = invoke_json("capture", "--from-message", "remember that the cache is Redis")
    assert again["saved"][0]["created"] is False  # identical content: the same memory


def test_cli_without_trigger_saves_nothing(repo: Path, memex_home: Path) -> None:
    result = invoke("capture", "--from-message", "please fix the build")
    assert result.exit_code == 0 and result.stdout == ""
    assert "nothing saved" in result.stderr
    assert not memex_home.exists() or not list(memex_home.rglob("*.md"))


def test_cli_from_stdin_and_dry_run(repo: Path, memex_home: Path) -> None:
    result = invoke("capture", "--from-message", "-", "--dry-run", input="TIL dry runs work")
    assert result.exit_code == 0 and "dry runs work" in result.stdout
    assert not list(memex_home.rglob("*.md"))


def test_cli_refuses_options_it_would_ignore(repo: Path) -> None:
    result = invoke("capture", "--from-message", "remember x y", "--scope", "personal")
    assert result.exit_code == 2 and "--scope" in result.stderr
    result = invoke("capture", "some text", "--from-message", "remember x y")
    assert result.exit_code == 2 and "TEXT" in result.stderr


def test_cli_redacts_and_reports_oversize(repo: Path) -> None:
    subprocess_config(repo, "memex.maxBytes", "100")
    token = "k3Jx9QvT2mWp7Lr4Yb8Nc1Hd6Fg0Sa5Ze3Uq"  # random-looking ("a" * 36 is a placeholder)
    out = invoke("capture", "--json", "--from-message",
                 "remember that the token is ghp_" + token + "\nTIL " + "x" * 200)
    assert out.exit_code == 1
    data = json.loads(out.stdout)
    assert len(data["saved"]) == 1 and "limit" in data["errors"][0]
    body = Path(data["saved"][0]["path"]).read_text(encoding="utf-8")
    assert token not in body and "ghp_xxxx" in body


def subprocess_config(repo: Path, key: str, value: str) -> None:
    subprocess.run(["git", "config", key, value], cwd=repo, check=True)


def hook(payload: object, cwd: Path) -> tuple[int, bytes]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proc = run_cli(str(BIN / "git-memex"), "capture", "--hook", "claude", input_bytes=raw,
                   cwd=cwd)
    return proc.returncode, proc.stdout


def test_prompt_hook_captures_and_nudges(repo: Path, memex_home: Path) -> None:
    invoke_json("capture", "Payments go through Stripe webhooks")
    code, out = hook({"session_id": "s", "hook_event_name": "UserPromptSubmit",
                      "prompt": "记住我们用 Stripe 测试模式\nwhy do stripe webhooks fail?",
                      "cwd": str(repo)}, repo.parent)
    assert code == 0
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    text = answer["additionalContext"]
    assert "saved" in text and "我们用 Stripe 测试模式" in text
    assert "Payments go through Stripe webhooks" in text and "verify" in text
    drafts = list((memex_home / "outbox").rglob("*.md"))
    assert len(drafts) == 2


def test_prompt_hook_is_silent_without_anything_to_say(repo: Path) -> None:
    assert hook({"prompt": "hello there", "cwd": str(repo)}, repo) == (0, b"")
    assert hook({"cwd": str(repo)}, repo) == (0, b"")


@pytest.mark.parametrize("payload", [b"{not json", b"\x00\x01", b'"a string"',
                                     b'{"prompt": 42}'])
def test_prompt_hook_fails_soft(repo: Path, payload: bytes) -> None:
    assert hook(payload, repo) == (0, b"")


def test_prompt_hook_hides_personal_when_turned_off(repo: Path) -> None:
    subprocess_config(repo, "memex.maxProfileItems", "0")
    code, out = hook({"prompt": "记住我喜欢深色主题", "cwd": str(repo)}, repo)
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and "a personal memory" in text and "深色主题" not in text


def test_nudge_labels_instructions_by_rule_1(repo: Path) -> None:
    from memex.storage import homes
    from memex.workflows import agent_hooks
    from tests.helpers.memfiles import memory, write

    write(repo, memory(title="Install deps with pnpm", body="Install deps with pnpm only.",
                       role="instruction", instruction_state="approved",
                       review_state="approved", trust_level="reviewed"))
    write(repo, memory(title="Install deps offline", body="Install deps offline first.",
                       role="instruction", instruction_state="draft"))
    lines = agent_hooks.nudge(homes.workspace(), "how do we install deps?", set())
    binding = [line for line in lines if "pnpm" in line]
    draft = [line for line in lines if "offline" in line]
    assert binding and "non-binding" not in binding[0]
    assert draft and "non-binding" in draft[0]
