"""Reference solutions for ``exercises/07_scripted_user.ipynb`` (``lares_kit.learn.exercises.loop.ex07``)."""

from lares_kit.tools.users import NoAnswer, ScriptedUser

__all__ = ["night_user", "PatientUser"]

# %% q1
night_user = ScriptedUser(rules=[(r"day|night", "No, it is night: about eleven in the evening.")])

# %% q2
class PatientUser:
    """Passes questions on to another user, until `limit` questions have been asked."""

    def __init__(self, user, limit=3):
        self.user, self.limit, self.asked = user, limit, []

    def ask(self, question):
        self.asked.append(question)
        if len(self.asked) > self.limit:
            raise NoAnswer("too many questions")
        return self.user.ask(question)
