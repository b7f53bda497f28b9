"""Round ten: code of an untrusted module reached through a trusted one as a callable object that is not a function.

Attacks tried (session 2026-12-06, redteam round 10) and whether they got through before this module's fixes. The
app's module ``r10app`` is trusted (``trusted_imports``); it imports ``r10evil``, which is not. A marker file written
by ``r10evil``'s code proves it ran.

- ``"r10app:shell"``, a ``functools.partial`` of ``r10evil.wipe`` in the trusted module, as a spec's tool: GOT
  THROUGH (the model's call ran ``r10evil``'s code) -- fixed: ``zagent.speckit.trust._walk`` traces a callable object
  to the code it runs: a partial's function (and the callables it binds), a ``staticmethod``'s or ``classmethod``'s
  function, an object's class and the classes its ``__call__`` comes from, a ``Tool``'s handler
- the same with an instance of ``r10evil.Runner`` (``__call__``), a subclass of it the trusted module defines, a
  partial binding ``r10evil.wipe`` as an argument of a trusted function, and a ``Tool`` made with
  ``zagent.tool(r10evil.wipe)``: GOT THROUGH -- fixed the same way (``kernel/speckit/owners.py``, ``code_owners``)
- a module-level ``staticmethod``/``classmethod`` wrapper of ``r10evil.wipe``: held before (Python 3.10+ copies the
  function's ``__module__`` onto the wrapper), kept as a test
- the app's own uses still resolve: the trusted module's own partial, ``lru_cache`` function, callable object,
  ``Tool``, and a plain function
"""

import functools  # noqa: F401 (the modules below use it)

import pytest

from zagent import ConfigError, Kernel, Tool
from zagent.speckit.trust import resolve

from .conftest import PLUGINS

pytestmark = pytest.mark.timeout(60)

EVIL = """
def wipe(text: str = "") -> str:
    'Wipe.'
    open(MARK, 'w').write('x')
    return 'wiped'

class Runner:
    def __call__(self, text: str = "") -> str:
        return wipe(text)
"""

APP = """
import functools
import r10evil
from zagent import tool

def own(text: str) -> str:
    'Echo.'
    return text

def apply(fn, text: str = "") -> str:
    return fn(text)

shell = functools.partial(r10evil.wipe)
runner = r10evil.Runner()
class Mine(r10evil.Runner):
    pass
mine = Mine()
static = staticmethod(r10evil.wipe)
klass = classmethod(r10evil.wipe)
bound_arg = functools.partial(apply, r10evil.wipe)
evil_tool = tool(r10evil.wipe)

own_partial = functools.partial(own)
@functools.lru_cache(maxsize=None)
def cached(text: str) -> str:
    'Echo, cached.'
    return text
class Own:
    def __call__(self, text: str) -> str:
        return text
own_object = Own()
own_tool = tool(own)
"""


@pytest.fixture
def app(tmp_path, monkeypatch, forget_modules):
    """``r10app`` (trusted) importing ``r10evil`` (not), both on ``sys.path``; the marker ``r10evil`` writes."""
    forget_modules.extend(["r10app", "r10evil"])
    code = tmp_path / "code"
    code.mkdir()
    mark = tmp_path / "wiped"
    (code / "r10evil.py").write_text(f"MARK = {str(mark)!r}\n" + EVIL)
    (code / "r10app.py").write_text(APP)
    monkeypatch.syspath_prepend(str(code))
    return mark


def kernel():
    return Kernel(plugins=list(PLUGINS), entry_points=False, strict=True, config={"trusted_imports": ["r10app"]})


EVIL_PATHS = ["shell", "runner", "mine", "static", "klass", "bound_arg", "evil_tool"]


@pytest.mark.parametrize("attr", EVIL_PATHS)
def test_a_callable_object_running_an_untrusted_modules_code_is_refused(app, attr):
    """Attack: an untrusted spec names ``r10app:<attr>``, a callable object in the trusted module whose code is
    ``r10evil``'s. Defence: refused with a ``ConfigError`` naming ``r10evil`` and what to do; nothing ran."""
    k = kernel()
    with pytest.raises(ConfigError, match=r"r10evil.*not trusted itself.*name that module's function directly"):
        resolve(f"r10app:{attr}", key="tool", kernel=k)
    assert not app.exists()
    k.close()


def test_a_spec_tool_that_is_a_partial_of_untrusted_code_never_runs(app):
    """Attack end to end: a ReAct spec's ``tools: ["r10app:shell"]``, the model calls it. Defence: the spec is
    refused when it loads (``ConfigError``), before any call."""
    k = kernel()
    with pytest.raises(ConfigError, match="r10evil"):
        agent = k.agent({"type": "react", "name": "evil", "tools": ["r10app:shell"]})
        (name,) = agent.tools
        k.run_tool({"id": "c1", "name": name, "arguments": {}}, k.context(agent="evil"))
    assert not app.exists()
    k.close()


@pytest.mark.parametrize("attr", ["own", "own_partial", "cached", "own_object"])
def test_the_trusted_modules_own_callables_still_resolve(app, attr):
    """The app's own code reached through ``r10app`` (a function, a partial of it, an ``lru_cache`` function, an
    object of a class it defines) still resolves and runs."""
    k = kernel()
    assert resolve(f"r10app:{attr}", key="tool", kernel=k)("hi") == "hi"
    k.close()


def test_the_trusted_modules_own_tool_object_still_resolves(app):
    """A ``Tool`` the trusted module made from its own function (``zagent.tool(own)``) resolves as that tool, and a
    spec naming it gets it."""
    k = kernel()
    found = resolve("r10app:own_tool", key="tool", kernel=k)
    assert isinstance(found, Tool) and found.handler("hi") == "hi"
    agent = k.agent({"type": "react", "name": "fine", "tools": ["r10app:own_tool"]})
    assert agent.tools == ["own"]
    k.close()


def test_a_fully_trusted_spec_may_name_any_of_them(app):
    """``trust=True`` (the app vouches for the spec) is not limited by the rule."""
    from zagent.speckit import Trust, trusting

    with trusting(Trust(everything=True)):
        assert callable(resolve("r10app:shell", key="tool"))
