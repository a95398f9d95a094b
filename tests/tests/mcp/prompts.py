"""The compact `task_list` and the loop prompts through the official Python MCP SDK, driven by
tests/tests/mcp/prompts.rs. Prints one JSON report; any surprise raises.

Environment: HUDDLE_MCP_URL, HUDDLE_COORDINATOR, HUDDLE_TESTER.
"""

import asyncio
import contextlib
import json
import os

try:
    from mcp.shared.exceptions import MCPError
except ImportError:  # the SDK's 1.x name
    from mcp.shared.exceptions import McpError as MCPError

from agent import Agent

URL = os.environ["HUDDLE_MCP_URL"]


async def main():
    report = {}
    async with contextlib.AsyncExitStack() as stack:
        coord = await Agent(URL, os.environ["HUDDLE_COORDINATOR"]).open(stack)
        tester = await Agent(URL, os.environ["HUDDLE_TESTER"]).open(stack)
        report["prompts_capability"] = tester.init.capabilities.prompts is not None

        await coord.call(
            "task_create",
            {"tasks": [
                {"id": "IMPL-001", "subject": "build", "description": "d" * 500},
                {"id": "TEST-001", "subject": "unit tests", "description": "d" * 500},
                {"id": "TEST-002", "subject": "e2e", "blockedBy": ["IMPL-001", "TEST-001"],
                 "metadata": {"big": "m" * 500}},
            ]},
        )
        claimed = await tester.call("task_claim", {"prefixes": ["TEST"]})
        report["held"] = (await tester.call("task_list", {"status": "in_progress"}))["tasks"]
        await tester.call("task_complete", {"id": claimed["tasks"][0]["id"]})
        report["listed"] = await tester.call("task_list", {})

        prompts = (await tester.session.list_prompts()).prompts
        report["prompts"] = [p.model_dump(exclude_none=True) for p in prompts]
        got = await tester.session.get_prompt("tester_loop", {"prefix": "TEST"})
        report["tester_prompt"] = [m.content.text for m in got.messages]
        got = await coord.session.get_prompt("coordinator_loop", {"goal": "ship 1.0"})
        report["coordinator_prompt"] = [m.content.text for m in got.messages]
        try:
            await tester.session.get_prompt("nope", {})
            report["unknown_prompt"] = "answered"
        except MCPError as e:
            report["unknown_prompt"] = e.error.message
    print(json.dumps(report))


asyncio.run(main())
