"""Reference solutions for ``exercises/16_prompt_budget.ipynb`` (``lares_kit.learn.exercises.field.ex16``)."""

from lares_kit.knowledge.modes import knowledge_text
from lares_kit.learn.exercises.field.ex16 import CHOICES
from lares_kit.models import count_tokens

__all__ = ["tokens_for", "my_rooms", "richest_that_fits"]


# %% q1
def tokens_for(home, fmt, instruction):
    """How many tokens the knowledge text takes for one format.

    Args:
        home: The home the knowledge describes.
        fmt: The knowledge format, one of CHOICES ("full", "compact", "retrieval").
        instruction: What the user asks (retrieval keeps only the rooms it is about).
    """
    return count_tokens(knowledge_text(home, fmt, instruction)[1])


# %% q2
def my_rooms(home, instruction):
    """The ids of the rooms whose names the instruction says, as whole words, in the home's order.

    Args:
        home: The home whose room names are looked for.
        instruction: What the user asks.
    """
    import re

    text = instruction.lower()
    return [room for room in home.graph
            if re.search(rf"\b{re.escape(home.graph.nodes[room]['name'].lower())}\b", text)]


# %% q3
def richest_that_fits(home, instruction, budget):
    """The first format of CHOICES whose knowledge fits in budget, or None when none does.

    Args:
        home: The home the knowledge describes.
        instruction: What the user asks.
        budget: The most tokens the knowledge text may take.
    """
    for fmt in CHOICES:  # richest first: full, compact, retrieval
        if tokens_for(home, fmt, instruction) <= budget:
            return fmt
    return None
