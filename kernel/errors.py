"""The error hierarchy, all under ``ZagentError``; every message says what went wrong and what to do,
carries the data a caller needs as attributes, and never contains secrets.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._trust.secrets import mask_userinfo


class ZagentError(Exception):
    """Base class of every error zagent raises on purpose.

    ``retryable`` says whether the same call may succeed if made again later.
    It is decided once, where the error is made (see ``ProviderError``); loops
    read it and never retry on their own: a retryable provider error has
    already been retried by the provider's policy (``max_retries``).
    """

    retryable: bool = False

    def __init__(self, *args: Any):
        # One place for every message: a URL's userinfo (``http://alice:pw@proxy``) never shows in an error,
        # nor so in logs, events, spans or the CLI that print it.
        super().__init__(*(mask_userinfo(a) if isinstance(a, str) else a for a in args))


class ConfigError(ZagentError, ValueError):
    """Bad configuration or input from the user (unknown provider, bad spec...)."""


class PluginError(ZagentError):
    """A plugin failed to import or register, or clashes with another plugin."""

    def __init__(self, message: str, *, plugin: Optional[str] = None, distribution: Optional[str] = None):
        super().__init__(message)
        self.plugin = plugin
        self.distribution = distribution


class ProviderError(ZagentError):
    """An LLM provider call failed.

    Each subclass has its class-level ``retryable`` default (a plain
    ``ProviderError`` is not retryable unless made so: 5xx, 408, 409, connection
    failures); ``retryable=`` overrides it for one error (a server's
    ``x-should-retry`` header, Anthropic's ``overloaded_error``).

    :ivar provider: provider name (``openai``...)
    :ivar status: HTTP status, or ``None`` for connection-level failures
    :ivar body: the server's message (trimmed), never the request's headers
    :ivar retryable: whether retrying later may succeed
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: Optional[int] = None,
        body: str = "",
        retryable: Optional[bool] = None,
    ):
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.body = mask_userinfo(body) if body else body
        if retryable is not None:
            self.retryable = retryable


class AuthenticationError(ProviderError):
    """401/403: the key is missing, wrong or lacks access; the message names the variable to set. Not retryable."""


class BadRequestError(ProviderError):
    """The server refused the request itself (400, 413, 422 and other 4xx): model options, messages, size. Not retryable."""


class NotFoundError(BadRequestError):
    """404: the model or the endpoint does not exist at that base URL. Not retryable."""


class ProviderConfigError(ProviderError, ConfigError):
    """The provider cannot be used as configured (a base URL that is not http/https...). Not retryable."""


class RateLimitError(ProviderError):
    """429 after all retries were spent. ``retry_after`` is the server's last hint, in seconds. Retryable later."""

    retryable = True

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **kw: Any):
        super().__init__(message, **kw)
        self.retry_after = retry_after


class ProviderTimeout(ProviderError):
    """The server did not answer within the configured timeout (connect, read, write or pool). Retryable later."""

    retryable = True


class DeadlineExceeded(ProviderTimeout):
    """The whole call (connect, every read, the stream, retries) ran past ``deadline``. Not retryable.

    :ivar deadline: the limit in seconds.
    :ivar partial: text a stream delivered before the deadline ("" otherwise).
    """

    retryable = False

    def __init__(self, message: str, *, deadline: float = 0.0, partial: str = "", **kw: Any):
        super().__init__(message, **kw)
        self.deadline = deadline
        self.partial = partial


class ResponseTooLarge(ProviderError):
    """A reply (or a stream, counted whole) was longer than ``max_response_bytes``. Not retryable.

    :ivar limit: the limit in bytes.
    """

    def __init__(self, message: str, *, limit: int = 0, **kw: Any):
        super().__init__(message, **kw)
        self.limit = limit


class ProtocolError(ProviderError):
    """A 200 reply that is not what the protocol promises (not JSON, not an event stream). Not retryable:
    the base URL most likely points at something else (a web page, a proxy's login form, another API)."""


class StreamInterrupted(ProviderError):
    """A stream ended before its end marker; ``partial`` holds the text received so far. Retryable."""

    retryable = True

    def __init__(self, message: str, *, partial: str = "", partial_tool_calls: Sequence[Any] = (), **kw: Any):
        super().__init__(message, **kw)
        self.partial = partial
        self.partial_tool_calls = list(partial_tool_calls)


class Refusal(ZagentError):
    """The model refused to answer (OpenAI ``refusal``) a call that asked for structured output.

    :ivar refusal: the model's refusal text
    :ivar completion: the whole reply (its ``text`` is empty or partial)
    """

    def __init__(self, message: str, *, refusal: str = "", completion: Any = None):
        super().__init__(message)
        self.refusal = refusal
        self.completion = completion


class ParseError(ZagentError, ValueError):
    """A reply could not be parsed into the requested fields.

    :ivar raw: the model's raw text, kept whole
    :ivar missing: names of required fields that were absent
    :ivar invalid: ``{field: reason}`` for fields present but of the wrong type
    :ivar attempts: every raw reply tried (the first one and the repair answer)
    """

    def __init__(
        self,
        message: str,
        *,
        raw: str = "",
        missing: Sequence[str] = (),
        invalid: Optional[dict[str, str]] = None,
        attempts: Sequence[str] = (),
    ):
        super().__init__(message)
        self.raw = raw
        self.missing = list(missing)
        self.invalid = dict(invalid or {})
        self.attempts = list(attempts)


class ToolError(ZagentError):
    """A tool could not be defined, found or called (raised to programs, not to models)."""


class ToolBlocked(ZagentError):
    """A rail denied a call. ``reason`` is what the model and the user are told."""

    def __init__(self, reason: str, *, rail: Optional[str] = None):
        super().__init__(reason)
        self.reason = reason
        self.rail = rail


class NoAnswerError(ZagentError):
    """A loop ran out of budget (steps, tool calls, time, tokens) without an answer.

    :ivar trajectory: the messages/steps produced so far, never discarded
    :ivar limit: which bound was hit (``max_steps``, ``max_time``...)
    """

    def __init__(self, message: str, *, trajectory: Sequence[Any] = (), limit: str = ""):
        super().__init__(message)
        self.trajectory = list(trajectory)
        self.limit = limit


class RunAborted(ZagentError):
    """A run was aborted by its owner; ``trajectory`` holds what was done."""

    def __init__(self, message: str = "run aborted", *, trajectory: Sequence[Any] = ()):
        super().__init__(message)
        self.trajectory = list(trajectory)


class RunStopped(ZagentError):
    """A rail, guardrail or limit ended the whole run on purpose. Rails and tool runners let it through
    (never turned into a deny or a tool error), so it reaches the caller of the run."""


class Interrupted(RunStopped):
    """``zagent.interrupt(question)`` asked a person and has no answer yet: the workflow or group chat around it
    ends ``paused`` (``zagent.agentkit.interrupts``). ``interrupt`` holds the question, its position among the
    node's (turn's) interrupts and where it was asked. Rails and tool runners let it through."""

    def __init__(self, message: str, *, interrupt: Any):
        super().__init__(message)
        self.interrupt = interrupt


class UsageLimitExceeded(RunStopped):
    """A run's usage limit (``rails.usage_limits``) was reached: ``limit`` is its key, ``count`` the
    run's count that would exceed it (or did, for tokens), ``allowed`` the limit."""

    def __init__(self, message: str, *, limit: str, count: int, allowed: int):
        super().__init__(message)
        self.limit, self.count, self.allowed = limit, count, allowed


class GuardrailTripped(RunStopped):
    """An input or output guardrail stopped the run: ``guardrail`` names it, ``where`` is ``"input"`` or
    ``"output"``, ``reason`` is what it said."""

    def __init__(self, guardrail: str, reason: str, where: str):
        super().__init__(f"{where} guardrail {guardrail!r} tripped: {reason}")
        self.guardrail, self.reason, self.where = guardrail, reason, where


class CheckpointError(ZagentError):
    """A run's checkpoint could not be written, so the run stopped (it fails closed).

    Raised by the loops that checkpoint (the ReAct loop, workflows, group chats) when their store's write
    raises (a full disk, a locked or read-only file, a store of your own that failed). Nothing already
    checkpointed is lost: the store holds the run as of ``last_step``, and the run resumes from there once the
    store works again (the work after it runs again).

    :ivar run_id: the run whose checkpoint failed
    :ivar step: the checkpoint step that was being written
    :ivar store: the checkpoint store
    :ivar last_step: the last checkpoint this run wrote that landed (``None``: none in this process)
    :ivar cause: the store's error (also ``__cause__``)
    """

    def __init__(self, message: str, *, run_id: str = "", step: int = 0, store: Any = None,
                 last_step: Optional[int] = None, cause: Optional[BaseException] = None):
        super().__init__(message)
        self.run_id = run_id
        self.step = step
        self.store = store
        self.last_step = last_step
        self.cause = cause
