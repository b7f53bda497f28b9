"""Conformance suite for checkpoint stores (what ``k.memory("checkpoints", ...)`` returns): subclass
``CheckpointStoreTests`` in a class named ``Test...`` and define ``make_store(self, tmp_path)``. One rule per test;
only zagent, msgspec and pytest are imported.
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterator

import msgspec
import pytest

from .. import ConfigError
from ..contracts import Checkpoints


class _SampleState(msgspec.Struct):
    step: int
    trajectory: list[str]


class CheckpointStoreTests:
    """Rules every checkpoint store follows. Override ``make_store``."""

    def make_store(self, tmp_path: Any) -> Checkpoints:  # pragma: no cover - the subclass provides it
        raise NotImplementedError("return a fresh checkpoint store from make_store(tmp_path)")

    @pytest.fixture
    def store(self, tmp_path: Any) -> Iterator[Checkpoints]:
        s = self.make_store(tmp_path)
        yield s
        s.close()

    def test_latest_returns_the_highest_step(self, store: Checkpoints) -> None:
        """latest(run_id) is (step, state bytes) of the highest step saved."""
        for step in (1, 2, 3):
            store.save("r1", step, f"state {step}".encode())
        assert store.latest("r1") == (3, b"state 3")

    def test_latest_of_an_unknown_run_is_none(self, store: Checkpoints) -> None:
        """A run never saved has no latest checkpoint."""
        assert store.latest("nope") is None

    def test_objects_are_saved_as_msgspec_json(self, store: Checkpoints) -> None:
        """A Struct or other msgspec-encodable state is stored as msgspec JSON and decodes back."""
        state = _SampleState(step=2, trajectory=["a", "b"])
        store.save("r1", 2, state)
        found = store.latest("r1")
        assert found is not None
        assert msgspec.json.decode(found[1], type=_SampleState) == state

    def test_bytes_are_stored_unchanged(self, store: Checkpoints) -> None:
        """A bytes state (e.g. msgpack) is stored and returned byte for byte."""
        raw = msgspec.msgpack.encode({"x": [1, 2, 3]})
        store.save("r1", 0, raw)
        assert store.load("r1", 0) == raw

    def test_saving_a_step_again_replaces_it(self, store: Checkpoints) -> None:
        """Saving the same (run, step) twice keeps the last one, so a retried step is harmless."""
        store.save("r1", 1, b"first try")
        store.save("r1", 1, b"second try")
        assert store.steps("r1") == [1]
        assert store.load("r1", 1) == b"second try"

    def test_load_of_a_missing_step_is_none(self, store: Checkpoints) -> None:
        """load() of a step never saved returns None."""
        store.save("r1", 1, b"x")
        assert store.load("r1", 2) is None

    def test_list_reports_runs_by_kind(self, store: Checkpoints) -> None:
        """list() gives one RunInfo per run with its last step, count and latest metadata; kind filters."""
        store.save("r1", 1, b"a", kind="react", metadata={"agent": "A"})
        store.save("r1", 2, b"b", kind="react", metadata={"agent": "A", "note": "latest"})
        store.save("w1", 5, b"c", kind="workflow")
        runs = {r.run_id: r for r in store.list()}
        assert (runs["r1"].last_step, runs["r1"].steps, runs["r1"].metadata) == (2, 2, {"agent": "A", "note": "latest"})
        assert [r.run_id for r in store.list(kind="workflow")] == ["w1"]

    def test_delete_removes_one_run(self, store: Checkpoints) -> None:
        """delete(run_id) removes all of that run's checkpoints and returns the count, others stay."""
        store.save("r1", 1, b"a")
        store.save("r1", 2, b"b")
        store.save("r2", 1, b"c")
        assert store.delete("r1") == 2
        assert store.latest("r1") is None
        assert store.latest("r2") == (1, b"c")

    def test_prune_keep_last_keeps_the_newest_steps_of_each_run(self, store: Checkpoints) -> None:
        """prune(keep_last=n) keeps each run's newest n steps."""
        for step in range(1, 6):
            store.save("r1", step, b"x")
        store.save("r2", 1, b"y")
        assert store.prune(keep_last=2) == 3
        assert store.steps("r1") == [4, 5]
        assert store.steps("r2") == [1]

    def test_prune_without_a_policy_is_config_error(self, store: Checkpoints) -> None:
        """prune() needs keep_last and/or older_than, and keep_last must keep at least the latest."""
        with pytest.raises(ConfigError):
            store.prune()
        with pytest.raises(ConfigError):
            store.prune(keep_last=0)

    def test_bad_arguments_are_config_errors(self, store: Checkpoints) -> None:
        """Empty run ids, negative steps and unencodable states are refused with ConfigError."""
        with pytest.raises(ConfigError):
            store.save("", 1, b"x")
        with pytest.raises(ConfigError):
            store.save("r", -1, b"x")
        with pytest.raises(ConfigError):
            store.save("r", 1, object())
        assert store.list() == []

    def test_async_twins_match_sync(self, store: Checkpoints) -> None:
        """asave/alatest/aload/alist/adelete/aprune behave like the sync methods."""

        async def scenario() -> tuple[Any, ...]:
            await store.asave("r", 1, b"one", kind="toy")
            await store.asave("r", 2, b"two", kind="toy")
            latest = await store.alatest("r")
            one = await store.aload("r", 1)
            runs = await store.alist("toy")
            pruned = await store.aprune(keep_last=1)
            deleted = await store.adelete("r")
            return latest, one, [r.run_id for r in runs], pruned, deleted

        assert asyncio.run(scenario()) == ((2, b"two"), b"one", ["r"], 1, 1)

    def test_store_id_is_a_stable_identity_of_its_own(self, store: Checkpoints, tmp_path: Any) -> None:
        """A store with a ``store_id`` (what a run's seals and signatures name, docs/security.md 11) gives a
        non-empty string, the same on every read, and another store gets another one. Without one, runs are bound
        by their id alone (skipped)."""
        found = getattr(store, "store_id", None)
        if found is None:
            pytest.skip("this store has no store_id: its runs are bound by their id alone")
        assert isinstance(found, str) and found and getattr(store, "store_id") == found
        folder = tmp_path / "another"
        folder.mkdir()
        other = self.make_store(folder)
        try:
            assert getattr(other, "store_id", None) not in (None, found)
        finally:
            other.close()
