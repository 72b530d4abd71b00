"""Reference solutions for ``exercises/16_prompt_budget.ipynb`` (``lares_kit.learn.ex16``)."""

from lares_kit.knowledge import knowledge_text
from lares_kit.learn.ex16 import CHOICES
from lares_kit.models import count_tokens

__all__ = ["tokens_for", "my_rooms", "cheapest_fit", "WRONG"]


# %% q1
def tokens_for(home, strategy, instruction):
    return count_tokens(knowledge_text(home, strategy, instruction)[1])


# %% q2
def my_rooms(home, instruction):
    import re

    text = instruction.lower()
    return [room for room in home.graph
            if re.search(rf"\b{re.escape(home.graph.nodes[room]['name'].lower())}\b", text)]


# %% q3
def cheapest_fit(home, instruction, budget):
    for strategy in CHOICES:
        if tokens_for(home, strategy, instruction) <= budget:
            return strategy
    return None


# %% wrong answers (for the tests: each runs, and each is wrong)
WRONG = {"q1": {"tokens_for": lambda home, strategy, instruction: len(knowledge_text(home, strategy, instruction)[1])
                // 4},
         "q2": {"my_rooms": lambda home, instruction: [r for r in home.graph
                                                       if home.graph.nodes[r]["name"].lower() in instruction.lower()]},
         "q3": {"cheapest_fit": lambda home, instruction, budget: "retrieval"}}
