"""Child of test_robust_tool_exits: tools raising SystemExit/KeyboardInterrupt through the sync API, then more
sync calls; prints one JSON line of what each call gave (a hang is caught by the parent's timeout)."""

import json
import sys

from zagent import Kernel, tool
from zagent.plugins.react import ReActLoop


def leave() -> str:
    """Exit the process."""
    raise SystemExit(3)


def interrupt() -> str:
    """Raise KeyboardInterrupt."""
    raise KeyboardInterrupt


async def aleave() -> str:
    """Exit the process, asynchronously."""
    raise SystemExit(4)


def main(inline: str) -> None:
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react"], entry_points=False)
    flag = {"threads": False, "loop": True}[inline]
    for fn in (leave, interrupt):
        k.add_tool(tool(fn, inline=flag))
    k.add_tool(tool(aleave))
    k.add_tool(tool(lambda a, b: a + b, name="add"))
    out = {name: k.run_tool({"name": name, "arguments": {}}).state for name in ("leave", "interrupt", "aleave")}
    llm = k.llm("scripted:m", replies=[{"tool_calls": [{"name": "leave", "arguments": {}}]}, "done"])
    out["react"] = ReActLoop(kernel=k, llm=llm, tools=["leave"], max_iterations=3).run("go").content
    out["after"] = k.run_tool({"name": "add", "arguments": {"a": 1, "b": 2}}).content
    k.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
