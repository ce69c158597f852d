"""GitLab's REST API (v4): the merge request of a branch, its approvals and notes.

`GET /projects/:id/merge_requests?source_branch=B&state=all`, then
`GET /projects/:id/merge_requests/:iid/approvals` (`approved_by[].user.username`) and
`GET /projects/:id/merge_requests/:iid/reviewers` (a reviewer's `requested_changes`;
a GitLab too old to have it answers 404, read as "nobody asked for changes").
`:id` is the URL-encoded project path. Tokens: GITLAB_TOKEN (`PRIVATE-TOKEN`), else
`glab auth token`, else CI_JOB_TOKEN (`JOB-TOKEN`, which can read but not post notes).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any

from memex.workflows.hosts.base import HostError, PullRequest
from memex.workflows.hosts.rest import Rest, cli_token, mapping, newest


def token(env: Mapping[str, str], host: str) -> tuple[str | None, str]:
    """(token, header name): GITLAB_TOKEN, `glab auth token`, CI_JOB_TOKEN, or none."""
    explicit = env.get("GITLAB_TOKEN", "").strip()
    if explicit:
        return explicit, "PRIVATE-TOKEN"
    from_cli = cli_token(["glab", "auth", "token", "--hostname", host])
    if from_cli:
        return from_cli, "PRIVATE-TOKEN"
    job = env.get("CI_JOB_TOKEN", "").strip()
    if job:
        return job, "JOB-TOKEN"
    return None, "PRIVATE-TOKEN"


class GitLab(Rest):
    name = "gitlab"
    label = "GitLab"
    token_hint = ("set GITLAB_TOKEN to a token with read_api scope (api to post notes), "
                  "or `glab auth login`")

    def __init__(self, project: str, api_url: str, token: str | None = None,
                 header: str = "PRIVATE-TOKEN", timeout: float = 10.0) -> None:
        super().__init__(api_url, token, timeout)
        self.slug = project
        self.header = header
        self.project = urllib.parse.quote(project, safe="")

    def headers(self) -> dict[str, str]:
        out = super().headers()
        if self.token:
            out[self.header] = self.token
        return out

    def pull_request(self, branch: str) -> PullRequest | None:
        base = f"/projects/{self.project}/merge_requests"
        found = self.list_of(self.get(base, {"source_branch": branch, "state": "all",
                                             "per_page": "100"}), "merge requests")
        mine = [m for m in found if isinstance(m, dict)
                and m.get("source_branch") in (None, branch)]
        if not mine:
            return None
        chosen = newest(mine, "opened")
        try:
            iid = int(chosen["iid"])
            state = str(chosen["state"])
        except (KeyError, TypeError, ValueError):
            raise HostError("malformed", "a merge request in GitLab's answer has no iid or "
                            "state") from None
        approvals = self.get(f"{base}/{iid}/approvals")
        if not isinstance(approvals, dict):
            raise HostError("malformed", "GitLab's approvals answer is not an object")
        approvers = tuple(_username(a) for a in self.list_of(
            approvals.get("approved_by") or [], "approvers"))
        requesters = self._requesters(f"{base}/{iid}/reviewers")
        review = "changes_requested" if requesters else "approved" if approvers else "pending"
        return PullRequest(
            number=iid, url=str(chosen.get("web_url") or ""),
            state="open" if state in ("opened", "locked") else "closed",
            merged=state == "merged" or bool(chosen.get("merged_at")),
            review=review, head_sha=chosen.get("sha"), base_ref=chosen.get("target_branch"),
            approvers=approvers, requesters=requesters)

    def _requesters(self, path: str) -> tuple[str, ...]:
        try:
            reviewers = self.list_of(self.get(path), "reviewers")
        except HostError as exc:
            if exc.kind == "not_found":
                return ()
            raise
        return tuple(_username(r) for r in reviewers
                     if isinstance(r, dict) and r.get("state") == "requested_changes")

    def post_comment(self, number: int, body: str, marker: str) -> str:
        notes = f"/projects/{self.project}/merge_requests/{number}/notes"
        found = self.list_of(self.get(notes, {"per_page": "100", "sort": "asc"}), "notes")
        mine = [n for n in found if isinstance(n, dict) and not n.get("system")]
        url = self.upsert_comment(mine, marker, body, notes, notes + "/{id}", "PUT")
        return url if url.startswith("http") else f"{self.slug}!{number} note {url}"


def _username(entry: Any) -> str:
    if not isinstance(entry, dict):
        raise HostError("malformed", "an approval in GitLab's answer is not an object")
    user = mapping(entry.get("user"))
    return str(user.get("username") or "ghost")
