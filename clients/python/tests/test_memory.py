"""Shared memory: merge patch, JSON Patch, JSON Pointer reads, If-Match, history."""

from __future__ import annotations

import pytest

from huddle_client import NotFound, StaleVersion


def test_merge_patch_json_patch_and_pointer_reads(team):
    c = team.coordinator
    v1 = c.merge_memory({"test_strategy": {"framework": "pytest", "layers": ["L1"]}})
    assert v1.doc["test_strategy"]["framework"] == "pytest"
    v2 = c.patch_memory([{"op": "add", "path": "/test_strategy/layers/-", "value": "L2"}], if_version=v1.version)
    assert v2.doc["test_strategy"]["layers"] == ["L1", "L2"]
    assert c.memory_at("/test_strategy/layers/1") == "L2"
    assert c.merge_memory({"test_strategy": {"layers": None}}).doc == {"test_strategy": {"framework": "pytest"}}
    with pytest.raises(NotFound):
        c.memory_at("/nothing/here")
    kinds = [ch.kind for ch in c.memory_history()]
    assert len(kinds) == 3


def test_a_stale_if_match_is_refused_and_replace_sets_the_whole_doc(team):
    c = team.coordinator
    first = c.replace_memory({"a": 1})
    c.merge_memory({"b": 2})
    with pytest.raises(StaleVersion) as refused:
        c.merge_memory({"c": 3}, if_version=first.version)
    assert refused.value.details["currentVersion"] == first.version + 1
    assert c.memory().doc == {"a": 1, "b": 2}
