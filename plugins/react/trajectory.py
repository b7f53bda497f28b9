"""Trajectory recording: ``append_trajectory`` writes one JSON line per run, read back by ``read_trajectories``.

A line holds ``id``, ``agent``, ``status``, ``task``, ``conversations`` (ShareGPT-style ``{"from", "value"}``,
``from`` one of system, human, gpt, function_call, observation), ``steps``, ``usage``, ``final`` and
``questions``; one append-mode ``write``, so concurrent runs never interleave within a line.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterator

import msgspec

from zagent.agentkit.secrets import masked_arguments
from zagent.types import placeholder
from zagent.types import Message

from .state import ReActState

_ROLE = {"system": "system", "user": "human", "assistant": "gpt", "tool": "observation"}


def conversations(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages as ShareGPT turns; an assistant's tool calls become ``function_call`` turns; a model's
    reasoning rides on its first turn as ``"reasoning"`` (never inside ``value``)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        first = len(out)
        if m.content:
            out.append({"from": _ROLE[m.role], "value": m.content})
        for call in m.tool_calls:  # ``password``, ``api_token``: masked by name, as the run log keeps them
            out.append({"from": "function_call", "value": msgspec.json.encode(
                {"name": call.name, "arguments": masked_arguments(call.arguments), "id": call.id}).decode()})
        if m.reasoning:
            if len(out) == first:
                out.append({"from": _ROLE[m.role], "value": ""})
            out[first]["reasoning"] = m.reasoning
        if m.parts:  # images and files: a placeholder each, never the bytes
            if len(out) == first:
                out.append({"from": _ROLE[m.role], "value": ""})
            out[first]["parts"] = [placeholder(p) for p in m.parts]
    return out


def _whole(state: ReActState) -> list[Message]:
    """Every message of the run in order: what compression summarised comes back in before the summary."""
    messages = state.messages
    if not state.archived:
        return messages
    head = messages[:1] if messages and messages[0].role == "system" else []
    return head + list(state.archived) + messages[len(head):]


def record(state: ReActState) -> dict[str, Any]:
    """The trajectory line of a run."""
    return {
        "id": state.run_id, "agent": state.agent, "status": state.status, "task": state.task,
        "conversations": conversations(_whole(state)),
        "steps": masked_arguments(msgspec.to_builtins(state.steps)),  # each step's ``parameters``
        "usage": msgspec.to_builtins(state.usage),
        "final": state.final, "questions": state.questions,
    }


def append_trajectory(path: str, state: ReActState) -> None:
    """Append one run's line to the JSONL file at ``path`` (folders created as needed, mode 0700; the file 0600)."""
    from zagent.agentkit.secrets import masked_json

    line = masked_json(msgspec.json.encode(record(state))) + b"\n"  # a tool may return OPENAI_API_KEY
    fd = open_trajectory(path)  # 0600 in 0700 folders; no planted symlink; only a trajectory file
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


#: how the lines zagent appends to a trajectory file start, as msgspec writes them: a whole run (``record``:
#: ``{"id":"...","agent":``) or a live event (``recorder``: ``{"run":"...","seq":1``)
TRAJECTORY_START = re.compile(rb'\s*\{"(?:id":"(?:[^"\\]|\\.)*","agent":|run":"(?:[^"\\]|\\.)*","seq":\d)')


def _refuse_other(head: bytes, path: str, key: str) -> None:
    """``ConfigError`` when ``head``, the first bytes of ``path``, is neither empty nor the start of a trajectory."""
    from zagent.errors import ConfigError

    if head.strip() and not TRAJECTORY_START.match(head):
        raise ConfigError(f"{key} {path!r} is not a trajectory file (its first line is not a run zagent recorded); "
                          "zagent appends runs only to an empty file or a trajectory file, never to another file "
                          "(eval cases, batch inputs, notes). Name a new .jsonl file")


def check_trajectory_file(path: Any, key: str = "trajectory file") -> None:
    """For a spec's trajectory path when it loads: ``ConfigError`` when ``path`` holds something else than
    trajectories (``_refuse_other``); a missing file passes."""
    from zagent.agentkit.files import open_regular

    if path is None or not os.path.isfile(path):
        return
    with open_regular(path, key) as f:
        _refuse_other(f.read(4096), os.fspath(path), key)


def open_trajectory(path: str) -> int:
    """``path`` opened to append (``open_private``), after checking, through the descriptor, that it is empty or a
    trajectory file: ``ConfigError`` otherwise, nothing written."""
    from zagent.agentkit.privatefiles import open_private

    fd = open_private(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        os.lseek(fd, 0, os.SEEK_SET)  # O_APPEND: every write still goes to the end
        _refuse_other(os.read(fd, 4096), path, "trajectory file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_trajectories(path: str) -> Iterator[dict[str, Any]]:
    """Every run recorded in a JSONL trajectory file, oldest first."""
    from zagent.agentkit.files import bounded_lines, open_regular

    with open_regular(path) as f:
        for number, line in bounded_lines(f, f"the trajectory file {path!r}"):
            if line.strip():
                try:
                    yield msgspec.json.decode(line)
                except (msgspec.DecodeError, RecursionError) as exc:
                    raise ValueError(f"{path}:{number} is not a trajectory line: {exc}") from None
