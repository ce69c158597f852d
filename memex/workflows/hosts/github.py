"""GitHub's REST API: the PR of a branch and its reviews (stdlib HTTP, short timeouts).

`GET /repos/{owner}/{repo}/pulls?head={owner}:{branch}&state=all`, then
`GET /repos/{owner}/{repo}/pulls/{number}/reviews`. A review state counts per
reviewer, latest wins; COMMENTED and PENDING do not change it, DISMISSED clears it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from memex import __version__
from memex.workflows.hosts.base import HostError, PullRequest

DEFAULT_API = "https://api.github.com"
MAX_BYTES = 5_000_000
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def token(env: Mapping[str, str], host: str = "github.com") -> str | None:
    """GITHUB_TOKEN, else `gh auth token` when the gh CLI is installed, else None."""
    explicit = env.get("GITHUB_TOKEN")
    if explicit:
        return explicit.strip()
    gh = shutil.which("gh")
    if gh is None:
        return None
    try:
        proc = subprocess.run([gh, "auth", "token", "--hostname", host], capture_output=True,
                              text=True, timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    value = proc.stdout.strip()
    return value if proc.returncode == 0 and value else None


class GitHub:
    name = "github"

    def __init__(self, owner: str, repo: str, api_url: str = DEFAULT_API,
                 token: str | None = None, timeout: float = 10.0) -> None:
        self.owner, self.repo = owner, repo
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.slug = f"{owner}/{repo}"

    # ------------------------------------------------------------ HTTP

    def _opener(self) -> urllib.request.OpenerDirector:
        host = urllib.parse.urlsplit(self.api_url).hostname or ""
        if host in _LOOPBACK:  # never send a loopback request through a proxy
            return urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return urllib.request.build_opener()

    def get(self, path: str, query: Mapping[str, str] | None = None) -> Any:
        url = self.api_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/vnd.github+json",
                   "X-GitHub-Api-Version": "2022-11-28",
                   "User-Agent": f"git-memex/{__version__}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, headers=headers)
        try:
            with self._opener().open(request, timeout=self.timeout) as response:
                data = response.read(MAX_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from None
        except TimeoutError:
            raise self._timeout() from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from None
            raise HostError("network", f"cannot reach {self.api_url}: {exc.reason}") from None
        except OSError as exc:
            raise HostError("network", f"cannot reach {self.api_url}: {exc}") from None
        if len(data) > MAX_BYTES:
            raise HostError("malformed", f"GitHub's answer to {path} is over {MAX_BYTES} bytes")
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise HostError("malformed", f"GitHub's answer to {path} is not JSON") from None

    def _timeout(self) -> HostError:
        return HostError("timeout", f"GitHub ({self.api_url}) did not answer within "
                         f"{self.timeout:g}s (memex.hostTimeout)")

    def _http_error(self, exc: urllib.error.HTTPError) -> HostError:
        code = exc.code
        if code == 401:
            return HostError("auth", "GitHub refused the credentials (401): set GITHUB_TOKEN "
                             "to a token that can read this repository, or `gh auth login`")
        if code == 403:
            if exc.headers.get("X-RateLimit-Remaining") == "0":
                return HostError("auth", "GitHub's rate limit is used up (403): set "
                                 "GITHUB_TOKEN, or wait for the reset")
            return HostError("auth", "GitHub forbids this request (403): the token lacks "
                             "access to the repository")
        if code == 404:
            hint = "" if self.token else " (a private repository needs GITHUB_TOKEN)"
            return HostError("not_found", f"GitHub has no repository {self.slug} visible "
                             f"here (404){hint}")
        if code >= 500:
            return HostError("server", f"GitHub failed ({code}); try again later")
        return HostError("http", f"GitHub answered {code} {exc.reason}")

    # ------------------------------------------------------------ the questions

    def pull_request(self, branch: str) -> PullRequest | None:
        pulls = self.get(f"/repos/{self.owner}/{self.repo}/pulls",
                         {"head": f"{self.owner}:{branch}", "state": "all", "per_page": "100"})
        if not isinstance(pulls, list):
            raise HostError("malformed", "GitHub's list of pull requests is not a list")
        chosen = pick_pull(pulls, branch)
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
        if not isinstance(reviews, list):
            raise HostError("malformed", "GitHub's list of reviews is not a list")
        review, approvers, requesters = summarise_reviews(reviews)
        head = _mapping(chosen.get("head"))
        base = _mapping(chosen.get("base"))
        return PullRequest(
            number=number, url=str(chosen.get("html_url") or ""), state=state,
            merged=bool(chosen.get("merged_at")) or chosen.get("merged") is True,
            review=review, head_sha=head.get("sha"), base_ref=base.get("ref"),
            approvers=approvers, requesters=requesters,
        )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def pick_pull(pulls: list[Any], branch: str) -> dict[str, Any] | None:
    """The open PR of the branch, else the most recently updated one."""
    mine = [p for p in pulls if isinstance(p, dict) and (
        not isinstance(p.get("head"), dict) or p["head"].get("ref") in (None, branch))]
    if not mine:
        return None
    open_ones = [p for p in mine if p.get("state") == "open"]
    pool = open_ones or mine
    return max(pool, key=lambda p: str(p.get("updated_at") or p.get("created_at") or ""))


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
    approvers = tuple(u for u, s in latest.items() if s == "APPROVED")
    requesters = tuple(u for u, s in latest.items() if s == "CHANGES_REQUESTED")
    if requesters:
        return "changes_requested", approvers, requesters
    if approvers:
        return "approved", approvers, requesters
    return "pending", approvers, requesters
