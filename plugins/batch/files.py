"""The files of a batch: JSONL inputs read lazily (``read_items``; a bad line is a failed item, never a crash) and the
append-only results file (``ResultsFile``: one ``os.write`` per result, a line cut by a kill removed on opening,
the items already there skipped, a record another job made refused). Only the driver's process writes it."""

from __future__ import annotations

import os
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Union

import msgspec

from zagent.errors import ConfigError, ZagentError

__all__ = ["Done", "Item", "ResultsFile", "item_of", "iter_items", "read_items"]

_decode = msgspec.json.Decoder()
_encode = msgspec.json.Encoder(enc_hook=str)


class ResultsFileError(ZagentError, OSError):
    """The results file could not be written (a full disk, a size limit, an I/O error)."""


#: the longest item id (an inputs file's line may be 16 MiB; ids are kept for the whole batch)
MAX_ITEM_ID = 4096


class Item(NamedTuple):
    """One input: ``line`` (1-based), ``id`` (``None`` when the input has none), its inputs or a problem."""

    line: int
    id: Optional[str]
    inputs: dict[str, Any]
    problem: Optional[str] = None


def item_of(line: int, data: Any) -> Item:
    """An ``Item`` from one decoded input (``id`` split off the inputs)."""
    if not isinstance(data, dict):
        return Item(line, None, {}, f"line {line} is a JSON {type(data).__name__}, not an object of inputs")
    inputs = dict(data)
    raw_id = inputs.pop("id", None)
    if raw_id is None:
        return Item(line, None, inputs)
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        return Item(line, None, inputs, f"line {line}: 'id' must be a non-empty string or an integer, got "
                                        f"{repr(raw_id)[:80]}")
    if isinstance(raw_id, str) and len(raw_id) > MAX_ITEM_ID:  # every id is kept (repeats), logged and written
        return Item(line, None, inputs, f"line {line}: 'id' is {len(raw_id):,} characters long (at most "
                                        f"{MAX_ITEM_ID:,} characters); give the item a shorter id")
    return Item(line, str(raw_id), inputs)


def read_items(path: Union[str, "os.PathLike[str]"]) -> Iterator[Item]:
    """Items of a JSONL file, one line at a time (the file is never loaded whole)."""
    from zagent.agentkit.files import bounded_lines, open_regular

    try:
        f = open_regular(path)
    except OSError as exc:
        raise ConfigError(f"cannot read the inputs file {os.fspath(path)!r}: {exc}") from None

    with f:
        for number, raw in bounded_lines(f, f"the inputs file {os.fspath(path)!r}"):
            if not raw.strip():
                continue
            try:
                data = _decode.decode(raw)
            except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
                yield Item(number, None, {}, f"line {number} is not valid JSON: {exc}")
                continue
            yield item_of(number, data)


def iter_items(inputs: Iterable[Any]) -> Iterator[Item]:
    """Items of an in-memory iterable of dicts (numbered from 1 like lines)."""
    for number, data in enumerate(inputs, 1):
        yield item_of(number, data)


def short_digest(digest: Any) -> int:
    """An inputs digest (hex) as the 64-bit number ``Done`` keeps (a million ids' digests cost 36 MB, not 80);
    -1, which no digest gives, for anything else."""
    head = digest[:16] if isinstance(digest, str) else ""
    return int(head, 16) if len(head) == 16 and not head.strip("0123456789abcdef") else -1


class Done(NamedTuple):
    """What a results file already holds: the inputs digest (``short_digest``) of the last record of each id, and
    of each line of items without an id, and how many failed."""

    ids: dict[str, int]
    lines: dict[int, int]
    failed: int

    def has(self, item: Item, digest: str) -> bool:
        """Is ``item``, whose inputs have ``digest``, done (its record made from the same inputs)?"""
        return (self.ids.get(item.id) if item.id is not None else self.lines.get(item.line)) == short_digest(digest)


#: how every result line starts (``driver._head``): a line cut short starts so too, or is a start of one of these
_RESULT_STARTS = (b'{"id":', b'{"line":')


def _torn_result(raw: bytes) -> bool:
    """Could ``raw``, a last line with no newline, be a result line cut short by a kill?"""
    return raw.startswith(_RESULT_STARTS) or any(start.startswith(raw) for start in _RESULT_STARTS)


def _cut(path: str, size: int, read_fd: int, torn: bytes, number: int) -> None:
    """Truncate results file ``path`` (the one open as ``read_fd``) to ``size`` bytes through a descriptor opened
    with ``open_private``: never another name of the user's file (a hard link), a planted link or a file swapped in
    after it was read, nor a file whose last line ``torn`` (line ``number``) is not the start of a result."""
    from zagent.agentkit.privatefiles import open_private

    fd = open_private(path, os.O_WRONLY)
    try:
        written, read = os.fstat(fd), os.fstat(read_fd)
        if (written.st_dev, written.st_ino) != (read.st_dev, read.st_ino):
            raise ConfigError(f"the results file {path!r} was replaced while zagent read it; nothing was cut. Use "
                              "a file in a folder only you can write")
        if not _torn_result(torn):  # never cut a file that is not a results file (a token, the inputs file)
            raise ConfigError(f"{path} line {number} is not a batch result (its last line, with no newline, is not "
                              "the start of one); nothing was cut. Use another --out file")
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def _record(path: str, number: int, raw: bytes) -> dict[str, Any]:
    """Line ``number`` of results file ``path`` decoded; a ``ConfigError`` when it is not a batch result."""
    try:
        record = _decode.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        raise ConfigError(f"{path} line {number} is not a batch result (not JSON); "
                          "use another --out file or remove that line") from None
    if not isinstance(record, dict) or not isinstance(record.get("line"), int):
        raise ConfigError(f"{path} line {number} is not a batch result (no 'line' field); use another --out file")
    return record


def _foreign(path: str, count: int, first: int) -> str:
    """The error for a results file holding ``count`` records (the first on line ``first``) another job made."""
    return (f"the results file {path!r} holds {count} record(s) this batch did not make (the first on line "
            f"{first}): made by another agent or workflow, by this one before its file or model changed "
            "(--model, ZAGENT_MODEL), by hand, or by a zagent whose records named no maker. A batch resumes only "
            "from its own records, never taking another's as done; nothing was run or changed. Give another --out "
            f"file, or move or delete {path!r} to start afresh")


def _pieces(path: str, fd: int, ranges: list[list[int]], size: int = 1 << 20) -> Iterator[bytes]:
    """The bytes of ``ranges`` of the file open as ``fd``, at most ``size`` at a time."""
    for start, stop in ranges:
        while start < stop:
            piece = os.pread(fd, min(size, stop - start), start)
            if not piece:
                raise ConfigError(f"the results file {path!r} shrank while zagent read it; nothing was rewritten")
            yield piece
            start += len(piece)


class ResultsFile:
    """The ``--out`` file of a batch, opened for appending after repairing and reading it.

    :param path: the JSONL file (created if missing).
    :param retry_failed: drop the lines of failed items (rewritten atomically) so they run again.
    :param made_by: the identity of this batch's job (``identity.job_identity``): a record with another one (or
        none) is a ``ConfigError`` naming how many, before anything in the file is changed.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, retry_failed: bool = False, made_by: str = "") -> None:
        from zagent.agentkit.privatefiles import check_private

        self.path = os.fspath(path)
        check_private(self.path)  # another user's file (or link) is refused before a line of it is read
        self.done = self._prepare(retry_failed, made_by)
        try:
            from zagent.agentkit.privatefiles import open_private

            self.fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)  # 0600, no planted link
        except OSError as exc:
            raise ConfigError(f"cannot write the results file {self.path!r}: {exc}") from None

    def _prepare(self, retry_failed: bool, made_by: str) -> Done:
        from zagent.agentkit.files import bounded_lines, open_regular

        try:
            f = open_regular(self.path)  # a FIFO is refused, not waited on
        except FileNotFoundError:
            return Done({}, {}, 0)
        except OSError as exc:
            raise ConfigError(f"cannot read the results file {self.path!r}: {exc}") from None
        kept: list[list[int]] = []  # with retry_failed: [start, end) of the lines kept, neighbours merged
        done, end, records, count = Done({}, {}, 0), 0, 0, 0
        foreign: list[int] = []  # [how many, first line] of records this job did not make
        torn: Optional[tuple[bytes, int]] = None
        with f:
            for number, raw in bounded_lines(f, f"the results file {self.path!r}"):
                if not raw.endswith(b"\n"):  # a line cut by a kill mid-write: cut below, that item runs again
                    torn = (raw, number)
                    break
                start, end = end, end + len(raw)
                if not raw.strip():
                    continue
                records += 1
                record = _record(self.path, number, raw)
                if not made_by or record.get("made_by") != made_by:
                    foreign = [foreign[0] + 1, foreign[1]] if foreign else [1, number]
                    continue
                if retry_failed and not record.get("ok"):
                    continue
                count += 1
                if retry_failed and kept and kept[-1][1] == start:
                    kept[-1][1] = end
                elif retry_failed:
                    kept.append([start, end])
                digest = short_digest(record.get("inputs_digest"))
                if record.get("id") is not None:
                    if len(str(record["id"])) <= MAX_ITEM_ID:  # a longer one matches no input: never kept
                        done.ids[str(record["id"])] = digest
                else:
                    done.lines[record["line"]] = digest
                if not record.get("ok"):
                    done = done._replace(failed=done.failed + 1)
            if foreign:  # before the file is cut or rewritten: it is not this batch's to change
                raise ConfigError(_foreign(self.path, foreign[0], foreign[1]))
            if torn is not None:
                _cut(self.path, end, f.fileno(), torn[0], torn[1])
            if retry_failed and count != records:  # streamed from the file read: never all of it in memory
                from zagent.agentkit.files import write_atomic

                write_atomic(self.path, _pieces(self.path, f.fileno(), kept))
        return done

    def write(self, record: dict[str, Any]) -> None:
        """Append one result as one line, in one write; a full disk (any OSError) is ``ResultsFileError``."""
        from zagent.agentkit.secrets import masked_json

        line = masked_json(_encode.encode(record)) + b"\n"  # an output quoting OPENAI_API_KEY (a tool returned it)
        view = memoryview(line)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            raise ResultsFileError(
                f"cannot write the results file {self.path!r}: {exc.strerror or exc}; the results before it are "
                "kept (a line cut short runs again). Free disk space (or pick another --out), then run the same "
                "command again to resume") from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
