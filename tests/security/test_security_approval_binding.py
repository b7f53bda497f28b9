"""Attack: a lying model reuses the id of a call a human approved. An approval binds the tool name, the
canonical arguments and an id zagent minted for that call, never the model's id: a new call asks again."""

import asyncio

from zagent.plugins.react import ReActLoop

from .conftest import make_kernel


class Approver:
    """Says "later" the first time (so the run pauses), then the scripted answers; records what it was asked."""

    def __init__(self, *answers):
        self.answers = [None, *answers]
        self.asked = []

    def __call__(self, call, ctx):
        self.asked.append((call.id, dict(call.arguments)))
        return self.answers.pop(0) if self.answers else False


def danger_kernel():
    k = make_kernel()
    ran = []

    def danger(path: str) -> str:
        """Delete a path."""
        ran.append(path)
        return "deleted"

    k.add_tool(danger, sensitive=True)
    k.ran = ran
    return k


def call(path, call_id="c1"):
    return {"tool_calls": [{"id": call_id, "name": "danger", "arguments": {"path": path}}]}


def run_paused_then_approved(k, approver, replies):
    """Run until the first pause, approve what is awaiting, run to the end."""
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:liar", replies=replies), tools=["danger"],
                     agent_config={"rails": {"approver": approver}})

    async def go():
        task = asyncio.ensure_future(loop.arun("clean up"))
        await loop.wait_for_status("paused")
        assert loop.state.awaiting_approval == ["c1"]
        loop.resume(approve=["c1"])
        return await task

    return asyncio.run(go())


def test_a_reused_call_id_with_other_arguments_is_asked_again():
    """Approved: danger('/tmp/scratch.txt') as c1. The model's next danger('/home/user'), also c1, is a new call
    (given a fresh id, ``toolloop.fresh_call_ids``): the approver is asked again and its no blocks it."""
    k = danger_kernel()
    approver = Approver()
    result = run_paused_then_approved(k, approver, [call("/tmp/scratch.txt"), call("/home/user"), "done"])
    assert k.ran == ["/tmp/scratch.txt"]
    assert approver.asked[-1][1] == {"path": "/home/user"} and approver.asked[-1][0] != "c1"
    assert [s.is_blocked for s in result.steps if s.tool] == [False, True]
    k.close()


def test_the_same_call_again_under_the_same_id_is_asked_again():
    """An approval covers one call, not a standing permission: the same arguments under the same id in a later
    reply ask again."""
    k = danger_kernel()
    approver = Approver()
    run_paused_then_approved(k, approver, [call("/tmp/scratch.txt"), call("/tmp/scratch.txt"), "done"])
    assert k.ran == ["/tmp/scratch.txt"] and len(approver.asked) == 2
    k.close()


def test_the_same_arguments_under_a_new_id_are_asked_again():
    """Same tool and arguments under another model id in a later reply: a new call, asked again."""
    k = danger_kernel()
    approver = Approver(True)
    run_paused_then_approved(k, approver, [call("/tmp/scratch.txt"), call("/tmp/scratch.txt", "c2"), "done"])
    assert k.ran == ["/tmp/scratch.txt", "/tmp/scratch.txt"] and len(approver.asked) == 2
    k.close()


def test_an_approval_given_for_another_id_does_not_cover_the_call():
    """Approving an id that is not awaiting approval (a model id guessed ahead) approves nothing."""
    k = danger_kernel()
    approver = Approver()
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:ahead", replies=[call("/tmp/a"), call("/home/user", "c9"),
                                                                     "done"]),
                     tools=["danger"], agent_config={"rails": {"approver": approver}})

    async def go():
        task = asyncio.ensure_future(loop.arun("clean up"))
        await loop.wait_for_status("paused")
        loop.resume(approve=["c1", "c9"])
        return await task

    asyncio.run(go())
    assert k.ran == ["/tmp/a"] and approver.asked[-1] == ("c9", {"path": "/home/user"})
    k.close()


def test_a_reused_id_pauses_the_run_again_and_the_old_approval_does_not_cover_it():
    """With an approver that always answers "later", the reused id c1 (other arguments, given a fresh id) pauses
    the run a second time; the old approval does not cover it, and declining it, the dangerous call never runs."""
    k = danger_kernel()
    pauses = []
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:twice", replies=[call("/tmp/scratch.txt"), call("/home/user"),
                                                                     "done"]),
                     tools=["danger"], agent_config={"rails": {"approver": lambda c, ctx: None}})

    async def go():
        task = asyncio.ensure_future(loop.arun("clean up"))
        await loop.wait_for_status("paused")
        pauses.append(list(loop.state.awaiting_approval))
        loop.resume(approve=["c1"])
        while not (loop.status == "paused" and k.ran):
            await asyncio.sleep(0.005)
        second = list(loop.state.awaiting_approval)
        pauses.append((second, loop.state.pending[0].arguments))
        loop.resume(deny=second)
        return await task

    result = asyncio.run(go())
    assert pauses[0] == ["c1"] and pauses[1][1] == {"path": "/home/user"}
    assert len(pauses[1][0]) == 1 and pauses[1][0] != ["c1"]
    assert k.ran == ["/tmp/scratch.txt"] and result.content == "done"
    k.close()
