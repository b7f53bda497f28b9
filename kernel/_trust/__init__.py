"""Secrets, bounds on nested data and the import of a ``module:attr`` path the caller trusts (the trust of spec
files is the spec kit's, ``zagent.speckit``). Imported first by ``zagent/__init__.py``:
``python -m zagent...`` drops the working folder it put first on ``sys.path`` here, before zagent imports anything
(a cloned repository's ``pluggy.py`` or ``inspect.py`` never stands in for a module zagent imports).
"""

import os
import sys


def drop_dash_m_folder() -> None:
    """Drop ``sys.path[0]`` when it is the working folder and the module ``python -m`` is locating is zagent's
    (``sys.argv[0]`` is ``"-m"`` until it is found). The same folder listed again (``PYTHONPATH``, a ``.pth``
    file) stays: the user's own choice. Costs nothing on any other start-up."""
    if (getattr(sys, "argv", None) or [])[:1] != ["-m"] or not sys.path or getattr(sys.flags, "safe_path", False):
        return
    depth, target = 1, ""
    while not target:  # the runpy frame locating the module (a few dozen frames up at most)
        try:
            frame = sys._getframe(depth)
        except ValueError:  # past the outermost frame: not run by `python -m`
            return
        if frame.f_code.co_name == "_run_module_as_main" and frame.f_globals.get("__name__") == "runpy":
            target = str(frame.f_locals.get("mod_name", "")) or "?"
        depth += 1
    if target.partition(".")[0] != "zagent":
        return
    try:
        here = os.getcwd()
    except OSError:  # the working folder was removed: "" would still name it
        here = ""
    if sys.path[0] in ("", here):
        del sys.path[0]


drop_dash_m_folder()
