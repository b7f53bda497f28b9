"""zagent adapter for ../shared/bench/peers (contract: that folder's README).

run_task: a CustomizeAgent declared as a dict (prompt "{question}", one string
output in ``str`` parse mode, the ``add`` tool), built once by ``setup`` and
called concurrently; each call keeps its own state. stream_task: the same two
calls streamed with ``llm.astream`` and the tool run through
``kernel.arun_tools`` (CustomizeAgent has no streaming API yet).
"""

import zagent

from bench_common import PROMPT, add  # the task: PROMPT, with `add` as the only tool

# Everything setup and the first task import, so the import figure does not leave them to the first
# task: Kernel() loads the installed plugins, and the provider, agent and tool-run modules load on first
# use. (httpcore, anyio and h11, which httpx imports on its first request, stay in the first task: the
# raw_httpx floor pays them there too.)
IMPORT = ("import zagent; from zagent import Kernel; Kernel(); import httpx, zagent.providerkit, zagent._tools.run, "
          "zagent.plugins.openai.provider, zagent.plugins.openai.wire, zagent.plugins.actions.customize, "
          "zagent.agentkit.toolloop, zagent.agentkit.files, zagent.plugins.parsers.modes")
DIST = "zagent"
NOTES = ("Kernel() defaults; openai provider (httpx + msgspec), CustomizeAgent with parse_mode='str'; "
         "the `add` tool registered the default way, Kernel.add_tool(add) (measured: its first calls run in "
         "the kernel's tool threads, then on the event loop once they proved quick; zagent_threads forces "
         "the threads with inline=False); short-term memory on (default 200 messages); the import figure "
         "includes Kernel() and the modules the first task imports lazily.")


async def setup(base_url, api_key, model, *, inline=None):
    kernel = zagent.Kernel()
    kernel.add_tool(add, **({} if inline is None else {"inline": inline}))  # the way users register a function
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
