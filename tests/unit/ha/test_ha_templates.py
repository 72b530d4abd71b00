"""lares_kit.ha.templates: a hassil match lined up piece by piece, and its picture."""

from __future__ import annotations

import matplotlib.pyplot as plt

from lares_kit import load_world
from lares_kit.ha import draw_match, match_pieces
from lares_kit.knowledge import knowledge_prompt
from lares_kit.models import read_request, recognize


def _recognized(text, world):
    home = load_world(world)
    return recognize(read_request([{"role": "system", "content": knowledge_prompt(home)},
                                   {"role": "user", "content": text}]))


def _line_up(text, world, language="en"):
    result, _ = _recognized(text, world)
    slots = {name: entity.text for name, entity in result.entities.items() if entity.text}
    return [(p.template, " ".join(p.words), p.matched) for p in
            match_pieces(text, result.intent_sentence, language, slots)]


def test_every_word_of_a_match_goes_to_one_piece_in_english_and_in_german():
    assert _line_up("turn on the kitchen light", "lares-home") == [
        ("<turn>", "turn", True), ("on", "on", True), ("[<all>]", "", True), ("[<the>]", "the", True),
        ("{area}", "kitchen", True), ("<light>", "light", True)]
    # a skip word hassil drops, a rule with a slot inside, a word a template spells in two parts
    for text, world, language in [("Turn off the lights in the office, please", "lares-home", "en"),
                                  ("Schalte das Licht in der Küche ein", "wohnung", "de"),
                                  ("set the heating to 21 degrees", "townhouse", "en")]:
        pieces = _line_up(text, world, language)
        assert all(matched for _, _, matched in pieces), (text, pieces)


def test_a_sentence_no_template_has_stops_at_the_piece_it_cannot_fill():
    assert _recognized("pop the kitchen light on", "lares-home") is None
    pieces = match_pieces("pop the kitchen light on", "<turn> on [<all>] [<the>] {area} <light>")
    assert [(p.template, p.words, p.matched, p.means) for p in pieces] == [
        ("<turn>", ("pop",), False, "(turn|switch|change|bring)")]
    later = match_pieces("turn on the garage light", "<turn> on [<the>] {area} <light>", slots={"area": "kitchen"})
    assert [(p.template, p.matched) for p in later][-1] == ("{area}", False)


def test_the_picture_has_one_panel_per_sentence():
    result, _ = _recognized("turn on the kitchen light", "lares-home")
    fig = draw_match([("turn on the kitchen light", result), ("pop the kitchen light on", None)])
    assert len(fig.axes) == 2
    shown = [t.get_text() for t in fig.axes[0].texts]
    assert "<turn>" in shown and "{area}" in shown and any("HassTurnOn" in t for t in shown)
    assert any("None" in t.get_text() for t in fig.axes[1].texts)
    plt.close(fig)
