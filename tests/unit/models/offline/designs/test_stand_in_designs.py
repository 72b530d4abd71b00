"""Every design names the stand-in rules that read its prompts, and only those rules claim its requests."""

from __future__ import annotations

import importlib

import pytest
from stand_in_requests import claimed_by, runs

from lares_kit.agents import AGENTS
from lares_kit.models.offline.designs import DESIGN_RULES


def test_each_design_rule_set_is_named_by_a_design_whose_prompts_it_reads():
    named = {name for spec in AGENTS.values() for name in spec.stand_in}
    assert named == set(DESIGN_RULES), "a rule set no design names, or a design naming rules that do not exist"
    for spec in AGENTS.values():
        for name in spec.stand_in:
            reads = DESIGN_RULES[name].reads
            importlib.import_module(reads)
            assert spec.loop.__module__ == reads, f"{spec.name}'s loop is in {spec.loop.__module__}, not {reads}"


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_only_a_designs_own_rules_claim_its_requests(agent):
    own = set(AGENTS[agent].stand_in)
    seen: dict[tuple[str, ...], int] = {}
    for _, requests in runs(agent):
        for request in requests:
            claims = claimed_by(request)
            seen[claims] = seen.get(claims, 0) + 1
    assert seen, f"{agent} sent no requests"
    assert all(len(claims) <= 1 and set(claims) <= own for claims in seen), (agent, seen)
    for name in own:  # each rule set the design names reads some of its requests
        assert seen.get((name,), 0) > 0, (agent, name, seen)
