"""GitHub's REST API: the PR of a branch and its reviews (stdlib HTTP, short timeouts).

`GET /repos/{owner}/{repo}/pulls?head={owner}:{branch}&state=all`, then
`GET /repos/{owner}/{repo}/pulls/{number}/reviews`. A review state counts per
reviewer, latest wins; COMMENTED and PENDING do not change it, DISMISSED clears it.
"""

from __future__ import annotations

import urllib.error
from collections.abc import Mapping
from typing import Any

from memex.workflows.hosts.base import HostError, PullRequest
from memex.workflows.hosts.rest import Rest, cli_token, mapping, newest, verdict

DEFAULT_API = "https://api.github.com"


def token(env: Mapping[str, str], host: str = "github.com") -> str | None:
    """GITHUB_TOKEN, else `gh auth token` when the gh CLI is installed, else None."""
    explicit = env.get("GITHUB_TOKEN")
    if explicit:
        return explicit.strip()
    return cli_token(["gh", "auth", "token", "--hostname", host])


class GitHub(Rest):
    name = "github"
    label = "GitHub"
    token_hint = "set GITHUB_TOKEN to a token that can read this repository, or `gh auth login`"

    def __init__(self, owner: str, repo: str, api_url: str = DEFAULT_API,
                 token: str | None = None, timeout: float = 10.0) -> None:
        super().__init__(api_url, token, timeout)
        self.owner, self.repo = owner, repo
        self.slug = f"{owner}/{repo}"

    def headers(self) -> dict[str, str]:
        out = super().headers()
        out["Accept"] = "application/vnd.github+json"
        out["X-GitHub-Api-Version"] = "2022-11-28"
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out

    def http_error(self, exc: urllib.error.HTTPError) -> HostError:
        if exc.code == 403 and exc.headers.get("X-RateLimit-Remaining") == "0":
            return HostError("auth", "GitHub's rate limit is used up (403): set "
                             "GITHUB_TOKEN, or wait for the reset")
        if exc.code == 404 and not self.token:
            return HostError("not_found", f"GitHub has no repository {self.slug} visible "
                             "here (404) (a private repository needs GITHUB_TOKEN)")
        return super().http_error(exc)

    # ------------------------------------------------------------ the questions

    def pull_request(self, branch: str) -> PullRequest | None:
        pulls = self.get(f"/repos/{self.owner}/{self.repo}/pulls",
                         {"head": f"{self.owner}:{branch}", "state": "all", "per_page": "100"})
        chosen = pick_pull(self.list_of(pulls, "pull requests"), branch)
        if chosen is None:
            return None
        try:
            number = int(chosen["number"])
            state = str(chosen["state"])
        except (KeyError, TypeError, ValueError):
            raise HostError("malformed", "a pull request in GitHub's answer has no number "
                            "or state") from None
        reviews = self.get(f"/repos/{self.owner}/{self.repo}/pulls/{number}/reviews",
                           {"per_page": "100"})
        review, approvers, requesters = summarise_reviews(self.list_of(reviews, "reviews"))
        head = mapping(chosen.get("head"))
        base = mapping(chosen.get("base"))
        return PullRequest(
            number=number, url=str(chosen.get("html_url") or ""), state=state,
            merged=bool(chosen.get("merged_at")) or chosen.get("merged") is True,
            review=review, head_sha=head.get("sha"), base_ref=base.get("ref"),
            approvers=approvers, requesters=requesters,
        )

    def post_comment(self, number: int, body: str, marker: str) -> str:
        base = f"/repos/{self.owner}/{self.repo}/issues"
        comments = self.list_of(self.get(f"{base}/{number}/comments", {"per_page": "100"}),
                                "comments")
        return self.upsert_comment(comments, marker, body, f"{base}/{number}/comments",
                                   f"{base}/comments/{{id}}", "PATCH")


def pick_pull(pulls: list[Any], branch: str) -> dict[str, Any] | None:
    """The open PR of the branch, else the most recently updated one."""
    mine = [p for p in pulls if isinstance(p, dict) and (
        not isinstance(p.get("head"), dict) or p["head"].get("ref") in (None, branch))]
    if not mine:
        return None
    return newest(mine, "open")


def summarise_reviews(reviews: list[Any]) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(approved | changes_requested | pending, approvers, requesters): latest per person."""
    latest: dict[str, str] = {}
    for review in reviews:
        if not isinstance(review, dict):
            raise HostError("malformed", "a review in GitHub's answer is not an object")
        user = review.get("user")
        login = str(user.get("login")) if isinstance(user, dict) else "ghost"
        state = str(review.get("state") or "").upper()
        if state in ("APPROVED", "CHANGES_REQUESTED"):
            latest[login] = state
        elif state == "DISMISSED":
            latest.pop(login, None)
    return verdict(latest, "APPROVED", "CHANGES_REQUESTED")
