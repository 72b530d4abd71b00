"""Exercise 12, personalization: the same words, a different channel for each person.

Notebook: ``exercises/12_person_preferences.ipynb`` (for ``notebooks/12_personalization``).
The checks seed ``sage-home``'s residents into a fresh in-memory
:class:`~lares_kit.memory.store.MemoryStore` (its clock fixed at 30 November
2026, 18:00) and change it case by case with the store's own methods, so a
hard-coded answer fails; the last question runs the real ``sage`` agent with
the offline model on fresh copies of the home, one with residents of its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ....memory.store import MemoryStore
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal

__all__ = ["q1", "q2", "q3", "EVENING", "sample_store", "bind", "____", "PLACEHOLDER"]

EVENING = datetime(2026, 11, 30, 18, 0)  # "now" for every store the checks build

# Past requests of two people the world file does not know, added to a seeded store for q2: Lee's one request is
# older than Dmitriy's; Sam's newest request with a number is not about the heating.
MORE = [("2024-04-22 07:00:00", "lee", "Set the heating to 18."),
        ("2024-05-02 08:00:00", "sam", "Heating to 23."),
        ("2024-05-03 22:10:00", "sam", "Please turn the heating down to 20 for the night."),
        ("2024-05-04 19:00:00", "sam", "Put channel 5 on."),
        ("2024-05-05 09:00:00", "sam", "Is it cold outside?")]


def _home() -> Any:
    from ....home.worlds import load_world

    return load_world("sage-home")


def sample_store() -> MemoryStore:
    """sage-home's two residents seeded into a fresh in-memory store whose clock says 30 November 2026, 18:00.

    Examples:
        >>> sample_store().preferences("dmitriy")["favourite team"]
        'Toronto Raptors'
    """
    from ....memory.profiles import seed_memory

    return seed_memory(_home(), MemoryStore(":memory:", clock=lambda: EVENING))


# ------------------------------------------------------------------ q1
# (person, a change made with one of the store's methods and its arguments, or None, the channel showing
# their favourite team, or None)
GAME_CASES = [("amal", None, 3), ("dmitriy", None, 4),
              ("amal", ("remember_preference", "amal", "favourite team", "Boston Celtics"), 4),
              ("dmitriy", ("remember_preference", "dmitriy", "favourite team", "Boston Red Sox"), None),
              ("dmitriy", ("forget_preference", "dmitriy", "favourite team"), None),
              ("lee", None, None)]


def _changed(change: tuple | None) -> tuple[MemoryStore, str]:
    # A seeded store, changed by one call of its own methods; and that call in words, for the verdict.
    store = sample_store()
    if change is None:
        return store, ""
    method, *args = change
    getattr(store, method)(*args)
    return store, f", after store.{method}({', '.join(map(repr, args))})"


def _test_game(game_channel) -> str:
    from ....device_apis.tv_and_weather import channels

    home = _home()
    guide = {c["channel"]: c for c in channels(home)}
    for person, change, want in GAME_CASES:
        store, done = _changed(change)
        case = f"{person} (favourite team in the store: {store.preferences(person).get('favourite team')!r}{done})"
        got = call(game_channel, home, store, person, case=case)
        if want is None and isinstance(got, int) and got in guide:
            raise Incorrect(f"For {case}, expected None but got {got!r}: channel {got} shows "
                            f"{guide[got]['now']!r}. The team must be one of a channel's teams, not just share a word.")
        expect_equal(got, want, case)
    return (f"Right for all {len(GAME_CASES)} cases: the team comes from the store, so a preference stated today "
            "counts at once, and a team that is not on gives None.")


# ------------------------------------------------------------------ q2
# (person, a change made with one of the store's methods and its arguments, or None, their usual temperature)
TEMPERATURE_CASES = [("amal", None, 21), ("amal", ("remember_preference", "amal", "usual temperature", 22), 22),
                     ("dmitriy", ("forget_preference", "dmitriy", "usual temperature"), 19), ("sam", None, 20),
                     ("lee", None, 18), ("kim", None, None)]


def _test_temperature(usual_temperature) -> str:
    for person, change, want in TEMPERATURE_CASES:
        store, done = _changed(change)
        for at, user, text in MORE:
            store.add("user", text, user=user, at=at)
        case = f"{person} (stated usual temperature: {store.preferences(person).get('usual temperature')!r}{done})"
        expect_equal(call(usual_temperature, store, person, case=case), want, case)
    return (f"Right for all {len(TEMPERATURE_CASES)} people: what they said they prefer wins, and else their own "
            "newest request about the heating.")


# ------------------------------------------------------------------ q3
GAME = "put the game on the TV by the credenza"


def _swapped_home() -> Any:
    # Amal and Dmitriy swap teams, and Noor, whose team is not on tonight, moves in.
    home = _home()
    users = home.extra["users"]
    users[0]["profile"]["favourite team"], users[1]["profile"]["favourite team"] = \
        users[1]["profile"]["favourite team"], users[0]["profile"]["favourite team"]
    users.append({"id": "noor", "name": "Noor", "profile": {"favourite team": "Ottawa Senators"}})
    return home


# (how the home differs, the home, the request, the TV, the channel it shows after each person's run)
AGENT_CASES = [("sage-home", _home, GAME, "tv-credenza", {"amal": 3, "dmitriy": 4}),
               ("sage-home where Amal and Dmitriy swapped teams and Noor (a fan of the Ottawa Senators, not on "
                "tonight) moved in", _swapped_home, "put the game on the TV by the plant", "tv-plant",
                {"amal": 4, "dmitriy": 3, "noor": 1})]


def _test_agent(channel_by_person) -> str:
    for where, make, request, tv, want in AGENT_CASES:
        home = make()
        start = home.devices[tv].state["channel"]
        case = f"{request!r} in {where}"
        got = call(channel_by_person, home, request, tv, case=case)
        if not isinstance(got, dict):
            raise Incorrect(f"For {case}, expected a dict {{person id: channel}} like {want!r}, but got {got!r}.")
        if got != want:
            same = len({repr(v) for v in got.values()}) == 1 and len(set(want.values())) > 1
            still = [p for p in want if want[p] == start and got.get(p) not in (None, start)]
            why = (" Everyone got the same channel: tell run_agent who is speaking, "
                   "context=RunContext(person=...)." if same else
                   f" The run for {still[0]!r} changes nothing, so the TV should still show channel {start}: "
                   "start every run from home.reset()." if still else "")
            raise Incorrect(f"For {case}, expected {want!r} but got {got!r}.{why}")
    return ("Same words, a channel for each person, read from the home the agent left behind. In the second home "
            "Noor's team is not on, so sage changed nothing.")


q1 = Problem("The game, for one person", ("game_channel",), _test_game, hints=[
    "store.preferences(person) is a dict of what the person stated; .get('favourite team') is None when "
    "there is none. channels(home) lists the guide, each channel a dict with a 'teams' list (some have none).",
    "Return the first c['channel'] for c in channels(home) with team in c.get('teams', []), or None. A word search "
    "(search_guide) also finds a channel whose team only shares a word such as 'Boston'.",
])
q2 = Problem("My usual temperature", ("usual_temperature",), _test_temperature, hints=[
    "First store.preferences(person).get('usual temperature'); when that is None, read "
    "store.turns(user=person): only that person's requests, oldest first.",
    "Go through reversed(store.turns(user=person)); in the first text with 'heating' in it (lower-cased) and a "
    "number, re.findall(r'\\d+', text) finds it: return int(...) of it. None when no request fits.",
])
q3 = Problem("Everyone asks for the game", ("channel_by_person",), _test_agent, hints=[
    "For each person in residents(home): home.reset(), then run_agent(request, home, agent='sage', "
    "context=RunContext(person=person)).",
    "After each run, home.devices[tv].state['channel'] is what that person got; collect {person: channel}.",
])
EXERCISE = Exercise("12_person_preferences", [q1, q2, q3])
bind = EXERCISE.bind
