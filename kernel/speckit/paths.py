"""Where the spec being built comes from (``spec_file``, ``current_spec_file``) and the one check of its *path*
values (``check_spec_path``): from an untrusted spec, a file must end in a suffix its key allows and lie in the
spec's folder or ``spec_paths``, below no folder other users can write, with one name (no hard link), else
``ConfigError``; ``untrusted_options`` checks a spec's model options (docs/security.md, 8).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Sequence

from .._model.resolve import UsersModel, checking_options
from ..errors import ConfigError
from .trust import current_trust, dubious_folder

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

__all__ = ["PATH_OPTION_NAMES", "PATH_OPTION_SUFFIXES", "allowed_folders", "check_option_paths", "check_path_way",
           "check_spec_path", "check_untrusted_options", "check_users_data", "configured_data", "current_spec_file",
           "folded", "listed_folders", "in_folder", "path_options", "relative_options", "reserved_files", "reserving",
           "spec_file", "spec_folders", "spec_origin", "spec_relative", "untrusted_options", "users_data",
           "users_model", "windows_device"]

#: option names that are paths whatever the provider declares (a future wrapper that forgets to declare)
PATH_OPTION_SUFFIXES = ("_path", "_file", "_dir", "_folder", "_db", "_filename", "_directory", "_database")
#: whole option names that are paths too (``file=``, ``dir=``, ``db=`` of a plugin's backend or wrapper)
PATH_OPTION_NAMES = ("path", "file", "dir", "folder", "db", "filename", "directory", "database")

#: environment variables that move parts of zagent's own data of the user out of ``$XDG_DATA_HOME/zagent``
USERS_DATA_ENV = ("ZAGENT_RECORDINGS", "ZAGENT_SKILLS_DIR", "ZAGENT_MEMORY_DB", "ZAGENT_LOG_DB")

#: names Windows opens as devices in every folder, whatever follows the first dot (``nul.jsonl``, ``COM1.db``);
#: ``COM0``/``LPT0`` and the superscript digits (``COM¹``: Windows reads ¹²³ as digits) are reserved too
WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                             *(f"{port}{i}" for port in ("COM", "LPT") for i in "0123456789\u00b9\u00b2\u00b3")})


DEVICES_SAID = "CON, PRN, AUX, NUL, COM0-9, LPT0-9, COM\u00b9-\u00b3, LPT\u00b9-\u00b3"


def windows_device(name: str) -> Optional[str]:
    """The device a file or folder name opens on Windows (``CON`` for ``con .notes.json``; a ``:`` ends it as a ``.``
    does: ``nul:x``), else ``None``. Read NFKC-normalised, so look-alikes (``ＣＯＮ``, ``COM₁``) count too."""
    import unicodedata

    stem = unicodedata.normalize("NFKC", name).split(".")[0].split(":")[0].strip()
    return name.split(".")[0].split(":")[0].strip() if stem.upper() in WINDOWS_DEVICES else None

HOW_TO_PLACE = ("keep the file in the spec's folder, list its folder in Kernel(config={'spec_paths': [...]}), set "
                "the path in code or on the command line, or trust the spec (k.agent(spec, trust=True); "
                "zagent ... --trust)")


_folders: "contextvars.ContextVar[tuple[str, ...]]" = contextvars.ContextVar("zagent_spec_folders", default=())
_file: "contextvars.ContextVar[Optional[str]]" = contextvars.ContextVar("zagent_spec_file", default=None)
_reserved: "contextvars.ContextVar[tuple[tuple[str, str], ...]]" = contextvars.ContextVar("zagent_reserved",
                                                                                        default=())


@contextlib.contextmanager
def reserving(files: Mapping[Any, str]) -> Iterator[None]:
    """Specs built inside the block may not name the files of ``files`` (path -> whose it is: ``"the checkpoint
    file of this workflow run"``), which the run or command keeps its own data in (``None`` paths are skipped)."""
    taken = tuple((os.path.realpath(os.fspath(p)), what) for p, what in files.items()
                  if isinstance(p, (str, os.PathLike)) and "\x00" not in os.fspath(p))
    token = _reserved.set(_reserved.get() + taken)
    try:
        yield
    finally:
        _reserved.reset(token)


def reserved_files() -> dict[str, str]:
    """The files specs built here may not name (``reserving``): real path -> whose it is, for a job that builds
    its agents later or elsewhere (a workflow's items, a remote worker: ``zagent.agentkit.units.shipped_trust``)."""
    return dict(_reserved.get())


@contextlib.contextmanager
def spec_file(path: "Optional[str | os.PathLike[str]]") -> Iterator[None]:
    """Specs built inside the block come from the file ``path`` (``current_spec_file()``; its folder, unless other
    users can write it, joins the spec folders); ``None`` changes nothing."""
    if path is None:
        yield
        return
    real = os.path.realpath(os.fspath(path))
    folder = os.path.dirname(real)  # not one other users can write: they could plant links and files there
    with spec_origin(real, _folders.get() + ((folder,) if dubious_folder(folder) is None else ())):
        yield


@contextlib.contextmanager
def spec_origin(file: Optional[str], folders: Sequence[str]) -> Iterator[None]:
    """Specs built inside the block come from ``file`` with exactly these spec ``folders`` (a worker rebuilding
    a shipped spec as its driver did, ``zagent.agentkit.units.shipped``)."""
    file_token, folders_token = _file.set(file), _folders.set(tuple(folders))
    try:
        yield
    finally:
        _folders.reset(folders_token)
        _file.reset(file_token)


def current_spec_file() -> Optional[str]:
    """The real path of the spec file being built (``None`` for a spec given as a dict)."""
    return _file.get()


def spec_folders() -> tuple[str, ...]:
    """The folders of the spec files being built (outer ones first), where their files may lie."""
    return _folders.get()


def users_model(model: Any) -> Any:
    """``model`` marked as the user's own choice when it is a name (instances and ``None`` as they are)."""
    return UsersModel(model) if isinstance(model, str) and not isinstance(model, UsersModel) else model


def allowed_folders(kernel: Optional["Kernel"]) -> tuple[str, ...]:
    """Where an untrusted spec may name files: the app's ``spec_paths``, the spec's folder, the CLI's trusted folders."""
    return tuple(dict.fromkeys(listed_folders(kernel) + list(_folders.get()) + list(current_trust().folders)))


def listed_folders(kernel: Optional["Kernel"]) -> list[str]:
    """The real paths of the app's ``Kernel(config={"spec_paths": [...]})``."""
    configured: Any = (kernel.config.get("spec_paths") or ()) if kernel is not None else ()
    if isinstance(configured, (str, os.PathLike)):
        configured = [configured]
    return [os.path.realpath(os.path.expanduser(os.fspath(f))) for f in configured]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_spec_path(value: Any, key: str, suffixes: Sequence[str] = (), *,
                    kernel: Optional["Kernel"] = None, reads: bool = False) -> Any:
    """The path to use for ``value``: a relative one joined to the folder of the spec file being built (not the
    cwd). Refused, unless the spec is trusted, when it or its real location does not end in ``suffixes`` (when
    given) or its real location is outside ``allowed_folders(kernel)``; else that real location (links resolved).
    ``None`` and ``":memory:"`` as they are. A file zagent keeps for itself (``reserving``) is refused unless the
    spec only ``reads`` it (an agent file)."""
    if value is None or value == ":memory:":
        return value
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if isinstance(text, str):
        value = text = spec_relative(text)
    if current_trust().everything:
        return value
    if text is None or isinstance(text, bytes):
        raise ConfigError(f"{key} must be a path, got {type(value).__name__}")
    if "\x00" in text or (suffixes and not text.lower().endswith(tuple(suffixes))):
        raise ConfigError(f"{key} {text!r} in the spec is refused: a spec file may only name a file ending in "
                          f"{' or '.join(suffixes)} for zagent to write. Rename it, set the path in code or on the "
                          "command line, or trust the spec (k.agent(spec, trust=True); zagent ... --trust)")
    check_name_shape(text, key)
    folders = allowed_folders(kernel)
    real = os.path.realpath(text)  # symlinks resolved: a link out of the folder is out
    home = next((f for f in folders if _within(real, f)), None)
    if home is None:
        where = f"inside {', '.join(folders)}" if folders else "(the spec has no folder and the app listed none)"
        raise ConfigError(f"{key} {text!r} in the spec is refused: it points to {real!r}, outside the folders a "
                          f"spec may name files in {where}; {HOW_TO_PLACE}")
    check_path_way(real, home, key, text)
    taken = None if reads else "the spec file itself" if _alike(real, _file.get()) else next(
        (w for p, w in _reserved.get() if _alike(p, real)), None)
    if taken is not None:  # a spec's agent writing there would damage it (a workflow run no longer resumes)
        raise ConfigError(f"{key} {text!r} in the spec is refused: {real!r} is {taken}, which zagent keeps for "
                          f"itself while this runs; name another file; {HOW_TO_PLACE}")
    if suffixes and not real.lower().endswith(tuple(suffixes)):  # a link 't.jsonl' -> '.env' names '.env'
        raise ConfigError(f"{key} {text!r} in the spec is refused: it is a link to {real!r}, which does not end in "
                          f"{' or '.join(suffixes)}; {HOW_TO_PLACE}")
    check_users_data(real, key, text, kernel)
    from ..agentkit.privatefiles import spec_named  # its folders are checked again when it is opened
    return spec_named(real)  # the real path: no '..' after a link for a lexical step (a folder made) to read


def _alike(a: Optional[str], b: Optional[str]) -> bool:
    """Whether real paths ``a`` and ``b`` may be one file: equal, or equal but for case and Unicode normalisation
    (``CP.db`` is ``cp.db`` on macOS and Windows, a decomposed ``café`` the composed one on macOS)."""
    return a is not None and b is not None and (a == b or folded(a) == folded(b))


def folded(path: str) -> str:
    """``path`` NFC-normalised and case-folded, also as upper-cased (Windows: ``ı`` is ``I``), without format
    characters (HFS+ ignores U+200C, U+FEFF), each name without trailing dots and spaces (Windows: ``data./``
    is ``data/``): one key for names a file system may take as one. Only to refuse more, never to allow."""
    import unicodedata

    once = unicodedata.normalize("NFC", path).casefold()
    names = "".join(c for c in unicodedata.normalize("NFC", once.upper().casefold())
                    if unicodedata.category(c) != "Cf").split(os.sep)
    return os.sep.join(n.rstrip(". ") or n for n in names)


def check_users_data(real: str, key: str, text: str, kernel: Optional["Kernel"]) -> None:
    """``ConfigError`` when the real path ``real`` (the spec's ``text`` under ``key``) lies in zagent's own data of
    the user (``users_data``), unless the app listed that very part of it in ``spec_paths``: a spec downloaded into
    the home folder has the user's recordings "in its folder"."""
    as_one = folded(real)  # ~/.Local/Share/ZAGENT is zagent's data on macOS and Windows: refused everywhere
    mine = next((d for d in users_data(kernel) if _within(as_one, folded(d))), None)
    if mine is not None and not any(_within(real, f) and _within(f, mine) for f in listed_folders(kernel)):
        raise ConfigError(
            f"{key} {text!r} in the spec is refused: it points to {real!r}, inside zagent's own data of yours "
            f"({mine}: recordings, run log, memory, skills), which a spec file may not name, even in its own folder "
            "(leave the path out to use your memory file under the agent's own namespace). Set the path in code or "
            "on the command line, list that very folder in Kernel(config={'spec_paths': [...]}), or trust the spec "
            "(k.agent(spec, trust=True); zagent ... --trust)")


#: bidi controls: they change how the rest of a name shows in a listing or a log line (another name than it is)
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: the longest file name and path POSIX systems take (bytes); a longer one fails only when the run writes
NAME_MAX, PATH_MAX = 255, 4095


def check_name_shape(text: str, key: str) -> None:
    """``ConfigError`` when the spec's path ``text`` holds a control character (a newline, an escape sequence or
    a bidi control in a file name it makes), a folder name over ``NAME_MAX`` bytes or is over ``PATH_MAX`` bytes in
    all (a file name too long is a ``ConfigError`` when the file is opened)."""
    odd = next((c for c in text if ord(c) < 32 or 127 <= ord(c) < 160 or c in BIDI_CONTROLS), None)  # C0, DEL, C1
    if odd is not None:
        raise ConfigError(f"{key} {text!r} in the spec is refused: it holds the control character {odd!r}, which "
                          f"zagent never puts in a file name (a newline, a terminal escape or a bidi control); name "
                          f"another file; {HOW_TO_PLACE}")
    size, longest = len(os.fsencode(text)), max((len(os.fsencode(n)) for n in text.split(os.sep)[:-1]), default=0)
    if size > PATH_MAX or longest > NAME_MAX:
        raise ConfigError(f"{key} {text[:80]!r}... in the spec is refused: it is {size} bytes long with a folder "
                          f"name of {longest}, over the {PATH_MAX} bytes a path and {NAME_MAX} a name may have, so "
                          f"writing it would fail; name a shorter path")


def check_path_way(real: str, home: str, key: str, text: str) -> None:
    """``ConfigError`` when a folder between ``home`` (an allowed folder) and the real path ``real`` (the spec's
    ``text`` under ``key``) is one other users can write or own (they could swap a folder on the way for a link out
    after this check), or when ``real`` is a file with more than one name (a hard link: another name may be a file
    of the user's outside the folder), or when a name on the way is a Windows device (``con.jsonl``, ``nul.db``)."""
    import stat

    below = os.path.relpath(real, home) if _within(real, home) else os.path.basename(real)  # the spec's own part
    device = next((n for n in below.replace("\\", "/").split("/") if windows_device(n)), None)
    if device is not None:  # on Windows the name opens the device in any folder: CON waits on the console
        raise ConfigError(f"{key} {text!r} in the spec is refused: {device!r} is a Windows device name ({DEVICES_SAID}"
                          f"), which opens the device wherever it lies; name another file; {HOW_TO_PLACE}")
    name = os.path.basename(below.replace("\\", "/"))
    if ":" in name:  # NTFS: 'r.json:log.jsonl' is a hidden stream of r.json, never a file of its own
        raise ConfigError(f"{key} {text!r} in the spec is refused: on Windows a ':' in a file name names a data stream "
                          f"of another file ({name.split(':')[0]!r}), which would be written into; name a file "
                          f"without ':'; {HOW_TO_PLACE}")
    me = os.getuid() if hasattr(os, "getuid") else None
    folder = os.path.dirname(real)
    while _within(folder, home) and folder != home:
        try:
            st = os.lstat(folder)
        except OSError:  # not made yet: zagent makes it 0700
            st = None
        if st is not None and (st.st_mode & stat.S_IWOTH or (me is not None and st.st_uid not in (me, 0))):
            who = (f"every user can write it (mode {stat.S_IMODE(st.st_mode):o})" if st.st_mode & stat.S_IWOTH
                   else f"it is owned by another user (uid {st.st_uid})")
            raise ConfigError(f"{key} {text!r} in the spec is refused: it lies below {folder!r}, and {who}, so other "
                              "users can write there and swap a folder on the way for a link out before zagent "
                              f"writes. Make that folder yours alone (chmod go-w), or name a file elsewhere in the "
                              f"spec's folder; {HOW_TO_PLACE}")
        folder = os.path.dirname(folder)
    try:
        st = os.stat(real)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise ConfigError(f"{key} {text!r} in the spec is refused: {real!r} has {st.st_nlink} hard links (another of "
                          "its names may be a file of yours outside the spec's folder), so zagent neither reads nor "
                          f"writes it for a spec. Put a copy of the file there instead of a link; {HOW_TO_PLACE}")


def in_folder(path: str, folder: str, what: str) -> str:
    """The real path of ``path`` (a file listed in ``folder``: an agents or trajectories folder); ``ConfigError``
    when it links out of the folder (to an agent file of the user's elsewhere, with its key and tools) or is a hard
    link (one of several names), unless everything is trusted."""
    root, real = os.path.realpath(folder), os.path.realpath(path)
    if current_trust().everything:
        return real
    if not _within(real, root):
        raise ConfigError(f"{what} {path!r} links out of its folder {root} (to {real!r}); zagent loads only files "
                          "that lie in the folder, as for skills. Copy the file into the folder instead of linking "
                          "it")
    try:
        st = os.stat(real)
    except OSError:
        return real  # reading it says what is wrong
    if st.st_nlink > 1 and not os.path.isdir(real):  # another of its names may be the user's file elsewhere
        raise ConfigError(f"{what} {path!r} has {st.st_nlink} hard links (another of its names may be a file of "
                          f"yours outside {root}), so zagent does not load it from the folder. Put a copy of the "
                          "file there instead of a link")
    return real


def users_data(kernel: Optional["Kernel"] = None) -> tuple[str, ...]:
    """The real locations of zagent's own data of the user, never a spec's to name: ``$XDG_DATA_HOME/zagent``
    (default recordings, run log, memory, skills, the answer key), what ``USERS_DATA_ENV`` names and what the
    ``kernel``'s config puts elsewhere (``configured_data``)."""
    from ..agentkit.privatefiles import data_folder

    places = [data_folder(), *(os.environ.get(name) or "" for name in USERS_DATA_ENV), *configured_data(kernel)]
    # both readings of a '~': zagent's readers take "~/rec" as it is (./~/rec), a shell would expand it
    return tuple(dict.fromkeys(os.path.realpath(q) for p in places if p and "\x00" not in p
                               for q in (p, os.path.expanduser(p))))


#: the words ``config["log"]`` takes for on and off, not file names (``zagent.plugins.runlog.enabled_path``)
_LOG_SWITCHES = ("", "0", "false", "no", "off", "1", "true", "on", "yes")


def configured_data(kernel: Optional["Kernel"]) -> list[str]:
    """The files and folders of zagent's data the app's config names: the run log (``log``, a path or
    ``{"path": ...}``), the memory file (``memory.path``) and the skills folder and index (``skills.folder``,
    ``skills.index``)."""
    config: Any = kernel.config if kernel is not None else None
    if not isinstance(config, Mapping):
        return []
    log, memory, skills = config.get("log"), config.get("memory"), config.get("skills")
    found = [log if not isinstance(log, str) or log.strip().lower() not in _LOG_SWITCHES else None,
             log.get("path") if isinstance(log, Mapping) else None,
             memory.get("path") if isinstance(memory, Mapping) else None,
             *((skills.get("folder"), skills.get("index")) if isinstance(skills, Mapping) else ())]
    return [os.fspath(f) for f in found if isinstance(f, (str, os.PathLike))]


def spec_relative(path: str) -> str:
    """``path`` joined to the folder of the spec file being built (``current_spec_file()``) when relative; as is
    for an absolute path or a spec given as a dict (then the cwd's, as Python code's)."""
    source = _file.get()
    if source is None or "\x00" in path or os.path.isabs(path):
        return path
    return os.path.join(os.path.dirname(source), path)


def path_options(factory: Any, options: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The options of a provider call that are paths, with the suffixes each allows: those the factory
    declares (``factory.zagent_path_options = {"path": (".jsonl",)}``) and any named like a path."""
    declared: Mapping[str, Sequence[str]] = getattr(factory, "zagent_path_options", None) or {}
    found = {k: tuple(v) for k, v in declared.items() if options.get(k) is not None}
    for k, v in options.items():
        if k not in found and v is not None and isinstance(k, str) and (
                k.lower() in PATH_OPTION_NAMES or k.lower().endswith(PATH_OPTION_SUFFIXES)):
            found[k] = ()
    return found


@contextlib.contextmanager
def untrusted_options(trusted: bool = False) -> Iterator[None]:
    """LLM options made inside the block come from an untrusted spec (``spec_options`` sets it): the kernel
    checks them with ``check_untrusted_options`` before the provider's factory runs (``trusted``: only joins
    relative path options to the spec file's folder, ``relative_options``)."""
    with checking_options(relative_options if trusted else check_untrusted_options):
        yield


def check_untrusted_options(factory: Optional[Callable[..., Any]], spec: str, options: Mapping[str, Any],
                            kernel: Optional["Kernel"]) -> None:
    """An untrusted spec's model: its numbers in bounds, no prices (``sizes.check_llm_options``), its paths in
    its folder (``check_option_paths``)."""
    from .sizes import check_llm_options

    check_llm_options(spec, options)
    check_option_paths(factory, spec, options, kernel)


def relative_options(factory: Optional[Callable[..., Any]], spec: str, options: Mapping[str, Any],
                     kernel: Optional["Kernel"]) -> None:
    """A trusted spec's model: its relative path options joined to the spec file's folder (``spec_relative``)."""
    if isinstance(options, dict):
        for key in path_options(factory, options):
            if isinstance(options[key], (str, os.PathLike)):
                options[key] = spec_relative(os.fspath(options[key]))


def check_option_paths(factory: Optional[Callable[..., Any]], spec: str, options: Mapping[str, Any],
                       kernel: Optional["Kernel"]) -> None:
    """``check_spec_path`` for every path option of ``spec`` (``record:...``) built from an untrusted spec's
    ``llm_config``, and no default path of the user's left out by a model the spec names (docs/security.md, 8);
    no-op otherwise: Python code naming a path is the app's own."""
    for key, suffixes in path_options(factory, options).items():
        path = check_spec_path(options[key], f"llm_config {key!r} of {spec!r}", suffixes, kernel=kernel)
        if isinstance(options, dict):  # the kernel's own dict of this call: the path used is the one checked
            options[key] = path
    if isinstance(spec, UsersModel):
        return
    defaults: Mapping[str, str] = getattr(factory, "zagent_default_paths", None) or {}
    for key, where in defaults.items():
        if options.get(key) is None:
            raise ConfigError(
                f"model {spec!r} in the spec gives no {key!r}, so it would use {where}, which a spec file may "
                f"not write or read (it could overwrite or replay your own recording of that model). Give it a "
                f"{key} in the spec's folder (\"llm_config\": {{\"model\": {str(spec)!r}, \"{key}\": \"run.jsonl\"}}), "
                f"choose the model yourself (zagent ... --model {spec}), or trust the spec "
                "(k.agent(spec, trust=True); zagent ... --trust)")
