"""Loopback stand-ins for GitLab's (v4) and Gitea's (v1) REST APIs, and a comment
thread any host can hold (127.0.0.1, port 0, a thread).

The JSON is written by hand after the hosts' API references: GitLab's merge requests,
merge request approvals, reviewers and notes; Gitea's (and Forgejo's) pulls, pull
reviews and issue comments; GitHub's issue comments. Fields are abridged; names,
nesting and types are the documented ones.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

HEAD_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
BASE_SHA = "9049f1265b7d61be4a8904a9a27120d2064dab3b"
T_CREATED = "2026-11-29T09:00:00Z"
T_UPDATED = "2026-11-30T10:00:00Z"


@dataclass
class Answer:
    status: int = 200
    body: Any = None  # JSON-encoded unless bytes
    delay: float = 0.0


Handler = Callable[[Any], Answer]


@dataclass
class FakeHost:
    routes: dict[tuple[str, str], Answer | Handler] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, list[str]], dict[str, str]]] = field(
        default_factory=list)
    calls: list[tuple[str, str, Any]] = field(default_factory=list)  # method, path, body
    url: str = ""
    not_found: Any = field(default_factory=lambda: {"message": "Not Found"})

    def answer(self, path: str, body: Any = None, status: int = 200, delay: float = 0.0,
               method: str = "GET") -> None:
        self.routes[(method, path)] = Answer(status, body, delay)

    def handle(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method, path)] = handler


@contextmanager
def serve(fake: FakeHost) -> Iterator[FakeHost]:
    class Server(BaseHTTPRequestHandler):
        def _any(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            fake.requests.append((parts.path, parse_qs(parts.query), dict(self.headers)))
            fake.calls.append((method, parts.path, body))
            route = fake.routes.get((method, parts.path))
            if route is None:
                answer = Answer(404, fake.not_found)
            elif isinstance(route, Answer):
                answer = route
            else:
                answer = route(body)
            if answer.delay:
                time.sleep(answer.delay)
            data = answer.body if isinstance(answer.body, bytes) else json.dumps(
                answer.body).encode()
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's names)
            self._any("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._any("POST")

        def do_PATCH(self) -> None:  # noqa: N802
            self._any("PATCH")

        def do_PUT(self) -> None:  # noqa: N802
            self._any("PUT")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Server)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


class Thread:
    """A PR's comments: listed by GET, added by POST, edited by PATCH or PUT on
    `<edit_prefix>/<id>`; `make(id, body)` shapes one the way the host does."""

    def __init__(self, fake: FakeHost, list_path: str, edit_prefix: str, edit_method: str,
                 make: Callable[[int, str], dict[str, Any]]) -> None:
        self.items: list[dict[str, Any]] = []
        self.make = make
        self.fake = fake
        self.edit_prefix = edit_prefix
        self.edit_method = edit_method
        fake.handle("GET", list_path, lambda _: Answer(200, list(self.items)))
        fake.handle("POST", list_path, self._create)

    def _create(self, body: Any) -> Answer:
        item = self.make(100 + len(self.items), str(body["body"]))
        self.items.append(item)
        self.fake.handle(self.edit_method, f"{self.edit_prefix}/{item['id']}",
                         lambda b, item=item: self._edit(item, b))
        return Answer(201, item)

    def _edit(self, item: dict[str, Any], body: Any) -> Answer:
        item["body"] = str(body["body"])
        item["updated_at"] = "2026-12-01T12:00:00Z"
        return Answer(200, item)

    def add(self, body: str) -> dict[str, Any]:
        """Someone else's comment already on the PR."""
        item = self.make(50 + len(self.items), body)
        self.items.append(item)
        return item


# ---------------------------------------------------------------- GitLab (API v4)

GL_PROJECT = "acme/app"
GL_PROJECT_ID = "acme%2Fapp"


def gl_user(username: str, uid: int = 1) -> dict[str, Any]:
    return {"id": uid, "username": username, "name": username.title(), "state": "active",
            "locked": False, "avatar_url": f"https://gitlab.example.com/uploads/{username}.png",
            "web_url": f"https://gitlab.example.com/{username}"}


def gl_merge_request(iid: int, branch: str, state: str = "opened",
                     updated: str = T_UPDATED) -> dict[str, Any]:
    merged = state == "merged"
    return {
        "id": 2000 + iid, "iid": iid, "project_id": 42, "title": "Memories for review",
        "description": "Submitted with git memex", "state": state,
        "created_at": T_CREATED, "updated_at": updated,
        "merged_by": gl_user("maint", 9) if merged else None,
        "merge_user": gl_user("maint", 9) if merged else None,
        "merged_at": updated if merged else None,
        "closed_by": None, "closed_at": updated if state == "closed" else None,
        "target_branch": "main", "source_branch": branch, "user_notes_count": 0,
        "upvotes": 0, "downvotes": 0, "author": gl_user("alice", 2), "assignees": [],
        "assignee": None, "reviewers": [], "source_project_id": 42, "target_project_id": 42,
        "labels": [], "draft": False, "work_in_progress": False, "milestone": None,
        "merge_when_pipeline_succeeds": False, "merge_status": "can_be_merged",
        "detailed_merge_status": "mergeable", "sha": HEAD_SHA,
        "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6" if merged else None,
        "squash_commit_sha": None, "discussion_locked": None,
        "should_remove_source_branch": None, "force_remove_source_branch": False,
        "reference": f"!{iid}",
        "references": {"short": f"!{iid}", "relative": f"!{iid}",
                       "full": f"{GL_PROJECT}!{iid}"},
        "web_url": f"https://gitlab.example.com/{GL_PROJECT}/-/merge_requests/{iid}",
        "time_stats": {"time_estimate": 0, "total_time_spent": 0,
                       "human_time_estimate": None, "human_total_time_spent": None},
        "squash": False, "task_completion_status": {"count": 0, "completed_count": 0},
        "has_conflicts": False, "blocking_discussions_resolved": True,
    }


def gl_approvals(iid: int, approvers: list[str]) -> dict[str, Any]:
    return {
        "id": 2000 + iid, "iid": iid, "project_id": 42, "title": "Memories for review",
        "description": "Submitted with git memex", "state": "opened",
        "created_at": T_CREATED, "updated_at": T_UPDATED, "merge_status": "can_be_merged",
        "approved": bool(approvers), "approvals_required": 1,
        "approvals_left": 0 if approvers else 1, "require_password_to_approve": False,
        "approved_by": [{"user": gl_user(a, 10 + n)} for n, a in enumerate(approvers)],
        "suggested_approvers": [], "approvers": [], "approver_groups": [],
        "user_has_approved": False, "user_can_approve": True, "approval_rules_left": [],
        "has_approval_rules": False, "merge_request_approvers_available": False,
        "multiple_approval_rules_available": False, "invalid_approvers_rules": [],
    }


def gl_reviewer(username: str, state: str) -> dict[str, Any]:
    return {"user": gl_user(username, 30), "state": state, "created_at": T_UPDATED}


def gl_note(note_id: int, body: str, iid: int = 7) -> dict[str, Any]:
    return {"id": note_id, "type": None, "body": body, "attachment": None,
            "author": gl_user("memex-bot", 77), "created_at": T_UPDATED,
            "updated_at": T_UPDATED, "system": False, "noteable_id": 2000 + iid,
            "noteable_type": "MergeRequest", "project_id": 42, "resolvable": False,
            "confidential": False, "internal": False, "noteable_iid": iid,
            "commands_changes": {}}


def gitlab(fake: FakeHost, branch: str, mrs: list[dict[str, Any]],
           approvals: dict[int, list[str]] | None = None,
           reviewers: dict[int, list[dict[str, Any]]] | None = None) -> None:
    base = f"/api/v4/projects/{GL_PROJECT_ID}/merge_requests"
    fake.answer(base, mrs)
    for iid, names in (approvals or {}).items():
        fake.answer(f"{base}/{iid}/approvals", gl_approvals(iid, names))
    for iid, entries in (reviewers or {}).items():
        fake.answer(f"{base}/{iid}/reviewers", entries)


def gitlab_notes(fake: FakeHost, iid: int) -> Thread:
    path = f"/api/v4/projects/{GL_PROJECT_ID}/merge_requests/{iid}/notes"
    return Thread(fake, path, path, "PUT", lambda i, b: gl_note(i, b, iid))


# ---------------------------------------------------------------- Gitea / Forgejo (API v1)

GT_OWNER, GT_REPO = "acme", "app"


def gt_user(login: str, uid: int = 1) -> dict[str, Any]:
    return {"id": uid, "login": login, "login_name": "", "source_id": 0,
            "full_name": login.title(), "email": f"{login}@noreply.gitea.example.com",
            "avatar_url": f"https://gitea.example.com/avatars/{uid}",
            "html_url": f"https://gitea.example.com/{login}", "language": "",
            "is_admin": False, "last_login": T_CREATED, "created": "2026-01-01T00:00:00Z",
            "restricted": False, "active": True, "prohibit_login": False, "location": "",
            "website": "", "description": "", "visibility": "public",
            "followers_count": 0, "following_count": 0, "starred_repos_count": 0,
            "username": login}


def _gt_repo() -> dict[str, Any]:
    return {"id": 9, "owner": gt_user(GT_OWNER, 3), "name": GT_REPO,
            "full_name": f"{GT_OWNER}/{GT_REPO}", "private": False, "fork": False,
            "html_url": f"https://gitea.example.com/{GT_OWNER}/{GT_REPO}",
            "default_branch": "main"}


def gt_pull(number: int, branch: str, state: str = "open", merged: bool = False,
            updated: str = T_UPDATED) -> dict[str, Any]:
    web = f"https://gitea.example.com/{GT_OWNER}/{GT_REPO}/pulls/{number}"
    return {
        "id": 500 + number, "url": web, "number": number, "user": gt_user("alice", 2),
        "title": "Memories for review", "body": "Submitted with git memex", "labels": [],
        "milestone": None, "assignee": None, "assignees": None, "requested_reviewers": None,
        "state": state, "draft": False, "is_locked": False, "comments": 0,
        "review_comments": 0, "additions": 12, "deletions": 0, "changed_files": 1,
        "html_url": web, "diff_url": f"{web}.diff", "patch_url": f"{web}.patch",
        "mergeable": not merged, "merged": merged, "merged_at": updated if merged else None,
        "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6" if merged else None,
        "merged_by": gt_user("maint", 9) if merged else None, "allow_maintainer_edit": False,
        "base": {"label": "main", "ref": "main", "sha": BASE_SHA, "repo_id": 9,
                 "repo": _gt_repo()},
        "head": {"label": branch, "ref": branch, "sha": HEAD_SHA, "repo_id": 9,
                 "repo": _gt_repo()},
        "merge_base": BASE_SHA, "due_date": None, "created_at": T_CREATED,
        "updated_at": updated, "closed_at": updated if state == "closed" else None,
        "pin_order": 0,
    }


def gt_review(login: str, state: str, dismissed: bool = False, rid: int = 11
              ) -> dict[str, Any]:
    web = f"https://gitea.example.com/{GT_OWNER}/{GT_REPO}/pulls/3"
    return {"id": rid, "user": gt_user(login, 20 + rid), "team": None, "state": state,
            "body": "", "commit_id": HEAD_SHA, "stale": False, "official": True,
            "dismissed": dismissed, "comments_count": 0, "submitted_at": T_UPDATED,
            "updated_at": T_UPDATED, "html_url": f"{web}#issuecomment-{rid}",
            "pull_request_url": web}


def gt_comment(cid: int, body: str, number: int = 3) -> dict[str, Any]:
    web = f"https://gitea.example.com/{GT_OWNER}/{GT_REPO}/pulls/{number}"
    return {"id": cid, "html_url": f"{web}#issuecomment-{cid}", "pull_request_url": web,
            "issue_url": "", "user": gt_user("memex-bot", 77), "original_author": "",
            "original_author_id": 0, "body": body, "assets": [], "created_at": T_UPDATED,
            "updated_at": T_UPDATED}


def gitea(fake: FakeHost, pulls: list[dict[str, Any]],
          reviews: dict[int, list[dict[str, Any]]] | None = None) -> None:
    base = f"/api/v1/repos/{GT_OWNER}/{GT_REPO}/pulls"
    fake.answer(base, pulls)
    for number, entries in (reviews or {}).items():
        fake.answer(f"{base}/{number}/reviews", entries)


def gitea_comments(fake: FakeHost, number: int) -> Thread:
    base = f"/api/v1/repos/{GT_OWNER}/{GT_REPO}/issues"
    return Thread(fake, f"{base}/{number}/comments", f"{base}/comments", "PATCH",
                  lambda i, b: gt_comment(i, b, number))


# ---------------------------------------------------------------- GitHub's issue comments


def gh_comment(cid: int, body: str, number: int = 12) -> dict[str, Any]:
    from tests.helpers.fakegithub import OWNER, REPO, user

    api = f"https://api.github.com/repos/{OWNER}/{REPO}"
    return {"id": cid, "node_id": "MDEyOklzc3VlQ29tbWVudDE=",
            "url": f"{api}/issues/comments/{cid}",
            "html_url": f"https://github.com/{OWNER}/{REPO}/pull/{number}#issuecomment-{cid}",
            "body": body, "user": user("github-actions[bot]"), "created_at": T_UPDATED,
            "updated_at": T_UPDATED, "issue_url": f"{api}/issues/{number}",
            "author_association": "NONE", "performed_via_github_app": None}


def github_comments(fake: FakeHost, number: int, prefix: str = "") -> Thread:
    from tests.helpers.fakegithub import OWNER, REPO

    base = f"{prefix}/repos/{OWNER}/{REPO}/issues"
    return Thread(fake, f"{base}/{number}/comments", f"{base}/comments", "PATCH",
                  lambda i, b: gh_comment(i, b, number))
