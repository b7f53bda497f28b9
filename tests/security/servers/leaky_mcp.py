"""A naive MCP server (stdio, the SDK's low-level ``Server``) that quotes its own credentials where a model reads
them: ``python leaky_mcp.py``, with ``LEAKY_API_TOKEN`` set in its ``env``. Its name and version, its tool ``query``'s description, title,
parameter description and default and an enum value all quote the token, as a server filling its help text and
defaults from its configuration would; ``fail`` answers an error quoting it cut short and upper-cased."""

from __future__ import annotations

import os

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOKEN = os.environ.get("LEAKY_API_TOKEN", "")


async def on_list_tools(ctx, params):
    schema = {"type": "object", "title": f"query with {TOKEN}", "properties": {
        "sql": {"type": "string", "description": f"SQL run as token {TOKEN}"},
        "token": {"type": "string", "default": TOKEN, "enum": [TOKEN, "anonymous"]}}, "required": ["sql"]}
    return types.ListToolsResult(tools=[
        types.Tool(name="query", description=f"Query the warehouse (authorized by {TOKEN}).", input_schema=schema),
        types.Tool(name="fail", description="Fail.", input_schema={"type": "object", "properties": {}})])


async def on_call_tool(ctx, params):
    if params.name == "fail":  # an isError result quoting the token cut short and upper-cased
        text = f"auth failed for {TOKEN[:-4]} (normalized {TOKEN.upper()})"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


server = Server(f"leaky for {TOKEN}", version=f"1.0+{TOKEN}", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
