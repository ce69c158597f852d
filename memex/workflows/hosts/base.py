"""What every PR host module shares: the PullRequest it answers with and the HostError
it raises (here, so a provider module never imports the registry in `hosts`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memex.core.errors import MemexError


class HostError(MemexError):
    """The host could not be asked, or its answer could not be used."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str
    state: str  # open | closed
    merged: bool
    review: str  # approved | changes_requested | pending
    head_sha: str | None = None
    base_ref: str | None = None
    approvers: tuple[str, ...] = field(default_factory=tuple)
    requesters: tuple[str, ...] = field(default_factory=tuple)

    def as_json(self) -> dict[str, object]:
        return {"number": self.number, "url": self.url, "state": self.state,
                "merged": self.merged, "review": self.review, "head_sha": self.head_sha,
                "base_ref": self.base_ref, "approvers": list(self.approvers),
                "requesters": list(self.requesters)}
