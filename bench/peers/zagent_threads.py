"""Diagnostic variant of the zagent adapter: the `add` tool always in the kernel's tool threads.

Same as ``zagent.py`` except that ``add`` is registered with ``inline=False``, so
every call hops to the kernel's tool threads (what a tool that may block should
use: its timeout can fire and it never stalls the event loop). Run it next to
``zagent`` (the default registration, measured and moved onto the loop once its
calls proved quick) to see the price of that hop. It uses the zagent venv under
another name::

    ln -sfn "$VENV_ROOT/zagent" "$VENV_ROOT/zagent_threads"
    python3 ../shared/bench/peers/run_all.py --adapter-dir bench/peers --systems raw_httpx,zagent,zagent_threads
"""

import importlib.util
import os

# Read by the harness as a literal (it parses adapters, never imports them): the same as zagent.py.
IMPORT = ("import zagent; from zagent import Kernel; Kernel(); import httpx, zagent.providerkit, zagent._tools.run, "
          "zagent.plugins.openai.provider, zagent.plugins.openai.wire, zagent.plugins.actions.customize, "
          "zagent.agentkit.toolloop, zagent.agentkit.files, zagent.plugins.parsers.modes")
DIST = "zagent"
NOTES = ("as the zagent adapter, but `add` registered with Kernel.add_tool(add, inline=False): every call in "
         "the kernel's tool threads (60 s timeout)")
DEFAULT = False

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zagent.py")
_spec = importlib.util.spec_from_file_location("zagent_peer_adapter", _path)
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)  # the sibling adapter, loaded by path: its name is the package's



async def setup(base_url, api_key, model):
    return await _base.setup(base_url, api_key, model, inline=False)


async def run_task(ctx):
    return await _base.run_task(ctx)


async def stream_task(ctx, on_first_token):
    return await _base.stream_task(ctx, on_first_token)


async def teardown(ctx):
    return await _base.teardown(ctx)
