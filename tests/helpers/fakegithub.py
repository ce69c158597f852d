"""A loopback stand-in for GitHub's REST API (127.0.0.1, port 0, a thread).

It answers with the JSON shapes GitHub documents for `GET /repos/{o}/{r}/pulls` and
`GET /repos/{o}/{r}/pulls/{n}/reviews` (fields abridged, names and types real).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.helpers import fakehosts
from tests.helpers.fakehosts import FakeHost

OWNER, REPO = "Acme", "App"


def user(login: str) -> dict[str, Any]:
    return {"login": login, "id": abs(hash(login)) % 10**7, "node_id": "MDQ6VXNlcjE=",
            "avatar_url": f"https://github.com/images/{login}.gif", "type": "User",
            "site_admin": False, "url": f"https://api.github.com/users/{login}",
            "html_url": f"https://github.com/{login}"}


HEAD_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"


def pull(number: int, branch: str, state: str = "open", merged: bool = False,
         updated: str = "2026-11-30T10:00:00Z", sha: str = HEAD_SHA) -> dict[str, Any]:
    base_url = f"https://api.github.com/repos/{OWNER}/{REPO}"
    repo = {"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": REPO,
            "full_name": f"{OWNER}/{REPO}", "owner": user(OWNER), "private": False,
            "html_url": f"https://github.com/{OWNER}/{REPO}", "default_branch": "main"}
    return {
        "url": f"{base_url}/pulls/{number}", "id": 1000 + number,
        "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==",
        "html_url": f"https://github.com/{OWNER}/{REPO}/pull/{number}",
        "diff_url": f"https://github.com/{OWNER}/{REPO}/pull/{number}.diff",
        "issue_url": f"{base_url}/issues/{number}", "number": number, "state": state,
        "locked": False, "title": "Memories for review", "user": user("alice"),
        "body": "Submitted with git memex", "labels": [], "milestone": None,
        "active_lock_reason": None, "created_at": "2026-11-29T09:00:00Z",
        "updated_at": updated, "closed_at": updated if state == "closed" else None,
        "merged_at": updated if merged else None,
        "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6" if merged else None,
        "assignee": None, "assignees": [], "requested_reviewers": [], "requested_teams": [],
        "head": {"label": f"{OWNER}:{branch}", "ref": branch, "sha": sha,
                 "user": user(OWNER), "repo": repo},
        "base": {"label": f"{OWNER}:main", "ref": "main",
                 "sha": "9049f1265b7d61be4a8904a9a27120d2064dab3b", "user": user(OWNER),
                 "repo": repo},
        "_links": {"self": {"href": f"{base_url}/pulls/{number}"}},
        "author_association": "MEMBER", "auto_merge": None, "draft": False,
    }


def review(login: str, state: str, at: str = "2026-11-30T11:00:00Z",
           commit: str = "6dcb09b5b57875f334f61aebed695e2e4193db5e") -> dict[str, Any]:
    return {"id": 80, "node_id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=", "user": user(login),
            "body": "Looks right to me" if state == "APPROVED" else "Please fix",
            "state": state, "html_url": "https://github.com/Acme/App/pull/12#pullrequestreview-80",
            "pull_request_url": "https://api.github.com/repos/Acme/App/pulls/12",
            "_links": {"html": {"href": "https://github.com/Acme/App/pull/12"},
                       "pull_request": {"href": "https://api.github.com/repos/Acme/App/pulls/12"}},
            "submitted_at": at, "commit_id": commit, "author_association": "COLLABORATOR"}


@dataclass
class FakeGitHub(FakeHost):
    not_found: Any = field(default_factory=lambda: {
        "message": "Not Found", "documentation_url": "https://docs.github.com/rest"})

    def pulls(self, items: list[dict[str, Any]], reviews: dict[int, list[Any]] | None = None
              ) -> None:
        self.answer(f"/repos/{OWNER}/{REPO}/pulls", items)
        for number, entries in (reviews or {}).items():
            self.answer(f"/repos/{OWNER}/{REPO}/pulls/{number}/reviews", entries)


@contextmanager
def serve() -> Iterator[FakeGitHub]:
    with fakehosts.serve(FakeGitHub()) as fake:
        yield fake
