"""``StepLog``: a run's checkpoints as a step log. ``await log.asave(store, run_id, step, state, kind=...)`` writes
the change since the last checkpoint (``store.asave_patch``), or the whole state when a patch cannot stand (the
first save, a status other than ``running``, a list replaced or shortened, patches as big as the state, a store
without ``asave_patch``). Callers serialise saves; a failed write raises ``CheckpointError``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import msgspec

from ..contracts import Checkpoints
from ..errors import CheckpointError
from .signing import MAC, store_identity

__all__ = ["Captured", "StepLog", "checkpoint_error"]

_encode = msgspec.json.Encoder().encode


class Captured:
    """What a state held when its checkpoint was encoded (kept by the log once the write landed)."""

    __slots__ = ("step", "lists", "lengths", "maps", "keys", "tracked", "version", "grown")

    def __init__(self, step: int, lists: tuple[Any, ...], lengths: tuple[int, ...], maps: tuple[Any, ...],
                 keys: tuple[set[Any], ...], tracked: tuple[Any, ...], version: int,
                 grown: tuple[dict[Any, tuple[int, int]], ...] = ()) -> None:
        self.step, self.lists, self.lengths = step, lists, lengths
        self.maps, self.keys, self.tracked, self.version = maps, keys, tracked, version
        self.grown = grown  # per tracked map: {key: (length, chain)} of its entries reported with ``grew``


class StepLog:
    """What the last checkpoint of a run held, so the next one can be written as a patch on it.

    :param lists: append-only list fields; :param maps: add-only dict fields; :param tracked: dict fields whose
        changes are reported with ``touch``/``grew``; :param small: fields set whole in every patch (any other
        field is in full saves only); :param encode: a patch dict or a state to bytes (default ``msgspec.json``);
    :param signer: signs every checkpoint (``zagent.agentkit.signing.signer_of(kernel)``; ``asave`` may give one).
    """

    def __init__(self, *, lists: Sequence[str] = (), maps: Sequence[str] = (), tracked: Sequence[str] = (),
                 small: Sequence[str] = (), encode: Callable[[Any], bytes] = _encode, signer: Any = None) -> None:
        self.signer = signer
        self.fields = (tuple(lists), tuple(maps), tuple(tracked), tuple(small))
        self._encode = encode
        self._touched: dict[str, dict[Any, int]] = {name: {} for name in tracked}
        # per tracked map: {key: (list, chain, length)} -- the list an entry holds, which run of appends made
        # it, and its length when reported
        self._heads: dict[str, dict[Any, tuple[Any, int, int]]] = {name: {} for name in tracked}
        self._chains = 0
        self._version = 0
        self._saved: Optional[Captured] = None  # nothing saved by this log yet: the next checkpoint is full
        self.full_size = self.since_full = 0
        self.mac = ""  # the MAC of the last checkpoint this log saved (signed checkpoints)

    @property
    def step(self) -> Optional[int]:
        """The checkpoint step the next patch builds on (``None``: the next checkpoint is a full one)."""
        return None if self._saved is None else self._saved.step

    def touch(self, field: str, key: Any) -> None:
        """Entry ``key`` of tracked map ``field`` was set or removed since the last checkpoint."""
        self._touch(field, key)
        self._heads[field].pop(key, None)

    def grew(self, field: str, key: Any, old: Any, new: Any) -> None:
        """Entry ``key`` of tracked map ``field`` went from ``old`` to the list ``new``, which holds ``old``'s
        items first and then the ones added (a patch may carry only those; ``TypeError`` unless ``new`` is a list)."""
        if not isinstance(new, list):
            raise TypeError(f"StepLog.grew: entry {key!r} of {field!r} must now be a list, got {type(new).__name__}; "
                            "report other writes with touch()")
        self._touch(field, key)
        heads = self._heads[field]
        head = heads.get(key)
        if head is not None and head[0] is old and new is not old and len(old) == head[2]:
            heads[key] = (new, head[1], len(new))  # the same run of appends goes on
        else:  # a list not reported before, changed in place since (its length says so), or grown in place
            # (``new is old``: its length before the growth is gone, so a cut hidden by it cannot be told): a new run
            self._chains += 1
            heads[key] = (new, self._chains, len(new))

    def _touch(self, field: str, key: Any) -> None:
        self._version += 1
        self._touched[field][key] = self._version

    async def asave(self, store: Checkpoints, run_id: str, step: int, state: Any, *, kind: str,
                    metadata: Optional[dict[str, Any]] = None, resume: str = "", signer: Any = None) -> None:
        """Write ``state`` as checkpoint ``step`` of ``run_id`` to ``store`` (see the module docstring).

        ``signer`` (``zagent.agentkit.signing.signer_of(kernel)``): the step's MAC, chained on the last one and
        bound to the store (``Signer.within``), goes in its metadata. A write that raises is a ``CheckpointError``
        naming the run, the step, the store and the cause (its ``__cause__``), saying how to resume (``resume``:
        e.g. ``"arun(..., run_id=ID)"``); a cancelled one re-raises ``CancelledError``. Either way the log is
        reset."""
        last, signer = self.step, signer if signer is not None else self.signer
        try:
            if signer is not None:  # the store's own key: a step copied into another store does not match there
                signer = signer.within(store_identity(store))
            captured = self.capture(state, step)
            save_patch = getattr(store, "asave_patch", None)  # optional: a store without it gets full saves
            patch = self.patch(state) if save_patch is not None else None
            if patch is not None and save_patch is not None:
                meta = self.signed(signer, metadata, run_id, step, kind, patch, True)
                await save_patch(run_id, step, patch, kind=kind, metadata=meta)
                self.saved_patch(captured, len(patch))
            else:
                data = self._encode(state)
                meta = self.signed(signer, metadata, run_id, step, kind, data, False)
                await store.asave(run_id, step, data, kind=kind, metadata=meta)
                self.saved_full(captured, len(data))
            if signer is not None and meta is not None:
                self.mac = meta[MAC]
        except Exception as exc:
            self.reset()  # the write may or may not have landed
            raise checkpoint_error(exc, store, run_id, step, last, resume) from exc
        except BaseException:
            self.reset()  # cancelled: the write may or may not have landed
            raise

    def reset(self) -> None:
        """Forget the last checkpoint (a write failed or was cancelled): the next one is saved whole."""
        self._saved = None
        self.mac = ""

    def signed(self, signer: Any, metadata: Optional[dict[str, Any]], run_id: str, step: int, kind: str,
               data: bytes, patch: bool) -> Optional[dict[str, Any]]:
        """``metadata`` with the step's MAC when there is a ``signer`` (a patch's chained on the last step's)."""
        if signer is None:
            return metadata
        return {**(metadata or {}), MAC: signer.mac(run_id, step, kind, self.mac if patch else "", data)}

    def patch(self, state: Any) -> Optional[bytes]:
        """``state`` as encoded patch bytes on the last checkpoint, or ``None`` when it must be saved whole."""
        saved = self._saved
        if saved is None or getattr(state, "status", "running") != "running" or self.since_full >= self.full_size:
            return None
        lists, maps, tracked, small = self.fields
        extend: dict[str, Any] = {}
        lengths: dict[str, int] = {}
        for name, old, n in zip(lists, saved.lists, saved.lengths):
            now = getattr(state, name)
            if now is not old or len(now) < n:
                return None  # replaced (e.g. compressed) or shortened: not a pure append
            if len(now) > n:
                extend[name], lengths[name] = now[n:], n
        sets: dict[str, Any] = {name: getattr(state, name) for name in small}
        update: dict[str, dict[Any, Any]] = {}
        for name, old, keys in zip(maps, saved.maps, saved.keys):
            now = getattr(state, name)
            if now is not old:
                sets[name] = now
            else:
                added = {k: v for k, v in now.items() if k not in keys}
                if added:
                    update[name] = added
        extend_in: dict[str, dict[Any, Any]] = {}
        lengths_in: dict[str, dict[Any, int]] = {}
        for name, old, grown in zip(tracked, saved.tracked, saved.grown or tuple({} for _ in tracked)):
            _tracked_change(name, getattr(state, name), old, self._touched[name], sets, update,
                            (self._heads[name], grown, extend_in, lengths_in))
        patch: dict[str, Any] = {"after": saved.step, "set": sets}
        if extend:
            patch["extend"], patch["lengths"] = extend, lengths
        if update:
            patch["update"] = update
        if extend_in:
            patch["extend_in"], patch["lengths_in"] = extend_in, lengths_in
        return self._encode(patch)

    def capture(self, state: Any, step: Optional[int] = None) -> Captured:
        """What ``state`` holds now, as checkpoint ``step`` (default: ``state.checkpoint``)."""
        lists, maps, tracked, _ = self.fields
        held = tuple(getattr(state, name) for name in lists)  # held, so `is` never matches a new list
        now = tuple(getattr(state, name) for name in maps)
        grown = tuple({key: (len(head[0]), head[1]) for key, head in self._heads[name].items()} for name in tracked)
        return Captured(state.checkpoint if step is None else step, held, tuple(len(lst) for lst in held), now,
                        tuple(set(m) for m in now), tuple(getattr(state, name) for name in tracked), self._version,
                        grown)

    def saved_full(self, captured: Captured, size: int) -> None:
        """The checkpoint ``captured`` was written whole, ``size`` bytes."""
        self._landed(captured)
        self.full_size, self.since_full = size, 0

    def saved_patch(self, captured: Captured, size: int) -> None:
        """The checkpoint ``captured`` was written as a patch of ``size`` bytes."""
        self._landed(captured)
        self.since_full += size

    def _landed(self, captured: Captured) -> None:
        self._saved = captured
        for touched in self._touched.values():  # entries touched again while it was written stay for the next
            for key in [k for k, v in touched.items() if v <= captured.version]:
                del touched[key]


def checkpoint_error(cause: BaseException, store: Checkpoints, run_id: str, step: int, last: Optional[int],
                     resume: str = "") -> CheckpointError:
    """The ``CheckpointError`` of checkpoint ``step`` of ``run_id`` that ``store`` failed to write (``last``:
    the last step this run wrote that landed, if any; ``resume``: how the caller's runs resume)."""
    held = f"checkpoint {last}" if last is not None else "the checkpoints written before this process (if any)"
    how = resume or f"run id {run_id!r}"
    return CheckpointError(
        f"checkpoint {step} of run {run_id!r} could not be written to {store!r} ({type(cause).__name__}: "
        f"{cause}); the run was stopped rather than go on without it. Nothing already checkpointed is lost: the "
        f"store holds the run as of {held}. Once the store works again (free disk space, release the lock, "
        f"make the file writable, fix the store), resume it with {how}; the work after that checkpoint runs "
        "again", run_id=run_id, step=step, store=store, last_step=last, cause=cause)


def _tracked_change(name: str, now: Any, old: Any, touched: dict[Any, int], sets: dict[str, Any],
                    update: dict[str, dict[Any, Any]], appends: tuple[Any, ...]) -> None:
    """Put tracked map ``name``'s change in the patch: its touched entries (the items added to those only
    appended to since the last checkpoint), or all of it.

    ``appends``: ``(heads, grown, extend_in, lengths_in)``: the lists entries hold now (``StepLog._heads``),
    their lengths at the last checkpoint (``Captured.grown``), and the patch's nested appends to fill."""
    if now is not old or any(k not in now for k in touched):
        sets[name] = now  # replaced, or an entry removed (a patch cannot remove): set whole
        return
    heads, grown, extend_in, lengths_in = appends
    changed: dict[Any, Any] = {}
    for key in touched:
        value, head, was = now[key], heads.get(key), grown.get(key)
        if (head is None or was is None or head[0] is not value or head[1] != was[1] or len(value) < was[0]
                or len(value) != head[2]):
            changed[key] = value  # set, replaced or shortened since the checkpoint (or new to it): whole
        elif len(value) > was[0]:
            extend_in.setdefault(name, {})[key] = value[was[0]:]
            lengths_in.setdefault(name, {})[key] = was[0]
    if changed:
        update[name] = changed
