"""Gitea's and Forgejo's REST API (v1): the pull request of a branch, reviews, comments.

`GET /repos/{owner}/{repo}/pulls?state=all` (the branch is matched on `head.ref`), then
`GET /repos/{owner}/{repo}/pulls/{index}/reviews`: per reviewer the latest APPROVED or
REQUEST_CHANGES counts, a dismissed review does not, COMMENT and PENDING change
nothing. Tokens: GITEA_TOKEN or FORGEJO_TOKEN (`Authorization: token ...`), or the
GITHUB_TOKEN a Gitea/Forgejo Actions job is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memex.workflows.hosts.base import HostError, PullRequest
from memex.workflows.hosts.rest import Rest, mapping, newest, verdict

PAGE = "50"


def token(env: Mapping[str, str]) -> str | None:
    for key in ("GITEA_TOKEN", "FORGEJO_TOKEN"):
        value = env.get(key, "").strip()
        if value:
            return value
    if env.get("GITEA_ACTIONS") == "true" or env.get("FORGEJO_ACTIONS") == "true":
        return env.get("GITHUB_TOKEN", "").strip() or None
    return None


class Gitea(Rest):
    name = "gitea"
    label = "Gitea"
    token_hint = "set GITEA_TOKEN (or FORGEJO_TOKEN) to a token that can read this repository"

    def __init__(self, owner: str, repo: str, api_url: str, token: str | None = None,
                 timeout: float = 10.0) -> None:
        super().__init__(api_url, token, timeout)
        self.owner, self.repo = owner, repo
        self.slug = f"{owner}/{repo}"

    def headers(self) -> dict[str, str]:
        out = super().headers()
        if self.token:
            out["Authorization"] = f"token {self.token}"
        return out

    def pull_request(self, branch: str) -> PullRequest | None:
        base = f"/repos/{self.owner}/{self.repo}/pulls"
        pulls = self.list_of(self.get(base, {"state": "all", "sort": "recentupdate",
                                             "limit": PAGE}), "pull requests")
        mine = [p for p in pulls if isinstance(p, dict)
                and mapping(p.get("head")).get("ref") == branch]
        if not mine:
            return None
        chosen = newest(mine, "open")
        try:
            number = int(chosen["number"])
            state = str(chosen["state"])
        except (KeyError, TypeError, ValueError):
            raise HostError("malformed", "a pull request in Gitea's answer has no number or "
                            "state") from None
        reviews = self.list_of(self.get(f"{base}/{number}/reviews", {"limit": PAGE}),
                               "reviews")
        review, approvers, requesters = summarise(reviews)
        return PullRequest(
            number=number, url=str(chosen.get("html_url") or ""), state=state,
            merged=chosen.get("merged") is True or bool(chosen.get("merged_at")),
            review=review, head_sha=mapping(chosen.get("head")).get("sha"),
            base_ref=mapping(chosen.get("base")).get("ref"), approvers=approvers,
            requesters=requesters)

    def post_comment(self, number: int, body: str, marker: str) -> str:
        base = f"/repos/{self.owner}/{self.repo}/issues"
        comments = self.list_of(self.get(f"{base}/{number}/comments"), "comments")
        return self.upsert_comment(comments, marker, body, f"{base}/{number}/comments",
                                   f"{base}/comments/{{id}}", "PATCH")


def summarise(reviews: list[Any]) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    latest: dict[str, str] = {}
    for entry in reviews:
        if not isinstance(entry, dict):
            raise HostError("malformed", "a review in Gitea's answer is not an object")
        login = str(mapping(entry.get("user")).get("login") or "ghost")
        state = str(entry.get("state") or "").upper()
        if entry.get("dismissed") is True:
            continue  # a dismissed review no longer counts; the one before it still does
        if state in ("APPROVED", "REQUEST_CHANGES"):
            latest[login] = state
    return verdict(latest, "APPROVED", "REQUEST_CHANGES")
