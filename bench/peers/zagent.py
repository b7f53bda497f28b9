"""zagent adapter for ../shared/bench/peers (contract: that folder's README).

run_task: a CustomizeAgent declared as a dict (prompt "{question}", one string
output in ``str`` parse mode, the ``add`` tool), built once by ``setup`` and
called concurrently; each call keeps its own state. stream_task: the same two
calls streamed with ``llm.astream`` and the tool run through
``kernel.arun_tools`` (CustomizeAgent has no streaming API yet).
"""

import zagent

from bench_common import PROMPT, add  # the task: PROMPT, with `add` as the only tool

IMPORT = "import zagent; from zagent import Kernel"
DIST = "zagent"
NOTES = ("Kernel() defaults; openai provider (httpx + msgspec), CustomizeAgent with parse_mode='str'; "
         "the pure `add` tool registered with Kernel.add_tool(add, inline=True), as the README advises for "
         "cheap pure functions (it runs on the event loop; the default for sync tools is the kernel's tool "
         "threads, measured by the zagent_threads variant: about 100-150 us more per task on 2 cores); "
         "short-term memory on (default 200 messages).")


async def setup(base_url, api_key, model, *, inline=True):
    kernel = zagent.Kernel()
    kernel.add_tool(add, inline=inline)  # a pure function: run on the loop, no thread hop (README: Rails)
    llm = kernel.llm(f"openai:{model}", base_url=base_url, api_key=api_key)
    agent = kernel.agent({
        "type": "customize", "name": "Adder", "prompt": "{question}",
        "inputs": [{"name": "question", "type": "string"}],
        "outputs": [{"name": "answer", "type": "string"}],
        "parse_mode": "str", "tools": ["add"], "llm": llm.name,
    })
    agent.llm = llm
    return {"kernel": kernel, "agent": agent, "llm": llm}


async def run_task(ctx):
    result = await ctx["agent"].acall(question=PROMPT)
    return result.answer


async def stream_task(ctx, on_first_token):
    kernel, llm = ctx["kernel"], ctx["llm"]
    tools = kernel.tools(["add"])
    messages = [zagent.Message.user(PROMPT)]
    run = kernel.context()
    while True:
        final = None
        async for chunk in llm.astream(messages, tools=tools, ctx=run):
            if chunk.type == "text" and chunk.text:
                on_first_token()
            elif chunk.type == "done":
                final = chunk.completion
        messages.append(final.message)
        if not final.tool_calls:
            return final.text
        results = await kernel.arun_tools(final.tool_calls, run)
        messages.extend(r.to_message() for r in results)


async def teardown(ctx):
    await ctx["kernel"].aclose()
