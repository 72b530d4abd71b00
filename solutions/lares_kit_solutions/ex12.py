"""Reference solutions for ``exercises/12_person_preferences.ipynb`` (``lares_kit.learn.exercises.building.ex12``)."""

import re

from lares_kit import RunContext, run_agent
from lares_kit.device_apis.tv_and_weather import channels
from lares_kit.memory import residents

__all__ = ["game_channel", "usual_temperature", "channel_by_person"]


# %% q1
def game_channel(home, store, person):
    """The channel showing the person's favourite team now, or None.

    Args:
        home: The home whose TV guide is read.
        store: The MemoryStore holding the person's stated preferences.
        person: The resident's id, e.g. 'amal'.
    """
    team = store.preferences(person).get("favourite team")
    for channel in channels(home):
        if team is not None and team in channel.get("teams", []):
            return channel["channel"]
    return None


# %% q2
def usual_temperature(store, person):
    """The stated usual temperature, else the number in the person's newest request about the heating, or None.

    Args:
        store: The MemoryStore holding the person's preferences and past requests.
        person: The resident's id, e.g. 'amal'.
    """
    stated = store.preferences(person).get("usual temperature")
    if stated is not None:
        return stated
    for turn in reversed(store.turns(user=person)):
        numbers = re.findall(r"\d+", turn.text)
        if "heating" in turn.text.lower() and numbers:
            return int(numbers[0])
    return None


# %% q3
def channel_by_person(home, request, tv):
    """{person id: the channel the TV shows after the sage agent serves the request for that person}.

    Args:
        home: The home; reset before each person's run.
        request: The instruction every resident gives, e.g. 'put the game on the TV by the credenza'.
        tv: The id of the TV to read afterwards, e.g. 'tv-credenza'.
    """
    got = {}
    for person in residents(home):
        home.reset()
        run_agent(request, home, agent="sage", context=RunContext(person=person))
        got[person] = home.devices[tv].state["channel"]
    return got
