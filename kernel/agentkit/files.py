"""``write_atomic``: replace a file so readers and crashes see the old or the new content, never half (its temporary
file made new, 0600 or the replaced file's mode); ``open_regular``/``read_bounded``/``bounded_lines``: read a data
file that may be hostile (no FIFO, no planted symlink, bounded sizes).
"""

from __future__ import annotations

import os
import stat

__all__ = ["MAX_DATA_BYTES", "MAX_LINE_BYTES", "SQLITE_HEADS", "bounded_lines", "check_side_file", "open_regular",
           "read_bounded", "write_atomic"]
from typing import IO, Iterable, Iterator, Union

#: Bytes of one line of a JSONL data file (batch inputs, eval cases) read at most: a file of one endless line (a
#: sparse file costs no disk) is refused, never read into memory whole.
MAX_LINE_BYTES = 16 * 2**20


#: Bytes of a data file read whole (an eval report, a batch results file, a run state) at most.
MAX_DATA_BYTES = 64 * 2**20


def open_regular(path: Union[str, "os.PathLike[str]"], what: str = "file") -> "IO[bytes]":
    """``path`` opened to read in binary, through ``open_private(reading=True)``: opened without blocking, so a
    FIFO or device is a ``ConfigError`` naming ``what`` (never a hang) and a symlink another user owns is not
    followed. A missing or unreadable file is the ``OSError`` of ``open``."""
    from .privatefiles import open_private

    return open(open_private(path, os.O_RDONLY, reading=True, what=what), "rb")


def read_bounded(path: Union[str, "os.PathLike[str]"], what: str, limit: int = MAX_DATA_BYTES) -> bytes:
    """The bytes of regular file ``path`` (``open_regular``); one larger than ``limit`` is a ``ConfigError`` naming
    ``what``, read no further than the limit."""
    from ..errors import ConfigError

    with open_regular(path) as f:
        raw = f.read(limit + 1)
    if len(raw) > limit:
        raise ConfigError(f"{what} {os.fspath(path)!r} is larger than {limit // 2**20} MiB; zagent does not read "
                          "it (split the work into smaller files)")
    return raw


def bounded_lines(f: "IO[bytes]", where: str, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(number, line)`` of binary file ``f``, numbered from 1; a line longer than ``limit`` bytes is a
    ``ConfigError`` naming ``where`` and the line, read no further than the limit."""
    from ..errors import ConfigError

    number = 0
    while True:
        raw = f.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            raise ConfigError(f"{where}: line {number} is longer than {limit // 2**20} MiB; one line of a JSONL "
                              "file holds one item, and one that big is not an item (keep big data in files the "
                              "agent's tools read)")
        yield number, raw


def write_atomic(path: Union[str, "os.PathLike[str]"], data: Union[str, bytes, Iterable[bytes]]) -> None:
    """Write ``data`` (text as UTF-8; or pieces of bytes, one at a time) to ``path`` atomically. A ``ConfigError``
    when ``path`` is, or links to, anything but a regular file (a device such as ``/dev/stdout``, a FIFO, a folder):
    it would replace that node; or an SQLite database (``--report logs.db``, ``-o agents.db``) or one's
    ``-wal``/``-shm``/``-journal``: no save is one."""
    target = os.fspath(path)
    _check_target(target)
    from .._model.replies import new_call_id  # zagent's one random id

    token = new_call_id()  # unpredictable: a name planted in a shared folder never makes the save fail
    tmp = f"{target}.{token}.tmp"
    if len(os.fsencode(os.path.basename(tmp))) > 255:  # a legal long name: a short temporary one (NAME_MAX, bytes)
        short = os.path.basename(target)[:200]
        while len(os.fsencode(short)) > 200:  # 80 CJK characters are 240 bytes
            short = short[:-1]
        tmp = os.path.join(os.path.dirname(target), f".{short}.{token}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = _create(tmp, target)
    try:
        with open(fd, "wb") as f:
            f.write(raw) if isinstance(raw, bytes) else f.writelines(raw)  # pieces: never all at once
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _check_target(target: str) -> None:
    """``ConfigError`` when ``target`` exists and is not a regular file, nor a link to one (a dangling link passes:
    the save replaces the link, as it replaces a link to a regular file)."""
    from ..errors import ConfigError

    check_side_file(target)
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise ConfigError(f"cannot save to {target!r}: {exc.strerror or exc}; choose another file") from None
    if stat.S_ISREG(mode):
        link = os.lstat(target)
        if stat.S_ISLNK(link.st_mode) and hasattr(os, "getuid") and link.st_uid != os.getuid():
            return  # another user's link is replaced, never followed or read
        with open_regular(target, "the file to replace") as f:
            if f.read(16).startswith(SQLITE_HEADS):  # a run log, memory, checkpoints or agents store (or its log)
                raise ConfigError(f"{target!r} is an SQLite database (a run log, memory, checkpoint or agents file); "
                                  "zagent does not replace it with a saved file. Name another file")
        return
    kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device or socket")
    how = " links to" if os.path.islink(target) else " is"
    raise ConfigError(f"{target!r}{how} {kind}, not a regular file; zagent saves only to regular files (the save "
                      "would replace that node with a file: /dev/stdout, a FIFO or a folder is gone then). Name a "
                      "file instead")


#: how an SQLite database, its write-ahead log and its rollback journal start
SQLITE_HEADS = (b"SQLite format 3\x00", b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83", b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7")


def check_side_file(target: str) -> None:
    """``ConfigError`` when ``target`` is a side file (``-wal``, ``-shm``, ``-journal``) of an SQLite database beside
    it, there or not yet: SQLite reads it as part of the database (committed rows still in the log are lost). Read
    as Windows and HFS+ open it: ``app.db-wal.``, ``app.db-wal::$DATA``, ``app.db-w`` U+200D ``al`` are the ``-wal``."""
    import re
    import unicodedata

    from ..errors import ConfigError
    from .privatefiles import SQLITE_SIDE_FILES

    name = re.sub(r"::\$data$", "", target, flags=re.IGNORECASE).rstrip(". ") or target
    name = "".join(c for c in name if unicodedata.category(c) != "Cf")  # HFS+ ignores U+200C, U+200D, U+FEFF
    side = next((s for s in SQLITE_SIDE_FILES if name.lower().endswith(s)), None)  # -WAL is -wal on macOS
    if side is None:
        return
    database, side = name[:-len(side)], name[-len(side):]
    try:
        with open_regular(database) as f:
            head = f.read(16)
    except (OSError, ValueError):  # no database there (or not a file to read): an ordinary name
        return
    if head in (b"", SQLITE_HEADS[0]):  # an empty file is an SQLite database too (one just made)
        raise ConfigError(f"{target!r} is the {side} file of the SQLite database {database!r} (a run log, memory, "
                          "checkpoint or agents file); zagent does not write into it or replace it (SQLite reads it as "
                          "part of the database, which would lose what it holds there). Name another file")


def _create(tmp: str, target: str) -> int:
    """The temporary file, made new (never through a symlink or a file planted at its name): mode 0600,
    or the permission bits of the file it replaces when that is a regular file of the user's with one name (through
    a symlink only of the user's own, to a file in its own folder), never setuid, setgid or writable by every user:
    a file or link another user planted, a hard link or a link out (to ``~/bin/tool``, 4777) lends no mode."""
    mode = 0o600  # a new file is the user's alone (docs/security.md)
    try:
        st = os.lstat(target)
        me = os.getuid() if hasattr(os, "getuid") else None
        if stat.S_ISLNK(st.st_mode) and (me is None or st.st_uid == me):
            folder = os.path.realpath(os.path.dirname(os.path.abspath(target)))
            st = os.stat(target) if os.path.realpath(target).startswith(folder.rstrip(os.sep) + os.sep) else st
        if stat.S_ISREG(st.st_mode) and (me is None or st.st_uid == me) and st.st_nlink == 1:
            mode = stat.S_IMODE(st.st_mode) & 0o775  # the user's own bits; no set-id, sticky or world-write bit
    except OSError:
        pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileExistsError:  # a random name taken (by chance, or planted): never written through
        if os.path.islink(tmp) or not os.path.isfile(tmp) or os.stat(tmp).st_uid != os.getuid():
            raise
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o600)
    if mode != 0o600:
        os.fchmod(fd, mode)
    return fd
