"""Approval gates through the official Python MCP SDK, as a coordinating agent and a tester
meet them: a task created gated, an answer without a decision refused, one task rejected and
one approved, and the claim that carries the decision. Driven by tests/tests/mcp/gates.rs, which
checks the JSON report printed on stdout. Any surprise raises: a traceback on stderr and a
non-zero exit.

Environment: HUDDLE_URL, HUDDLE_COORDINATOR, HUDDLE_TESTER (tokens).
"""

import asyncio
import contextlib
import json
import os

from agent import Agent

MCP = f"{os.environ['HUDDLE_URL']}/mcp"


def gated(question):
    return {"question": question, "kind": "approval"}


async def main():
    report = {}
    async with contextlib.AsyncExitStack() as stack:
        coord = await Agent(MCP, os.environ["HUDDLE_COORDINATOR"]).open(stack)
        tester = await Agent(MCP, os.environ["HUDDLE_TESTER"]).open(stack)
        created = await coord.call("task_create", {"tasks": [
            {"id": "TEST-001", "subject": "change calc.py", "gate": gated("May it change calc.py?")},
            {"id": "TEST-002", "subject": "drop the old table", "gate": gated("May it drop it?")},
        ]})
        q1, q2 = (t["blockedBy"][0] for t in created["tasks"])
        report["words_only"] = await coord.refused("task_answer", {"id": q1, "answer": "No."})
        report["rejected"] = await coord.call(
            "task_answer", {"id": q1, "decision": "reject", "answer": "Billing freezes this week."})
        report["rejected_task"] = await coord.call("task_get", {"id": "TEST-001"})
        await coord.call("task_answer", {"id": q2, "decision": "approve", "answer": "After the backup."})
        report["claimed"] = await tester.call("task_claim", {})
        report["second_decision"] = await coord.refused("task_answer", {"id": q1, "decision": "approve"})
    print(json.dumps(report))


asyncio.run(main())
