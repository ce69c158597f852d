"""JSON over HTTP for the host providers (stdlib, short timeouts, one error per cause).

Each provider subclasses `Rest` with its name, its auth header and a hint for a person
whose token was refused; the status codes map to HostError kinds the same way for all.
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
from memex.workflows.hosts.base import HostError

MAX_BYTES = 5_000_000
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def cli_token(args: list[str]) -> str | None:
    """A token printed by a host's CLI (`gh auth token`), when it is installed."""
    binary = shutil.which(args[0])
    if binary is None:
        return None
    try:
        proc = subprocess.run([binary, *args[1:]], capture_output=True, text=True, timeout=5,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    value = proc.stdout.strip()
    return value if proc.returncode == 0 and value and "\n" not in value else None


class Rest:
    label = "the host"  # "GitHub": how messages name it
    token_hint = "set a token that can read this repository"

    def __init__(self, api_url: str, token: str | None, timeout: float) -> None:
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.slug = ""

    def headers(self) -> dict[str, str]:
        return {"Accept": "application/json", "User-Agent": f"git-memex/{__version__}"}

    def _opener(self) -> urllib.request.OpenerDirector:
        host = urllib.parse.urlsplit(self.api_url).hostname or ""
        if host in _LOOPBACK:  # never send a loopback request through a proxy
            return urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return urllib.request.build_opener()

    def get(self, path: str, query: Mapping[str, str] | None = None) -> Any:
        return self.request("GET", path, query)

    def request(self, method: str, path: str, query: Mapping[str, str] | None = None,
                body: Mapping[str, Any] | None = None) -> Any:
        url = self.api_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = self.headers()
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener().open(request, timeout=self.timeout) as response:
                raw = response.read(MAX_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise self.http_error(exc) from None
        except TimeoutError:
            raise self._timeout() from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from None
            raise HostError("network", f"cannot reach {self.api_url}: {exc.reason}") from None
        except OSError as exc:
            raise HostError("network", f"cannot reach {self.api_url}: {exc}") from None
        if len(raw) > MAX_BYTES:
            raise HostError("malformed", f"{self.label}'s answer to {path} is over "
                            f"{MAX_BYTES} bytes")
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):  # (nested too deeply)
            raise HostError("malformed", f"{self.label}'s answer to {path} is not JSON"
                            ) from None

    def _timeout(self) -> HostError:
        return HostError("timeout", f"{self.label} ({self.api_url}) did not answer within "
                         f"{self.timeout:g}s (memex.hostTimeout)")

    def http_error(self, exc: urllib.error.HTTPError) -> HostError:
        code = exc.code
        if code == 401:
            return HostError("auth", f"{self.label} refused the credentials (401): "
                             f"{self.token_hint}")
        if code == 403:
            return HostError("auth", f"{self.label} forbids this request (403): the token "
                             "lacks access to the repository")
        if code == 404:
            hint = "" if self.token else f" (a private repository needs a token: " \
                f"{self.token_hint})"
            return HostError("not_found", f"{self.label} has no repository {self.slug} "
                             f"visible here (404){hint}")
        if code >= 500:
            return HostError("server", f"{self.label} failed ({code}); try again later")
        return HostError("http", f"{self.label} answered {code} {exc.reason}")

    def list_of(self, value: Any, what: str) -> list[Any]:
        if not isinstance(value, list):
            raise HostError("malformed", f"{self.label}'s list of {what} is not a list")
        return value

    def upsert_comment(self, comments: list[Any], marker: str, body: str, create: str,
                       update: str, method: str) -> str:
        """Edit the comment holding `marker` (`update` with {id}), else POST `create`;
        the comment's web URL (or API URL) comes back."""
        mine = next((c for c in comments if isinstance(c, dict)
                     and marker in str(c.get("body") or "")), None)
        if mine is not None:
            answer = self.request(method, update.format(id=mine.get("id")),
                                  body={"body": body})
        else:
            answer = self.request("POST", create, body={"body": body})
        if not isinstance(answer, dict):
            raise HostError("malformed", f"{self.label}'s answer to the comment is not an "
                            "object")
        return str(answer.get("html_url") or answer.get("url") or answer.get("id") or "")


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def newest(requests: list[dict[str, Any]], open_state: str) -> dict[str, Any]:
    """The branch's open PR/MR most recently updated, else its most recently updated one."""
    opened = [r for r in requests if r.get("state") == open_state]
    return max(opened or requests,
               key=lambda r: str(r.get("updated_at") or r.get("created_at") or ""))


def verdict(latest: Mapping[str, str], approved: str, changes: str
            ) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(approved | changes_requested | pending, approvers, requesters) from each
    reviewer's latest state, in the host's own words for approval and for changes."""
    approvers = tuple(u for u, s in latest.items() if s == approved)
    requesters = tuple(u for u, s in latest.items() if s == changes)
    if requesters:
        return "changes_requested", approvers, requesters
    if approvers:
        return "approved", approvers, requesters
    return "pending", approvers, requesters
