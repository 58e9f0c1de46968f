"""A Spark Connect client's view of its server: how long it waits for a server that does not answer, and whether
an error means the server is gone. No Spark here (pyspark's Connect client is imported only when asked).

pyspark's own retries wait up to ten minutes for an unreachable server; a scheduled run should rather end at once
with a line that says what happened, since the next run recovers (the lock, the run log, the state) as after any
stopped run.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SERVER_WAIT_S", "server_gone", "server_gone_message", "bounded_retries"]

# About how long a client keeps retrying a server that does not answer: a restart under way has this long to listen.
SERVER_WAIT_S = 30
_GONE = "UNAVAILABLE"  # gRPC's status code of a server that cannot be reached (refused, reset, closed)


def server_gone(exc: BaseException) -> bool:
    """Whether `exc` (or an exception it was raised from) says the Spark Connect server cannot be reached."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "getGrpcStatusCode", None) or getattr(current, "code", None)
        try:
            name = getattr(code(), "name", None) if callable(code) else None
        except Exception:  # a foreign `code` method that wants arguments: not gRPC's
            name = None
        if name == _GONE:
            return True
        current = current.__cause__ or current.__context__
    return False


def server_gone_message() -> str:
    """The one line a client says when its server is gone: what happened and that the next run recovers."""
    return (
        f"the Spark Connect server (--remote) is gone (not answering for {SERVER_WAIT_S} s: stopped, restarted or "
        "unreachable); start it again (`deltainc serve`): the next run recovers this one's lock, run log and state"
    )


def bounded_retries(session: Any) -> None:
    """Make `session` (a Connect session) give up on an unreachable server after about SERVER_WAIT_S seconds
    rather than pyspark's ten minutes. It replaces pyspark's one retry policy, so every error pyspark retries (the
    same errors as before) now gets this bound, not only an unreachable server."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    # backoffs of 0.05, 0.2, 0.8, 3.2, 8, 8, 8 s (plus jitter): about 30 s in all
    session.client.set_retry_policies([DefaultPolicy(max_retries=7, max_backoff=8000)])
