"""What the model reads of a tool's return value (``to_text``) and of an exception (``describe``, URL userinfo
masked), lone surrogates replaced; ``injected``/``masked``: a result with the secrets a rail's rewrite added masked."""

from __future__ import annotations

import re
import sys
from itertools import chain
from typing import Any, Optional

import msgspec

from .._trust.secrets import Masker, Secret, looks_secret, mask_env

#: Nesting deeper than this (lists in lists...) is refused (the interpreter's recursion limit bounds it too).
MAX_DEPTH = 200
#: Characters of a tool's result (or error message) the model reads; the rest is cut, saying how much (as MCP results).
MAX_RESULT_CHARS = 200_000
_SURROGATES = re.compile("[\ud800-\udfff]")


class ResultNotText(ValueError):
    """A tool's return value that cannot be turned into text for the model."""


def clean(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (ASCII text is returned at once)."""
    if text.isascii() or _SURROGATES.search(text) is None:
        return text
    return _SURROGATES.sub("\ufffd", text)


def to_text(value: Any) -> str:
    """Text as is, bytes decoded, anything else as JSON (else its ``repr``), cut to ``MAX_RESULT_CHARS``;
    ``ResultNotText`` saying why not."""
    text = _to_text(value)
    return text if len(text) <= MAX_RESULT_CHARS else cut(text)


def cut(text: str, dropped: int = 0) -> str:
    """``text`` cut to at most ``MAX_RESULT_CHARS`` characters in all, a note saying how many were cut (so a
    result cut once, e.g. by a tool source, is never cut again); ``dropped``: characters already left out."""
    if len(text) <= MAX_RESULT_CHARS and not dropped:
        return text
    keep = MAX_RESULT_CHARS - 160  # room for the note
    return (text[:keep] + f"\n[... {len(text) - keep + dropped} more characters of the tool's result cut: the model reads "
            f"at most {MAX_RESULT_CHARS}; return less, e.g. a summary or a page of it]")


def _to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value if value.isascii() else clean(str(value))
    if isinstance(value, bytes):  # decode only what can be shown (a character is at most 4 bytes)
        shown = value[:4 * MAX_RESULT_CHARS].decode("utf-8", "replace")
        return shown if len(value) <= 4 * MAX_RESULT_CHARS else cut(shown, len(value) - 4 * MAX_RESULT_CHARS)
    if _walked(value):
        _check_size(value)
    hook = _bounded_repr()
    try:
        return msgspec.json.encode(value, enc_hook=hook).decode()
    except UnicodeEncodeError:  # a lone surrogate somewhere inside
        try:
            return msgspec.json.encode(_cleaned(value, MAX_DEPTH), enc_hook=hook).decode()
        except ResultNotText:
            raise
        except Exception:
            pass
    except ResultNotText:
        raise
    except Exception:  # JSON cannot hold it, an enc_hook repr failed, or it contains itself: repr says it
        pass
    try:
        return clean(repr(value))
    except RecursionError:
        raise ResultNotText(f"a {type(value).__name__} nested too deeply to render (more than "
                            f"{min(MAX_DEPTH, sys.getrecursionlimit())} levels)") from None
    except Exception as exc:
        raise ResultNotText(f"a {type(value).__name__} whose repr() fails ({describe(exc)})") from None


#: What a result may hold before it is rendered: values (items and keys, each time one is reached) and characters
#: of its texts. A list holding itself a million times (``a = [a, a]``, twenty times; a YAML alias bomb a tool
#: parsed) is a few objects but terabytes of JSON; the model reads ``MAX_RESULT_CHARS`` of it anyway.
MAX_RENDER_VALUES = 1_000_000
MAX_RENDER_CHARS = 64 * 1024 * 1024
_WALKED = (dict, list, tuple, set, frozenset, msgspec.Struct)


def _walked(value: Any) -> bool:
    """Whether JSON writes what ``value`` holds: a container, a struct, a dataclass or an attrs class."""
    return isinstance(value, _WALKED) or hasattr(type(value), "__dataclass_fields__") \
        or hasattr(type(value), "__attrs_attrs__")


def _fields(item: Any) -> Any:
    """The values ``_check_size`` walks under ``item``."""
    if isinstance(item, dict):
        return chain.from_iterable(item.items())
    if isinstance(item, (list, tuple, set, frozenset)):
        return item
    kind = type(item)
    names = getattr(kind, "__struct_fields__", None) or getattr(kind, "__dataclass_fields__", None) \
        or [a.name for a in getattr(kind, "__attrs_attrs__", ())]
    return (getattr(item, n, None) for n in names)


def _check_size(value: Any) -> None:
    """``ResultNotText`` when rendering ``value`` would reach more than ``MAX_RENDER_VALUES`` values or
    ``MAX_RENDER_CHARS`` characters of text: shared parts count each time, as JSON writes them (each is measured
    once), and a part inside itself once, as ``repr`` writes ``[...]``."""
    flat = _flat(value)
    if flat is not None:
        if flat[0] > MAX_RENDER_VALUES or flat[1] > MAX_RENDER_CHARS:
            _too_big(value, flat[0] > MAX_RENDER_VALUES)
        return
    sizes: dict[int, tuple[int, int]] = {}  # id of a part measured -> (values, characters) under it
    path = {id(value)}
    stack: list[list[Any]] = [[value, iter(_fields(value)), 0, 0]]
    while stack:
        frame = stack[-1]
        values, chars = frame[2], frame[3]
        for child in frame[1]:
            values += 1
            kind = type(child)
            if kind is str or kind is bytes:
                chars += len(child)
            elif kind not in _NUMBERS and _walked(child) and id(child) not in path:
                known = sizes.get(id(child)) or _flat(child)
                if known is None:
                    frame[2], frame[3] = values - 1, chars
                    path.add(id(child))
                    stack.append([child, iter(_fields(child)), 0, 0])
                    break
                values, chars = values + known[0], chars + known[1]
            if values > MAX_RENDER_VALUES or chars > MAX_RENDER_CHARS:
                _too_big(value, values > MAX_RENDER_VALUES)
        else:
            stack.pop()
            path.discard(id(frame[0]))
            sizes[id(frame[0])] = (values, chars)
            if stack:
                parent = stack[-1]
                parent[2], parent[3] = parent[2] + 1 + values, parent[3] + chars
                if parent[2] > MAX_RENDER_VALUES or parent[3] > MAX_RENDER_CHARS:
                    _too_big(value, parent[2] > MAX_RENDER_VALUES)


def _flat(item: Any) -> Optional[tuple[int, int]]:
    """``(values, characters)`` of a list or tuple of numbers, or of texts, or a dict of short keys and numbers,
    counted at C speed; else ``None``."""
    if type(item) is dict:
        if len(item) > 64 or set(map(type, item)) != _TEXT or not set(map(type, item.values())) <= _PLAIN:
            return None
        return 2 * len(item), sum(map(len, item)) + sum(len(v) for v in item.values() if type(v) is str)
    if type(item) is not list and type(item) is not tuple:
        return None
    kinds = set(map(type, item))
    if kinds <= _NUMBERS:
        return len(item), 0
    if kinds == _TEXT:
        return len(item), sum(map(len, item))
    return None


_NUMBERS = {int, float, bool, type(None)}
_TEXT = {str}
_PLAIN = _NUMBERS | _TEXT


def _too_big(value: Any, values: bool) -> None:
    what = f"more than {MAX_RENDER_VALUES:,} values" if values else f"more than {MAX_RENDER_CHARS:,} characters of text"
    raise ResultNotText(
        f"a {type(value).__name__} holding {what} once written out (parts it holds more than once count each "
        f"time), past the render limit (zagent._tools.results.MAX_RENDER_VALUES/MAX_RENDER_CHARS; the model reads "
        f"at most {MAX_RESULT_CHARS:,} characters): not rendered")


def _bounded_repr() -> Any:
    """An ``enc_hook``: ``repr`` of an object JSON cannot hold, each cut to what the model reads, and
    ``ResultNotText`` once they add up to more than ``MAX_RENDER_CHARS`` (a million objects of 1 MB reprs)."""
    left = [MAX_RENDER_CHARS]

    def hook(obj: Any) -> str:
        text = repr(obj)
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + "...[repr cut]"
        left[0] -= len(text)
        if left[0] < 0:
            raise ResultNotText(f"objects whose repr() add up to more than {MAX_RENDER_CHARS:,} characters, past "
                                "the render limit (zagent._tools.results.MAX_RENDER_CHARS): not rendered")
        return text

    return hook


def _cleaned(value: Any, depth: int) -> Any:
    """``value`` with its strings cleaned (dicts, lists and tuples followed ``depth`` levels)."""
    if depth <= 0:
        raise ResultNotText(f"nested more than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {_cleaned(k, depth - 1) if isinstance(k, str) else k: _cleaned(v, depth - 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v, depth - 1) for v in value]
    return value


def describe(exc: BaseException, arguments: Any = None, config: Any = None) -> str:
    """``TypeName: message`` of ``exc``, surrogates cleaned, URL userinfo and secret environment values masked
    (``postgres://***@db``, ``auth *** refused``: a failing client quoting its URL or key), and the values of the
    secret-named ``arguments`` of the call (``api_token``: a rail may have put them there from a vault) and of
    ``config`` (the kernel's config and the run's deps); a message that itself fails to render is skipped."""
    dropped = 0
    try:
        message = str(exc)
        if len(message) > MAX_RESULT_CHARS + 1024:  # masking is linear but not cheap: only what can be shown
            dropped, message = len(message) - MAX_RESULT_CHARS - 1024, message[:MAX_RESULT_CHARS + 1024]
        message = mask_env(message)
        if isinstance(arguments, dict) and arguments:
            message = Masker(_secret_arguments(arguments))(message)
        if config is not None:
            from .._trust.settings import config_masker

            message = config_masker(config)(message)
    except Exception:
        message = "(its message cannot be rendered)"
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return clean(text if len(text) <= MAX_RESULT_CHARS and not dropped else cut(text, dropped))


def _secret_arguments(value: Any, under: bool = False, depth: int = 20) -> list[Any]:
    """The values of a call's arguments that are secret: a ``Secret``, or text under a secret-named key at any
    depth (``auth={"token": ...}``)."""
    if isinstance(value, Secret):
        return [value]
    if isinstance(value, str):
        return [value] if under else []
    if depth <= 0:
        return []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _secret_arguments(v, under or looks_secret(str(k)), depth - 1)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _secret_arguments(v, under, depth - 1)]
    return []


def injected(before: Any, after: Any) -> Optional[Masker]:
    """A ``Masker`` of the secret-named argument values a rail's rewrite put into a call (``after``) that the
    model's own arguments (``before``) did not hold (a vault's ``api_token``); ``None`` when there are none or
    all are too short to mask (``Masker``'s lengths)."""
    seen = {_revealed(v) for v in _secret_arguments(before)}
    masker = Masker([v for v in map(_revealed, _secret_arguments(after)) if v not in seen])
    return masker if masker else None


def masked(result: Any, masker: Masker) -> Any:
    """``result`` (a ``ToolResult``) with ``masker``'s values masked in its content, error and value (text in
    dicts and lists too, 20 levels deep; other objects as they are): before the model, events or rails see it."""
    return msgspec.structs.replace(result, content=masker(result.content), value=_masked(result.value, masker, 20),
                                   error=masker(result.error) if result.error else result.error)


def _masked(value: Any, masker: Masker, depth: int) -> Any:
    if isinstance(value, str):
        return masker(value)
    if depth <= 0:
        return value
    if isinstance(value, dict):
        return {_masked(k, masker, depth - 1): _masked(v, masker, depth - 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_masked(v, masker, depth - 1) for v in value) if type(value) in (list, tuple) else value
    return value


def _revealed(value: Any) -> Any:
    return value.reveal() if isinstance(value, Secret) else value
