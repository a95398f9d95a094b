"""The message bus: posts with idempotency keys, filtered lists, inboxes and acks."""

from __future__ import annotations

import threading


def test_a_post_repeated_with_its_key_is_stored_once(team):
    first = team.coordinator.post_message("*", "note", "hello", {"n": 1}, idempotency_key="k-1")
    again = team.coordinator.post_message("*", "note", "hello", {"n": 1}, idempotency_key="k-1")
    assert again.seq == first.seq and again.id == first.id
    other = team.coordinator.post_message("*", "note", "hello", {"n": 1})
    assert other.seq > first.seq, "without a key each call is its own post"
    assert first.from_ == "coordinator" and first.data == {"n": 1}


def test_list_filters_by_sender_type_and_pages_with_next(team):
    tester = team.agent("tester", "tester")
    for i in range(3):
        tester.post_message("coordinator", "test_result", f"run {i}", {"passRate": 90.0 + i})
    team.coordinator.post_message("tester", "note", "go")
    page = team.coordinator.list_messages(from_="tester", type="test_result", limit=2)
    assert [m.summary for m in page.messages] == ["run 0", "run 1"]
    rest = team.coordinator.list_messages(from_="tester", type="test_result", after=page.next)
    assert [m.summary for m in rest.messages] == ["run 2"]
    assert rest.messages[0].data["passRate"] == 92.0


def test_the_inbox_waits_for_a_message_and_ack_moves_past_it(team):
    tester = team.agent("tester", "tester")
    got = []
    reader = threading.Thread(target=lambda: got.append(tester.inbox(wait=20)))
    reader.start()
    team.coordinator.post_message("tester", "note", "for you")
    reader.join(30)
    assert [m.summary for m in got[0]] == ["for you"]
    assert [m.summary for m in tester.inbox()] == ["for you"], "reading does not acknowledge"
    tester.ack(got[0][0].seq)
    assert tester.inbox() == []
