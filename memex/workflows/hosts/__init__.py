"""PR hosts behind one small interface, so GitLab and others can follow GitHub.

A provider answers one question: the pull request whose head is this branch, with
its merge and review state. Everything it cannot see is a HostError with a kind
(`auth`, `not_found`, `server`, `malformed`, `timeout`, `network`, `http`) and a
message a person can act on; callers report it and carry on with what git shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from memex.storage.homes import normalise_url
from memex.workflows.hosts.base import HostError, PullRequest

__all__ = ["DEFAULT_TIMEOUT", "HostError", "Provider", "PullRequest", "RemoteRepo",
           "parse_remote", "provider_for"]

DEFAULT_TIMEOUT = 10.0


class Provider(Protocol):
    """A PR host for one repository."""

    name: str  # "github"
    slug: str  # "owner/repo"

    def pull_request(self, branch: str) -> PullRequest | None:
        """The PR whose head is `branch` (the open one, else the latest); None if none."""
        ...


@dataclass(frozen=True)
class RemoteRepo:
    host: str
    owner: str
    name: str


def parse_remote(url: str) -> RemoteRepo | None:
    """host, owner and repo of a remote URL (`git@github.com:Acme/App.git`), or None."""
    normal = normalise_url(url)
    host, _, path = normal.partition("/")
    parts = [p for p in path.split("/") if p]
    if not host or len(parts) < 2:
        return None
    return RemoteRepo(host, "/".join(parts[:-1]), parts[-1])


def provider_for(origin: str | None, env: Mapping[str, str], timeout: float = DEFAULT_TIMEOUT
                 ) -> tuple[Provider | None, str | None]:
    """The provider for this origin, or (None, why not)."""
    if not origin:
        return None, "there is no origin remote, so no PR host to ask"
    remote = parse_remote(origin)
    if remote is None:
        return None, f"the origin URL {origin} does not name an owner/repo"
    api = env.get("GITHUB_API_URL")
    if api or remote.host == "github.com":
        from memex.workflows.hosts import github

        token = github.token(env, remote.host)
        return github.GitHub(remote.owner, remote.name, api or github.DEFAULT_API, token,
                             timeout), None
    return None, (f"no PR provider for {remote.host} yet (GitHub only; set GITHUB_API_URL "
                  "for GitHub Enterprise)")
