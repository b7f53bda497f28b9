"""Signed checkpoints (docs/security.md, "Signed checkpoints"): ``signer_of(kernel)`` is the ``Signer`` of
``config["checkpoint_key"]`` or ``ZAGENT_CHECKPOINT_KEY`` (else ``None``); ``read_latest``/``aread_latest`` check a
run's steps from its last full save before use (a ``CheckpointError`` names a step unsigned or changed);
``answer_signer`` binds a human's answer to its run, and ``seal`` a held call or a run's counts; each also binds the
run's store (``Signer.within``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any, Callable, Mapping, Optional, Sequence

import msgspec

from ..contracts import Checkpoints
from ..errors import CheckpointError, ConfigError
from .._runs.stash import StashKey

__all__ = ["MAC", "Signer", "answer_signer", "aread_latest", "canonical", "read_latest", "seal", "sealed", "signer_of",
           "store_identity"]

MAC = "zagent_mac"
ENV = "ZAGENT_CHECKPOINT_KEY"
_SIGNER: "StashKey[Any]" = StashKey("zagent.checkpoint_signer")
_NONE = object()

#: the bytes a MAC or a digest covers: JSON with sorted keys, anything not JSON as its ``repr``
canonical: Callable[[Any], bytes] = msgspec.json.Encoder(order="sorted", enc_hook=repr).encode


def store_identity(store: Any) -> str:
    """What binds a run to checkpoint store ``store``: its ``store_id`` (the memory plugin's store keeps one in its
    file; a store of your own may give one, kept with its data), ``""`` for no store or one without it (the run
    id alone, as before stores had identities). A ``store_id`` that is not a string is a ``ConfigError``."""
    if store is None:
        return ""
    found = getattr(store, "store_id", None)
    if found is None or isinstance(found, str):
        return found or ""
    raise ConfigError(f"{store!r}.store_id must be a str (the store's identity, kept with its data), got "
                      f"{type(found).__name__}")


class Signer:
    """Signs and checks checkpoint steps with one key (never shown); ``within(store)`` with the key of one store."""

    __slots__ = ("_key", "_stores", "_unbound")

    def __init__(self, key: Any) -> None:
        reveal = getattr(key, "reveal", None)
        key = reveal() if callable(reveal) else key
        if isinstance(key, str):
            key = key.encode()
        if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
            raise ConfigError(f"the checkpoint key (config['checkpoint_key'] or {ENV}) must be a str, bytes or "
                              "Secret of at least 16 bytes; make one with python -c 'import secrets; "
                              "print(secrets.token_hex(32))'")
        self._key = bytes(key)
        self._stores: dict[str, Signer] = {}
        self._unbound: Optional[Signer] = None  # the signer this one was derived from (``within``)

    def within(self, store: str) -> "Signer":
        """The signer of runs kept in the store of identity ``store`` (``store_identity``): its key derived from
        this one and the identity, so a MAC made for a run in one store does not hold in another; ``""``: this."""
        if not store:
            return self
        found = self._stores.get(store)
        if found is None:
            derived = hmac.new(self._key, f"zagent-store\0{store}".encode(), hashlib.sha256).digest()
            found = Signer(derived)
            found._unbound = self
            if len(self._stores) < 64:  # a process's stores; any more are derived again
                self._stores[store] = found
        return found

    def mac(self, run_id: str, step: int, kind: str, prev: str, data: bytes) -> str:
        """The MAC of step ``step`` of ``run_id`` holding ``data`` (``prev``: the MAC of the step a patch builds on)."""
        h = hmac.new(self._key, f"zagent-checkpoint\0{run_id}\0{step}\0{kind}\0{prev}\0".encode(), hashlib.sha256)
        h.update(data)
        return h.hexdigest()

    def check(self, run_id: str, rows: Sequence[tuple[int, str, bytes, bool, dict[str, Any]]],
              legacy: Optional[Mapping[int, str]] = None) -> None:
        """Check ``rows`` (step, kind, bytes, is a patch, metadata) from a full save on: ``CheckpointError``
        naming the first step that is unsigned or does not match. ``legacy``: ``{step: MAC}`` of the steps the store
        held when given its identity; such a step may carry that MAC made without the store (``within``)."""
        prev = ""
        for step, kind, data, patch, metadata in rows:
            mac = metadata.get(MAC) if isinstance(metadata, dict) else None
            if not isinstance(mac, str):
                raise CheckpointError(
                    f"checkpoint {step} of run {run_id!r} is not signed, and this kernel has a checkpoint_key: "
                    "unsigned checkpoints are refused, since anyone who can write the store could have written "
                    "it. Finish or delete runs saved before the key was set with a kernel without the key "
                    f"({ENV} unset and no checkpoint_key), then set the key again", run_id=run_id, step=step)
            if not hmac.compare_digest(mac, self.mac(run_id, step, kind, prev if patch else "", data)):
                if self._unbound is not None and hmac.compare_digest(
                        mac, self._unbound.mac(run_id, step, kind, prev if patch else "", data)):
                    kept = (legacy or {}).get(step)
                    if isinstance(kept, str) and hmac.compare_digest(mac, kept):  # held since the upgrade, unchanged
                        prev = mac
                        continue
                    raise CheckpointError(
                        f"checkpoint {step} of run {run_id!r} was signed without its store (by a zagent before store "
                        "identities) but is not a step the store held, as it is now, when it was given its identity "
                        "(it was written or changed since, or copied from another store), so it cannot be told from "
                        "a step copied from another store; the run is not restored. Restore an intact copy of the "
                        "store or start the run again", run_id=run_id, step=step)
                raise CheckpointError(
                    f"checkpoint {step} of run {run_id!r} does not match its signature: it was changed, removed "
                    "from or moved in the run's step log after it was written, copied from another store (a run "
                    "of the same id there), or signed with another key. The run is not restored; restore an "
                    "intact copy of the store or start the run again", run_id=run_id, step=step)
            prev = mac

    def __repr__(self) -> str:
        return "<Signer key=***>"


def signer_of(kernel: Any) -> Optional[Signer]:
    """The kernel's checkpoint ``Signer`` (``config["checkpoint_key"]``, else ``ZAGENT_CHECKPOINT_KEY``), or None."""
    found: Any = kernel.stash.get(_SIGNER, _NONE)
    if found is _NONE:
        key = kernel.config.get("checkpoint_key") or os.environ.get(ENV) or None
        found = kernel.stash[_SIGNER] = Signer(key) if key else None
    signer: Optional[Signer] = found
    return signer


def answer_signer(kernel: Any) -> Signer:
    """What binds a human's answer kept in a checkpoint (an approval) to its run: the kernel's checkpoint
    ``Signer``, else one keyed by the user's own local key (``$XDG_DATA_HOME/zagent/answers.key``, 32 random
    bytes made 0600 on first use, ``zagent.agentkit.privatefiles``): whoever can edit an unsigned store, but
    cannot read that file, cannot forge an approval into it."""
    signer = signer_of(kernel)
    if signer is not None:
        return signer
    found: Any = kernel.stash.get(_LOCAL, None)
    if found is None:
        found = kernel.stash[_LOCAL] = Signer(_local_key())
    local: Signer = found
    return local


_LOCAL: "StashKey[Any]" = StashKey("zagent.answer_signer")


def seal(kernel: Any, run_id: str, kind: str, data: bytes, *, store: Any) -> str:
    """A MAC binding ``data`` (a call held for a person, a run's counts) to run ``run_id`` of checkpoint store
    ``store`` (``store_identity``; ``None``: a run kept in none) under ``answer_signer``: whoever can edit an
    unsigned store, but not read the user's key, cannot write a matching one, nor copy one from another store."""
    return answer_signer(kernel).within(store_identity(store)).mac(run_id, 0, f"seal:{kind}", "", data)


def sealed(kernel: Any, run_id: str, kind: str, data: bytes, mac: Any, *, store: Any) -> bool:
    """Whether ``mac`` is ``seal(kernel, run_id, kind, data, store=store)``."""
    return isinstance(mac, str) and hmac.compare_digest(mac, seal(kernel, run_id, kind, data, store=store))


def _local_key() -> bytes:
    import secrets

    from .privatefiles import data_folder, open_private

    path = data_folder("answers.key")
    try:
        with open(open_private(path, os.O_RDONLY, reading=True), "rb") as f:
            st = os.fstat(f.fileno())
            key = f.read(64)
        mine = not hasattr(os, "getuid") or (st.st_uid == os.getuid() and not st.st_mode & 0o077)
        if len(key) >= 16 and mine:
            return key
        if not mine:  # a key others can read (or wrote) binds nothing: this process's own, the file left alone
            from .._runs.logs import log

            log.warning("the answer key %s is not yours alone (mode 0600, your file); answers given before this "
                        "process are asked again. Remove it to make a new one", path)
            return secrets.token_bytes(32)
    except FileNotFoundError:
        pass
    except (OSError, ConfigError) as exc:  # unreadable, or another user's link: not followed, nothing written
        from .._runs.logs import log

        log.warning("cannot read the answer key %s (%s): answers given before this process are asked again",
                    path, exc)
        return secrets.token_bytes(32)
    key = secrets.token_bytes(32)
    try:
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    except (OSError, ConfigError) as exc:  # a read-only home: this process's key (earlier answers are asked again)
        from .._runs.logs import log

        log.warning("cannot keep the answer key %s (%s): answers given before this process are asked again; "
                    "set a checkpoint_key to keep them", path, exc)
        return key
    with open(fd, "wb") as f:
        f.write(key)
    return key


def read_latest(store: Checkpoints, run_id: str, signer: Optional[Signer]) -> Optional[tuple[int, bytes]]:
    """``store.latest(run_id)``, checked against ``signer`` first when there is one (see the module docstring)."""
    if signer is None:
        latest: Optional[tuple[int, bytes]] = store.latest(run_id)
        return latest
    chain = store.chain(run_id) if hasattr(store, "chain") else _NONE
    legacy = getattr(store, "legacy_macs", None)  # steps signed before store identities (one read a resume)
    return _checked(store, run_id, signer, chain, legacy(run_id) if legacy and chain not in (None, _NONE) else None)


async def aread_latest(store: Checkpoints, run_id: str, signer: Optional[Signer]) -> Optional[tuple[int, bytes]]:
    """Async twin of ``read_latest``."""
    if signer is None:
        latest: Optional[tuple[int, bytes]] = await store.alatest(run_id)
        return latest
    chain = await store.achain(run_id) if hasattr(store, "achain") else _NONE
    legacy = getattr(store, "alegacy_macs", None)
    return _checked(store, run_id, signer, chain, await legacy(run_id) if legacy and chain not in (None, _NONE) else None)


def _checked(store: Checkpoints, run_id: str, signer: Signer, chain: Any,
             legacy: Optional[Mapping[int, str]] = None) -> Optional[tuple[int, bytes]]:
    if chain is _NONE:
        raise CheckpointError(f"{store!r} cannot give the step log of run {run_id!r} to check its signatures "
                              "(no chain()/achain()); with a checkpoint_key, use the memory plugin's "
                              "checkpoint store", run_id=run_id, store=store)
    if chain is None:
        return None
    rows, state = chain
    signer.within(store_identity(store)).check(run_id, rows, legacy)
    return rows[-1][0], state
