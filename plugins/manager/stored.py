"""An ``AgentManager``'s storage (a folder of agent files or an SQLite file): file names, saving and loading agent
files and records, and ``cli_trusts``, the import trust the CLI gives a spec file and the ``--agents`` store it
names: the store's modules serve the agents stored there, never the file's own agents."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional, Union

import attrs
import msgspec
from zagent.agentkit.files import write_atomic
from zagent.errors import ConfigError
from zagent.speckit import Trust, trusting
from zagent.speckit.trust import for_named_file  # a stored agent others can write gets no trust

from .inline import check_file_name

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def is_db(path: str) -> bool:
    return path.endswith(DB_SUFFIXES)


def file_name(name: str, ext: str = ".json") -> str:
    check_file_name(name)  # letters, digits, '_', '-', '.'; never a Windows device (CON, nul.notes, COM¹)
    if len((name + ext).encode("utf-8")) > 255:  # a file name's limit (ext4, APFS, NTFS): a bare OSError otherwise
        raise ConfigError(f"agent name {name[:40]!r}... ({len(name)} characters) cannot be a file name: "
                          f"'<name>{ext}' may be at most 255 bytes; give the agent a shorter name")
    return name + ext


def check_file_names(folder: str, names: list[str]) -> None:
    """``ConfigError`` when two agent ``names`` to save into ``folder``, or one and a file already there, name one
    file on a system comparing names without case or Unicode normalisation (macOS, Windows: ``evil`` saved would
    replace ``Evil.json``, another agent's file, which would then load as ``evil``; Windows upper-cases ``evıl`` to
    ``EVIL``). Refuses only: nothing is written."""
    from zagent.speckit.paths import folded

    try:
        there = {folded(f): f for f in os.listdir(folder)}
    except OSError:  # no folder yet: nothing there to replace
        there = {}
    seen: dict[str, str] = {}
    for name in names:
        file = file_name(name)
        other = seen.get(folded(file)) or (there.get(folded(file)) if there.get(folded(file)) != file else None)
        if other is not None:
            raise ConfigError(f"agent {name!r} would be saved as {file!r}, the same file as {other!r} in {folder!r} "
                              "where case does not count (macOS, Windows): one would replace the other. Nothing was "
                              f"saved; rename one of the agents, or move {other!r} out of the folder")
        seen[folded(file)] = file


def spec_of(agent: Any) -> Optional[dict[str, Any]]:
    to_dict = getattr(agent, "to_dict", None)
    if to_dict is None or getattr(agent, "spec", True) is None:
        return None
    data = to_dict()
    return data if isinstance(data, dict) else None


def save_file(agent: Any, data: dict[str, Any], path: str) -> None:
    if hasattr(agent, "save"):
        agent.save(path)
        return
    write_atomic(path, msgspec.json.format(msgspec.json.encode(data)) + b"\n")


def load_file(kernel: "Kernel", path: str, trust: Trust) -> Any:
    """The agent of file ``path``, its import paths under ``trust`` (none if others could have written the file)."""
    from zagent.speckit import load_spec_file, spec_file
    from zagent.speckit.paths import in_folder

    spec = load_spec_file(in_folder(path, os.path.dirname(path), "agent file"))  # no link out of the folder
    if spec.get("type", "customize") == "customize" and kernel.find("agent_types", "customize") is not None:
        from zagent.plugins.actions import CustomizeAgent

        return CustomizeAgent.load(path, kernel, trust=for_named_file(path, trust))
    with spec_file(path), trusting(for_named_file(path, trust)):  # its relative paths lie next to it
        return kernel.agent(spec)


def decode_record(found: Optional[tuple[int, bytes]]) -> dict[str, Any]:
    if found is None:
        raise ConfigError("agent record vanished from the store while loading")
    spec: dict[str, Any] = msgspec.json.decode(found[1])  # saved by this store: an agent spec object
    return spec


def storage_trust(storage: Union[str, "os.PathLike[str]"], *, everything: bool = False) -> Trust:
    """The trust the agents stored in ``storage`` get on the command line: the modules of its folder (a ``.db``'s
    folder), unless others can write it (``Trust.for_folder``); everything with ``--trust``."""
    where = os.path.realpath(os.fspath(storage))
    return Trust.for_folder(os.path.dirname(where) if is_db(where) else where, everything=everything)


def cli_trusts(spec_path: str, storage: Optional[str], *, everything: bool = False) -> tuple[Trust, Optional[Trust]]:
    """``(the trust of spec file spec_path, the trust of its --agents storage)``: the storage's folder serves the
    agents stored there only; withheld from the file's own agents (``Trust.withheld``: a refused import from it
    says so). ``everything`` (``--trust``) for both."""
    file = Trust.for_file(spec_path, everything=everything)
    if storage is None:
        return file, None
    store = storage_trust(storage, everything=everything)
    return attrs.evolve(file, withheld=tuple(f for f in store.folders if f not in file.folders)), store
