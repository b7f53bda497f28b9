"""A paused run whose waiting calls a human declines goes on: the batch closes with the declined results."""

import asyncio

from zagent import Kernel
from zagent.plugins.react import ReActLoop

from .conftest import PLUGINS, call


def test_declining_the_only_waiting_call_closes_the_batch_and_the_run_goes_on():
    """resume(deny=[id]) of the one call awaiting approval: no call is left to run, the model reads the decline
    and answers (before, an empty batch of calls crashed the run)."""
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.rails"], entry_points=False, strict=True)
    ran = []
    k.add_tool(lambda path: ran.append(path) or "deleted", name="rm", sensitive=True, description="Delete a path.")
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:m", replies=[call("rm", path="/x"), "fine, I will not"]),
                     tools=["rm"], agent_config={"rails": {"approver": lambda c, ctx: None}})

    async def go():
        task = asyncio.ensure_future(loop.arun("clean up"))
        await loop.wait_for_status("paused")
        loop.resume(deny=list(loop.state.awaiting_approval))
        return await task

    result = asyncio.run(go())
    assert ran == [] and result.content == "fine, I will not"
    assert "a human declined the call" in [m.content for m in loop.llm.requests[-1].messages if m.role == "tool"][0]
    k.close()
