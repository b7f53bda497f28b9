"""One id function: every tool-call id zagent makes (a provider's call without one, a text-format call, a
repeated id, the id a loop mints for approvals) comes from ``zagent._model.replies.new_call_id``, and every "make the
ids of these calls unique" from ``zagent._model.replies.unique_call_ids``. Read with ``ast``.
"""

import ast
import pathlib

from zagent import ToolCall
from zagent._model.replies import new_call_id, unique_call_ids

ROOT = pathlib.Path(__file__).parent.parent.parent
RANDOM = {"os.urandom", "secrets.token_hex", "secrets.token_bytes", "secrets.token_urlsafe", "uuid.uuid4",
          "uuid.uuid1", "random.getrandbits"}


def package_files():
    roots = [ROOT / "kernel", ROOT / "plugins"] + [
        p for p in sorted((ROOT / "contrib").glob("*/*"))
        if p.is_dir() and (p / "__init__.py").exists() and p.name not in ("tests", "examples")]
    return [f for r in roots for f in sorted(r.rglob("*.py"))]


def random_makers(source):
    """``[function name]`` of each function in ``source`` calling a random-id source (``os.urandom``...)."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(isinstance(n, ast.Call) and ast.unparse(n.func) in RANDOM for n in ast.walk(fn)):
                found.append(fn.name)
    return found


def test_the_scan_finds_a_random_id_maker():
    """A function building an id from ``secrets.token_hex`` (or the like) is found."""
    assert random_makers("import secrets\ndef mint():\n    return 'z' + secrets.token_hex(8)\n") == ["mint"]


def test_new_call_id_is_the_only_random_id_maker():
    """Only ``new_call_id`` (kernel/_model/replies.py) makes random ids in the package."""
    found = {f"{f.relative_to(ROOT)}:{name}" for f in package_files()
             for name in random_makers(f.read_text(encoding="utf-8"))}
    # the user's local answer key (signing.py) is a secret, not an id: its random bytes are not an id maker
    assert found - {"kernel/agentkit/signing.py:_local_key"} == {"kernel/_model/replies.py:new_call_id"}


def test_no_second_call_id_helper():
    """No module defines its own ``new_call_id``, ``mint`` or ``with_unique_ids``."""
    names = {"new_call_id", "mint", "with_unique_ids", "unique_call_ids"}
    found = {f"{f.relative_to(ROOT)}:{n.name}" for f in package_files()
             for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in names}
    assert found == {"kernel/_model/replies.py:new_call_id", "kernel/_model/replies.py:unique_call_ids"}


def test_new_call_ids_are_fresh_and_replace_repeats():
    """Ids are ``call_`` plus 24 hex digits, never repeated; ``unique_call_ids`` replaces empty and repeated ids."""
    ids = {new_call_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(i.startswith("call_") and len(i) == 29 for i in ids)
    fixed = unique_call_ids([ToolCall(id="a", name="t"), ToolCall(id="a", name="t"), ToolCall(id="", name="t")])
    assert fixed[0].id == "a" and len({c.id for c in fixed}) == 3
