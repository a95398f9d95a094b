"""`team_msg` as Claude-Code-Workflow's skills call it, through the official Python MCP SDK,
driven by tests/tests/mcp/team_msg.rs: the seed's own `log` call, 8 testers appending at once
(each append a `state_update`), reads, lists, status, mailboxes, broadcast, delete and clear,
and the refusals. Prints one JSON report; any surprise raises (a traceback, a non-zero exit).

Environment: HUDDLE_MCP_URL, HUDDLE_TEAM, HUDDLE_COORDINATOR, HUDDLE_OBSERVER and
HUDDLE_TESTERS (comma-separated tokens of tester-1, tester-2, …), HUDDLE_APPENDS (per tester).
"""

import asyncio
import contextlib
import json
import os

from agent import Agent

URL = os.environ["HUDDLE_MCP_URL"]
TEAM = os.environ["HUDDLE_TEAM"]
APPENDS = int(os.environ["HUDDLE_APPENDS"])


async def msg(agent, **args):
    return await agent.call("team_msg", {"session_id": TEAM, **args})


async def refused(agent, **args):
    return await agent.refused("team_msg", args)


async def append_all(name, agent):
    """One tester's appends, one after another; every one a state_update of its progress."""
    ids = []
    for n in range(APPENDS):
        answer = await msg(
            agent,
            operation="log",
            **{"from": name, "type": "state_update"},
            summary=f"{name} step {n}",
            data={"step": n, "writer": name},
        )
        ids.append(answer["id"])
    return ids


async def main():
    report = {}
    async with contextlib.AsyncExitStack() as stack:
        coord = await Agent(URL, os.environ["HUDDLE_COORDINATOR"]).open(stack)
        observer = await Agent(URL, os.environ["HUDDLE_OBSERVER"]).open(stack)
        testers = []
        for i, token in enumerate(os.environ["HUDDLE_TESTERS"].split(",")):
            testers.append((f"tester-{i + 1}", await Agent(URL, token).open(stack)))
        tester = testers[0][1]

        tools = {t.name: t for t in (await tester.session.list_tools()).tools}
        report["schema"] = tools["team_msg"].input_schema

        # The seed's call as written: `team`, from the role, an empty type, no data.
        report["seed_log"] = await tester.call(
            "team_msg",
            {"operation": "log", "team": TEAM, "from": "tester", "to": "coordinator",
             "type": "", "summary": "TEST-001通过: 98% pass rate"},
        )
        report["defaults_log"] = await msg(tester, operation="log", **{"from": "tester"})
        report["ref_log"] = await msg(
            tester, operation="log", **{"from": "tester"}, ref="src/a.ts", type="impl_progress"
        )
        report["read_ref"] = await msg(tester, operation="read", id=report["ref_log"]["id"])
        report["read_seed"] = await msg(
            observer, operation="read", id=report["seed_log"]["id"]
        )

        # 8 testers at once, each append a state_update.
        results = await asyncio.gather(*(append_all(n, a) for n, a in testers))
        report["appended_ids"] = [i for ids in results for i in ids]
        report["state_all"] = await msg(observer, operation="get_state")
        report["state_one"] = await msg(observer, operation="get_state", role="tester-3")
        report["state_none"] = await msg(observer, operation="get_state", role="nobody")
        await msg(
            coord, operation="log", **{"from": "coordinator", "type": "state_update"},
            to="tester", data={"pipeline_mode": "full", "roles": ["tester"]},
        )

        report["list_default"] = await msg(observer, operation="list")
        report["list_filtered"] = await msg(
            observer, operation="list", last=3, **{"from": "tester-2", "type": "state_update"}
        )
        report["status"] = await msg(observer, operation="status")

        # Mailboxes: the coordinator's holds everything sent to it; reading delivers.
        report["mailbox_before"] = await msg(coord, operation="mailbox_status")
        report["mailbox_read"] = await msg(
            coord, operation="read_mailbox", last=5, delivery_method="inject"
        )
        report["mailbox_after_one_read"] = await msg(coord, operation="mailbox_status")
        report["broadcast"] = await msg(
            coord, operation="broadcast", **{"from": "coordinator", "type": "shutdown"}
        )
        report["tester_mailbox"] = await msg(tester, operation="read_mailbox", last=100)
        report["tester_mailbox_again"] = await msg(tester, operation="read_mailbox")

        # Refusals, with the API's codes.
        report["refusals"] = {
            "tester_delete": await refused(
                tester, operation="delete", session_id=TEAM, id="MSG-001"
            ),
            "observer_log": await refused(
                observer, operation="log", session_id=TEAM, **{"from": "observer"}
            ),
            "other_team": await refused(
                tester, operation="log", session_id="other", **{"from": "tester"}
            ),
            "no_session": await refused(tester, operation="list"),
            "not_me": await refused(
                tester, operation="log", session_id=TEAM, **{"from": "coordinator"}
            ),
            "last_too_big": await refused(tester, operation="list", session_id=TEAM, last=101),
            "unknown_id": await refused(tester, operation="read", session_id=TEAM, id="MSG-99999"),
            "no_from": await refused(tester, operation="log", session_id=TEAM),
            "bad_type": await refused(
                tester, operation="log", session_id=TEAM, **{"from": "tester", "type": "Bad Type"}
            ),
        }

        # delete and clear hide from team_msg only.
        deleted_id = report["seed_log"]["id"]
        report["deleted"] = await msg(coord, operation="delete", id=deleted_id)
        report["read_deleted"] = await refused(
            coord, operation="read", session_id=TEAM, id=deleted_id
        )
        report["list_after_delete"] = await msg(observer, operation="list", last=100)
        report["cleared"] = await msg(coord, operation="clear")
        report["list_after_clear"] = await msg(observer, operation="list")
        report["after_clear_log"] = await msg(tester, operation="log", **{"from": "tester"})
        report["list_after_clear_log"] = await msg(observer, operation="list")
        report["status_after_clear"] = await msg(observer, operation="status")
    print(json.dumps(report))


asyncio.run(main())
