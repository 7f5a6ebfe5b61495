"""What can go wrong in a model call, as types: a failure worth retrying, a request the
endpoint refuses, and the :class:`ModelFailure` a call ends in when neither retries nor
the request can fix it. Every message is one line naming the role and the endpoint."""

from __future__ import annotations

from guiforge.failures import MODEL_FAILURE, Fault


class TransientError(Exception):
    """A failure worth retrying (429, 5xx, timeout, connection refused or reset, a body
    cut short or unreadable).

    ``status`` and ``retry_after_s`` come from the SDK error it was raised from when not
    given: the HTTP status and the server's retry-after hint."""

    def __init__(self, message: str = "", status: int | None = None, retry_after_s: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s

    def hints(self) -> tuple[int | None, float | None]:
        from guiforge.models.limits import retry_after_s

        status, wait = self.status, self.retry_after_s
        response = getattr(self.__cause__, "response", None)  # openai/anthropic APIStatusError
        if response is not None:
            if status is None:
                status = getattr(response, "status_code", None)
            if wait is None:
                wait = retry_after_s(getattr(response, "headers", None))
        return status, wait


class RequestRejected(Exception):
    """The endpoint refused the request itself (a 4xx such as 400 context too long, 401,
    404): sending it again gets the same answer, so it is not retried."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class ModelFailure(Fault):
    """A call that failed for good: retries exhausted, an unreadable body, a rejected
    request. The unit of work it belonged to is recorded as ``model_failure``."""

    kind = MODEL_FAILURE

    def __init__(self, message: str, status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.status = status
        self.attempts = attempts


def describe_error(exc: BaseException) -> str:
    """What went wrong, in a few words, from the whole chain of causes (the SDKs report a
    refused connection as a timeout; the socket error underneath says what it was)."""
    chain, seen = [], set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        chain.append(node)
        node = node.__cause__ or node.__context__
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    if any(isinstance(e, ConnectionResetError) for e in chain):
        return "connection reset"
    if any("Timeout" in type(e).__name__ for e in chain):
        return "no answer before the timeout"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__
