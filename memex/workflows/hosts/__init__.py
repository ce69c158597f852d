"""PR hosts behind one small interface: GitHub, GitLab, Gitea and Forgejo.

A provider answers one question, the pull request whose head is this branch with its
merge and review state, and posts one comment (review --post), updated in place.
Everything it cannot see is a HostError with a kind
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

    def post_comment(self, number: int, body: str, marker: str) -> str:
        """Post `body` on PR `number`, editing the earlier comment holding `marker`
        instead when there is one; returns the comment's address."""
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


HOSTS = ("github", "gitlab", "gitea")
_ALIASES = {"forgejo": "gitea", "codeberg": "gitea"}
_KNOWN_HOSTS = {"github.com": "github", "gitlab.com": "gitlab", "codeberg.org": "gitea",
                "gitea.com": "gitea"}


def host_kind(remote_host: str, env: Mapping[str, str], setting: str | None
              ) -> str | None:
    """github | gitlab | gitea for this origin: `memex.host`, then what a CI job says
    (Gitea/Forgejo Actions, GitLab CI, GITHUB_API_URL), then the origin's host name."""
    if setting:
        return _ALIASES.get(setting.strip().lower(), setting.strip().lower())
    if env.get("GITEA_ACTIONS") == "true" or env.get("FORGEJO_ACTIONS") == "true":
        return "gitea"
    if env.get("CI_API_V4_URL"):
        return "gitlab"
    if env.get("GITHUB_API_URL"):
        return "github"
    if remote_host in _KNOWN_HOSTS:
        return _KNOWN_HOSTS[remote_host]
    first = remote_host.split(".", 1)[0]
    return _ALIASES.get(first, first) if _ALIASES.get(first, first) in HOSTS[1:] else None


def provider_for(origin: str | None, env: Mapping[str, str], timeout: float = DEFAULT_TIMEOUT,
                 host: str | None = None, host_url: str | None = None
                 ) -> tuple[Provider | None, str | None]:
    """The provider for this origin, or (None, why not). `host` is `memex.host`
    (github, gitlab, gitea, forgejo), `host_url` is `memex.hostUrl`: the web address
    of a self-hosted instance (`https://git.example.com`), the API path is added."""
    if not origin:
        return None, "there is no origin remote, so no PR host to ask"
    remote = parse_remote(origin)
    if remote is None:
        return None, f"the origin URL {origin} does not name an owner/repo"
    kind = host_kind(remote.host, env, host)
    web = (host_url or f"https://{remote.host}").rstrip("/")
    if kind == "github":
        from memex.workflows.hosts import github

        api = env.get("GITHUB_API_URL") or (f"{web}/api/v3" if host_url else
                                            github.DEFAULT_API)
        return github.GitHub(remote.owner, remote.name, api,
                             github.token(env, remote.host), timeout), None
    if kind == "gitlab":
        from memex.workflows.hosts import gitlab

        api = env.get("CI_API_V4_URL") or f"{web}/api/v4"
        secret, header = gitlab.token(env, remote.host)
        return gitlab.GitLab(f"{remote.owner}/{remote.name}", api, secret, header,
                             timeout), None
    if kind == "gitea":
        from memex.workflows.hosts import gitea

        in_actions = env.get("GITEA_ACTIONS") == "true" or env.get("FORGEJO_ACTIONS") == "true"
        api = (env.get("GITHUB_API_URL") if in_actions else None) or f"{web}/api/v1"
        return gitea.Gitea(remote.owner, remote.name, api, gitea.token(env), timeout), None
    if kind is not None:
        return None, f"memex.host = {kind} is not a PR host git-memex knows ({', '.join(HOSTS)})"
    return None, (f"no PR provider for {remote.host}: set git config memex.host to github, "
                  "gitlab or gitea (and memex.hostUrl for a self-hosted instance)")
