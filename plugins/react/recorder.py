"""``TrajectoryRecorder``: Agent-Z's recorder API plus ``add_step``, writing as it happens.

Each event (``start``, ``message``, ``step``, ``end``) is one JSON line appended with one ``write``, so a killed
run keeps every step it finished and concurrent runs never interleave within a line. ``read_live`` gives one
record per run (``"status": "incomplete"`` without an ``end``).
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterator, Optional

import msgspec

_encode = msgspec.json.Encoder(enc_hook=repr).encode


def _open_append(path: str) -> int:
    """The file's descriptor, appending (``zagent.agentkit.privatefiles``: folders 0700, the file 0600, no planted link;
    only an empty or trajectory file: ``trajectory.open_trajectory``)."""
    from .trajectory import open_trajectory

    return open_trajectory(path)


class TrajectoryRecorder:
    """Appends one run's events to the JSONL file ``path`` as they happen (see the module docstring)."""

    def __init__(self, path: str, run_id: Optional[str] = None, *, agent: str = ""):
        from zagent.agentkit.runs import new_run_id

        self.path = os.fspath(path)
        self.run_id = run_id or new_run_id()
        self.agent = agent
        self.seq = 0
        self.lines: list[dict[str, Any]] = []
        self.status: Optional[str] = None

    def _append(self, event: str, **data: Any) -> dict[str, Any]:
        self.seq += 1
        line = {"run": self.run_id, "seq": self.seq, "event": event, "time": round(time.time(), 3), **data}
        from zagent.agentkit.secrets import masked_json

        fd = _open_append(self.path)
        try:
            os.write(fd, masked_json(_encode(line)) + b"\n")  # a tool may return OPENAI_API_KEY
        finally:
            os.close(fd)
        self.lines.append(line)
        return line

    # -- Agent-Z's API -----------------------------------------------------------------

    def initialize(self, task: str = "", system: str = "") -> None:
        """The run's first line: its agent, task and system prompt."""
        self._append("start", agent=self.agent, task=task, **({"system": system} if system else {}))

    def add_human_message(self, text: str) -> None:
        self._append("message", **{"from": "human", "value": text})

    def add_gpt_message(self, text: str, reasoning: str = "") -> None:
        self._append("message", **{"from": "gpt", "value": text, **({"reasoning": reasoning} if reasoning else {})})

    def add_tool_call(self, name: str, arguments: Any, call_id: str = "") -> None:
        from zagent.agentkit.secrets import masked_arguments  # ``password``: masked by name, as the run log does

        value = _encode({"name": name, "arguments": masked_arguments(arguments), "id": call_id}).decode()
        self._append("message", **{"from": "function_call", "value": value})

    def add_tool_response(self, name: str, content: str, call_id: str = "", state: str = "success") -> None:
        self._append("message", **{"from": "observation", "value": content, "name": name, "id": call_id,
                                   "state": state})

    def add_step(self, step: Any) -> None:
        """A ReAct ``StepResult`` (or any dict of it), as one ``step`` line."""
        from zagent.agentkit.secrets import masked_arguments  # its ``parameters``, as ``add_tool_call``

        self._append("step", step=masked_arguments(msgspec.to_builtins(step)))

    def save_trajectory(self, status: str = "completed", final: Optional[str] = None) -> None:
        """The run's last line: how it ended."""
        self.status = status
        self._append("end", status=status, **({"final": final} if final is not None else {}))

    def get_trajectory(self) -> dict[str, Any]:
        """What this recorder wrote, as one record (the shape ``read_live`` gives back)."""
        return _record(self.run_id, self.lines)


class LiveSteps:
    """The ReAct loop's side of a recorder: new steps written at each checkpoint point, the end once."""

    def __init__(self, path: str, state: Any, *, resumed: bool):
        self.recorder = TrajectoryRecorder(path, state.run_id, agent=state.agent)
        self.written = len(state.steps) if resumed else 0
        self.ended = False
        if resumed:
            self.recorder._append("resume", step=state.step)
        else:
            self.recorder.initialize(task=state.task)

    def sync(self, state: Any) -> None:
        for step in state.steps[self.written:]:
            self.recorder.add_step(step)
        self.written = len(state.steps)
        if state.status in ("completed", "failed", "aborted") and not self.ended:
            self.ended = True
            self.recorder.save_trajectory(state.status, final=state.final)


def _record(run_id: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    start = next((x for x in lines if x.get("event") == "start"), {})
    end = next((x for x in reversed(lines) if x.get("event") == "end"), None)
    turns = [{k: v for k, v in x.items() if k not in ("run", "seq", "event", "time")}
             for x in lines if x.get("event") == "message"]
    return {"id": run_id, "agent": start.get("agent", ""), "task": start.get("task", ""),
            "status": end["status"] if end else "incomplete", "final": (end or {}).get("final"),
            "conversations": turns, "steps": [x["step"] for x in lines if x.get("event") == "step"]}


def read_live(path: str) -> Iterator[dict[str, Any]]:
    """Every run of a live trajectory file, in the order they started; a line cut short by a kill (the
    last one) is skipped."""
    runs: dict[str, list[dict[str, Any]]] = {}
    from zagent.agentkit.files import bounded_lines, open_regular

    with open_regular(path) as f:
        for _, raw in bounded_lines(f, f"the trajectory file {path!r}"):
            try:
                line = msgspec.json.decode(raw)
            except (msgspec.DecodeError, RecursionError):
                continue
            if isinstance(line, dict) and isinstance(line.get("run"), str):
                runs.setdefault(line["run"], []).append(line)
    for run_id, lines in runs.items():
        yield _record(run_id, lines)


__all__ = ["TrajectoryRecorder", "read_live"]
