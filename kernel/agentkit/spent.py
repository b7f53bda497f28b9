"""Approvals that ran (docs/security.md, 11): a person's yes to a held call runs that call once. ``claim`` records,
outside the run's checkpoint store (``$XDG_DATA_HOME/zagent/approvals-ran/``, one empty 0600 file per approval, named
by a digest of its binding), that the yes runs its call now, unless it did before: looked up and recorded in one step,
also after a rollback and across processes. ``ran_before`` and ``mark_ran`` look and record apart.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading

from ..errors import ConfigError

__all__ = ["claim", "mark_ran", "ran_before"]

_HERE: set[str] = set()  # this process's records, also when the data folder cannot be written
_LOCK = threading.Lock()
_FOLDER = "approvals-ran"


def _path(tag: str) -> str:
    from .privatefiles import data_folder

    return data_folder(_FOLDER, hashlib.sha256(tag.encode()).hexdigest())


def _check_folder() -> None:
    """A ``ConfigError`` when the record's folder, or a folder holding it, could be changed by another user (owned
    by another user, or writable by others without the sticky bit): a record deleted there would let a yes run its
    call again after a rollback, so a yes is not run on records no one can vouch for."""
    from .privatefiles import data_folder

    me = os.getuid() if hasattr(os, "getuid") else None
    if me is None:  # pragma: no cover  (Windows: modes mean little there)
        return
    for folder, own in ((os.path.dirname(data_folder()), False), (data_folder(), True),
                        (data_folder(_FOLDER), True)):
        try:
            link, st = os.lstat(folder), os.stat(folder)
        except FileNotFoundError:
            continue  # made 0700 by the first record
        except OSError as exc:
            raise ConfigError(f"cannot check the folder {folder!r} of the records of approvals that ran ({exc}); "
                              "no approved call runs until it can be checked") from None
        foreign = own and (st.st_uid != me or link.st_uid != me)
        if foreign or (_others_write(st) and not st.st_mode & stat.S_ISVTX):
            raise ConfigError(
                f"the folder {folder!r} holding zagent's records of approvals that ran ({_FOLDER}) "
                f"{'belongs to another user' if foreign else 'can be written by other users'} (owner uid "
                f"{st.st_uid}, mode {stat.S_IMODE(st.st_mode):o}): a record removed there would let a person's yes "
                "run its call again, so the approved call was not run. Make it yours alone (chmod 700, or set "
                "XDG_DATA_HOME to a folder only you can write) and resume the run")


def _others_write(st: os.stat_result) -> bool:
    """Whether users other than this one may write the folder of ``st``: every user, or a group that is not the
    user's own private group (their primary group, with no other member; a umask of 002 makes folders 0775)."""
    if st.st_mode & 0o002:
        return True
    if not st.st_mode & 0o020:
        return False
    if st.st_gid != os.getgid():
        return True
    try:
        import grp
        import pwd

        me = pwd.getpwuid(os.getuid()).pw_name
        return any(member != me for member in grp.getgrgid(st.st_gid).gr_mem)
    except (ImportError, KeyError):  # an unnamed group or user: no other member is known
        return False


def ran_before(tag: str) -> bool:
    """Whether the approval bound as ``tag`` already ran its call (in this process or, recorded, another one); a
    ``ConfigError`` when the records' folder is not the user's alone (``_check_folder``)."""
    with _LOCK:
        if tag in _HERE:
            return True
    _check_folder()
    return os.path.lexists(_path(tag))


def claim(tag: str) -> bool:
    """Record that the approval bound as ``tag`` runs its call now, if no one did before: ``False`` when it ran (or
    began to run) already, in this process or, recorded, another one. Looking and recording are one step (the
    process's lock, then an ``O_EXCL`` create), so two resumes racing with one yes do not both run its call."""
    from .privatefiles import open_private

    with _LOCK:
        if tag in _HERE:
            return False
        _check_folder()
        try:
            os.close(open_private(_path(tag), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            _HERE.add(tag)
            return False
        except (OSError, ValueError) as exc:  # a read-only home: this process's record only (said)
            _unrecorded(tag, exc)
        _HERE.add(tag)
        return True


def _unrecorded(tag: str, exc: BaseException) -> None:
    from .._runs.logs import log

    log.warning("cannot record in %s that an approval ran its call (%s): a run restored from an earlier "
                "checkpoint in another process could run it again; make the folder writable",
                os.path.dirname(_path(tag)), exc)


def mark_ran(tag: str) -> None:
    """Record that the approval bound as ``tag`` runs its call now."""
    from .privatefiles import open_private

    with _LOCK:
        _HERE.add(tag)
    try:
        os.close(open_private(_path(tag), os.O_WRONLY | os.O_CREAT))
    except (OSError, ValueError) as exc:  # a read-only home: kept for this process only, said once per approval
        _unrecorded(tag, exc)
