"""A real MCP client (the official Python SDK) against huddled's /mcp, driven by
tests/tests/mcp/tools.rs. It plays a coordinator, an executor and an observer of one team, checks
what each tool answers, and prints one JSON report on stdout for the Rust side to check against the
HTTP API. Any surprise raises: a traceback on stderr and a non-zero exit.

Environment: HUDDLE_MCP_URL, and the agents' tokens in HUDDLE_COORDINATOR, HUDDLE_EXECUTOR,
HUDDLE_OBSERVER.
"""

import asyncio
import contextlib
import json
import os
import sys

from agent import Agent

URL = os.environ["HUDDLE_MCP_URL"]


async def main():
    report = {}
    async with contextlib.AsyncExitStack() as stack:
        coord = await Agent(URL, os.environ["HUDDLE_COORDINATOR"]).open(stack)
        executor = await Agent(URL, os.environ["HUDDLE_EXECUTOR"]).open(stack)
        observer = await Agent(URL, os.environ["HUDDLE_OBSERVER"]).open(stack)
        report["server"] = coord.init.server_info.name
        tools = (await coord.session.list_tools()).tools
        report["tools"] = sorted(t.name for t in tools)
        schemas = {t.name: t.input_schema for t in tools}
        report["create_schema"] = schemas["task_create"]
        report["tool_defs"] = [t.model_dump(by_alias=True, exclude_none=True) for t in tools]
        report["whoami"] = await executor.call("whoami", {})
        report["agents"] = await observer.call("agent_list", {})

        created = await coord.call(
            "task_create",
            {
                "tasks": [
                    {"id": "IMPL-1", "subject": "write the parser"},
                    {"id": "IMPL-2", "subject": "use the parser", "blockedBy": ["IMPL-1"]},
                ]
            },
        )
        report["created"] = created["tasks"]
        one = await coord.call("task_create", {"tasks": {"prefix": "DOC", "subject": "docs"}})
        report["created_one"] = one["tasks"]

        ready = await executor.call("task_list", {"ready": True, "prefix": "IMPL"})
        report["ready_before"] = [t["id"] for t in ready["tasks"]]

        claimed = await executor.call("task_claim", {"prefixes": ["IMPL"]})
        report["claimed"] = [t["id"] for t in claimed["tasks"]]
        done = await executor.call(
            "task_complete", {"id": "IMPL-1", "result": {"passed": 3}}
        )
        report["completed"] = done
        ready = await executor.call("task_list", {"ready": True, "prefix": "IMPL"})
        report["ready_after"] = [t["id"] for t in ready["tasks"]]
        report["got"] = await observer.call("task_get", {"id": "IMPL-2"})

        posted = await executor.call(
            "msg_post",
            {
                "to": "coordinator",
                "type": "impl_progress",
                "summary": "parser done",
                "data": {"task": "IMPL-1"},
            },
        )
        report["posted"] = posted["message"]
        inbox = await coord.call("inbox_read", {"waitMs": 10000})
        report["inbox"] = inbox["messages"]
        report["acked"] = await coord.call("inbox_ack", {"seq": inbox["messages"][-1]["seq"]})
        report["inbox_after_ack"] = (await coord.call("inbox_read", {}))["messages"]
        listed = await observer.call("msg_list", {"type": "impl_progress"})
        report["listed"] = listed["messages"]

        await executor.call("memory_patch", {"patch": {"parser": {"lang": "rust"}}})
        report["memory_value"] = await observer.call("memory_get", {"pointer": "/parser/lang"})
        report["memory"] = await coord.call("memory_get", {})

        report["observer_create"] = await observer.refused(
            "task_create", {"tasks": {"prefix": "IMPL", "subject": "not mine to make"}}
        )
        report["complete_unheld"] = await executor.refused("task_complete", {"id": "IMPL-2"})
        report["missing_task"] = await observer.refused("task_get", {"id": "IMPL-999"})
        # Bad arguments are refused like a bad API body: a tool error naming the field.
        report["typo"] = await coord.refused(
            "task_create", {"tasks": [{"subject": "x", "blocked_by": ["IMPL-1"]}]}
        )
        report["typo_patch"] = await coord.refused(
            "task_update", {"id": "IMPL-2", "patch": {"status": "done"}}
        )
        report["missing_field"] = await observer.refused("task_get", {})
        report["mcp_wait_too_long"] = await executor.refused("task_claim", {"waitMs": 30000})
        # The tasks an agent holds now: claimedBy with status in_progress.
        await coord.call("task_create", {"tasks": {"id": "IMPL-3", "subject": "held"}})
        await executor.call("task_claim", {"prefixes": ["IMPL"]})
        mine = await executor.call(
            "task_list", {"claimedBy": "ex1", "status": "in_progress"}
        )
        report["held"] = [t["id"] for t in mine["tasks"]]
        # A failed attempt goes back to the queue; `final` fails the task for good.
        report["fail_retry"] = await executor.call(
            "task_fail", {"id": "IMPL-2", "reason": "the runner crashed"}
        )
        again = await executor.call("task_claim", {"prefixes": ["IMPL"]})
        report["fail_again"] = [t["id"] for t in again["tasks"]]
        report["fail_final"] = await executor.call(
            "task_fail", {"id": "IMPL-2", "reason": "no such project", "final": True}
        )
    json.dump(report, sys.stdout)


asyncio.run(main())
