"""Child of test_runlog_interrupts: a ReAct run logged to $ZAGENT_LOG_DB, interrupted by Ctrl-C while its
tool runs; the kernel then closes (a plugin's close hook runs first, says "closing" and waits, so the parent
can press Ctrl-C a second time during the close)."""

import asyncio
import time

import zagent
from zagent import Kernel, tool
from zagent.plugins.react import ReActLoop


class SlowClose:
    @zagent.hookimpl(tryfirst=True)
    async def zagent_kernel_close(self):
        print("closing", flush=True)
        await asyncio.sleep(1.5)


def slow() -> str:
    """Take a while."""
    print("tool running", flush=True)
    time.sleep(60)
    return "done"


def main() -> None:
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react", "zagent.plugins.runlog", SlowClose()], entry_points=False)
    k.add_tool(tool(slow, inline=False))
    llm = k.llm("scripted:m", replies=[{"tool_calls": [{"name": "slow", "arguments": {}}]}, "done"])
    try:
        ReActLoop(kernel=k, llm=llm, tools=["slow"], max_iterations=3).run("go")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        k.close()


if __name__ == "__main__":
    main()
