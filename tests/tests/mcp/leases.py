"""Agents that behave like real LLM agents, against huddled's /mcp and REST API: one keeps a
task across a long turn by heartbeating; many walk away from waiting claims and inbox reads
(cancel, disconnect, time out — through raw JSON-RPC, the official SDK and REST) and must leave
nothing claimed and no attempt used. Driven by tests/tests/mcp/leases.rs, which checks the JSON
report printed on stdout. Any surprise raises: a traceback on stderr and a non-zero exit.

Environment: HUDDLE_URL, HUDDLE_TEAM, HUDDLE_ADMIN (for /metrics), HUDDLE_COORDINATOR and
HUDDLE_TESTERS (tester tokens, comma-separated), HUDDLE_TURN_LEASE_MS (the heartbeating turn's
lease) and HUDDLE_TURN_LEASES (how many lease lengths the turn lasts).
"""

import asyncio
import contextlib
import json
import os
import re
import sys
import time

import httpx2

from agent import Agent

URL = os.environ["HUDDLE_URL"]
TEAM = os.environ["HUDDLE_TEAM"]
ADMIN = os.environ["HUDDLE_ADMIN"]
COORD = os.environ["HUDDLE_COORDINATOR"]
TESTERS = os.environ["HUDDLE_TESTERS"].split(",")
TURN_LEASE_MS = int(os.environ.get("HUDDLE_TURN_LEASE_MS", "3000"))
TURN_LEASES = int(os.environ.get("HUDDLE_TURN_LEASES", "4"))
# How long the impatient clients wait (seconds), and how soon after they leave their waits must
# be gone: together well under the 25 s the waits ask for.
GIVE_UP = 12.0
ENDED_WITHIN = 8
MCP = f"{URL}/mcp"
JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def auth(token):
    return {"Authorization": f"Bearer {token}"}


async def metric(http, name, labels=""):
    """A metric's value from /metrics (0 when absent)."""
    text = (await http.get(f"{URL}/metrics", headers=auth(ADMIN))).text
    # A sample line, never the `# HELP`/`# TYPE` lines that also name the metric.
    pattern = r"^" + re.escape(name) + (r"\{" + re.escape(labels) + r"\}" if labels else "") + r" (\S+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


# Setting up the 100 waits of `abandon_waits` took more than 30 s once, on a machine running
# the whole suite at a load average of 18.
SET_UP_WITHIN = 120


async def until(what, check, seconds=30):
    """Waits for `check()` to be true (a condition, never a fixed sleep), or raises."""
    deadline = time.monotonic() + seconds
    while True:
        if await check():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def waiting(http, kind):
    return await metric(http, "huddle_long_polls_waiting", f'kind="{kind}"')


async def tasks(http):
    r = await http.get(f"{URL}/v1/teams/{TEAM}/tasks?limit=500", headers=auth(COORD))
    r.raise_for_status()
    return r.json()["tasks"]


async def create(http, prefix, n):
    body = [{"prefix": prefix, "subject": f"{prefix} task {i}"} for i in range(n)]
    r = await http.post(f"{URL}/v1/teams/{TEAM}/tasks", headers=auth(COORD), json=body)
    assert r.status_code == 201, r.text


def rpc(id, name, arguments):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


async def long_turn(report):
    """A lease of L ms kept for TURN_LEASES × L by heartbeats, while a rival keeps asking."""
    async with contextlib.AsyncExitStack() as stack:
        holder = await Agent(MCP, TESTERS[0]).open(stack)
        rival = await Agent(MCP, TESTERS[1]).open(stack)
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as http:
            await create(http, "TURN", 1)
        # Heartbeats every sixth of the lease: a loaded machine may stall one or two of them.
        lease = TURN_LEASE_MS
        claimed = await holder.call("task_claim", {"prefixes": ["TURN"], "leaseMs": lease})
        report["claim_answer"] = claimed
        task = claimed["tasks"][0]["id"]
        started = time.monotonic()
        rival_got = []
        beats = []
        while time.monotonic() - started < TURN_LEASES * lease / 1000:
            beat = await holder.call("task_heartbeat", {"id": task, "leaseMs": lease})
            beats.append(beat["leaseExpiresAt"])
            got = await rival.call("task_claim", {"prefixes": ["TURN"], "max": 5})
            rival_got += [t["id"] for t in got["tasks"]]
            await asyncio.sleep(lease / 1000 / 6)
        report["turn_seconds"] = time.monotonic() - started
        report["turn_beats"] = len(beats)
        report["beats_move_the_expiry"] = beats == sorted(beats) and len(set(beats)) == len(beats)
        report["rival_got"] = rival_got
        report["turn_completed"] = await holder.call("task_complete", {"id": task})
        # Without heartbeats the lease lapses: the task goes to someone else and the late
        # completion is refused.
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as http:
            await create(http, "TURN", 1)
        other = await holder.call("task_claim", {"prefixes": ["TURN"], "leaseMs": 300})
        lapsed = other["tasks"][0]["id"]
        taken = await rival.call("task_claim", {"prefixes": ["TURN"], "waitMs": 10000})
        report["lapsed_taken_by_rival"] = [t["id"] for t in taken["tasks"]] == [lapsed]
        report["lapsed_attempts"] = taken["tasks"][0]["attempts"]
        report["late_complete"] = await holder.refused("task_complete", {"id": lapsed})
        await rival.call("task_release", {"id": lapsed, "note": "not mine after all"})


async def abandon_waits(report):
    """100 waiting claims and 10 inbox reads walk away in five ways; none may claim anything."""
    token = lambda i: TESTERS[i % len(TESTERS)]
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as http, \
            contextlib.AsyncExitStack() as stack:
        sdk_agents = [await Agent(MCP, token(i)).open(stack) for i in range(4)]
        # The longest wait MCP allows: a wait that outlived its client would still be running
        # long after every client below has gone.
        wait = {"prefixes": ["GHOST"], "waitMs": 25000}

        async def raw(token, body, timeout=60.0):
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(timeout)) as c:
                return await c.post(MCP, headers={**auth(token), **JSON_HEADERS}, json=body)

        async def rest_claim(token):
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as c:
                return await c.post(f"{URL}/v1/teams/{TEAM}/tasks/claim", headers=auth(token),
                                    json=wait)

        cancelled = [asyncio.create_task(raw(token(i), rpc(f"c{i}", "task_claim", wait)))
                     for i in range(20)]
        dropped = [asyncio.create_task(raw(token(i), rpc(f"d{i}", "task_claim", wait)))
                   for i in range(20)]
        rest = [asyncio.create_task(rest_claim(token(i))) for i in range(20)]
        inbox = [asyncio.create_task(raw(token(i), rpc(f"i{i}", "inbox_read", {"waitMs": 25000})))
                 for i in range(10)]
        # The clients that give up by themselves start once the others wait, so their clock
        # runs only while their own waits are set up: on a loaded machine, setting up all 100
        # at once took longer than their patience, and they left before the count was reached.
        await until("60 claims waiting", lambda: _ge(waiting(http, "claim"), 60),
                    seconds=SET_UP_WITHIN)
        timed_out = [asyncio.create_task(raw(token(i), rpc(f"t{i}", "task_claim", wait), GIVE_UP))
                     for i in range(20)]
        sdk = [asyncio.create_task(sdk_agents[i % 4].session.call_tool(
                   "task_claim", wait, read_timeout_seconds=GIVE_UP)) for i in range(20)]
        await until("100 claims waiting", lambda: _ge(waiting(http, "claim"), 100),
                    seconds=SET_UP_WITHIN)
        await until("10 inbox reads waiting", lambda: _ge(waiting(http, "inbox"), 10),
                    seconds=SET_UP_WITHIN)

        # Cancel: the notification names the call; the call answers at once, empty.
        for i in range(20):
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": f"c{i}", "reason": "the user interrupted"}}
            r = await raw(token(i), note)
            assert r.status_code == 202, r.text
        answers = await asyncio.gather(*cancelled)
        report["cancelled_answers"] = [a.json()["result"]["structuredContent"]["tasks"]
                                       for a in answers]
        # Disconnect and give up: the client's tasks die with their connections.
        for t in dropped + rest + inbox:
            t.cancel()
        outcomes = await asyncio.gather(*timed_out, *sdk, return_exceptions=True)
        report["timeouts_raised"] = sum(isinstance(o, Exception) or getattr(o, "is_error", False)
                                        for o in outcomes)
        await asyncio.gather(*dropped, *rest, *inbox, return_exceptions=True)
        # The clients gave up GIVE_UP s in; their waits had 25 s to run, so waits that outlived
        # their clients would still be counted when these deadlines pass.
        await until("every abandoned wait to end",
                    lambda: _eq(waiting(http, "claim"), 0), seconds=ENDED_WITHIN)
        await until("every abandoned inbox read to end",
                    lambda: _eq(waiting(http, "inbox"), 0), seconds=ENDED_WITHIN)
        await create(http, "GHOST", 20)
        report["ghost_tasks"] = [t for t in await tasks(http) if t["id"].startswith("GHOST")]


async def race_deliveries(report):
    """Claimers that disconnect while tasks arrive: no attempt is used, and every task a client
    received is held by it. (A claim whose answer was written just as its client went away is
    not visible to the daemon; such a task stays held until its lease lapses.)"""
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as http:
        received = {}

        async def claimer(i):
            body = rpc(f"r{i}", "task_claim", {"prefixes": ["RACE"], "waitMs": 20000})
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as c:
                r = await c.post(MCP, headers={**auth(TESTERS[i % len(TESTERS)]), **JSON_HEADERS},
                                 json=body)
                # Recorded before the next await, where a cancellation could land.
                for t in r.json()["result"]["structuredContent"]["tasks"]:
                    received[t["id"]] = t["claimedBy"]

        waiters = [asyncio.create_task(claimer(i)) for i in range(30)]
        await until("30 claims waiting", lambda: _ge(waiting(http, "claim"), 30))
        creating = asyncio.create_task(create(http, "RACE", 30))
        for t in waiters:
            t.cancel()
        await creating
        await asyncio.gather(*waiters, return_exceptions=True)
        await until("the racing claims to end", lambda: _eq(waiting(http, "claim"), 0))
        report["race_received"] = received
        report["race_tasks"] = [t for t in await tasks(http) if t["id"].startswith("RACE")]
        report["undelivered_released"] = await metric(http, "huddle_claims_undelivered_total")


async def _ge(value, n):
    return (await value) >= n


async def _eq(value, n):
    return (await value) == n


async def main():
    report = {}
    try:
        await long_turn(report)
        await abandon_waits(report)
        await race_deliveries(report)
    finally:
        # What was learnt before a failure, for the test's message.
        print(json.dumps(report)[:4000], file=sys.stderr)
    json.dump(report, sys.stdout)


asyncio.run(main())
