"""`huddle mcp --forward …` as an MCP host starts it: the official Python SDK's stdio client
launches the front, lists its tools and calls a huddle tool (`team_msg`, the skills' own call)
and a forwarded one (`read_file`), and reads a prompt through it. Driven by
tests/tests/mcp/front.rs; prints one JSON report.

Environment: HUDDLE_BIN, HUDDLE_URL, HUDDLE_TOKEN, HUDDLE_TEAM_NAME, FILES_ROOT.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))


async def main():
    params = StdioServerParameters(
        command=os.environ["HUDDLE_BIN"],
        args=["mcp", "--forward", sys.executable, os.path.join(HERE, "files_server.py")],
        env={
            "HUDDLE_URL": os.environ["HUDDLE_URL"],
            "HUDDLE_TOKEN": os.environ["HUDDLE_TOKEN"],
            "FILES_ROOT": os.environ["FILES_ROOT"],
            "PATH": os.environ.get("PATH", ""),
        },
    )
    report = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["server"] = init.server_info.name
            tools = (await session.list_tools()).tools
            report["tools"] = sorted(t.name for t in tools)
            logged = await session.call_tool(
                "team_msg",
                {"operation": "log", "team": os.environ["HUDDLE_TEAM_NAME"], "from": "tester",
                 "to": "coordinator", "type": "test_result", "summary": "through the front"},
            )
            report["team_msg"] = logged.structured_content
            report["team_msg_error"] = logged.is_error
            read = await session.call_tool("read_file", {"path": "notes.txt"})
            report["read_file"] = [c.text for c in read.content]
            report["read_file_error"] = read.is_error
            refused = await session.call_tool("task_create", {"tasks": {"subject": "x"}})
            report["refused"] = refused.structured_content
            prompts = (await session.list_prompts()).prompts
            report["prompts"] = sorted(p.name for p in prompts)
    print(json.dumps(report))


asyncio.run(main())
