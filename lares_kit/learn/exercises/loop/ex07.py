"""Exercise 07, a scripted user: answer by rule, and know when not to answer.

Notebook: ``exercises/07_scripted_user.ipynb`` (after ``notebooks/07_asking_the_user.ipynb``).
A user is anything with ``ask(question) -> str`` that raises
:class:`~lares_kit.tools.users.NoAnswer` when it has nothing to say.
"""

from __future__ import annotations

from ....agents import run_agent
from ....home.worlds import load_world
from ....tools.users import NoAnswer
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____
from ...matching import has_word

__all__ = ["q1", "q2", "bind", "____", "PLACEHOLDER"]

DAYTIME = "set the office light depending on whether it's daytime"


def _answer(user, question: str) -> str | None:
    try:
        answer = user.ask(question)
    except NoAnswer:
        return None
    except Exception as exc:
        raise Incorrect(f"Asked {question!r}, your user raised {type(exc).__name__}: {exc}. "
                        "Raise NoAnswer when it has nothing to say.") from None
    if answer is PLACEHOLDER:
        from ...checking import NotAttempted

        raise NotAttempted("Your user still answers ____.")
    return answer


# Words that say it is night, and the words that say it is day (for "not daytime"), read as whole words.
_NIGHT = ("night", "nighttime", "night time", "evening", "midnight", "dark")
_DAY = ("day", "daytime", "day time", "daylight", "light", "sunny", "morning", "afternoon")
_NOT = ("not", "isn't", "isnt", "is not", "no longer")


def _says_night(answer: str) -> bool:
    """Whether an answer says it is night: "It's night", "No, it is dark", "It is not daytime" -- not "not night"."""
    negated = any(has_word(answer, f"{no} {w}") for no in _NOT for w in _NIGHT)
    if has_word(answer, *_NIGHT) and not negated:
        return True
    return any(has_word(answer, f"{no} {w}") for no in _NOT for w in _DAY)


def _test_night_user(night_user) -> str:
    if not hasattr(night_user, "ask"):
        raise Incorrect(f"night_user needs an ask(question) method, like ScriptedUser; got {night_user!r}.")
    for question in ["Is it daytime right now?", "Is it day or night outside?"]:
        answer = _answer(night_user, question)
        if not isinstance(answer, str) or not _says_night(answer):
            raise Incorrect(f"Asked {question!r}, your user should say it is night; it said {answer!r}.")
    for question in ["What is your door PIN?", "Which light do you mean?"]:
        answer = _answer(night_user, question)
        if answer is not None:
            raise Incorrect(f"Asked {question!r}, your user should have no answer (raise NoAnswer); "
                            f"it said {answer!r}.")
    home = load_world("lares-home")
    episode = run_agent(DAYTIME, home, model="offline", user=night_user)
    if not home.devices["office-light"].state["on"] or not episode.asked:
        raise Incorrect(f"On the daytime task the agent should ask, hear 'night' and switch the office light "
                        f"on; it ended with {episode.status!r} and the light {home.devices['office-light'].state}.")
    return f"It answers the daytime question ({episode.asked[0]!r}) and nothing else."


def _test_patient(PatientUser) -> str:
    from ....tools.users import ScriptedUser

    try:
        user = PatientUser(ScriptedUser(fallback="yes"), limit=2)
    except Exception as exc:
        raise Incorrect(f"PatientUser(user, limit=2) raised {type(exc).__name__}: {exc}.") from None
    answers = [_answer(user, q) for q in ["Is it day?", "Which room?", "Which light?"]]
    if answers != ["yes", "yes", None]:
        raise Incorrect(f"With limit=2, the first two questions should be passed on (answer 'yes') and the third "
                        f"get no answer (NoAnswer); the answers were {answers}.")
    if getattr(user, "asked", None) != ["Is it day?", "Which room?", "Which light?"]:
        raise Incorrect("user.asked should list every question, answered or not; "
                        f"it is {getattr(user, 'asked', None)!r}.")
    return "Two answers, then silence; every question recorded."


q1 = Problem("A user who knows it is night", ("night_user",), _test_night_user, hints=[
    "ScriptedUser(rules=[(pattern, answer)]) answers when the regular expression is found in the question.",
    "One rule is enough: a pattern that matches day, daytime or night, e.g. 'day|night'. Leave out answers "
    "and fallback, so any other question raises NoAnswer.",
])
q2 = Problem("A user whose patience runs out", ("PatientUser",), _test_patient, hints=[
    "A user is any object with ask(question) -> str; write a small class with __init__(self, user, limit) "
    "and ask(self, question).",
    "In ask: append the question to self.asked, then raise NoAnswer once len(self.asked) > self.limit; "
    "otherwise return self.user.ask(question).",
])
EXERCISE = Exercise("07_scripted_user", [q1, q2])
bind = EXERCISE.bind
