"""The languages a home may speak: Home Assistant's sentence templates, loaded once per language, lazily.

Taught in ``notebooks/17_home_assistant.ipynb``. A world file may say
``language: de``; its people then speak German and its rooms and devices
have German names. What a language *is* here is what Home Assistant's
built-in voice assistant knows: the PyPI package ``home-assistant-intents``
holds its sentence templates and responses for 60-odd languages, and
``hassil`` (its recognizer) matches a sentence against them. This module
checks a language code against that list and loads a language's intents on
first use -- neither package is imported by ``import lares_kit``.

It is a leaf: the world loader and the offline model both use it.

Examples:
    >>> check_language("DE"), check_language("pt_br")
    ('de', 'pt-BR')
    >>> check_language("klingon")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lares_kit.sentences.languages.LanguageError: unknown language 'klingon'; home-assistant-intents knows: af, ar, ...
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

__all__ = ["LanguageError", "check_language", "intents_for", "known_languages", "responses_for"]

_LOCK = threading.Lock()


class LanguageError(ValueError):
    """A language code that home-assistant-intents does not know; the message lists the ones it does."""


@lru_cache(maxsize=1)
def known_languages() -> tuple[str, ...]:
    """The language codes home-assistant-intents has sentences for (``en``, ``de``, ``pt-BR``...), sorted.

    Examples:
        >>> {"en", "de", "fr", "es", "nl"} <= set(known_languages())
        True
    """
    from home_assistant_intents import get_languages

    return tuple(sorted(get_languages()))


def check_language(code: str) -> str:
    """A language code as home-assistant-intents spells it, or :class:`LanguageError` naming the known ones.

    Case and ``_`` / ``-`` do not matter: ``DE``, ``pt_br`` and ``pt-BR`` are all fine.

    Args:
        code: A language code, e.g. ``"de"`` or ``"pt-BR"``.

    Raises:
        LanguageError: the code is not one of :func:`known_languages`.
    """
    wanted = str(code).strip().replace("_", "-").lower()
    for known in known_languages():
        if known.lower() == wanted:
            return known
    raise LanguageError(f"unknown language {code!r}; home-assistant-intents knows: " + ", ".join(known_languages()))


@lru_cache(maxsize=8)
def _data(code: str) -> dict[str, Any]:
    from home_assistant_intents import get_intents

    data = get_intents(code)
    if data is None:  # listed but without sentences: say so rather than fail later
        raise LanguageError(f"home-assistant-intents has no sentences for {code!r}")
    return data


@lru_cache(maxsize=8)
def _intents(code: str) -> Any:
    from hassil import Intents

    return Intents.from_dict(_data(code))


def intents_for(code: str) -> Any:
    """The ``hassil.Intents`` of a language, parsed on first use and kept (about 0.1-0.6 s the first time).

    Args:
        code: A language code; checked with :func:`check_language`.

    Examples:
        >>> "HassTurnOn" in intents_for("en").intents
        True
    """
    code = check_language(code)
    with _LOCK:  # the bench's threads share one parse
        return _intents(code)


def responses_for(code: str) -> dict[str, Any]:
    """The response templates of a language: ``{"intents": {intent: {key: template}}, "errors": {...}}``.

    Args:
        code: A language code; checked with :func:`check_language`.

    Examples:
        >>> responses_for("de")["intents"]["HassTurnOn"]["light_all"]
        'Alle Lichter eingeschaltet'
    """
    code = check_language(code)
    with _LOCK:
        return _data(code).get("responses", {})
