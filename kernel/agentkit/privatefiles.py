"""Files zagent creates are the user's alone (docs/security.md, defence 8): ``private_folder`` makes folders 0700;
``open_private`` opens or creates (0600) a file, refusing with a ``ConfigError`` a symlink another user owns and, to
write, anything but a regular file of the user's with one link (to read: anything but a regular file). Also
``check_private``, ``touch_private`` and ``tighten``.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from typing import Union

from ..errors import ConfigError

__all__ = ["check_private", "data_folder", "open_private", "private_folder", "private_parent", "spec_named", "tighten",
           "touch_private", "users_path"]

_PathLike = Union[str, "os.PathLike[str]"]


def data_folder(*names: str) -> str:
    """zagent's own data of the user: ``$XDG_DATA_HOME/zagent`` (``~/.local/share/zagent``), ``names`` joined on. A
    relative ``$XDG_DATA_HOME`` is ignored, as the XDG specification says (it would name each working folder's);
    a ``~`` is expanded (a value quoted in a service file)."""
    data = os.path.expanduser(os.environ.get("XDG_DATA_HOME") or "")
    if not os.path.isabs(data):
        data = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "zagent", *names)


def users_path(variable: str, *names: str) -> str:
    """``$variable`` (``~`` expanded) when set, else ``data_folder(*names)``. A relative value is a ``ConfigError``:
    it would name another file in each folder zagent runs in, a downloaded project's own among them."""
    value = os.path.expanduser(os.environ.get(variable) or "")
    if not value:
        return data_folder(*names)
    if not os.path.isabs(value):
        from ..errors import ConfigError

        raise ConfigError(f"{variable}={value!r} is a relative path: it names another file in each folder zagent runs "
                          f"in, so a downloaded project's own would be used; set {variable} to an absolute path, or "
                          "unset it for the default under ~/.local/share/zagent")
    return value


def private_folder(path: _PathLike) -> None:
    """Create the missing folders of ``path`` (a folder) with mode 0700; existing ones are left as they are."""
    folder = _absolute(os.fspath(path))
    missing = []
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for f in reversed(missing):
        try:
            os.mkdir(f, 0o700)
        except FileExistsError:
            continue
        except OSError as exc:  # a name or path too long: say so, not a bare OSError after the run's work
            if exc.errno != errno.ENAMETOOLONG:
                raise
            raise ConfigError(f"cannot make the folder {f[:120]!r}...: its name or path is too long for the file "
                              "system; name a shorter path") from None
        _chmod_made(f)  # whatever the umask


def private_parent(path: _PathLike) -> None:
    """``private_folder`` for the folder of file ``path``, read as the open will (``a/link/../b/x.db`` lies in the
    link target's parent, never in ``a/b``): for files another library opens by name (SQLite)."""
    private_folder(os.path.dirname(_absolute(os.fspath(path))))


def _absolute(path: str) -> str:
    """``path`` made absolute without ``abspath``'s lexical ``..``: after a symlinked folder, ``..`` climbs from the
    link's target, as the open will (``a/link/../b`` is not ``a/b``)."""
    joined = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    return joined.rstrip(os.sep) or os.sep


def _chmod_made(folder: str) -> None:
    """0700 for ``folder``, just made, through a descriptor: a link or file swapped in for it is refused, never
    followed (``chmod`` by name would change the mode of whatever the link points to)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    if not hasattr(os, "fchmod"):  # pragma: no cover  (Windows: modes mean little there)
        os.chmod(folder, 0o700)
        return
    try:
        fd = os.open(folder, flags)
    except OSError:
        raise ConfigError(f"the folder {folder!r} zagent just made was replaced (by a symlink or a file) before "
                          "its mode was set; nothing was changed through it. Choose a folder only you can write") from None
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def check_private(path: _PathLike, *, reading: bool = False) -> bool:
    """Refuse ``path`` if it is a symlink another user owns (and, to write, a file that is not a regular
    file of this user's, or a link of the user's that is dangling or points out of its folder); a missing file
    passes. ``ConfigError`` saying what was found and what to do. ``True``
    when ``path`` is a symlink of the user's own (the one kind of link ``open_private`` follows)."""
    p = os.fspath(path)
    try:
        st = os.lstat(p)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise ConfigError(f"cannot use {p!r}: {exc}") from None
    me = os.getuid() if hasattr(os, "getuid") else None
    own_link = stat.S_ISLNK(st.st_mode)
    if own_link:
        if me is not None and st.st_uid != me:
            raise ConfigError(f"{p!r} is a symlink owned by another user (uid {st.st_uid}, to "
                              f"{os.path.realpath(p)!r}); zagent does not follow it. Remove it and choose a file "
                              "in a folder only you can write")
        if reading:
            return True
        _check_link_out(p)
        st = os.stat(p)
    if reading:
        return own_link
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{p!r} is not a regular file; zagent writes only regular files. Choose another path")
    if me is not None and st.st_uid != me:
        raise ConfigError(f"{p!r} belongs to another user (uid {st.st_uid}); zagent does not write into it "
                          "(its owner could read what is written). Choose a file in a folder only you can write")
    if st.st_nlink > 1:
        raise ConfigError(f"{p!r} has {st.st_nlink} hard links (another name may be ~/.bashrc); zagent does not "
                          "write into it. Choose a new file in a folder only you can write")
    return own_link


def _check_link_out(p: str) -> str:
    """The real path of the user's own symlink ``p``, about to be written through; ``ConfigError`` when it is
    dangling (the write would make a file where it points: ``~/.ssh/authorized_keys``), a loop, or out of its folder
    (a link in a downloaded folder is the user's too: ``--out results.jsonl`` names that folder's file, not
    ``~/.bashrc``)."""
    target = os.path.realpath(p)
    folder = os.path.realpath(os.path.dirname(_absolute(p)))
    if os.path.islink(target):  # realpath stops at a loop
        raise ConfigError(f"{p!r} is a symlink that leads back to itself (a loop through {target!r}); zagent does not "
                          "write through it. Remove the link, or name the real path")
    if not os.path.lexists(target):
        raise ConfigError(f"{p!r} is a symlink to {target!r}, which does not exist; zagent does not create a file "
                          "through a link (a link in a downloaded folder could make one anywhere). Remove the link, "
                          "or name the real path")
    if not target.startswith(folder.rstrip(os.sep) + os.sep):
        raise ConfigError(f"{p!r} is a symlink to {target!r}, outside its folder {folder!r}; zagent writes through a "
                          "link only to a file in the link's own folder (a link in a downloaded folder could point at "
                          "~/.bashrc). Name the real path, or remove the link")
    return target


#: the real paths spec files named (``speckit.paths.check_spec_path``), no link on their way when checked; bounded
_SPEC_PATHS: dict[str, None] = {}
_SPEC_LOCK = threading.Lock()
MAX_SPEC_PATHS = 4096


def spec_named(real: str) -> str:
    """``real``, a spec's path checked with every link on its way resolved, remembered so that opening it checks its
    way again (``check_spec_way``)."""
    with _SPEC_LOCK:
        _SPEC_PATHS[real] = None
        while len(_SPEC_PATHS) > MAX_SPEC_PATHS:
            _SPEC_PATHS.pop(next(iter(_SPEC_PATHS)), None)
    return real


def check_spec_way(path: str) -> None:
    """``ConfigError`` when ``path`` is a spec's path (``spec_named``) and a folder on its way became a link since it
    was checked (a tool that makes links swapped one in: ``runs -> ~/.ssh``); no work for any other path."""
    if path not in _SPEC_PATHS:
        return
    folder = os.path.dirname(path)
    real = os.path.realpath(folder)
    if real != folder:
        raise ConfigError(f"{path!r} was named by a spec and checked when it loaded, with no link on its way; a folder "
                          f"on its way is now a link (to {real!r}), so it changed since and zagent does not use it. "
                          "Remove the link (the spec's folder holds something that makes links), then load the spec "
                          "again")


def _open_way(path: str, flags: int) -> int:
    """``os.open(path, flags, 0o600)``; for a spec's path (``spec_named``) each folder on its way opened in turn with
    ``O_NOFOLLOW`` (``openat``), so a folder swapped for a link after ``check_spec_way`` is refused, never followed."""
    nofollow, folder = getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_DIRECTORY", 0)
    if path not in _SPEC_PATHS or not nofollow or not folder or os.open not in os.supports_dir_fd:
        return os.open(path, flags, 0o600)
    names, way = [n for n in path.split(os.sep) if n], getattr(os, "O_PATH", os.O_RDONLY) | folder
    fd = os.open(os.sep, way | getattr(os, "O_CLOEXEC", 0))
    try:
        for name in names[:-1]:
            try:
                inner = os.open(name, way | nofollow | getattr(os, "O_CLOEXEC", 0), dir_fd=fd)
            except PermissionError:  # a folder we may cross but not read (no O_PATH here): opened by name
                return os.open(path, flags, 0o600)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    check_spec_way(path)  # says which folder became a link
                raise
            os.close(fd)
            fd = inner
        return os.open(names[-1], flags, 0o600, dir_fd=fd)
    finally:
        os.close(fd)


def open_private(path: _PathLike, flags: int, *, reading: bool = False, what: str = "file") -> int:
    """``os.open(path, flags)``, creating the file with mode 0600 and its folders with 0700, after
    ``check_private``; the file descriptor is checked again after opening (no race with a planted link). To read,
    anything but a regular file is a ``ConfigError`` naming ``what`` and the kind of file it is."""
    p = os.fspath(path)
    check_spec_way(p)
    if not reading:
        from .files import check_side_file

        check_side_file(p)  # app.db-journal (empty), -wal, -shm: part of the database beside it, never a file of ours
        private_folder(os.path.dirname(_absolute(p)))
    # only a link check_private saw as the user's own is followed: one planted after the check is not
    nofollow = 0 if check_private(p, reading=reading) else getattr(os, "O_NOFOLLOW", 0)
    where = p
    if not nofollow and not reading:  # the user's own link: its checked target is opened, never a link swapped in
        where, nofollow = _check_link_out(p), getattr(os, "O_NOFOLLOW", 0)
        from .files import check_side_file

        check_side_file(where)  # page.html -> app.db-wal: the link's name said nothing of the database's log
    nonblock = getattr(os, "O_NONBLOCK", 0)  # a planted FIFO must not hang the open, to read or to write
    truncate = not reading and bool(flags & os.O_TRUNC)  # after the descriptor is checked, never before
    try:
        fd = _open_way(where, (flags & ~os.O_TRUNC if truncate else flags) | nofollow | nonblock
                       | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if nofollow and os.path.islink(where):
            raise ConfigError(f"{p!r} became a symlink while zagent opened it; it was not followed. Remove it "
                              "and choose a file in a folder only you can write") from None
        if exc.errno == errno.ENXIO:  # a FIFO (no reader) or a device put there after the check
            raise ConfigError(f"{what} {p!r} is a FIFO or a device, not a regular file; zagent writes only regular "
                              "files. Choose a file in a folder only you can write") from None
        raise
    if reading:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise ConfigError(f"{what} {p!r} is {kind}, not a regular file; zagent reads only regular files (a FIFO "
                              "or a device could hang the read or never end). Name a regular file")
    else:
        st = os.fstat(fd)
        me = os.getuid() if hasattr(os, "getuid") else None
        if not stat.S_ISREG(st.st_mode) or (me is not None and st.st_uid != me) or st.st_nlink > 1:
            os.close(fd)
            kind = "" if stat.S_ISREG(st.st_mode) else " (a FIFO)" if stat.S_ISFIFO(st.st_mode) else " (not a file)"
            raise ConfigError(f"{p!r} is not a regular file of yours with one name{kind} (it changed while zagent "
                              "opened it); zagent does not write into it. Choose a file in a folder only you can "
                              "write")
        if truncate:
            os.ftruncate(fd, 0)
    if nonblock:
        os.set_blocking(fd, True)
    return fd


#: the files SQLite opens by name next to a database (``<db>-wal`` and so on), as writable as the database
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def touch_private(path: _PathLike) -> None:
    """Create ``path`` (mode 0600, in an existing folder) if it is missing, after ``check_private``: for files another
    library opens by name (SQLite databases; SQLite gives its ``-wal``/``-shm`` files the same mode). Side files of
    ``SQLITE_SIDE_FILES`` already there pass ``check_private`` too: SQLite writes into one it finds (another user's
    ``-wal`` would get every change to the database)."""
    p = os.fspath(path)
    if p in (":memory:", ""):  # SQLite's in-memory and temporary databases
        return
    for base in dict.fromkeys((p, os.path.realpath(p))):  # SQLite keeps them next to the file a link leads to
        for side in SQLITE_SIDE_FILES:
            if os.path.islink(base + side):  # SQLite never makes one: shipped in a download, it may point at your files
                raise ConfigError(f"{base + side!r} is a symlink (to {os.path.realpath(base + side)!r}); SQLite keeps "
                                  f"its {side} file next to the database {base!r} and never makes it a link, so zagent "
                                  "does not open the database with it. Remove the link, or name another database file")
            check_private(base + side)
    if os.path.lexists(p):
        check_spec_way(p)
        check_private(p)
        return
    if not os.path.isdir(os.path.dirname(_absolute(p))):
        return  # the caller's own error says the folder is missing
    os.close(open_private(p, os.O_RDWR | os.O_CREAT))


def tighten(path: _PathLike) -> None:
    """Make zagent's own default file ``path`` (``memory.db``, ``logs.db``) and its folder the user's alone
    (0600, 0700) if an older zagent left them readable by others; files of other users are left alone."""
    p = os.path.abspath(os.fspath(path))
    me = os.getuid() if hasattr(os, "getuid") else None
    for target, mode in ((os.path.dirname(p), 0o700), (p, 0o600)):
        try:
            st = os.lstat(target)
            if not stat.S_ISLNK(st.st_mode) and st.st_uid == me and stat.S_IMODE(st.st_mode) & 0o077:
                os.chmod(target, stat.S_IMODE(st.st_mode) & mode)
        except OSError:
            continue
