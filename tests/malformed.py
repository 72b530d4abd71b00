"""Malformed files for the loader tests, built by code (no binaries are committed).

Each case is one class of failure a file can have, written in a few
different ways and places: a scalar YAML cannot construct, bytes that are not
UTF-8 text, nesting no parser should follow, aliases that multiply, a file
or a value too big, a structure that is not one document of plain data.
:func:`world_cases` puts them in a small valid world file; :func:`suite_cases`
in a task suite. A loader must turn every one into one sentence naming the
file -- exit status 2 from the ``lares`` command -- within 5 s and 200 MB.
"""

from __future__ import annotations

from dataclasses import dataclass

WORLD = """\
id: tiny
name: Tiny
rooms:
  - {id: a, exits: [b], floor: 0}
  - {id: b, exits: [a]}
devices:
  - {id: a-light, type: light, room: a, state: {on: false}}
  - {id: a-heater, type: heater, room: a, state: {on: false, target: 20}}
robot: {id: robot, room: a}
items:
  - {id: rex, name: Rex, type: dog, room: b}
"""


@dataclass
class Case:
    """A malformed file: its bytes, and words its error sentence must hold (the key path among them)."""

    name: str
    data: bytes
    words: tuple[str, ...] = ()


def laughs(levels: int = 9, width: int = 10, word: str = "lol", prefix: str = "x-") -> str:
    """The billion laughs: ``x-b8`` stands for ``width ** levels`` words in a few hundred bytes."""
    lines = [f"{prefix}b0: &b0 [{', '.join([word] * width)}]"]
    for n in range(1, levels):
        lines.append(f"{prefix}b{n}: &b{n} [{', '.join([f'*b{n - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def _swap(text: str, old: str, new: str) -> bytes:
    assert old in text, old
    return text.replace(old, new, 1).encode()


def world_cases() -> list[Case]:
    """Every class of malformed world file, several ways each."""
    w = WORLD
    bomb = laughs()
    nested_state = "{" + '"a": {' * 60 + '"b": 1' + "}" * 60 + "}"
    return [
        # --- scalars YAML 1.1 tags cannot construct (ValueError/KeyError inside PyYAML)
        Case("impossible date with an explicit tag", _swap(w, "name: Tiny", "name: !!timestamp 2023-02-29"),
             ("name", "not used in these files")),
        Case("bool tag on a word", _swap(w, "state: {on: false}", "state: {on: !!bool perhaps}"),
             ("devices[0].state.on", "'perhaps' is not true or false")),
        Case("float tag on a word", _swap(w, "target: 20", "target: !!float twenty"),
             ("devices[1].state.target", "'twenty' is not a number")),
        Case("int tag on a bare prefix", _swap(w, "floor: 0", "floor: !!int 0b"), ("rooms[0].floor", "whole number")),
        Case("an id of 5,000 digits", _swap(w, "id: tiny", "id: " + "7" * 5000), ("id", "whole number")),
        Case("a hexadecimal number of 3,000 digits", _swap(w, "target: 20", "target: 0x" + "f" * 3000),
             ("devices[1].state.target", "too large")),
        Case("a sexagesimal number of 1,000 parts", _swap(w, "floor: 0", "floor: 1" + ":59" * 1000),
             ("rooms[0].floor", "too large")),
        Case("binary tag", _swap(w, "name: Tiny", 'name: !!binary "not base64 at all"'), ("name", "!!binary")),
        Case("python tag", _swap(w, "name: Tiny", 'name: !!python/object/apply:os.system ["true"]'),
             ("name", "python/object")),
        Case("a tag of one's own", _swap(w, "name: Rex", "name: !secret rex-name"), ("items[0].name", "!secret")),
        Case("set tag on the aliases", _swap(w, "name: Rex,", "name: Rex, aliases: !!set {a, b},"),
             ("items[0].aliases", "plain mapping")),
        # --- bytes that are not UTF-8 text
        Case("latin-1 text", w.replace("name: Tiny", "name: Caf\u00e9 Tiny").encode("latin-1"),
             ("not UTF-8 text", "line 2")),
        Case("UTF-16 with its byte-order mark", w.encode("utf-16"), ("not UTF-8 text",)),
        Case("random binary", bytes(range(256)) * 40, ("not UTF-8 text",)),
        Case("an encoded surrogate", _swap(w, "name: Tiny", "name: Tiny") + b"x-note: \xed\xa0\x80\n",
             ("not UTF-8 text", "line 12")),
        Case("a NUL character", _swap(w, "name: Tiny", "name: Ti\x00ny"), ("not valid YAML", "#x0000")),
        # --- nesting
        Case("JSON nested 100,000 deep", ('{"id": "tiny", "rooms": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(),
             ("nested more than 50 levels",)),
        Case("a JSON list left open 100,000 deep", b"[" * 100_000, ("nested",)),
        Case("JSON 60 deep in a device state", _swap(w, "state: {on: false, target: 20}",
                                                       "state: " + nested_state.replace("}", "}", 1)),
             ("devices[1].state.a.a.a", "nested more than 50 levels")),
        Case("YAML flow nested 900 deep", _swap(w, "exits: [b], floor: 0", "exits: " + "[" * 900 + "]" * 900),
             ("rooms[0].exits", "nested more than 50 levels")),
        Case("YAML blocks nested 300 deep", (w + "x-deep:\n" + "".join(" " * (n + 1) + f"k{n}:\n" for n in range(300))
                                            + " " * 301 + "end\n").encode(), ("x-deep.k0.k1", "nested")),
        # --- aliases that multiply (a few hundred bytes that mean billions of values)
        Case("billion laughs as the world id", (bomb + w.replace("id: tiny", "id: *b8", 1)).encode(), ("aliases",)),
        Case("billion laughs as a device state", (bomb + w.replace("target: 20}", "target: 20, mode: *b8}")).encode(),
             ("aliases",)),
        Case("billion laughs as a policy value",
             (bomb + w + "policy: {confirm: [{type: heater, attribute: target, above: *b8}]}\n").encode(),
             ("aliases",)),
        Case("billion laughs as the exits", (bomb + w.replace("exits: [a]", "exits: *b8")).encode(), ("aliases",)),
        Case("laughs of mappings merged with <<", (
            "x-m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n"
            + "".join(f"x-m{n}: &m{n} [*m{n - 1}, *m{n - 1}, *m{n - 1}, *m{n - 1}, *m{n - 1}, *m{n - 1}, *m{n - 1}, "
                      f"*m{n - 1}]\n" for n in range(1, 8))
            + w.replace("robot: {id: robot, room: a}", "robot: {<<: [*m7, *m7], id: robot, room: a}")).encode(),
             ("aliases",)),
        Case("a long text repeated by aliases", (
            "x-t0: &t0 " + "ha" * 50_000 + "\n"
            + "".join(f"x-t{n}: &t{n} [*t{n - 1}, *t{n - 1}, *t{n - 1}, *t{n - 1}]\n" for n in range(1, 10))
            + w.replace("name: Tiny", "name: Tiny\ndescription: *t9")).encode(), ("million characters of text",)),
        Case("a mid-size list repeated 600 times",
             ("x-list: &l [" + ", ".join(["a"] * 1000) + "]\nx-many: [" + ", ".join(["*l"] * 600) + "]\n" + w).encode(),
             ("x-many", "aliases")),
        Case("an alias inside its own anchor", _swap(w, "exits: [a]}", "exits: &loop [a, *loop]}"),
             ("rooms[1].exits[1]", "inside the value it repeats")),
        Case("an alias before its anchor", _swap(w, "room: a, state: {on: false}}", "room: *later, state: {on: false}}")
             + b"x-later: &later a\n", ("devices[0].room", "no anchor &later before it")),
        Case("an anchor defined twice", (w + "x-one: &dup 1\nx-two: &dup 2\n").encode(), ("x-two", "defined twice")),
        Case("an alias to a list used as a key", (w + "x-k: &k [a]\nx-map: {*k : 1}\n").encode(),
             ("x-map", "a key must be a word or a number")),
        # --- too big
        Case("a file over 8 MB", (w + "description: " + "a" * (9 * 2**20) + "\n").encode(), ("bigger than 8 MB",)),
        Case("600,000 values in a YAML list", (w + "x-many:\n" + "- 0\n" * 600_000).encode(),
             ("x-many[", "more than 500,000 values")),
        Case("600,000 values in a JSON list",
             ('{"id": "tiny", "x-many": [' + ",".join(["0"] * 600_000) + "]}").encode(),
             ("more than 500,000 values",)),
        Case("a key of 3 MB", _swap(w, "{id: b, exits: [a]}", "{id: b, exits: [a], ? " + "k" * (3 * 2**20) + " : 1}"),
             ("rooms[1]: unknown key 'kkkk", "...")),
        Case("an id of 3 MB", _swap(w, "id: rex,", "id: " + "Rex" * 2**20 + ","), ("items[0].id", "lowercase")),
        # --- not one document of plain data
        Case("two documents", (w + "---\n" + w).encode(), ("second YAML document", "line 12")),
        Case("a list as a key", (w + "? [a, b]\n: c\n").encode(), ("a key must be a word or a number",)),
        Case("a mapping as a key in flow style", (w + "x-map: {? {a: 1} : b}\n").encode(),
             ("x-map", "a key must be a word or a number")),
        Case("an empty file", b"", ("expected a mapping, got nothing",)),
        Case("only a comment", b"# a world, one day\n", ("expected a mapping, got nothing",)),
        Case("a JSON list", b'[{"id": "tiny"}]', ("expected a mapping, got a list",)),
        Case("a tab for indentation", w.replace("  - {id: b", "\t- {id: b").encode(), ("not valid YAML", "line 5")),
        Case("a quote never closed", _swap(w, "name: Tiny", 'name: "Tiny'), ("not valid YAML",)),
        Case("JSON cut short", b'{"id": "tiny", "rooms": [{"id": "a"', ("not valid YAML",)),
    ]


def suite_cases(world: str) -> list[Case]:
    """The same classes in a task suite for ``world`` (a world id)."""
    good = (f"world: {world}\ntasks:\n  - id: t1\n    category: direct\n    instruction: Turn on the light.\n"
            "    expect: {states: {kitchen-light: {on: true}}}\n")
    bomb = laughs()
    return [
        Case("bool tag on a word", _swap(good, "{on: true}", "{on: !!bool perhaps}"),
             ("tasks[0].expect.states.kitchen-light.on", "not true or false")),
        Case("an id of 5,000 digits", _swap(good, "id: t1", "id: " + "9" * 5000), ("tasks[0].id", "whole number")),
        Case("a date as the memory's time", _swap(good, "    expect:", "    setup: {memory: {turns: [{role: user, "
                                                  "text: hi, at: !!timestamp 2023-02-30}]}}\n    expect:"),
             ("tasks[0].setup.memory.turns[0].at", "!!timestamp")),
        Case("latin-1 text", good.replace("Turn on", "Allume la lumi\u00e8re, turn on").encode("latin-1"),
             ("not UTF-8 text", "line 5")),
        Case("JSON nested 100,000 deep", ('{"world": "x", "tasks": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(),
             ("nested more than 50 levels",)),
        Case("billion laughs as an instruction", (bomb + good.replace("Turn on the light.", "*b8")).encode(),
             ("aliases",)),
        Case("billion laughs as a regex list", (bomb + good.replace("    expect: {", "    expect: {mentions: *b8, "))
             .encode(), ("aliases",)),
        Case("a file over 8 MB", (good + "# " + "a" * (9 * 2**20) + "\n").encode(), ("bigger than 8 MB",)),
        Case("two documents", (good + "---\n" + good).encode(), ("second YAML document",)),
        Case("a regular expression of 20,000 characters", _swap(good, "    expect: {", "    expect: {mentions: ["
                                                                 + "a" * 20_000 + "], "),
             ("tasks[0].expect.mentions[0]", "too long")),
    ]
