"""Self-checking exercises for the notebooks in ``exercises/``.

:mod:`lares_kit.learn.checking` is the machinery (``q1.check()``,
``q1.hint()``, ``q1.solution()``, the placeholder ``____``); one module per
exercise notebook (``loop.ex01`` for ``exercises/01_shortest_route.ipynb``...)
holds its problems; ``lares_kit_solutions/exNN.py`` (the ``[solutions]`` extra) holds the reference answers, apart
from the notebooks so a student does not see them by scrolling.

>>> from lares_kit.learn import EXERCISES
>>> EXERCISES[0]
'00_first_run'
"""

from __future__ import annotations

__all__ = ["EXERCISES"]

# The exercise notebooks, in order: exercises/<name>.ipynb <-> lares_kit/learn/exercises/<part>/ex<NN>.py
EXERCISES = [
    "00_first_run",
    "01_shortest_route",
    "02_tool_error_sentence",
    "03_function_calling_loop",
    "04_intent_step",
    "05_initial_knowledge",
    "06_search_order",
    "07_scripted_user",
    "08_evaluation",
    "09_react_parser",
    "10_memory_by_date",
    "11_device_by_docs",
    "12_person_preferences",
    "13_safe_condition",
    "14_valid_not_right",
    "15_refusal",
    "16_prompt_budget",
    "17_ha_templates_tools",
    "18_messages_and_doors",
    "19_hearing_the_home",
]
