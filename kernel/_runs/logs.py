"""The ``zagent`` logger (``log``), importing ``logging`` on first use. Records of the ``zagent`` loggers reach the
app's handlers with secret environment values and URL passwords masked, tracebacks included (``mask_logs``)."""

from __future__ import annotations

from typing import Any

#: the loggers zagent and its plugins write to (a logger's filter sees only its own records)
LOGGERS = ("zagent", "zagent.tools", "zagent.grounding", "zagent.workflow", "zagent.mcp")
_masking: list[bool] = []  # [True] once the filters are on


class _LazyLogger:
    """Stands in for ``logging.getLogger("zagent")`` until something is logged."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        import logging

        if not _masking:
            mask_logs()
        return getattr(logging.getLogger("zagent"), name)

    def __repr__(self) -> str:
        return "<lazy logger 'zagent'>"


def mask_logs() -> None:
    """Give each of ``LOGGERS`` the filter masking its records (once)."""
    import logging

    _masking[:] = [True]
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _masked_record not in logger.filters:
            logger.addFilter(_masked_record)


def _masked_record(record: Any) -> bool:
    """A logging filter: the record's message, traceback and stack with secrets masked (``mask_env``): a plugin's
    or a library's exception may quote ``OPENAI_API_KEY``. A standard ``Formatter`` shows the masked traceback."""
    from .._trust.secrets import mask_env

    try:
        message = record.getMessage()
        if (masked := mask_env(message)) != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            import logging

            text = logging.Formatter().formatException(record.exc_info)
            if (masked := mask_env(text)) != text:
                record.exc_text = masked
        if record.stack_info:
            record.stack_info = mask_env(record.stack_info)
    except Exception:  # a record that cannot be rendered: its handler reports that, as without the filter
        pass
    return True


log = _LazyLogger()
