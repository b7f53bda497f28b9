"""``RunLogger``: one kernel's paired events (and, last of all rails, each LLM and tool call's content) as run log rows.
A run's rows are written in one transaction off the event loop when its top span ends; runs still open when the kernel
closes are written then, open spans ``unfinished``. A model call keeps only the messages its agent's previous call did
not (a run's log grows with its steps, not their square). Never raises into a run.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Optional

import msgspec

import zagent
from zagent.agentkit.runs import log
from zagent import current_span_id

from .scrub import scrub
from zagent.agentkit.secrets import env_masker

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

_encode = msgspec.json.Encoder(enc_hook=repr).encode

#: runs whose rows are held at once; past it the oldest is written as it stands (open spans ``unfinished``): a
#: cancelled run never ends, and its rows would be held until the kernel closes
MAX_HELD_RUNS = 1000

NAME_KEYS = {"llm": "model", "tool": "tool", "node": "node", "turn": "speaker", "workflow": "workflow",
             "skill": "skill"}


class RunLogger:
    """The run log observer of one kernel (added by the plugin when logging is on)."""

    def __init__(self, kernel: "Kernel", path: str):
        self.path = path
        self._owner = kernel.span_owner  # spans pair per kernel (zagent._runs.spans)
        self._store: Any = None
        self._lock = threading.Lock()
        # One writer at a time, and never a write racing the close: SQLite connections closed under a
        # write in another thread crash the process (a batch interrupted by Ctrl-C did, with SIGSEGV).
        self._io = threading.Lock()
        self._closed = False
        self._open: dict[str, dict[str, Any]] = {}      # span id -> row of a span not ended yet
        self._runs: dict[str, list[dict[str, Any]]] = {}  # run key -> finished rows
        self._content: dict[str, dict[str, Any]] = {}   # span id -> request/reply or arguments/result
        self._prompts: dict[tuple[str, Any], tuple[str, list[bytes]]] = {}  # (run, agent) -> its last model call
        self._held: dict[str, None] = {}  # run keys with rows held, oldest first

    # -- rails (last: they see what redaction rails left) ---------------------------------

    @zagent.hookimpl(trylast=True)
    def zagent_after_llm_call(self, request: Any, response: Any) -> None:
        span = current_span_id(self._owner)
        if span is not None:
            try:
                mask = env_masker()  # a tool may have shown OPENAI_API_KEY's value, and the model repeat it
                self._content[span] = {
                    "request": {**self._new_messages(span, scrub(request.messages, mask=mask)),
                                "tools": [t.name for t in request.tools], "options": scrub(request.options)},
                    "reply": {"content": _masked(response.message.content, mask),
                              "tool_calls": scrub(response.message.tool_calls, mask=mask),
                              "finish_reason": response.finish_reason}}
            except Exception:  # an observer never breaks a run
                log.exception("runlog: could not record an LLM reply")

    @zagent.hookimpl(trylast=True)
    def zagent_after_tool_call(self, call: Any, result: Any) -> None:
        span = current_span_id(self._owner)
        if span is not None:
            try:
                mask = env_masker()
                self._content[span] = {"arguments": scrub(call.arguments, mask=mask),
                                       "result": _masked(result.content, mask), "state": result.state}
            except Exception:
                log.exception("runlog: could not record a tool result")

    def _new_messages(self, span: str, messages: list[Any]) -> dict[str, Any]:
        """``{"messages": ...}`` of a model call: only those its agent's previous call in the run did not start with,
        after ``"earlier": n, "earlier_span": id`` (``RunLogStore.spans`` puts them back), so a run of n steps
        stores its prompts once, not n times over."""
        with self._lock:
            row = self._open.get(span)
            if row is None:
                return {"messages": messages}
            key = (row["run_id"], row["agent"])
            encoded = [_encode(m) for m in messages]
            last = self._prompts.get(key)
            self._prompts[key] = (span, encoded)
        if last is None:
            return {"messages": messages}
        same = 0
        for old, new in zip(last[1], encoded):
            if old != new:
                break
            same += 1
        if not same:
            return {"messages": messages}
        return {"earlier": same, "earlier_span": last[0], "messages": messages[same:]}

    # -- events -------------------------------------------------------------------------------

    def zagent_event(self, event: Any) -> Any:
        """Sync (no coroutine per event); a run's rows, once it ended, are written in a thread: the future of
        that write is returned, and the kernel awaits it."""
        done = self._take(event)
        if done:
            import asyncio

            try:
                return asyncio.get_running_loop().run_in_executor(None, self._write, done)
            except RuntimeError:  # the interpreter is exiting (a run Ctrl-C or SIGTERM cancelled ended late)
                self._write(done)
        return None

    def zagent_kernel_close(self) -> None:
        with self._lock:
            for row in self._open.values():
                row.update(outcome="unfinished")
                self._runs.setdefault(row["run_id"], []).append(row)
            self._open.clear()
            rows = [r for run in self._runs.values() for r in run]
            self._runs.clear()
            self._held.clear()
        with self._io:
            if rows and not self._closed:
                self._write_now(rows)
            if self._store is not None:
                self._store.close()
            self._closed = True

    def _take(self, event: Any) -> Optional[list[dict[str, Any]]]:
        """Record ``event``; the rows of its run when it ended a top span, or of the oldest run held when more
        than ``MAX_HELD_RUNS`` are, else ``None``."""
        type, data = event.type, event.data
        with self._lock:
            if event.span_id is not None and type.endswith("_start"):
                kind = type[:-6]
                run = event.run_id or event.parent_id or event.span_id
                self._open[event.span_id] = {
                    "run_id": run, "span_id": event.span_id,
                    "parent_id": event.parent_id, "kind": kind, "name": _name(kind, data, event),
                    "agent": event.agent, "started": event.time, "data": {"start": scrub(data)}}
                self._held[run] = None
                return self._evicted() if len(self._held) > MAX_HELD_RUNS else None
            row = self._open.pop(event.span_id, None) if event.span_id is not None else None
            if row is None:  # a point event, or an end whose start came before logging began
                row = {"run_id": event.run_id or event.parent_id or event.span_id or "-", "span_id": event.span_id,
                       "parent_id": event.parent_id, "kind": "event" if event.span_id is None else type[:-4],
                       "name": type, "agent": event.agent, "started": event.time, "data": {}}
            if event.span_id is not None:
                self._end(row, type, data)
            else:
                row["data"] = scrub(data)
            self._runs.setdefault(row["run_id"], []).append(row)
            self._held[row["run_id"]] = None
            if event.span_id is not None and event.parent_id is None:
                for key in [key for key in self._prompts if key[0] == row["run_id"]]:
                    del self._prompts[key]
                self._held.pop(row["run_id"], None)
                return self._runs.pop(row["run_id"], [])
            return self._evicted() if len(self._held) > MAX_HELD_RUNS else None

    def _evicted(self) -> list[dict[str, Any]]:
        """The rows of the oldest run held (its open spans ``unfinished``), forgotten (under ``_lock``)."""
        run = next(iter(self._held))
        del self._held[run]
        rows = self._runs.pop(run, [])
        for span in [span for span, row in self._open.items() if row["run_id"] == run]:
            row = self._open.pop(span)
            row.update(outcome="unfinished")
            self._content.pop(span, None)
            rows.append(row)
        for key in [key for key in self._prompts if key[0] == run]:
            del self._prompts[key]
        return rows

    def _end(self, row: dict[str, Any], type: str, data: dict[str, Any]) -> None:
        usage = data.get("usage") or {}
        row["duration"] = data.get("duration")
        row["outcome"] = data.get("outcome")
        if row["kind"] == "llm":
            row["input_tokens"], row["output_tokens"] = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        if row["kind"] == "skill" and data.get("skill"):
            row["name"] = str(data["skill"])
        row["data"]["end"] = scrub(data)
        row["data"]["end_type"] = type
        content = self._content.pop(row["span_id"], None)
        if content is not None:
            row["data"].update(content)

    def _write(self, rows: list[dict[str, Any]]) -> None:
        with self._io:
            if self._closed:  # the kernel closed while this run's rows were on their way
                log.warning("runlog: %d rows arrived after the kernel closed and were not written", len(rows))
                return
            self._write_now(rows)

    def _write_now(self, rows: list[dict[str, Any]]) -> None:
        try:
            if self._store is None:
                from .store import RunLogStore

                self._store = RunLogStore.open(self.path)
            self._store.write(rows)
        except Exception:  # a full disk or a locked file must not break the run
            log.exception("runlog: could not write %d rows to %s", len(rows), self.path)

    def __repr__(self) -> str:
        return f"<RunLogger {self.path}>"


def _name(kind: str, data: dict[str, Any], event: Any) -> str:
    key = NAME_KEYS.get(kind)
    if key and data.get(key) is not None:
        return str(data[key])
    if kind == "step":
        return f"step {data.get('step', '?')}"
    return str(data.get("action") or event.agent or kind)


def _masked(content: Any, mask: Any) -> Any:
    """A reply's or a tool result's content with ``mask`` applied when it is text (parts are kept as they are)."""
    return mask(content) if isinstance(content, str) else content
