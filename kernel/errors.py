"""The error hierarchy, all under ``ZagentError``; every message says what went wrong and what to do,
carries the data a caller needs as attributes, and never contains secrets.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._trust.secrets import mask_userinfo


class ZagentError(Exception):
    """Base class of every error zagent raises on purpose; ``retryable``: the same call may succeed later."""

    retryable: bool = False

    def __init__(self, *args: Any):
        # a URL's userinfo (``http://alice:pw@proxy``) never shows in a message
        super().__init__(*(mask_userinfo(a) if isinstance(a, str) else a for a in args))


class ConfigError(ZagentError, ValueError):
    """Bad configuration or input from the user (unknown provider, bad spec...); ``key``: the setting no loaded
    plugin reads, for that error (``zagent_config_keys``)."""

    key: Optional[str] = None


class PluginError(ZagentError):
    """A plugin failed to import or register, or clashes with another plugin."""

    def __init__(self, message: str, *, plugin: Optional[str] = None, distribution: Optional[str] = None):
        super().__init__(message)
        self.plugin = plugin
        self.distribution = distribution


class ProviderError(ZagentError):
    """An LLM provider call failed: ``provider`` (its name), ``status`` (HTTP, ``None`` for a connection
    failure), ``body`` (the server's message, trimmed). ``retryable=`` overrides the class's default."""

    def __init__(self, message: str, *, provider: str = "", status: Optional[int] = None, body: str = "",
                 retryable: Optional[bool] = None):
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
    """The whole call (connect, reads, stream, retries) ran past ``deadline`` seconds; ``partial``: text a
    stream delivered before it. Not retryable."""

    retryable = False

    def __init__(self, message: str, *, deadline: float = 0.0, partial: str = "", **kw: Any):
        super().__init__(message, **kw)
        self.deadline = deadline
        self.partial = partial


class ResponseTooLarge(ProviderError):
    """A reply (a stream counted whole) was longer than ``max_response_bytes`` (``limit``). Not retryable."""

    def __init__(self, message: str, *, limit: int = 0, **kw: Any):
        super().__init__(message, **kw)
        self.limit = limit


class ProtocolError(ProviderError):
    """A 200 reply that is not what the protocol promises (not JSON, not an event stream). Not retryable."""


class StreamInterrupted(ProviderError):
    """A stream ended before its end marker; ``partial`` holds the text received so far. Retryable."""

    retryable = True

    def __init__(self, message: str, *, partial: str = "", partial_tool_calls: Sequence[Any] = (), **kw: Any):
        super().__init__(message, **kw)
        self.partial = partial
        self.partial_tool_calls = list(partial_tool_calls)


class Refusal(ZagentError):
    """The model refused (OpenAI ``refusal``) a call asking for structured output: ``refusal`` is its text,
    ``completion`` the whole reply."""

    def __init__(self, message: str, *, refusal: str = "", completion: Any = None):
        super().__init__(message)
        self.refusal = refusal
        self.completion = completion


class ParseError(ZagentError, ValueError):
    """A reply could not be parsed into the requested fields: ``raw`` (the text, whole), ``missing`` (required
    fields absent), ``invalid`` (``{field: reason}``), ``attempts`` (every raw reply tried)."""

    def __init__(self, message: str, *, raw: str = "", missing: Sequence[str] = (),
                 invalid: Optional[dict[str, str]] = None, attempts: Sequence[str] = ()):
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
    """A loop ran out of budget without an answer: ``limit`` names the bound (``max_steps``...),
    ``trajectory`` holds the steps so far."""

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
    """A rail, guardrail or limit ended the whole run on purpose; rails and tool runners let it through."""


class Interrupted(RunStopped):
    """``zagent.interrupt(question)`` has no answer yet: the run around it ends ``paused``. ``interrupt`` holds
    the question, its position and where it was asked."""

    def __init__(self, message: str, *, interrupt: Any):
        super().__init__(message)
        self.interrupt = interrupt


class UsageLimitExceeded(RunStopped):
    """A run's usage limit (``rails.usage_limits``) ``limit`` was reached: ``count`` would exceed ``allowed``."""

    def __init__(self, message: str, *, limit: str, count: int, allowed: int):
        super().__init__(message)
        self.limit, self.count, self.allowed = limit, count, allowed


class GuardrailTripped(RunStopped):
    """Guardrail ``guardrail`` stopped the run at its ``where`` (``"input"``/``"output"``) for ``reason``."""

    def __init__(self, guardrail: str, reason: str, where: str):
        super().__init__(f"{where} guardrail {guardrail!r} tripped: {reason}")
        self.guardrail, self.reason, self.where = guardrail, reason, where


class CheckpointError(ZagentError):
    """Checkpoint ``step`` of run ``run_id`` could not be written to ``store`` (``cause``), so the run stopped;
    it resumes from ``last_step`` (the last that landed, ``None``: none in this process). Also raised for a
    damaged or edited checkpoint."""

    def __init__(self, message: str, *, run_id: str = "", step: int = 0, store: Any = None,
                 last_step: Optional[int] = None, cause: Optional[BaseException] = None):
        super().__init__(message)
        self.run_id = run_id
        self.step = step
        self.store = store
        self.last_step = last_step
        self.cause = cause
