"""Chinese, Japanese and Korean text: found by any two-character piece, by mixed
code/CJK queries, without question-word noise; each script finds its own text."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import invoke_json


def capture(text: str) -> str:
    return str(invoke_json("capture", text, "--scope", "personal")["id"])


def ids(query: str, *args: str) -> list[str]:
    return [h["id"] for h in invoke_json("search", query, *args)]


def test_any_two_character_piece_finds_the_text(repo: Path) -> None:
    mid = capture("我们用pnpm的依赖管理很严格")
    for piece in ("依赖", "管理", "依赖管理", "严格", "赖管"):
        assert ids(piece) == [mid], piece
    assert ids("香蕉") == []


def test_mixed_code_and_cjk_queries(repo: Path) -> None:
    deps = capture("pnpm 依赖 安装很快")
    lint = capture("提交前用 ruff 检查代码")
    other = capture("npm 很慢")
    assert ids("pnpm 依赖")[0] == deps
    assert ids("用 ruff 检查")[0] == lint
    assert ids("ruff检查")[0] == lint
    assert other not in ids("pnpm 依赖", "--limit", "1")


def test_question_words_do_not_drag_in_noise(repo: Path) -> None:
    db = capture("数据库连接池的大小是二十")
    noise = capture("什么都可以试试")
    found = ids("数据库连接池是什么？")
    assert found == [db]
    assert noise not in found
    # positive control: the noisy memory is really there and findable by its words
    assert ids("都可以") == [noise]
    assert ids("为什么数据库很慢")[0] == db


def test_traditional_and_simplified_each_find_their_own(repo: Path) -> None:
    simplified = capture("数据库备份每天一次")
    traditional = capture("資料庫備份每天一次")
    assert ids("数据库")[0] == simplified
    assert ids("資料庫")[0] == traditional
    assert ids("資料庫備份是什麼")[0] == traditional


def test_japanese_and_korean(repo: Path) -> None:
    ja = capture("デプロイの前にテストを実行する")
    ko = capture("배포 전에 테스트를 실행합니다")
    assert ids("テスト実行")[0] == ja
    assert ids("테스트")[0] == ko
    assert ids("デプロイ")[0] == ja


def test_cjk_in_titles_and_tags(repo: Path) -> None:
    tagged = str(invoke_json("capture", "部署流程说明", "--tag", "运维", "--scope",
                             "personal")["id"])
    assert ids("运维") == [tagged]
