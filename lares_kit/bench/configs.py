"""Configurations: the design choices a benchmark compares side by side, as it compares agents.

A lesson compares more than agents and models: what the agent knows of the
home (the knowledge mode), how the home is written in the prompt (the
knowledge format), how the prompts are written (the prompt style), react's
light model that writes the Actions (the executor model), and each design's
own options -- react's ``action_format`` and ``parser``, function-calling's
``parallel_tool_calls`` (the fields of an :class:`~lares_kit.agents.registry.AgentSpec`'s
options dataclass). Each of these is a *setting*; a run is given some values
of each, and every combination of them is a *configuration*
(:func:`configurations`), run with every agent and model.

A design that does not take a setting -- sage has no knowledge mode to
choose (it reads the home through its tools), only react has an executor
model -- runs with its own, once for all the configurations that differ only
in what it does not take, and its record names the settings it did not take
(``own``). A value that no agent of the run takes is a LaresError before any
episode runs (:func:`check_configurations`).

A record names its configuration beside the contract's keys (:data:`RECORD_FIELDS`),
each only when set, so a run given none writes the records it always did;
the journal tells episodes apart by them (:mod:`lares_kit.bench.journal`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Sequence
from typing import Any

from ..errors import LaresError, brief

__all__ = ["RECORD_FIELDS", "SETTINGS", "check_configurations", "configuration_label", "configurations",
           "design_configurations", "parse_option", "settings_given"]

# The settings every run_agent call takes, beside the designs' own options (any field of their options dataclass).
SETTINGS = ("knowledge", "knowledge_format", "prompt_style", "executor_model")
# What a record says of its configuration, each only when set: the contract's "knowledge" is always there.
RECORD_FIELDS = ("knowledge", "knowledge_format", "prompt_style", "executor_model", "options", "own")
_WHAT = {"knowledge": "knowledge mode", "knowledge_format": "knowledge format", "prompt_style": "prompt style",
         "executor_model": "executor model"}
# The request's own options: the run sets them for every design (temperature=, and a seed per trial).
_REQUEST = {"temperature": "the run sets the temperature for every design (temperature=, --temperature)",
            "seed": "the run sends each trial its own sampling seed (trials=, --trials)"}
MAX_CONFIGURATIONS = 10_000  # combinations of values in one run; far more than a table can show


def _values(name: str, value: Any) -> list[Any]:
    # one value, or several (a list or tuple), in order without repeats
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise LaresError(f"{name} is given an empty list: give it at least one value, or leave it out")
    unique: dict[str, Any] = {}
    for v in values:
        unique.setdefault(_key(v), v)
    return list(unique.values())


def settings_given(knowledge: str | Sequence[str] | None = None, knowledge_format: str | Sequence[str] | None = None,
                   prompt_style: str | Sequence[str] | None = None, executor_model: str | Sequence[str] | None = None,
                   options: dict[str, Any] | None = None) -> dict[str, list[Any]]:
    """Each setting given -> its values, in order and without repeats; the settings left at None are left out.

    Args:
        knowledge: A knowledge mode or several (``latest``, ``initial``, ``none``).
        knowledge_format: A knowledge format or several (``auto``, ``full``, ``outline``...).
        prompt_style: A prompt style or several (``lean``, ``lares``).
        executor_model: React's light model, or several.
        options: A design option's name -> its value, or a list of values (``{"parser": ["one", "naive"]}``).

    Examples:
        >>> settings_given(knowledge=("latest", "initial", "latest"), options={"parser": "naive"})
        {'knowledge': ['latest', 'initial'], 'parser': ['naive']}
    """
    given = {"knowledge": knowledge, "knowledge_format": knowledge_format, "prompt_style": prompt_style,
             "executor_model": executor_model}
    out = {name: _values(name, value) for name, value in given.items() if value is not None}
    for name, value in (options or {}).items():
        if name in SETTINGS:
            raise LaresError(f"{name} is a setting of its own, not a design option: give it as {name}=")
        out[str(name)] = _values(str(name), value)
    return out


def configurations(given: dict[str, list[Any]], listed: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every combination of the values given (the first value varies slowest), with each listed configuration.

    Args:
        given: Setting -> values, as :func:`settings_given` returns them.
        listed: Configurations named one by one (``[{"knowledge": "none"}, {"parser": "naive"}]``), each combined
            with every combination of ``given``; None: only the combinations.

    Examples:
        >>> configurations({"knowledge": ["latest", "initial"], "parser": ["one", "naive"]})[:2]
        [{'knowledge': 'latest', 'parser': 'one'}, {'knowledge': 'latest', 'parser': 'naive'}]
        >>> configurations({}, [{"knowledge": "none"}, {"executor_model": "offline-multi"}])
        [{'knowledge': 'none'}, {'executor_model': 'offline-multi'}]
    """
    count = 1
    for values in given.values():
        count *= len(values)
    listed = [dict(c) for c in listed] if listed else [{}]
    for config in listed:
        if not isinstance(config, dict):
            raise LaresError(f"a configuration is a mapping of settings to values, not {brief(config)}")
        both = sorted(set(config) & set(given))
        if both:
            raise LaresError(f"{both[0]} is given both for the run and in a listed configuration; give it once")
    if count * len(listed) > MAX_CONFIGURATIONS:
        raise LaresError(f"these settings make {count * len(listed):,} configurations, more than the "
                         f"{MAX_CONFIGURATIONS:,} one run may hold; give fewer values")
    names = list(given)
    return [{**config, **dict(zip(names, combo))} for config in listed
            for combo in itertools.product(*(given[n] for n in names))]


def _options(spec: Any) -> dict[str, Any]:
    # a design's own options (its options dataclass, less what every request carries) -> their defaults
    return {f.name: f.default for f in dataclasses.fields(spec.options) if f.name not in _REQUEST}


def parse_option(text: str) -> tuple[str, Any]:
    """``--option KEY=VALUE`` as (key, value): the value typed as the option's default is (true/false, a number).

    A value that does not read as that type is kept as text, for the design's options dataclass to refuse
    in its own words.

    Args:
        text: What follows ``--option``, e.g. ``parser=naive`` or ``parallel_tool_calls=true``.

    Examples:
        >>> parse_option("parser=naive"), parse_option("parallel_tool_calls=true"), parse_option("max_iterations=4")
        (('parser', 'naive'), ('parallel_tool_calls', True), ('max_iterations', 4))
        >>> parse_option("naive")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --option takes KEY=VALUE, e.g. parser=naive, not 'naive'
    """
    from ..agents import AGENTS

    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise LaresError(f"--option takes KEY=VALUE, e.g. parser=naive, not {brief(text)}")
    defaults = [d[key] for d in map(_options, AGENTS.values()) if key in d]
    default = defaults[0] if defaults else ""
    if isinstance(default, bool):
        return key, {"true": True, "false": False}.get(value.strip().lower(), value)
    for kind in (int, float):
        if isinstance(default, kind):
            try:
                return key, kind(value)
            except ValueError:
                return key, value
    return key, value


def _option_problem(spec: Any, name: str, value: Any) -> str | None:
    # why the design's options dataclass refuses the value (None: it takes it, or the design has no such option)
    if name not in _options(spec):
        return None
    try:
        spec.make_options({name: value})
    except (LaresError, TypeError, ValueError) as exc:
        return str(exc)
    return None


def _takes(spec: Any, name: str, value: Any) -> bool:
    # Whether the design runs with this value: it has a choice of this setting (a design with one knowledge mode
    # or format has none), and the value is one of its choices.
    if name == "knowledge":
        return len(spec.knowledge) > 1 and value in spec.knowledge
    if name == "knowledge_format":
        return len(spec.formats) > 1 and value in spec.formats
    if name == "prompt_style":
        return True
    if name == "executor_model":
        return spec.executor
    return name in _options(spec) and _option_problem(spec, name, value) is None


def _accepts(spec: Any, name: str, value: Any) -> bool:
    # Whether asking for this value makes sense for the design: it takes it, or the value is its one choice
    return _takes(spec, name, value) or (name == "knowledge" and value in spec.knowledge) or (
        name == "knowledge_format" and value in ("auto", *spec.formats))


def _unknown(name: str, value: Any) -> str | None:
    # a sentence for a value no design could take, whatever the agents
    from ..agents import AGENTS
    from ..agents.prompts import PROMPT_STYLES
    from ..knowledge.formats import KNOWLEDGE_FORMATS, KNOWLEDGE_MODES

    known = {"knowledge": ("knowledge mode", "modes", KNOWLEDGE_MODES),
             "knowledge_format": ("knowledge format", "formats", KNOWLEDGE_FORMATS),
             "prompt_style": ("prompt style", "styles", tuple(PROMPT_STYLES))}
    if name in known:
        what, plural, names = known[name]
        return None if value in names else f"unknown {what} {brief(value)}; {plural}: {', '.join(names)}"
    if name == "executor_model":
        if not (isinstance(value, str) and value.strip()):
            return f"an executor model is a model name, not {brief(value)}"
        if value.startswith("replay:"):  # the recording is the run's model; its light model is a name in it
            return ("a recording is replayed as the model (replay:DIR); give the executor model by the name it was "
                    "recorded under")
        return None
    if name in _REQUEST:
        return f"{name} is not a design option to compare: {_REQUEST[name]}"
    owners = {}
    for spec in AGENTS.values():
        for option in _options(spec):
            owners.setdefault(option, []).append(spec.name)
    if name not in owners:
        return (f"no design has the option {brief(name)}; the designs' options: "
                + "; ".join(f"{option} ({', '.join(who)})" for option, who in owners.items()))
    return None


def check_configurations(configs: list[dict[str, Any]], agents: Sequence[str]) -> None:
    """Refuse, in one sentence, a setting or value that no agent of the run takes -- before any episode runs.

    A value some agents take and others do not is fine: those run with their own.

    Args:
        configs: The run's configurations (:func:`configurations`).
        agents: The run's agent names.

    Examples:
        >>> check_configurations([{"executor_model": "offline"}], ["react", "intent-action"])
        >>> check_configurations([{"executor_model": "offline"}], ["intent-action"])  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: no agent in this run has an executor model (react and react-parallel have one:
        a light model writes their Actions); add one of them to the agents, or leave the executor model out
        >>> check_configurations([{"action_format": "yaml"}], ["react"])
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: option action_format must be one of json_schema, text, parallel; got 'yaml'
    """
    from ..agents import AGENTS, get_agent

    specs = [get_agent(a) for a in agents]
    seen: set[tuple[str, str]] = set()
    for name, value in (pair for config in configs for pair in config.items()):
        if (name, _key(value)) in seen:
            continue
        seen.add((name, _key(value)))
        problem = _unknown(name, value)
        if problem:
            raise LaresError(problem)
        if any(_accepts(spec, name, value) for spec in specs):
            continue
        if name == "executor_model":
            have = [s.name for s in AGENTS.values() if s.executor]
            raise LaresError(f"no agent in this run has an executor model ({' and '.join(have)} have one: a light "
                             "model writes their Actions); add one of them to the agents, or leave the executor "
                             "model out")
        if name in ("knowledge", "knowledge_format"):
            takes = "; ".join(f"{s.name} takes {', '.join(s.knowledge if name == 'knowledge' else s.formats)}"
                              for s in specs)
            raise LaresError(f"no agent in this run takes the {_WHAT[name]} {brief(value)} ({takes}); add an agent "
                             f"that does, or leave the {_WHAT[name]} out")
        having = [s for s in specs if name in _options(s)]
        if having:  # the option is theirs, and their options dataclass refuses the value: in its own words
            raise LaresError(_option_problem(having[0], name, value))
        have = [s.name for s in AGENTS.values() if name in _options(s)]
        raise LaresError(f"no agent in this run has the option {name} ({' and '.join(have)} have it); add one of "
                         "them to the agents, or leave the option out")


def _key(value: Any) -> str:
    # a value as text that tells values apart (true is not 1, "1" is not 1)
    return json.dumps(value, sort_keys=True, default=repr)


def design_configurations(configs: list[dict[str, Any]], agent: str) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
    """The configurations one design runs: each with only the settings it takes, and the names of the others.

    Configurations that differ only in what the design does not take are one for it: it runs once. A knowledge
    mode it does not take becomes its own (sage's ``none``), so its record says what it ran with.

    Args:
        configs: The run's configurations (:func:`configurations`).
        agent: The agent name.

    Examples:
        >>> design_configurations([{"executor_model": "offline"}, {"executor_model": "offline-multi"}],
        ...                       "intent-action")
        [({}, ('executor_model',))]
        >>> design_configurations([{"knowledge": "latest"}, {"knowledge": "initial"}], "sage")
        [({'knowledge': 'none'}, ('knowledge',))]
    """
    from ..agents import get_agent

    spec = get_agent(agent)
    out: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {}
    for config in configs:
        taken = {name: value for name, value in config.items() if _takes(spec, name, value)}
        own = tuple(name for name in config if name not in taken)
        if "knowledge" in own:
            taken["knowledge"] = spec.knowledge[0]
        out.setdefault(_key([taken, own]), (taken, own))
    return list(out.values())


def configuration_label(config: dict[str, Any], own: bool = True) -> str:
    """A configuration as the report's block titles say it, from a record's fields (:data:`RECORD_FIELDS`).

    Args:
        config: ``knowledge``, ``knowledge_format``, ``prompt_style``, ``executor_model``, ``options`` (a mapping)
            and ``own`` (the settings the design did not take), each when there.
        own: Whether to say which settings the design did not take (a figure's legend leaves them out).

    Examples:
        >>> configuration_label({"knowledge": "initial", "executor_model": "offline", "options": {"parser": "naive"}})
        'knowledge initial, executor model offline, parser naive'
        >>> configuration_label({"own": ["executor_model", "parser"]})
        '(does not take the executor model, parser option)'
    """
    parts = [f"{'knowledge' if name == 'knowledge' else _WHAT[name]} {config[name]}" for name in SETTINGS
             if config.get(name) is not None]
    parts += [f"{name} {value if isinstance(value, str) else json.dumps(value)}"
              for name, value in (config.get("options") or {}).items()]
    lacks = [_WHAT.get(name, f"{name} option") for name in config.get("own") or []] if own else []
    tail = f"(does not take the {', '.join(lacks)})" if lacks else ""
    return ", ".join(parts) + (" " if parts and tail else "") + tail
