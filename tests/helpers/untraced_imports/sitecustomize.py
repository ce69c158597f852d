"""Put on PYTHONPATH of the MCP servers the tests start (mcp_helpers.make_env): under the
README command (coverage's C tracer started from the environment), a package that is not
memex/ is imported with the tracer paused in that thread (the MCP SDK, pydantic and anyio
cost ~1 CPU s more per server traced). memex/ and everything it runs are measured as
before; nothing changes without coverage (docs/decisions.md)."""

import builtins
import sys


def _install() -> None:
    tracer = sys.gettrace()
    if tracer is None or type(tracer).__name__ != "CTracer":
        return
    real = builtins.__import__

    def untraced_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name not in sys.modules and name.partition(".")[0] != "memex":
            tracer = sys.gettrace()
            if tracer is not None and type(tracer).__name__ == "CTracer":
                tracer.stop()
                try:
                    return real(name, globals, locals, fromlist, level)
                finally:
                    tracer.start()
        return real(name, globals, locals, fromlist, level)

    builtins.__import__ = untraced_import


_install()
