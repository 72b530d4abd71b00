"""Steps render themselves: transcript lines, the app's HTML entry and one plain line, for every kind."""

from __future__ import annotations

import pytest

from lares_kit.episode_steps import Action, Error, Final, Intent, Question, Thought, ToolCall, step_from_dict

EVERY_KIND = [
    Intent("The <kitchen> is dark.", "set_light", turn=1),
    ToolCall("set_light", {"light_id": "kitchen-light", "on": True}, "The light is now on.", turn=1),
    ToolCall("set_light", {"light_id": "garage-light"}, "Error: no light 'garage-light'.", ok=False, turn=2),
    Question("ask_user", {"question": "Is it daytime?"}, "Yes & sunny.", answer="Yes & sunny.", turn=3),
    Question("ask_user", {"question": "Which lamp?"}, "(no answer)", turn=3),
    Final("halt", {"message_to_user": "Done."}, "Done.", turn=4),
    Error("The reply called no tool.", reply="hmm", turn=5),
    Thought("The room is stuffy; I read its sensor first.", turn=6),
    Action("read_device", {"device_id": "office-1-sensor"}, "The air sensor reads 1,200 ppm.", turn=6),
]


def test_every_kind_of_step_is_in_the_examples():
    assert {type(s) for s in EVERY_KIND} == {Intent, ToolCall, Question, Final, Error, Thought, Action}


@pytest.mark.parametrize("step", EVERY_KIND, ids=lambda s: s.kind)
def test_a_step_renders_its_own_words_in_every_form_never_its_repr(step):
    name = type(step).__name__
    html, line, lines = step.render_html(), step.render_line(), step.render(" 1")
    assert html.startswith(f'<li class="lares-step" data-kind="{step.kind}" data-turn="{step.turn}">')
    assert html.endswith("</li>") and "\n" not in line and line.startswith(f"{step.turn} ")
    assert lines[0].startswith(" 1 ")
    for text in (html, line, *lines):
        assert f"{name}(" not in text  # a dataclass repr would mean the kind has no rendering of its own


@pytest.mark.parametrize("step", EVERY_KIND, ids=lambda s: s.kind)
def test_the_html_escapes_what_the_model_and_the_user_wrote(step):
    html = step.render_html()
    assert "<kitchen>" not in html and " & " not in html
    if isinstance(step, Intent):
        assert "The &lt;kitchen&gt; is dark. &rarr; <b>set_light</b>" in html


def test_a_failed_call_is_red_in_the_app_and_a_good_one_is_not():
    good, bad = EVERY_KIND[1], EVERY_KIND[2]
    assert 'style="color:#b00020"' in bad.render_html() and "style=" not in good.render_html()


def test_a_question_without_an_answer_says_so_in_every_form():
    step = EVERY_KIND[4]
    assert step.render_line() == "3 asks Which lamp? -- answer: (no answer)"
    assert "<i>answer</i> (no answer)" in step.render_html()
    assert step.render()[-1].split() == ["answer", "(no", "answer)"]


def test_the_transcript_forms_are_unchanged():
    # Saved transcripts and notebook outputs print these lines: they must not move by a character.
    assert EVERY_KIND[0].render(" 1") == [" 1 thinks   The <kitchen> is dark. -> set_light"]
    assert EVERY_KIND[6].render() == ["   says     hmm", "   error    The reply called no tool."]
    assert EVERY_KIND[8].render() == ['   Action   read_device(device_id="office-1-sensor")',
                                      "   Observation The air sensor reads 1,200 ppm."]


@pytest.mark.parametrize("step", EVERY_KIND, ids=lambda s: s.kind)
def test_a_step_reads_back_from_its_dict(step):
    data = step.to_dict()
    assert data["kind"] == step.kind and step_from_dict(data) == step
