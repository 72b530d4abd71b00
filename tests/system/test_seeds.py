"""The seeds side by side: docs/seeds.md matches a fresh offline run; the one-prompt baseline; sage-home's 50 tasks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lares_kit import load_world, run_agent
from lares_kit.agents import AGENTS
from lares_kit.bench.suites.tasks import load_suite
from lares_kit.errors import LaresError

ROOT = Path(__file__).resolve().parents[2]
QWEN_COLUMN = 3  # the recorded local-qwen column: read from recordings that a long job may still be adding to


def _script():
    from lares_kit.bench import seeds_table

    return seeds_table


def _offline_parts(text: str) -> list[str]:
    # Every line, with the local-qwen cell of the main table blanked: the rest is computed offline.
    lines = []
    for line in text.splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) == 5:
            cells[QWEN_COLUMN] = "(recorded)"
        lines.append(" | ".join(cells))
    return lines


def test_docs_seeds_md_matches_a_fresh_offline_run():
    module = _script()
    fresh = module.render(module.offline_numbers(), module.recorded_numbers())
    committed = (ROOT / "docs" / "seeds.md").read_text(encoding="utf-8")
    assert _offline_parts(fresh) == _offline_parts(committed), \
        "docs/seeds.md is stale: run .venv/bin/python scripts/seeds_table.py"


def test_the_doc_is_honest_and_names_its_commands():
    text = (ROOT / "docs" / "seeds.md").read_text(encoding="utf-8")
    assert "this is not a reproduction" in text and "not run: hours on 2 cores" in text
    assert "Sasha" in text and "out of scope" in text
    for published in ("65%", "30%", "75%"):
        assert published in text
    commands = re.findall(r"`(\.venv/bin/[^`]+)`", text)
    assert any("--agent one-prompt" in c for c in commands) and any("--executor-model offline-multi" in c
                                                                    for c in commands)


def test_the_masking_keeps_everything_but_the_recorded_column():
    row = "| a | 65% | 98/100 (98%) | 1/4 (25%) | honest |"
    assert _offline_parts(row) == ["| a | 65% | 98/100 (98%) | (recorded) | honest |"]
    assert _offline_parts("| a | 65% | 97/100 (97%) | 1/4 (25%) | honest |") != _offline_parts(row)


def test_sage_home_has_the_papers_50_tasks():
    tasks = load_suite("sage-home")
    assert len(tasks) == 50 and sum(t.held_out for t in tasks) == 10
    assert {t.category for t in tasks} == {"direct", "device-resolution", "personalization", "intent-resolution",
                                          "persistence", "command-chaining"}


# ------------------------------------------------------------ one-prompt
def test_one_prompt_is_registered_and_makes_one_request():
    assert "one-prompt" in AGENTS and AGENTS["one-prompt"].max_steps == 1
    home = load_world("sage-home")
    ep = run_agent("Turn off the TV by the credenza and turn on the one by the plant", home, agent="one-prompt")
    assert ep.status == "done" and len(ep.llm_calls) == 1
    assert home.devices["tv-credenza"].state["on"] is False and home.devices["tv-plant"].state["on"] is True
    assert "DEVICE API (13 devices)" in ep.system_prompt and "setTvChannel" in ep.system_prompt


def test_one_prompt_offers_no_reading_asking_or_robot():
    ep = run_agent("find my dog", load_world("lares-home"), agent="one-prompt")
    assert ep.status == "done" and [s.tool for s in ep.steps] == ["halt"]
    assert "do not have" in ep.final_message  # it says it cannot, rather than pretending
    assert ep.final_state["devices"] == ep.initial_state["devices"]


def test_one_prompt_refuses_what_the_home_cannot_do():
    ep = run_agent("make me a coffee", load_world("lares-home"), agent="one-prompt")
    assert ep.status == "done" and "can't" in ep.final_message and ep.final_state["devices"] == \
        ep.initial_state["devices"]


@pytest.mark.parametrize("kwargs, says", [
    ({"knowledge": "initial"}, "one-prompt does not take the knowledge mode 'initial'"),
    ({"options": {"parallel_tool_calls": True}}, "one-prompt has no option 'parallel_tool_calls'"),
    ({"tools": []}, "one-prompt needs the halt tool"),
])
def test_one_prompt_bad_input_is_one_sentence(kwargs, says):
    with pytest.raises(LaresError) as err:
        run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="one-prompt", **kwargs)
    assert str(err.value).startswith(says) and "\n" not in str(err.value)


def test_one_prompt_with_an_empty_reply_ends_with_a_sentence():
    class Empty:
        class chat:
            class completions:
                @staticmethod
                def create(**request):
                    from types import SimpleNamespace
                    return SimpleNamespace(choices=[], usage=None)

    ep = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="one-prompt",
                   client=Empty(), model="offline")
    assert ep.status == "done" and ep.final_message == "Stopped: the model sent no commands and no answer."
    assert ep.final_state["devices"]["kitchen-light"] == {"on": False}
