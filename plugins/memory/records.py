"""What the memory stores keep and report, as msgspec Structs.

Messages themselves are ``zagent.Message`` (stored msgpack-encoded). This
module adds the search filters and the checkpoint records. New fields always
get a default (msgspec schema evolution).
"""

from __future__ import annotations

from typing import Any, Optional

import msgspec

from zagent import ConfigError, Message

FILTERS = ("agent", "session", "role", "since", "until")


class Filters(msgspec.Struct, kw_only=True, frozen=True):
    """Metadata filters of a search: all given ones must match.

    ``agent`` and ``session`` are the two halves of a namespace
    ``"agent/session"``; ``since``/``until`` are Unix times (inclusive)
    of when a message was added; ``role`` is a ``Message`` role.
    """

    agent: Optional[str] = None
    session: Optional[str] = None
    role: Optional[str] = None
    since: Optional[float] = None
    until: Optional[float] = None

    @classmethod
    def of(cls, filters: dict[str, Any]) -> "Filters":
        """Build from ``**filters`` keywords; unknown names are a ``ConfigError``."""
        unknown = sorted(set(filters) - set(FILTERS))
        if unknown:
            raise ConfigError(f"unknown memory filter(s) {unknown}; use any of {list(FILTERS)}")
        try:
            return msgspec.convert(filters, cls, strict=False)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"bad memory filter: {exc}; agent/session/role are strings, "
                              "since/until are Unix times (numbers)") from None

    def matches(self, namespace: str, role: str, created: float) -> bool:
        """Whether a message of ``namespace``/``role`` added at ``created`` passes (in-process use)."""
        agent, session = split_namespace(namespace)
        return ((self.agent is None or agent == self.agent)
                and (self.session is None or session == self.session)
                and (self.role is None or role == self.role)
                and (self.since is None or created >= self.since)
                and (self.until is None or created <= self.until))


class RunInfo(msgspec.Struct, kw_only=True, frozen=True):
    """One run of the checkpoint store, as ``CheckpointStore.list()`` reports it."""

    run_id: str
    kind: str
    last_step: int
    steps: int
    created: float
    updated: float
    metadata: dict[str, Any] = {}


def split_namespace(namespace: str) -> tuple[str, str]:
    """``"agent/session"`` -> ``("agent", "session")``; no ``/`` -> ``(namespace, "")``."""
    agent, _, session = namespace.partition("/")
    return agent, session


def check_namespace(namespace: Any) -> str:
    """A namespace is a non-empty string of at most 4096 bytes; anything else is a ``ConfigError``."""
    if not isinstance(namespace, str) or not namespace:
        raise ConfigError(f"memory namespace must be a non-empty string such as 'agent/session', "
                          f"got {namespace!r}")
    if len(namespace) > 1024:  # a name too long to be listed again (sqlitefile.MAX_NAME_BYTES)
        from .sqlitefile import check_name_size

        check_name_size(namespace, "a memory namespace")
    return namespace


def as_messages(messages: Any) -> list[Message]:
    """Accept one ``Message``/dict or a list of them; dicts are validated into ``Message``."""
    if isinstance(messages, (Message, dict)):
        messages = [messages]
    if isinstance(messages, (str, bytes)) or not hasattr(messages, "__iter__"):
        raise ConfigError(f"expected a Message, a dict or a list of them, got {type(messages).__name__}; "
                          "wrap text as zagent.Message.user(text)")
    out = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m)
            continue
        try:
            out.append(msgspec.convert(m, Message))
        except (msgspec.ValidationError, TypeError) as exc:
            raise ConfigError(f"cannot store {m!r} as a message: {exc}; give zagent.Message "
                              "objects or dicts like {'role': 'user', 'content': '...'}") from None
    return out


def check_count(n: Any, what: str = "n") -> int:
    """A count argument must be a non-negative int."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ConfigError(f"{what} must be a non-negative integer, got {n!r}")
    return n


def check_run_id(run_id: Any) -> str:
    """A run id must be a non-empty string."""
    if not isinstance(run_id, str) or not run_id:
        raise ConfigError(f"run_id must be a non-empty string, got {run_id!r}")
    return run_id


def message_text(message: Message) -> str:
    """The text indexed for recall: the content plus the names of any tool calls."""
    parts = [message.content or ""]
    parts.extend(call.name for call in message.tool_calls)
    return " ".join(p for p in parts if p)
