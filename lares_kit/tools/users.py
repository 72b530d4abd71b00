"""The person behind ``ask_user``: at a terminal, in a script, or in a widget.

Taught in ``notebooks/07_asking_the_user.ipynb``. A user is anything with an
``ask(question) -> str`` method. When there is no answer to give, ``ask``
raises :class:`NoAnswer`, and the agent loop ends the episode with the status
``no_answer`` instead of hanging.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

__all__ = ["User", "NoAnswer", "ScriptedUser", "TerminalUser", "NoUser", "LLMUser"]


class NoAnswer(Exception):
    """The user had nothing to say to this question."""


class User(Protocol):
    def ask(self, question: str) -> str: ...


@dataclass
class ScriptedUser:
    """Answers from a script: ``answers`` in order, or ``rules`` matched to the question.

    ``rules`` is a list of ``(pattern, answer)``; the first pattern (a regular
    expression, case-insensitive) found in the question wins. Otherwise the
    next of ``answers`` is used; otherwise ``fallback``; otherwise NoAnswer.
    ``asked`` records every question.

    Examples:
        >>> user = ScriptedUser(rules=[("daytime|day time|sun", "Yes, it's a sunny day.")])
        >>> user.ask("Is it daytime right now?")
        "Yes, it's a sunny day."
        >>> ScriptedUser(answers=["no"]).ask("Anything?")
        'no'
        >>> ScriptedUser().ask("Hello?")
        Traceback (most recent call last):
        ...
        lares_kit.tools.users.NoAnswer: no scripted answer for: Hello?
    """

    answers: list[str] = field(default_factory=list)
    rules: list[tuple[str, str]] = field(default_factory=list)
    fallback: str | None = None
    asked: list[str] = field(default_factory=list)

    def ask(self, question: str) -> str:
        self.asked.append(question)
        for pattern, answer in self.rules:
            if re.search(pattern, question, re.IGNORECASE):
                return answer
        if self.answers:
            return self.answers.pop(0)
        if self.fallback is not None:
            return self.fallback
        raise NoAnswer(f"no scripted answer for: {question}")


@dataclass
class TerminalUser:
    """Asks the person at the terminal; an empty line or end of input is no answer.

    ``stream`` is where the question is written (default: standard output,
    through ``input``); ``lares run --json`` writes it to standard error so
    the JSON on standard output stays clean.
    """

    stream: TextIO | None = None

    def ask(self, question: str) -> str:
        prompt = f"\n[the agent asks] {question}\n> "
        try:
            if self.stream is None:
                answer = input(prompt)
            else:
                self.stream.write(prompt)
                self.stream.flush()
                answer = input()
        except EOFError:
            answer = ""
        answer = answer.strip()
        if not answer:
            raise NoAnswer("the person at the terminal gave no answer")
        return answer


class NoUser:
    """Nobody to ask: every question ends the episode with ``no_answer``."""

    def ask(self, question: str) -> str:
        raise NoAnswer("there is no user to ask")


_PERSONA = ("You live in this home and your home assistant is asking you a question. What you know: {facts} "
            "Answer in one short sentence, as the person would. If what you know does not answer the "
            "question, reply exactly: NO ANSWER")


@dataclass
class LLMUser:
    """A simulated user played by a chat model that knows ``facts`` (for benchmarks with real models).

    ``client`` is an ``openai.OpenAI``-like client. A reply of ``NO ANSWER``,
    an empty reply or a failed request is no answer. The offline model is a
    poor actor for this part: use a real model, or :class:`ScriptedUser`.

    Examples:
        >>> from types import SimpleNamespace as NS
        >>> class Echo:  # a stand-in client whose model always says the same
        ...     def __init__(self, text): self.chat = NS(completions=NS(create=lambda **kw: NS(
        ...         choices=[NS(message=NS(content=text))])))
        >>> LLMUser(Echo("It is dark outside."), "any", facts="It is 11 pm.").ask("Is it daytime?")
        'It is dark outside.'
        >>> LLMUser(Echo("NO ANSWER"), "any", facts="It is 11 pm.").ask("What is your dog called?")
        Traceback (most recent call last):
        ...
        lares_kit.tools.users.NoAnswer: the simulated user had no answer to: What is your dog called?
    """

    client: Any
    model: str
    facts: str
    asked: list[str] = field(default_factory=list)

    def ask(self, question: str) -> str:
        self.asked.append(question)
        messages = [{"role": "system", "content": _PERSONA.format(facts=self.facts)},
                    {"role": "user", "content": question}]
        try:
            reply = self.client.chat.completions.create(model=self.model, messages=messages)
            answer = (reply.choices[0].message.content or "").strip() if reply.choices else ""
        except Exception as exc:  # the user model failing must end the episode cleanly, not crash it
            raise NoAnswer(f"the simulated user could not answer ({type(exc).__name__}: {exc})") from exc
        if not answer or answer.upper().startswith("NO ANSWER"):
            raise NoAnswer(f"the simulated user had no answer to: {question}")
        return answer
