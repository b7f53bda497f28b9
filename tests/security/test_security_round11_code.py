"""Round eleven: code from data (session 2026-12-07, redteam11). A marker file written by the hostile code proves
it ran; threads meet at fixed points (``r11_sync``: events and a barrier the test modules wait on).

Tried, and whether it got through before this round's fixes:

- ``trust.load`` put the trusted folder first on the process-wide ``sys.path`` during the import. Another
  thread's import of a module only in that folder, a Kernel built meanwhile (a ``*.dist-info`` plugin in the
  folder), a second kernel loading from another trusted folder (it got the first folder's helper): GOT THROUGH;
  two kernels loading from one folder at once (one lost it mid-import): FAILED -- fixed: ``zagent.speckit.finder``
  searches the folders for the loading thread only; ``sys.path`` is never changed
- an unchecked-hash or a time-and-size-matching ``.pyc`` of other code next to the user's source (an unpacked
  archive), for a module or a submodule imported later; an extension module next to a ``.py`` of the same name
  (or a package's ``__init__``): GOT THROUGH -- fixed: spec folders' modules compile from source; the extension is
  refused before it is loaded
- a submodule others can write, named after its package was imported (by an earlier spec or tool); a helper of
  mode 666 a trusted module imports: GOT THROUGH -- fixed: ``trust._in_folders`` checks below an imported package;
  the finder refuses such a file
- through a trusted module: a class whose ``__init__`` or metaclass ``__call__`` is an untrusted module's, an
  object whose class took an untrusted function as ``__call__``: GOT THROUGH -- fixed: ``owners.code_owners``
- held: an untrusted spec loading while a trusted one loads; a module imported lazily, after the load; a
  same-named module of another folder loading at the same time (refused; its error now says the name is taken)
"""

import importlib
import sys
import threading
import types

import pytest

from zagent import ConfigError, Kernel
from zagent.speckit import Trust

from .conftest import PLUGINS, agent_spec

WAIT = 20  # seconds any thread waits for another before the test fails rather than hangs


@pytest.fixture
def sync(forget_modules):
    """``r11_sync``: the events and the barrier the test modules wait on, importable by name while the test runs."""
    shared = types.SimpleNamespace(**{n: threading.Event() for n in ("inside", "go", "a_inside", "b_inside",
                                                                      "a_done", "b_done")},
                                   barrier=threading.Barrier(2, timeout=WAIT))
    sys.modules["r11_sync"] = shared
    forget_modules.append("r11_sync")
    yield shared
    shared.go.set()
    shared.a_done.set()
    shared.b_done.set()
    shared.barrier.abort()


def kernel():
    return Kernel(plugins=list(PLUGINS), entry_points=False, strict=True)


def module(folder, name, top="", tool="return text"):
    """``folder/name.py`` running ``top`` when imported, with ``tool(text)`` returning ``tool``'s expression."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(f"{top}\ndef tool(text: str) -> str:\n    'Echo.'\n    {tool}\n")


def planted(folder, name, body=""):
    """``folder/name.py`` whose import writes ``folder/name.ran`` (the proof it ran)."""
    folder.mkdir(parents=True, exist_ok=True)
    mark = folder / f"{name}.ran"
    (folder / f"{name}.py").write_text(f"open({str(mark)!r}, 'w').write('ran')\n{body}")
    return mark


class Loader(threading.Thread):
    """Builds an agent naming ``path`` as a tool, under the trust of ``folder``, on a kernel of its own."""

    def __init__(self, folder, path):
        super().__init__(daemon=True)
        self.folder, self.path, self.agent, self.error = str(folder), path, None, None

    def run(self):
        try:
            self.agent = kernel().agent(agent_spec(tools=[self.path]), trust=Trust.for_folder(self.folder))
        except BaseException as exc:  # reported by the test
            self.error = exc

    def finish(self):
        self.join(WAIT)
        assert not self.is_alive(), f"loading {self.path} hung"
        return self


def tool_of(agent, module_name):
    """The tool function of ``module_name`` the built ``agent`` was given (the module as it was imported)."""
    assert agent is not None
    return sys.modules[module_name].tool


def test_a_spec_loading_in_one_thread_lends_its_folder_to_no_other_threads_import(tmp_path, sync, forget_modules):
    """While a trusted spec's module is being imported in one thread, another thread imports 'r11_lent', which
    exists only in that spec's folder. Expected: ModuleNotFoundError (the folder is searched for the loading thread
    only), the planted module never runs, and sys.path never holds the folder."""
    forget_modules += ["r11_slow", "r11_lent"]
    spec_dir = tmp_path / "spec"
    module(spec_dir, "r11_slow", "import r11_sync\nr11_sync.inside.set()\nr11_sync.go.wait(20)")
    mark = planted(spec_dir, "r11_lent")
    loader = Loader(spec_dir, "r11_slow:tool")
    loader.start()
    assert sync.inside.wait(WAIT)
    try:
        seen_on_path = str(spec_dir) in sys.path
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("r11_lent")
    finally:
        sync.go.set()
        loader.finish()
    assert loader.error is None
    assert not mark.exists()
    assert not seen_on_path


def test_a_kernel_built_while_a_spec_loads_loads_no_plugin_from_the_specs_folder(tmp_path, sync, forget_modules,
                                                                                 monkeypatch):
    """While a trusted spec's module is being imported in one thread, another thread builds a Kernel with entry
    points; the spec's folder holds 'r11evil-1.0.dist-info/entry_points.txt' declaring a zagent plugin 'r11evil'
    (module r11_evil_plugin, next to it). Expected: the new kernel scans only the real sys.path, so the plugin is
    neither imported nor loaded."""
    forget_modules += ["r11_slow_ep", "r11_evil_plugin"]
    spec_dir = tmp_path / "spec"
    module(spec_dir, "r11_slow_ep", "import r11_sync\nr11_sync.inside.set()\nr11_sync.go.wait(20)")
    mark = planted(spec_dir, "r11_evil_plugin")
    (spec_dir / "r11evil-1.0.dist-info").mkdir()
    (spec_dir / "r11evil-1.0.dist-info" / "entry_points.txt").write_text("[zagent]\nr11evil = r11_evil_plugin\n")
    monkeypatch.setenv("ZAGENT_PLUGINS", "r11evil")
    loader = Loader(spec_dir, "r11_slow_ep:tool")
    loader.start()
    assert sync.inside.wait(WAIT)
    try:
        other = Kernel(plugins=[], entry_points=True)
    finally:
        sync.go.set()
        loader.finish()
    assert loader.error is None
    assert not mark.exists()
    assert "r11evil" not in [p.name for p in other.plugins()]


def test_two_kernels_loading_from_two_trusted_folders_at_once_each_import_their_own_helper(tmp_path, sync,
                                                                                        forget_modules):
    """Kernel B loads 'r11_beta:tool' from folder b, whose module imports its sibling 'r11_beta_helper' after
    kernel A started loading 'r11_alpha:tool' from folder a, which holds another 'r11_beta_helper'. Expected: B's
    module gets b's helper (a's never runs): each load searches its own folders only."""
    forget_modules += ["r11_alpha", "r11_beta", "r11_beta_helper"]
    a, b = tmp_path / "a", tmp_path / "b"
    module(a, "r11_alpha", "import r11_sync\nr11_sync.barrier.wait()\nr11_sync.b_done.wait(20)")
    module(b, "r11_beta", "import r11_sync\nr11_sync.b_inside.set()\nr11_sync.barrier.wait()\n"
                          "from r11_beta_helper import helper", tool="return helper(text)")
    (b / "r11_beta_helper.py").write_text("def helper(text):\n    return 'b:' + text\n")
    mark = planted(a, "r11_beta_helper", "def helper(text):\n    return 'a:' + text\n")
    loader_b = Loader(b, "r11_beta:tool")
    loader_b.start()
    assert sync.b_inside.wait(WAIT)
    loader_a = Loader(a, "r11_alpha:tool")
    loader_a.start()
    try:
        loader_b.finish()
    finally:
        sync.b_done.set()
        loader_a.finish()
    assert loader_a.error is None and loader_b.error is None
    assert not mark.exists()
    assert tool_of(loader_b.agent, "r11_beta")("x") == "b:x"


def test_two_kernels_loading_from_the_same_trusted_folder_at_once_both_load(tmp_path, sync, forget_modules):
    """Kernels A and B load two modules of one trusted folder at once; A finishes first, then B's module imports
    its sibling 'r11_same_helper'. Expected: both agents are built (the folder is not taken away from B when A is
    done)."""
    forget_modules += ["r11_same_a", "r11_same_b", "r11_same_helper"]
    folder = tmp_path / "same"
    module(folder, "r11_same_a", "import r11_sync\nr11_sync.a_inside.set()\nr11_sync.b_inside.wait(20)")
    module(folder, "r11_same_b", "import r11_sync\nr11_sync.b_inside.set()\nr11_sync.a_done.wait(20)\n"
                                 "from r11_same_helper import helper", tool="return helper(text)")
    (folder / "r11_same_helper.py").write_text("def helper(text):\n    return 'same:' + text\n")
    loader_a = Loader(folder, "r11_same_a:tool")
    loader_a.start()
    assert sync.a_inside.wait(WAIT)
    loader_b = Loader(folder, "r11_same_b:tool")
    loader_b.start()
    try:
        loader_a.finish()
    finally:
        sync.a_done.set()
        loader_b.finish()
    assert loader_a.error is None, loader_a.error
    assert loader_b.error is None, loader_b.error
    assert tool_of(loader_b.agent, "r11_same_b")("x") == "same:x"


def test_two_kernels_loading_same_named_modules_of_two_folders_at_once_never_swap_them(tmp_path, sync,
                                                                                      forget_modules):
    """Kernel A loads 'r11_twin:tool' from folder a; while it is being imported, kernel B loads 'r11_twin:tool'
    from folder b. One process holds one module of a name. Expected: A gets a's; B gets a ConfigError saying that
    name is imported already from a (never a's module in place of b's), and b's module does not run."""
    import time

    forget_modules.append("r11_twin")
    a, b = tmp_path / "a", tmp_path / "b"
    module(a, "r11_twin", "import r11_sync\nr11_sync.a_inside.set()\nr11_sync.go.wait(20)")
    mark = planted(b, "r11_twin", "def tool(text: str) -> str:\n    'Echo.'\n    return text\n")
    loader_a = Loader(a, "r11_twin:tool")
    loader_a.start()
    assert sync.a_inside.wait(WAIT)
    loader_b = Loader(b, "r11_twin:tool")
    loader_b.start()
    time.sleep(0.2)  # B checks now, or waits for the module's import lock: either way it must not get a's
    sync.go.set()
    loader_a.finish()
    loader_b.finish()
    assert loader_a.error is None
    assert isinstance(loader_b.error, ConfigError)
    assert "module 'r11_twin' is imported already" in str(loader_b.error)
    assert not mark.exists()


def test_a_trusted_modules_sibling_import_still_works_and_leaves_sys_path_as_it_was(tmp_path, forget_modules):
    """A trusted spec's module imports a sibling module of its folder at its top (as a script next to its helpers
    does). Expected: the agent is built with the sibling's code, and sys.path is the same list, unchanged, after."""
    forget_modules += ["r11_main_tool", "r11_main_helper"]
    folder = tmp_path / "own"
    module(folder, "r11_main_tool", "from r11_main_helper import helper", tool="return helper(text)")
    (folder / "r11_main_helper.py").write_text("def helper(text):\n    return 'own:' + text\n")
    before = list(sys.path)
    agent = kernel().agent(agent_spec(tools=["r11_main_tool:tool"]), trust=Trust.for_folder(str(folder)))
    assert sys.path == before
    assert tool_of(agent, "r11_main_tool")("x") == "own:x"


def test_a_module_the_trusted_module_imports_later_is_not_searched_in_its_folder(tmp_path, forget_modules):
    """A trusted module imports 'r11_late' only when its tool is called, after the load; 'r11_late' exists only
    in the spec's folder. Expected: the import fails (ModuleNotFoundError) and the planted module never runs: the
    folder is searched during the load only, as before."""
    forget_modules += ["r11_lazy_tool", "r11_late"]
    folder = tmp_path / "lazy"
    module(folder, "r11_lazy_tool", tool="import r11_late\n    return text")
    mark = planted(folder, "r11_late")
    agent = kernel().agent(agent_spec(tools=["r11_lazy_tool:tool"]), trust=Trust.for_folder(str(folder)))
    with pytest.raises(ModuleNotFoundError):
        tool_of(agent, "r11_lazy_tool")("x")
    assert not mark.exists()


def test_an_untrusted_spec_loading_while_a_trusted_one_loads_gets_no_trust_from_it(tmp_path, sync, forget_modules):
    """While kernel A loads a trusted spec from folder a, an untrusted spec on another kernel names 'r11_borrow:tool'
    (a module only in folder a). Expected: ConfigError (not trusted), and the module never runs."""
    forget_modules += ["r11_slow_b", "r11_borrow"]
    a = tmp_path / "a"
    module(a, "r11_slow_b", "import r11_sync\nr11_sync.inside.set()\nr11_sync.go.wait(20)")
    mark = planted(a, "r11_borrow", "def tool(text: str) -> str:\n    'Echo.'\n    return text\n")
    loader = Loader(a, "r11_slow_b:tool")
    loader.start()
    assert sync.inside.wait(WAIT)
    try:
        with pytest.raises(ConfigError, match="not trusted"):
            kernel().agent(agent_spec(tools=["r11_borrow:tool"]))
    finally:
        sync.go.set()
        loader.finish()
    assert loader.error is None
    assert not mark.exists()


# -- bytecode and extension modules that are not the source next to them ---------------------------------------------


def hidden_bytecode(folder, name, hostile, *, checked_hash=None):
    """``folder/name.py`` (harmless) with a cached ``.pyc`` of ``hostile`` that Python takes for it: a timestamp
    pyc carrying the source's own time and size (as a tar or zip file keeps them), or with ``checked_hash=False`` an
    unchecked hash-based pyc (never compared with the source)."""
    import importlib._bootstrap_external as external
    import importlib.util
    import os

    source = folder / f"{name}.py"
    source.write_text("def tool(text: str) -> str:\n    'Echo.'\n    return text\n")
    code = compile(hostile, str(source), "exec")
    st = os.stat(source)
    if checked_hash is None:
        data = external._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)
    else:
        data = external._code_to_hash_pyc(code, importlib.util.source_hash(hostile.encode()), checked_hash)
    cached = importlib.util.cache_from_source(str(source))
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    with open(cached, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("kind", ["timestamp", "unchecked hash"])
def test_a_cached_pyc_that_is_not_its_source_does_not_run(tmp_path, forget_modules, kind):
    """The user's own trusted folder (say, unpacked from an archive) holds a harmless 'r11_pyc.py' and, in
    __pycache__, a .pyc of other code that Python would run instead: its header carries the source's time and size,
    or it is an unchecked hash-based pyc. Expected: the module's code is compiled from the source the user can read;
    the hidden code never runs."""
    forget_modules.append("r11_pyc")
    folder = tmp_path / "unpacked"
    folder.mkdir()
    mark = folder / "hidden.ran"
    hostile = f"open({str(mark)!r}, 'w').write('ran')\ndef tool(text: str) -> str:\n    'Echo.'\n    return 'pwned'\n"
    hidden_bytecode(folder, "r11_pyc", hostile, checked_hash=None if kind == "timestamp" else False)
    kernel().agent(agent_spec(tools=["r11_pyc:tool"]), trust=Trust.for_folder(str(folder)))
    assert not mark.exists()
    assert sys.modules["r11_pyc"].tool("x") == "x"


def test_a_cached_pyc_of_a_submodule_imported_after_the_load_does_not_run(tmp_path, forget_modules):
    """A trusted package's tool imports its submodule 'r11_pkg.later' only when called, after the load; the
    submodule's __pycache__ holds a pyc of other code with the source's time and size. Expected: the source runs."""
    forget_modules.append("r11_pkg")
    pkg = tmp_path / "own" / "r11_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "tools.py").write_text("def tool(text: str) -> str:\n    'Echo.'\n    from . import later\n"
                                  "    return later.tool(text)\n")
    mark = pkg / "hidden.ran"
    hidden_bytecode(pkg, "later", f"open({str(mark)!r}, 'w').write('ran')\ndef tool(text):\n    return 'pwned'\n")
    kernel().agent(agent_spec(tools=["r11_pkg.tools:tool"]), trust=Trust.for_folder(str(tmp_path / "own")))
    assert sys.modules["r11_pkg.tools"].tool("x") == "x"
    assert not mark.exists()


@pytest.mark.parametrize("where", ["module", "package __init__"])
def test_an_extension_module_next_to_the_source_of_the_same_name_is_refused(tmp_path, forget_modules, where):
    """The trusted folder holds 'r11_ext.py' (or a package 'r11_ext' with '__init__.py') and a compiled
    'r11_ext<suffix>.so' (or '__init__<suffix>.so'), which Python loads in its place (extensions are searched
    first). Expected: ConfigError naming the source before the library is loaded (loading runs its own code)."""
    import _json
    import importlib.machinery
    import shutil

    forget_modules.append("r11_ext")
    folder = tmp_path / "ext"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    if where == "module":
        module(folder, "r11_ext")
        shutil.copy(_json.__file__, folder / f"r11_ext{suffix}")
    else:
        module(folder / "r11_ext", "__init__")
        shutil.copy(_json.__file__, folder / "r11_ext" / f"__init__{suffix}")
    with pytest.raises(ConfigError, match=r"(r11_ext|__init__)\.py") as err:
        kernel().agent(agent_spec(tools=["r11_ext:tool"]), trust=Trust.for_folder(str(folder)))
    assert "PyInit" not in str(err.value)  # refused before it was loaded
    assert "r11_ext" not in sys.modules


# -- a trusted package imported already: its submodules are still checked ---------------------------------------------


@pytest.mark.parametrize("where", ["module", "subpackage folder", "bytecode cache"])
def test_a_submodule_others_can_write_is_refused_after_its_package_was_imported(tmp_path, forget_modules, where):
    """An agent from the user's trusted folder named 'r11pk.good:tool', so package r11pk is imported. A second
    spec of that folder names a submodule others could have planted since: r11pk/bad.py of mode 666, a module in a
    subpackage folder of mode 777, or bad.py with a __pycache__ every user can write. Expected: ConfigError naming
    it, as when r11pk was not imported yet; the planted code never runs."""
    import os

    forget_modules.append("r11pk")
    proj = tmp_path / "proj"
    module(proj / "r11pk", "__init__")
    module(proj / "r11pk", "good")
    body = "def other(text: str) -> str:\n    'Echo.'\n    return text\n"
    kernel().agent(agent_spec(tools=["r11pk.good:tool"]), trust=Trust.for_folder(str(proj)))
    if where == "subpackage folder":
        module(proj / "r11pk" / "sub", "__init__")
        mark = planted(proj / "r11pk" / "sub", "bad", body)
        os.chmod(proj / "r11pk" / "sub", 0o777)
        path = "r11pk.sub.bad:other"
    else:
        mark = planted(proj / "r11pk", "bad", body)
        if where == "module":
            os.chmod(proj / "r11pk" / "bad.py", 0o666)
        else:
            (proj / "r11pk" / "__pycache__").mkdir(exist_ok=True)
            os.chmod(proj / "r11pk" / "__pycache__", 0o777)
        path = "r11pk.bad:other"
    with pytest.raises(ConfigError, match="other users") as err:
        kernel().agent(agent_spec(tools=[path]), trust=Trust.for_folder(str(proj)))
    assert not mark.exists(), err.value


@pytest.mark.parametrize("where", ["sibling module", "package submodule"])
def test_a_module_others_can_write_that_a_trusted_module_imports_does_not_run(tmp_path, forget_modules, where):
    """The spec names the user's own 'r11imp:tool' (or 'r11ipk.tools:tool'), which imports a helper of the same
    folder at its top; the helper (a sibling 'r11imp_helper.py', or 'r11ipk/helper.py') can be written by every
    user (mode 666). Expected: ConfigError naming the helper's file, which never runs, as a module the spec named
    of that mode is refused."""
    import os

    forget_modules += ["r11imp", "r11imp_helper", "r11ipk"]
    proj = tmp_path / "proj"
    if where == "sibling module":
        module(proj, "r11imp", "import r11imp_helper")
        mark, helper, path = planted(proj, "r11imp_helper"), proj / "r11imp_helper.py", "r11imp:tool"
    else:
        module(proj / "r11ipk", "__init__")
        module(proj / "r11ipk", "tools", "from . import helper")
        mark, helper, path = planted(proj / "r11ipk", "helper"), proj / "r11ipk" / "helper.py", "r11ipk.tools:tool"
    os.chmod(helper, 0o666)
    with pytest.raises(ConfigError, match="other users") as err:
        kernel().agent(agent_spec(tools=[path]), trust=Trust.for_folder(str(proj)))
    assert str(helper) in str(err.value)
    assert not mark.exists()


# -- through a trusted module to an untrusted module's code: classes and assigned __call__ ----------------------------

EVIL = """
def wipe(*args, **kwargs) -> str:
    open(MARK, 'w').write('x')
    return 'wiped'

class Base:
    def __init__(self, text: str = "") -> None:
        wipe()

class Meta(type):
    def __call__(cls, *args, **kwargs):
        wipe()
        return super().__call__(*args, **kwargs)
"""

APP = """
import r11evil

class Sub(r11evil.Base):
    'A tool class whose constructor is in r11evil.'

class Made(metaclass=r11evil.Meta):
    'A class whose call is its metaclass, in r11evil.'
    def __init__(self, text: str = "") -> None:
        self.text = text

class Assigned:
    __call__ = staticmethod(r11evil.wipe)
assigned = Assigned()

class AssignedMethod:
    __call__ = r11evil.wipe
assigned_method = AssignedMethod()

class Own:
    'The own class of the app.'
    def __init__(self, text: str = "") -> None:
        self.text = text

class OwnError(ValueError):
    'An own class of the app over a built-in one.'
"""


@pytest.fixture
def app(tmp_path, monkeypatch, forget_modules):
    """``r11app`` (trusted by name) importing ``r11evil`` (not), both on ``sys.path``; the marker r11evil writes."""
    forget_modules.extend(["r11app", "r11evil"])
    code = tmp_path / "code"
    code.mkdir()
    mark = tmp_path / "wiped"
    (code / "r11evil.py").write_text(f"MARK = {str(mark)!r}\n" + EVIL)
    (code / "r11app.py").write_text(APP)
    monkeypatch.syspath_prepend(str(code))
    return mark


@pytest.mark.parametrize("attr", ["Sub", "Made", "assigned", "assigned_method"])
def test_a_trusted_modules_class_or_object_whose_call_runs_untrusted_code_is_refused(app, attr):
    """An untrusted spec names 'r11app:<attr>': a class of the trusted module whose constructor (or metaclass
    __call__) is r11evil's, or an object whose class took r11evil's function as its __call__. Calling it runs
    r11evil's code, as an instance of an r11evil subclass (refused since round ten) does. Expected: ConfigError
    naming r11evil; nothing ran."""
    from zagent.speckit.trust import resolve

    k = Kernel(plugins=list(PLUGINS), entry_points=False, strict=True, config={"trusted_imports": ["r11app"]})
    with pytest.raises(ConfigError, match="r11evil"):
        resolve(f"r11app:{attr}", key="tool", kernel=k)
    assert not app.exists()


@pytest.mark.parametrize("attr", ["Own", "OwnError"])
def test_a_trusted_modules_own_class_still_resolves(app, attr):
    """The app's own classes (over object, or over a built-in type) still resolve by name."""
    from zagent.speckit.trust import resolve

    k = Kernel(plugins=list(PLUGINS), entry_points=False, strict=True, config={"trusted_imports": ["r11app"]})
    assert resolve(f"r11app:{attr}", key="tool", kernel=k).__name__ == attr
