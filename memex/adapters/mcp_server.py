"""The MCP adapter: `git memex mcp` serves memory tools over stdio (official `mcp` SDK).

Thin by design: each tool validates nothing the library does not, calls `memex.workflows.agent`,
and turns a MemexError into an error result (`is_error`) whose text tells the agent
what to fix. A bug becomes an error result too; the server never exits on a bad call.
A guard in front of every call refuses arguments a tool does not take, and names the
provenance and review fields (source, trust_level, review_state, ...) a tool call can
never set. This module imports the SDK at the top: only `git memex mcp` imports it.
"""

from __future__ import annotations

import inspect
import json
import logging
import traceback
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field, ValidationError

from memex import __version__
from memex.core import jsonout, model, redact
from memex.core.errors import MemexError
from memex.storage.homes import Workspace
from memex.workflows import agent

NAME = "memex"
SCOPES = ["personal", "project", "org"]
MEMORY_URI = "memex://memory/{id}"


def _constrain(**keywords: Any) -> Callable[[dict[str, Any]], None]:
    """json_schema_extra stating a rule the library enforces, on the value's own branch
    (not on the `null` of an optional one, which stays allowed)."""

    def apply(schema: dict[str, Any]) -> None:
        branches = schema.get("anyOf") or [schema]
        for branch in branches:
            if branch.get("type") in ("string", "integer"):
                branch.update(keywords)

    return apply


MemoryId = Annotated[str, Field(
    description="A memory id (ULID) or a unique prefix of one, as memory_search returns it.")]
TypeName = Annotated[str, Field(
    description="What kind of memory: " + ", ".join(model.TYPES) + ".",
    json_schema_extra=_constrain(enum=list(model.TYPES)))]
OptionalType = Annotated[str | None, Field(
    description="Only this kind (" + ", ".join(model.TYPES) + "); omit for all.",
    json_schema_extra=_constrain(enum=list(model.TYPES)))]
ScopeName = Annotated[str | None, Field(
    description="personal (about the user; never leaves this machine), project (this "
                "repository; the default inside one, local-only outside git) or org. "
                "Omit for the default: project in a repository, personal outside one.",
    json_schema_extra=_constrain(enum=SCOPES))]
ReadScope = Annotated[str | None, Field(
    description="Only this scope: personal, project or org. Omit for this project + "
                "personal (+ org); other projects are never searched.",
    json_schema_extra=_constrain(enum=SCOPES))]
Importance = Annotated[str | None, Field(description="low, normal or high.",
                                         json_schema_extra=_constrain(
                                             enum=list(model.IMPORTANCES)))]
Confidence = Annotated[str | None, Field(description="high, medium or low.",
                                         json_schema_extra=_constrain(
                                             enum=list(model.CONFIDENCES)))]
ACCESS_LOG = ("Read-only: it changes no memory. Access counts are kept locally (the "
              "usage log under the git-memex home, which ranks and gates).")
Tags = Annotated[list[str], Field(description="Tags: single words, no spaces or commas.")]
Aliases = Annotated[list[str], Field(
    description=f"Up to {model.MAX_ALIASES} other phrasings, one line each, of what this "
                "memory answers: questions someone would ask to find it, synonyms of its "
                "key terms, the error message or symptom it explains. Write them from the "
                "asker's side, in words the text does not already use.")]

ADD = """Save a new memory: a durable fact, decision, preference, lesson or warning.

Project memories are written as drafts to the user's outbox, outside the repository;
only the user shares them (git memex submit), and nothing here commits or pushes.
Personal memories stay on this machine. The memory is recorded as written by a tool
(source tool, via mcp, trust_level untrusted); an instruction (role instruction) is
saved as a draft instruction that binds no agent until a person approves it.
Secrets in the text are masked and <private>...</private> is redacted before saving.
Please give `aliases`: later searches come in other words than yours (a question
mid-task, a symptom, an error message, another language), and aliases are how this
memory is found by them.
Calling again with the same text in the same scope writes nothing and returns the
existing live memory's id (created: false); similar memories are listed in notices
so you can memory_supersede instead. Errors (unknown type, bad scope, empty or too
large text) come back as an error result and nothing is written."""

SEARCH = """Search this project's and the user's personal memories (never other projects).

Returns JSON {hits: [{id, score, lane, scope, status, review_state, title, summary,
...}]}, best first; an empty list when nothing matches (try other keywords). Reviewed
memories (approved, published) rank above drafts; deprecated ones carry a warning.
Results are retrieved history: verify before acting. """ + ACCESS_LOG

GET = """Show one memory in full: front matter fields, body, path and history.

Unknown or ambiguous ids come back as an error result. """ + ACCESS_LOG

LIST = """List memories, most recently updated first (live ones only), with paging.

""" + ACCESS_LOG

UPDATE = """Edit a memory in place: text, title, tags, aliases, importance, confidence,
type, paths. `aliases` replaces the list: add the questions or symptoms this memory
should also be found by.

Only drafts in the user's outbox and personal memories can be edited; a shared memory
in the repository is refused with an error result (use memory_supersede to propose a
successor). An edit bumps the revision and marks the memory untrusted; an approved
instruction whose text an agent changes becomes a draft instruction again. Repeating
the same edit changes nothing."""

SUPERSEDE = """Replace a memory with a newer one that carries `supersedes`.

For a draft or personal memory the old one is marked superseded at once (searches
then return only the new one). For a shared memory in the repository the successor is
a draft in the user's outbox and the old file is untouched: it is retired in the
commit that submits the successor, which only the user makes. Errors (unknown id, an
already superseded memory, text identical to an existing memory) come back as an
error result."""

FORGET = """Retract a draft or personal memory: the file stays, it drops out of results.

The user can restore it with `git memex status ID active`. Shared memories in the
repository are refused with an error result; nothing is ever deleted by this tool.
Not idempotent: forgetting a memory already retracted is an error result."""

CONTEXT = """The session-start block: recent (or query-matching) project and personal
memories, one line each, approved instructions in their own section, and a note when
the clone's last pull is old. Everything in it is retrieved history to verify before
acting. """ + ACCESS_LOG

# A local access log is not a change to the user's data: hosts may auto-approve these.
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)


def _ok(data: dict[str, Any]) -> CallToolResult:
    """A tool's answer: DATA as structuredContent and its JSON as the text block (MCP: the
    text is the structured copy serialised). A layout control in any of its strings
    (model.LAYOUT_CONTROLS) is shown in both as its \\u escape's text, as a display
    shows it (jsonout.escape_layout_values): a host may render either copy's strings."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    if jsonout.escape_layout(text) != text:
        data = jsonout.escape_layout_values(json.loads(text))
        text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data)


def _fail(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=f"error: {message}")],
                          is_error=True)


def _call(operation: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any
          ) -> CallToolResult:
    try:
        return _ok(operation(*args, **kwargs))
    except MemexError as exc:
        return _fail(str(exc))
    except Exception as exc:  # a bug must not take the server down
        _LOG.error("%s raised", getattr(operation, "__name__", "a tool"), exc_info=True)
        return _fail(f"internal error in git-memex ({type(exc).__name__}: {exc}); "
                     "the server is still running")


class ArgumentGuard:
    """Refuse unknown arguments (typos) and fields only git-memex sets, before the SDK
    validates and silently drops extras."""

    def __init__(self, parameters: dict[str, set[str]]) -> None:
        self.parameters = parameters

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if getattr(ctx, "method", None) == "tools/call" and isinstance(ctx.params, dict):
            name = ctx.params.get("name")
            arguments = ctx.params.get("arguments") or {}
            allowed = self.parameters.get(str(name))
            if allowed is not None and isinstance(arguments, dict):
                for key in arguments:
                    reason = agent.refusal(str(key))
                    if reason:
                        return _fail(reason)
                    if key not in allowed:
                        return _fail(f"{name} takes no argument {redact.quoted(key)}; it takes: "
                                     + ", ".join(sorted(allowed)))
        try:
            return _masked(await call_next(ctx))
        except MCPError as exc:  # a resource read or a prompt the SDK refused
            error = exc.error
            data = None if error.data is None else jsonout.redacted(error.data)
            raise MCPError(error.code, redact.redact(error.message).text, data) from None
        except ValidationError:  # the client's invalid params: the SDK answers -32602
            raise  # and quotes nothing of them; not a server error to log
        except Exception as exc:  # the SDK would answer str(exc) raw and log it raw
            _LOG.error("%s raised", getattr(ctx, "method", "a request"), exc_info=True)
            raise MCPError(0, redact.redact(str(exc)).text) from None


def _masked(result: Any) -> Any:
    """An error result's text masked as a write would store it: the SDK's argument
    validation quotes the value given (`input_value='ghp_...'`)."""
    if isinstance(result, dict) and result.get("isError"):  # the runner's serialised result
        for item in result.get("content") or ():
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                item["text"] = redact.redact(item["text"]).text
    return result


_LOG = logging.getLogger(__name__)


class MaskedLog(logging.Filter):
    """Every line the server logs (the SDK's and its own: a refused resource URI, a
    prompt's unknown argument, a traceback) masked as a write would store it: hosts keep
    an MCP server's stderr in log files. A traceback is made text here, then masked."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Never raises: logging must not fail the code that logged."""
        try:
            text = redact.redact(_log_text(record)).text
        except Exception:  # a record even its repr cannot show
            text = "(a log record git-memex could not show masked)"
        record.msg, record.args = text, ()
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def _log_text(record: logging.LogRecord) -> str:
    try:
        text = record.getMessage()
    except Exception:  # arguments that do not fit the format (a library's bug): the
        # format and the arguments' repr, to be masked (the stdlib's own report of the
        # error would print the arguments raw)
        text = f"{record.msg!s} (log arguments that do not fit it: {record.args!r})"
    if record.exc_info:
        text += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
    if record.stack_info:
        text += "\n" + record.stack_info
    return text


def mask_logging() -> None:
    """MaskedLog on every handler of the root logger (the SDK configures it when the
    server is made; a record of any logger reaches a handler through it)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, MaskedLog) for f in handler.filters):
            handler.addFilter(MaskedLog())


def build(ws: Workspace) -> MCPServer[Any]:
    """The server with every tool bound to WS (tests call the tools through a client)."""

    def memory_add(
        text: Annotated[str, Field(description="The memory itself, in plain words.")],
        type: TypeName = "knowledge",
        scope: ScopeName = None,
        title: Annotated[str | None, Field(description="A short title (default: the "
                                                       "first line).")] = None,
        tags: Tags | None = None,
        paths: Annotated[list[str] | None, Field(
            description="Repo-relative globs this memory is about.")] = None,
        importance: Annotated[str, Field(json_schema_extra=_constrain(
            enum=list(model.IMPORTANCES)), description="low, normal or high.")] = "normal",
        confidence: Annotated[str, Field(json_schema_extra=_constrain(
            enum=list(model.CONFIDENCES)), description="high, medium or low.")] = "medium",
        role: Annotated[str, Field(json_schema_extra=_constrain(enum=list(model.ROLES)),
                                   description="knowledge (default) or instruction (saved "
                                               "as a draft instruction).")] = "knowledge",
        private: Annotated[bool, Field(description="Never leaves this machine, not even "
                                                   "by submit.")] = False,
        valid_until: Annotated[str | None, Field(
            description="When the fact stops being true (RFC 3339 or a date).")] = None,
        expires_at: Annotated[str | None, Field(
            description="When the memory should drop out of results.")] = None,
        aliases: Aliases | None = None,
    ) -> Any:
        return _call(agent.add, ws, text, type=type, scope=scope, title=title,
                     tags=tags or [], paths=paths or [], importance=importance,
                     confidence=confidence, role=role, private=private,
                     valid_until=valid_until, expires_at=expires_at, aliases=aliases or [])

    def memory_search(
        query: Annotated[str, Field(description="A few keywords or a question.")],
        limit: Annotated[int, Field(description=f"How many hits, 1-{agent.MAX_SEARCH}.",
                                    json_schema_extra=_constrain(
                                        minimum=1, maximum=agent.MAX_SEARCH))] = 10,
        scope: ReadScope = None,
        type: OptionalType = None,
        tags: Annotated[list[str] | None, Field(
            description="Only memories with all these tags.")] = None,
    ) -> Any:
        return _call(agent.search_memories, ws, query, limit=limit, scope=scope, type=type,
                     tags=tags or [])

    def memory_get(id: MemoryId) -> Any:
        return _call(agent.get, ws, id)

    def memory_list(
        scope: ReadScope = None,
        type: OptionalType = None,
        limit: Annotated[int, Field(description=f"1-{agent.MAX_LIST}.",
                                    json_schema_extra=_constrain(
                                        minimum=1, maximum=agent.MAX_LIST))] = 20,
        offset: Annotated[int, Field(description="Skip this many (paging).",
                                     json_schema_extra=_constrain(minimum=0))] = 0,
    ) -> Any:
        return _call(agent.list_memories, ws, scope=scope, type=type, limit=limit,
                     offset=offset)

    def memory_update(
        id: MemoryId,
        text: Annotated[str | None, Field(description="The new body.")] = None,
        title: Annotated[str | None, Field(description="The new title.")] = None,
        add_tags: Tags | None = None,
        remove_tags: Annotated[list[str] | None, Field(description="Tags to drop.")] = None,
        importance: Importance = None,
        confidence: Confidence = None,
        type: OptionalType = None,
        paths: Annotated[list[str] | None, Field(
            description="Replace the paths with these globs.")] = None,
        aliases: Annotated[list[str] | None, Field(
            description=f"Replace the aliases (at most {model.MAX_ALIASES} one-line "
                        "phrasings: questions it answers, synonyms, the symptom it "
                        "explains).")] = None,
    ) -> Any:
        return _call(agent.update, ws, id, text=text, title=title, add_tags=add_tags or [],
                     remove_tags=remove_tags or [], importance=importance,
                     confidence=confidence, type=type, paths=paths, aliases=aliases)

    def memory_supersede(
        id: MemoryId,
        text: Annotated[str, Field(description="The successor's text.")],
        title: Annotated[str | None, Field(description="The successor's title.")] = None,
        type: OptionalType = None,
        tags: Annotated[list[str] | None, Field(
            description="Tags (default: the old memory's).")] = None,
    ) -> Any:
        return _call(agent.supersede, ws, id, text, title=title, type=type, tags=tags)

    def memory_forget(
        id: MemoryId,
        note: Annotated[str | None, Field(description="Why (kept in its history).")] = None,
    ) -> Any:
        return _call(agent.forget, ws, id, note=note)

    def memory_context(
        query: Annotated[str | None, Field(
            description="The task at hand, to pick matching memories first.")] = None,
    ) -> Any:
        return _call(agent.session_context, ws, query)

    tools: list[tuple[Callable[..., Any], str, str, ToolAnnotations]] = [
        (memory_add, "Add a memory", ADD,
         ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                         open_world_hint=False)),
        (memory_search, "Search memories", SEARCH, READ),
        (memory_get, "Show one memory", GET, READ),
        (memory_list, "List memories", LIST, READ),
        (memory_update, "Edit a draft or personal memory", UPDATE,
         ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                         open_world_hint=False)),
        (memory_supersede, "Replace a memory", SUPERSEDE,
         ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                         open_world_hint=False)),
        (memory_forget, "Retract a memory", FORGET,
         ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                         open_world_hint=False)),
        (memory_context, "Session context", CONTEXT, READ),
    ]
    parameters = {fn.__name__: set(inspect.signature(fn).parameters) for fn, *_ in tools}
    registered = []
    for fn, title, description, hints in tools:
        tool = Tool.from_function(fn, name=fn.__name__, title=title, description=description,
                                  annotations=hints, structured_output=False)
        tool.parameters["additionalProperties"] = False  # ArgumentGuard refuses the rest
        registered.append(tool)
    server: MCPServer[Any] = MCPServer(
        NAME, title="git-memex", version=__version__,
        instructions=agent.POINTER + "\n" + agent.GUIDANCE,
        log_level="WARNING", middleware=[ArgumentGuard(parameters)], tools=registered,
    )

    @server.prompt(name="memory_context", title="Memory context",
                   description="The session-start block (what memory_context returns) as "
                               "a message: recent or query-matching memories, retrieved "
                               "history to verify before acting.")
    def context_prompt(query: Annotated[str | None, Field(
            description="The task at hand, to pick matching memories first.")] = None
                       ) -> str:
        return str(agent.session_context(ws, query)["text"])

    @server.resource(MEMORY_URI, name="memory", title="One memory",
                     description="A memory in full (what memory_get returns), by id or "
                                 "unique prefix.", mime_type="application/json")
    def memory_resource(id: str) -> str:
        try:
            found = agent.get(ws, id)
        except MemexError as exc:  # said as a tool says it (the SDK's own words hide it)
            raise ResourceError(str(exc)) from None
        return jsonout.escape_layout(json.dumps(found, ensure_ascii=False, default=str))

    return server


def _rpc_error(exc: Exception) -> ErrorData:
    """What a line that is not a JSON-RPC message gets back (JSON-RPC 2.0, id null)."""
    kinds = {e.get("type") for e in exc.errors()} if hasattr(exc, "errors") else set()
    if "json_invalid" in kinds:
        return ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
    return ErrorData(code=INVALID_REQUEST,
                     message="Invalid Request: the line is not a JSON-RPC 2.0 message")


class AnswerBadLines:
    """The stdio transport's read stream, with each line it could not read as a JSON-RPC
    message answered by an error response (-32700 or -32600) instead of dropped in
    silence, as the SDK's loop does with the exception the transport hands it."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._items = inner.__aiter__()
        self._write = write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    def __aiter__(self) -> AnswerBadLines:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self._items.__anext__()
            if not isinstance(item, Exception):
                return item
            error = JSONRPCError(jsonrpc="2.0", id=None, error=_rpc_error(item))
            await self._write.send(SessionMessage(error))

    async def receive(self) -> Any:
        try:
            return await self.__anext__()
        except StopAsyncIteration:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        self._inner.close()

    async def __aenter__(self) -> AnswerBadLines:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _serve_stdio(server: MCPServer[Any]) -> None:
    # MCPServer.run_stdio_async, with the read stream wrapped (the SDK has no hook for
    # transport errors on stdio); the test of -32700 fails if the SDK moves this.
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(AnswerBadLines(read_stream, write_stream), write_stream,
                           lowlevel.create_initialization_options())


def serve(ws: Workspace) -> None:
    """Run on stdin/stdout until the client closes the connection. Reads refresh the
    index from file-system notices where the system gives them (a stat walk per call
    elsewhere)."""
    from memex.workflows import reads

    reads.watch_changes(ws)
    server = build(ws)
    mask_logging()
    anyio.run(_serve_stdio, server)
