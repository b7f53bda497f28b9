"""The one run lifecycle of the engines (ReAct, group chat, workflows). ``Resumable``: the one resume shape,
``resume()`` (the paused run here goes on; ``approve=``/``deny=`` answer its calls),
``resume(run_id, answer=..., deps=...)`` (from its checkpoint to its next ending) and ``aresume``. ``RunDriver``:
pause and abort from any thread, checkpoints (one at a time, none after a failed one), events and endings.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Awaitable, ClassVar, Generic, Iterable, Optional, TypeVar

from ..errors import CheckpointError, ConfigError, RunAborted
from .control import RunControl
from .signing import MAC, signer_of, store_identity
from .steplog import StepLog, checkpoint_error

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel
    from .._runs.context import RunContext

__all__ = ["NO_ANSWER", "Resumable", "RunDriver", "call_ids", "no_approvals"]

S = TypeVar("S")
R = TypeVar("R")


class _NoAnswer:
    def __repr__(self) -> str:
        return "NO_ANSWER"


NO_ANSWER: Any = _NoAnswer()
"""No answer given to ``resume`` (``None`` is an answer)."""


class Resumable(Generic[R]):
    """The one resume shape (see the module docstring); an engine implements ``_aresume_run``."""

    def resume(self, run_id: Optional[str] = None, *, answer: Any = NO_ANSWER, approve: Iterable[str] = (),
               deny: Iterable[str] = (), deps: Any = None, **options: Any) -> Optional[R]:
        """Without ``run_id``: the paused run in flight here goes on (``None``). With it: sync twin of ``aresume``."""
        if run_id is None:
            self._resume_here(answer, approve, deny, deps, options)
            return None
        from .._runs.sync import run_sync

        result: Optional[R] = run_sync(self.aresume(run_id, answer=answer, approve=approve, deny=deny, deps=deps,
                                                    **options))
        return result

    async def aresume(self, run_id: Optional[str] = None, *, answer: Any = NO_ANSWER, approve: Iterable[str] = (),
                      deny: Iterable[str] = (), deps: Any = None, **options: Any) -> Optional[R]:
        """Continue run ``run_id`` from its checkpoint, with ``answer`` (a person's answer to the question it
        paused on) and ``approve``/``deny`` (call ids awaiting approval) recorded first, until its next ending;
        ``deps`` (else the engine's) reach its tools. Without ``run_id``: as ``resume()``."""
        if run_id is None:
            self._resume_here(answer, approve, deny, deps, options)
            return None
        return await self._aresume_run(run_id, answer, call_ids(approve, "approve"), call_ids(deny, "deny"), deps,
                                       dict(options))

    def _resume_here(self, answer: Any, approve: Iterable[str], deny: Iterable[str], deps: Any,
                     options: dict[str, Any]) -> None:
        approve, deny = call_ids(approve, "approve"), call_ids(deny, "deny")
        if answer is not NO_ANSWER or deps is not None or options:
            raise ConfigError("resume(run_id, answer=...) needs the run id: an answer, deps or options go to a run "
                              "continued from its checkpoint")
        self._resume_live(set(approve), set(deny))

    def _resume_live(self, approve: set[str], deny: set[str]) -> None:
        raise ConfigError(f"{type(self).__name__} has no run in flight to resume: give the run id "
                          "(resume(run_id, answer=...))")

    async def _aresume_run(self, run_id: str, answer: Any, approve: list[str], deny: list[str], deps: Any,
                           options: dict[str, Any]) -> R:
        raise NotImplementedError  # pragma: no cover


def call_ids(ids: Iterable[str], key: str) -> list[str]:
    """``approve=``/``deny=`` (``key``) as a list of call ids; text is a ``ConfigError``: read as an iterable, its
    characters were ids, so ``approve="12"`` approved the model's calls ``"1"`` and ``"2"`` and not ``"12"``."""
    if isinstance(ids, (str, bytes)):
        raise ConfigError(f"{key}= takes a list of call ids, got the text {ids!r} (each of its characters would be "
                          f"read as an id, approving or declining other calls); write {key}=[{ids!r}]")
    return list(ids)


def no_approvals(engine: str, approve: list[str], deny: list[str]) -> None:
    """``ConfigError`` if ``approve``/``deny`` are given to an engine whose approvals are answers."""
    if approve or deny:
        raise ConfigError(f"{engine}: a tool call awaiting approval pauses the run at a question; answer it with "
                          "resume(run_id, answer='yes') (or 'no'), not approve=/deny=")


class RunDriver(Generic[S, R]):
    """The lifecycle of an engine's run (see the module docstring). The engine sets ``kernel``, ``state`` (the
    running state, ``None`` before a run) and, per run, ``_ctx`` and ``_log``; it calls ``_start_driver``
    when a run starts and ``_stop_driver`` when it ends, and ``_drive`` runs it (``_advance`` at a time)."""

    kernel: "Kernel"
    state: Optional[S]
    kind: ClassVar[str] = "run"
    """The checkpoint kind."""
    idle_status: ClassVar[str] = "idle"
    """The status before a run starts."""
    abort_saves_sync: ClassVar[bool] = False
    """An abort's checkpoint is written by ``_save_now`` and its event scheduled (nothing awaited in a task
    being cancelled), not by ``_checkpoint``."""
    _ctx: "RunContext[Any]"
    _log: StepLog
    _control: RunControl
    _save_lock: Optional[asyncio.Lock] = None
    _halted: Optional[CheckpointError] = None

    def _init_driver(self) -> None:
        self._control = RunControl()

    # -- control (any thread) ----------------------------------------------------------

    @property
    def status(self) -> str:
        state = self.state
        return str(getattr(state, "status")) if state is not None else self.idle_status

    def pause(self) -> None:
        """Ask the run to pause at its next boundary (the step, turn or call in flight finishes)."""
        self._control.request_pause()

    def abort(self) -> None:
        """End the run now: the call in flight is cancelled and the run raises ``RunAborted``."""
        self._control.request_abort()

    async def wait_for_status(self, status: str) -> None:
        """Wait (on the run's event loop) until the run's status is ``status`` (e.g. ``"paused"``)."""
        while self.status != status:
            await asyncio.sleep(0.005)

    def _resume_live(self, approve: set[str], deny: set[str]) -> None:
        """The paused run goes on; ``approve``/``deny`` answer its calls awaiting approval."""
        control = self._control
        with control.lock:
            control.pause_requested = False
            if self.state is not None:
                self._answer_calls(approve, deny)
                if self.status == "paused" and not self._held():
                    self._set_status("running")
        control.wakeup()

    # -- hooks ----------------------------------------------------------------------------

    def _answer_calls(self, approve: set[str], deny: set[str]) -> None:
        """Record approvals and denials of calls awaiting a human (an engine with such calls overrides it)."""
        no_approvals(type(self).__name__, list(approve), list(deny))

    def _held(self) -> bool:
        """Whether the run must wait at its boundary without a pause request (calls awaiting approval)."""
        return False

    def _position(self) -> dict[str, Any]:
        """Where the run is, for its ``paused`` and ``resumed`` events (``{"step": n}``...)."""
        return {}

    def _paused_data(self) -> dict[str, Any]:
        return self._position()

    def _on_paused(self) -> None:
        """After the pause's checkpoint and event."""

    def _on_resumed(self) -> None:
        """After a pause, before the ``resumed`` event."""

    def _closing(self) -> None:
        """Before an ending's or a pause's checkpoint (bring the state up to date)."""

    def _closed(self) -> None:
        """After an ending's checkpoint, before its event."""

    def _checkpoint_store(self) -> Any:
        """The checkpoint store, or ``None`` (no checkpoints)."""
        return None

    def _checkpoint_payload(self) -> tuple[str, int, Any, dict[str, Any]]:
        """``(run_id, step, state, metadata)`` of the next checkpoint (its step number counted here)."""
        raise NotImplementedError  # pragma: no cover

    def _resume_hint(self) -> str:
        return ""

    def _on_checkpoint(self) -> None:
        """Before every checkpoint, with or without a store."""


    def _abort_error(self) -> RunAborted:
        raise NotImplementedError  # pragma: no cover

    async def _before_drive(self) -> None:
        """Before the first boundary, inside the run's endings (an input check)."""

    async def _advance(self) -> Optional[R]:
        """One step, turn or batch of the run: its result once it has ended, else ``None``."""
        raise NotImplementedError  # pragma: no cover

    async def _on_failure(self, exc: Exception) -> Optional[R]:
        """A step raised ``exc`` (not ``RunAborted``): the run's result if this ends it without an error (a
        pause at a question), else ``None`` and ``exc`` is raised (after the failed ending, if the engine
        records one here)."""
        return None

    def _end_data(self) -> tuple[str, dict[str, Any]]:
        """The end event's type and data of an aborted run."""
        return f"{self.kind}_end", {}

    # -- in a run -------------------------------------------------------------------------

    async def _drive(self) -> R:
        """Run to an ending: the boundary, then ``_advance``, until it gives a result; an abort (the call in
        flight cancelled) ends the run aborted and raises ``RunAborted``; another error goes to ``_on_failure``."""
        try:
            await self._before_drive()
            while True:
                await self._boundary()
                ended = await self._advance()
                if ended is not None:
                    return ended
        except asyncio.CancelledError:
            if self._control.abort_requested:
                raise await self._abort_end() from None
            await self._cancelled_end()
            raise
        except RunAborted:
            raise
        except Exception as exc:
            result = await self._on_failure(exc)
            if result is None:
                raise
            return result

    @property
    def _running(self) -> S:
        """The state of the run under way (set before its first boundary)."""
        state = self.state
        if state is None:  # pragma: no cover - a bug in an engine
            raise AssertionError("the run has not started")
        return state

    def _set_status(self, status: str) -> None:
        setattr(self._running, "status", status)  # each engine's Status literal

    def _start_driver(self) -> None:
        """The run starts on this event loop: control bound, a fresh save lock, no failed save yet."""
        self._control.bind()
        self._save_lock, self._halted = asyncio.Lock(), None

    def _stop_driver(self) -> None:
        self._control.unbind()

    async def _abortable(self, awaitable: Any) -> Any:
        """Await ``awaitable`` so that ``abort()`` cancels it; after an abort nothing new starts."""
        if self._control.abort_requested:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()
            raise asyncio.CancelledError
        return await self._control.abortable(awaitable)

    async def _boundary(self) -> None:
        """Honour abort and pause requests; a pause (or a held run) waits here until resume or abort."""
        control = self._control
        if control.abort_requested:
            raise await self._abort_end()
        if not control.pause_requested and not self._held():
            return
        self._closing()
        self._set_status("paused")
        await self._checkpoint()
        await self._emit("paused", **self._paused_data())
        self._on_paused()

        def still_paused() -> bool:
            return control.pause_requested or self._held()

        def mark_paused() -> None:
            self._set_status("paused")  # again: a resume() may have raced with a new pause()

        await control.wait_while(still_paused, mark_paused)
        if control.abort_requested:
            raise await self._abort_end()
        self._set_status("running")
        self._on_resumed()
        await self._emit("resumed", **self._position())

    def _emit(self, type: str, **data: Any) -> Awaitable[None]:
        """``ctx.aemit``'s coroutine (await it), the data passed on as is."""
        return self._ctx.aemit(type, **data)

    def _emit_soon(self, type: str, **data: Any) -> None:
        """Emit from a sync path (an abort): scheduled on the run's loop, never awaited here."""
        loop = self._control.loop
        if loop is not None and not loop.is_closed() and self.kernel.has_impls("zagent_event"):
            loop.create_task(self._ctx.aemit(type, **data))

    async def _checkpoint(self) -> None:
        """Save the state: the change since the last checkpoint when the store takes patches, else all of it.
        One save at a time (the bytes are taken before the write); after a failed one nothing more is written."""
        self._on_checkpoint()
        store = self._checkpoint_store()
        if store is None:
            return
        if self._save_lock is None:
            self._save_lock = asyncio.Lock()
        async with self._save_lock:
            if self._halted is not None:
                return
            run_id, step, state, metadata = self._checkpoint_payload()
            try:
                await self._log.asave(store, run_id, step, state, kind=self.kind, metadata=metadata,
                                      resume=self._resume_hint(), signer=signer_of(self.kernel))
            except CheckpointError as exc:
                self._halted = exc
                raise

    def _save_now(self) -> None:
        """A whole checkpoint written from a sync path (``abort_saves_sync``: the store's ``save``), with
        ``StepLog.asave``'s guarantees (a ``CheckpointError`` naming the run and step; the log reset)."""
        store, log = self._checkpoint_store(), self._log
        last = log.step
        run_id, step, state, metadata = self._checkpoint_payload()
        try:
            captured = log.capture(state, step)
            data = log._encode(state)
            signer = signer_of(self.kernel)
            signer = signer.within(store_identity(store)) if signer is not None else None
            meta = log.signed(signer, metadata, run_id, step, self.kind, data, False)
            store.save(run_id, step, data, kind=self.kind, metadata=meta)
            log.mac = (meta or {}).get(MAC, "")
        except Exception as exc:
            log.reset()
            raise checkpoint_error(exc, store, run_id, step, last, self._resume_hint()) from exc
        except BaseException:
            log.reset()
            raise
        log.saved_full(captured, len(data))

    async def _end(self, status: str, event: str, *, save: bool = True,
                   first: Optional[tuple[str, dict[str, Any]]] = None, **data: Any) -> None:
        """An ending (or a pause that ends the run): the status set, the state checkpointed (not after a failed
        checkpoint: ``save=False``), then the event ``first`` (type, data) if given, and ``event`` with
        ``status`` and ``data``."""
        self._set_status(status)
        if save:
            self._closing()
            await self._checkpoint()
        self._closed()
        if first is not None:
            await self._emit(first[0], **first[1])
        await self._emit(event, status=status, **data)

    async def _cancelled_end(self) -> None:
        """Cancelled from outside (not ``abort()``): the end event, status ``cancelled``, so observers close the
        run (its span, its log rows); nothing is saved: the last checkpoint resumes it. A failing observer is
        logged, the cancellation goes on."""
        event, data = self._end_data()
        try:
            await self._emit(event, status="cancelled", **data)
        except Exception:  # noqa: BLE001 - the cancellation is what the caller must see
            logging.getLogger("zagent").exception("the end event of cancelled run %s failed",
                                                  getattr(self.state, "run_id", "?"))

    async def _abort_end(self) -> RunAborted:
        """The aborted ending: checkpointed, its end event sent; the ``RunAborted`` to raise."""
        event, data = self._end_data()
        if not self.abort_saves_sync:
            await self._end("aborted", event, **data)
            return self._abort_error()
        self._set_status("aborted")
        self._closing()
        if self._checkpoint_store() is not None:
            self._save_now()
        self._closed()
        self._emit_soon(event, status="aborted", **data)
        return self._abort_error()
