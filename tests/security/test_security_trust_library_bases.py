"""The trust rule and classes: a trusted module's own class whose constructor it inherits from the standard library
or an installed distribution (``pydantic.BaseModel``, ``enum.Enum``, ``typing.NamedTuple``, a dataclass) resolves
by name; a library class the trusted module only imports, or a base class from a module outside the library
folders, is still refused (``speckit.owners.code_owners``)."""

import importlib.util

import pytest

from zagent import ConfigError, Kernel
from zagent.speckit.trust import resolve

NO_PYDANTIC = pytest.mark.skipif(importlib.util.find_spec("pydantic") is None, reason="pydantic is not installed")

APP = """
import dataclasses
import enum
import subprocess
from subprocess import Popen
from typing import NamedTuple

import r13planted

try:
    import pydantic
except ImportError:
    pass
else:
    class Answer(pydantic.BaseModel):
        text: str


class Color(enum.Enum):
    RED = "red"


class Point(NamedTuple):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    width: int


class Runner(r13planted.Base):
    'A class whose constructor comes from a module outside the library folders.'
"""

PLANTED = """
class Base:
    def __init__(self, *args):
        raise SystemExit("planted code ran")
"""


@pytest.fixture
def kernel(tmp_path, monkeypatch, forget_modules):
    """``r13app`` (trusted by name) beside ``r13planted`` (not), both on ``sys.path``."""
    forget_modules.extend(["r13app", "r13planted"])
    (tmp_path / "r13app.py").write_text(APP)
    (tmp_path / "r13planted.py").write_text(PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    k = Kernel(entry_points=False, strict=True, config={"trusted_imports": ["r13app"]})
    yield k
    k.close()


@pytest.mark.parametrize("attr", [pytest.param("Answer", marks=NO_PYDANTIC), "Color", "Point", "Box"])
def test_a_trusted_modules_class_over_a_library_base_resolves(kernel, attr):
    """'r13app:<attr>' names a class the trusted module defines over pydantic, enum, NamedTuple or a dataclass:
    the inherited constructor is the library's, chosen by the class's author, so it resolves (it was refused as
    code of 'pydantic.main', 'enum' or 'namedtuple_Point')."""
    assert resolve(f"r13app:{attr}", key="validators", kernel=kernel).__name__ == attr


@pytest.mark.parametrize("attr", ["Popen", "subprocess.Popen"])
def test_a_library_class_a_trusted_module_imports_is_still_refused(kernel, attr):
    """'r13app:Popen' is subprocess's own class, only imported by the trusted module: refused, naming
    'subprocess'."""
    with pytest.raises(ConfigError, match="subprocess"):
        resolve(f"r13app:{attr}", key="validators", kernel=kernel)


def test_a_base_class_from_a_module_outside_the_library_folders_is_still_refused(kernel):
    """'r13app:Runner' inherits its constructor from 'r13planted', a module on sys.path that is neither trusted
    nor installed: refused, naming it."""
    with pytest.raises(ConfigError, match="r13planted"):
        resolve("r13app:Runner", key="validators", kernel=kernel)
