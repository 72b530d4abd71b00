"""YAML as plain data: the parser's events turned into dicts and lists, counted as they come.

Used by :mod:`lares_kit.files.reading` (which reads the file); the limits it
counts against are :mod:`lares_kit.files.limits`. This module only turns YAML
text into data. Why not PyYAML's own ``yaml.load``: its composer first
builds the whole node graph -- where an alias bomb is still a few hundred bytes -- and its constructor shares the
repeated values, so the bomb goes off later, in whatever walks the data (an
error message's ``repr``, ``json.dumps``). Here each alias is copied only
after its size is added to the totals and found within
:data:`~lares_kit.files.limits.MAX_VALUES` and :data:`~lares_kit.files.limits.MAX_TEXT`;
nesting stops at :data:`~lares_kit.files.limits.MAX_DEPTH`; a scalar PyYAML
cannot convert (``!!int 0x``, ``!!bool maybe``) is a sentence with its key
path; and key paths are worked out only for a message, from the stack of
open lists and mappings.

YAML 1.2's core schema: only true/false are booleans, dates are text, and
tags other than ``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``,
``!!seq`` and ``!!map`` are refused.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ..errors import brief, clip
from .limits import INT_RANGE, MAX_DEPTH, MAX_TEXT, MAX_VALUES, Error, key_path, warn_duplicates

__all__ = ["SCALAR_KINDS", "YamlDumper", "YamlLoader", "dump_yaml", "read_yaml_data"]

# libyaml's parser when PyYAML has it: it reads a 5,000-device world file about ten times faster.
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"


class YamlLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader with YAML 1.2's core schema: only true/false are booleans, and no dates."""


YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_TAG + "bool", _TAG + "timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
YamlLoader.add_implicit_resolver(_TAG + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
# YAML 1.2's floats: an exponent needs no dot and no sign (1e-06, 2E5, 1.5e3), as JSON writes them. PyYAML's
# YAML 1.1 rule read these as text. Consulted after the int rule, so 123 stays a whole number.
YamlLoader.add_implicit_resolver(
    _TAG + "float", re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$"),
    list("-+0123456789."))


class YamlDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """PyYAML's safe writer, quoting text that either reader would take for something else.

    PyYAML's own writer follows YAML 1.1 and leaves ``1e5`` or ``0E0`` unquoted, which
    :class:`YamlLoader` reads back as numbers. This writer quotes them too, and still quotes what
    YAML 1.1 reads as true/false (``yes``, ``off``), so the file means the same in other tools.
    """


YamlDumper.yaml_implicit_resolvers = {first: list(resolvers)
                                      for first, resolvers in yaml.SafeDumper.yaml_implicit_resolvers.items()}
for _first, _resolvers in YamlLoader.yaml_implicit_resolvers.items():
    YamlDumper.yaml_implicit_resolvers.setdefault(_first, []).extend(
        r for r in _resolvers if r not in YamlDumper.yaml_implicit_resolvers[_first])


def dump_yaml(data: Any, **options: Any) -> str:
    """``data`` as YAML text that :func:`read_yaml_data` reads back as the same data.

    Args:
        data: Plain data: dicts, lists, text, numbers, true/false, null.
        **options: PyYAML's ``dump`` options; keys keep their order and text its letters unless told.

    Examples:
        >>> print(dump_yaml({"name": "1e5", "level": 1e-06, "say": "yes"}), end="")
        name: '1e5'
        level: 1.0e-06
        say: 'yes'
    """
    options = {"sort_keys": False, "allow_unicode": True, **options}
    return yaml.dump(data, Dumper=YamlDumper, **options)

# What each scalar tag is, for "x is not <kind>" sentences; other tags are refused.
SCALAR_KINDS = {_TAG + "null": "null", _TAG + "bool": "true or false", _TAG + "int": "a whole number",
                _TAG + "float": "a number", _TAG + "str": "text"}
_STR, _MERGE_TAG = _TAG + "str", _TAG + "merge"
_MAPPING_TAGS = (None, "!", _TAG + "map")
_SEQUENCE_TAGS = (None, "!", _TAG + "seq")
_KEY_TYPES = (str, int, float, bool, type(None))


def read_yaml_data(text: str, source: str, error: Error) -> Any:
    """The data in YAML ``text``, or ``error(source, key path, sentence)``.

    Args:
        text: The YAML text.
        source: Where the text comes from, e.g. a file name: the error names it.
        error: The exception to raise, called as ``error(source, key path, sentence)``, e.g.
            :class:`~lares_kit.errors.DataFileError`.

    Examples:
        >>> from lares_kit.errors import DataFileError
        >>> read_yaml_data("lamp: &on {on: true}\\nhall: *on", "x.yaml", DataFileError)
        {'lamp': {'on': True}, 'hall': {'on': True}}
        >>> read_yaml_data("lamp: {on: !!bool maybe}", "x.yaml", DataFileError)
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: x.yaml: lamp.on: 'maybe' is not true or false (line 1)
    """
    return _YamlReader(text, source, error).read()


_NO_KEY = object()  # a mapping waiting for its next key
_MERGE = object()  # the key `<<`: merge the mapping(s) that follow into this one


class _Open:
    """A list or mapping whose end the parser has not reached yet."""

    __slots__ = ("value", "anchor", "count", "text", "height", "key", "merges")

    def __init__(self, value: Any, anchor: str | None, count: int, text: int) -> None:
        self.value = value  # the list or dict being filled
        self.anchor = anchor  # &name on it, if any
        self.count, self.text = count, text  # the reader's totals when it opened: its own size is the difference
        self.height = 1  # levels of nesting in it, so far
        self.key: Any = _NO_KEY  # a mapping's key read, waiting for its value
        self.merges: list[list[dict[str, Any]]] = []  # `<<:` mappings, in order


class _YamlReader:
    """Builds plain data from the parser's events, one at a time, counting as it goes.

    PyYAML's own composer would first build the whole node graph -- where an
    alias bomb is still small -- and its constructor shares the repeated
    values, so the bomb goes off later, in whatever walks the data (an error
    message's ``repr``, ``json.dumps``). Here every alias is copied, and only
    after its size has been added to the totals and found within the limits.
    Key paths are worked out only for a message: the open lists and mappings
    on the stack say where the parser is.
    """

    def __init__(self, text: str, source: str, error: Error) -> None:
        self.loader = YamlLoader(text)
        self.source, self.error = source, error
        self.stack: list[_Open] = []  # the open lists and mappings, innermost last
        self.count = 0  # values so far, aliases repeated
        self.repeated = 0  # of which aliases repeated
        self.text = 0  # characters of text so far, aliases repeated
        # anchor -> (value, values in it, characters in it, levels of nesting)
        self.anchors: dict[str, tuple[Any, int, int, int]] = {}
        self.open: set[str] = set()  # anchors of lists and mappings not closed yet
        self.duplicates: list[tuple[str, Any]] = []

    def where(self) -> str:
        """The key path of the value being read now, like ``devices[3].state.on``."""
        path = ""
        for frame in self.stack:
            if isinstance(frame.value, list):
                path += f"[{len(frame.value)}]"  # the value being read is not in the list yet
            elif frame.key is _NO_KEY or frame.key is _MERGE:
                break  # reading a key: the place is the mapping itself
            else:
                path = key_path(path, frame.key)
        return path

    def fail(self, message: str) -> None:
        raise self.error(self.source, self.where(), message)

    def read(self) -> Any:
        try:
            return self._read()
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise self.error(self.source, "", f"not valid YAML{where}: {clip(str(problem), 160)}") from None
        finally:
            self.loader.dispose()

    def _read(self) -> Any:
        loader, stack = self.loader, self.stack
        root, documents = None, 0
        while loader.check_event():
            event = loader.get_event()
            kind = type(event)
            if kind is yaml.ScalarEvent:
                value, height = self._scalar(event), 0
                text = len(value) if type(value) is str else 0
                self._grow(1, text)
                if event.anchor:
                    self._anchor(event)
                    self.anchors[event.anchor] = (value, 1, text, 0)
            elif kind is yaml.AliasEvent:
                value, height = self._alias(event)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                mapping = kind is yaml.MappingStartEvent
                if event.tag not in (_MAPPING_TAGS if mapping else _SEQUENCE_TAGS):
                    self.fail(f"the tag {_tag_name(event.tag)} is not used in these files; write a plain "
                              f"{'mapping' if mapping else 'list'}")
                if stack and stack[-1].key is _NO_KEY and isinstance(stack[-1].value, dict):
                    self.fail(f"a key must be a word or a number, not a {'mapping' if mapping else 'list'} "
                              f"(line {event.start_mark.line + 1})")
                if len(stack) >= MAX_DEPTH:
                    self.fail(f"the data is nested more than {MAX_DEPTH} levels deep")
                self._grow(1, 0)
                if event.anchor:
                    self._anchor(event)
                    self.open.add(event.anchor)
                stack.append(_Open({} if mapping else [], event.anchor, self.count, self.text))
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                done = stack.pop()
                value, height = self._close(done), done.height
                if done.anchor:
                    self.open.discard(done.anchor)
                    self.anchors[done.anchor] = (value, self.count - done.count + 1, self.text - done.text, height)
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    self.fail(f"a second YAML document starts at line {event.start_mark.line + 1} (a line '---'); "
                              "a file holds one")
                continue
            else:
                continue  # the stream's start and end, a document's end
            if not stack:
                root = value
            else:
                self._put(stack[-1], value, height, event.start_mark.line + 1)
        warn_duplicates(self.source, self.duplicates)
        return root

    def _grow(self, count: int, text: int) -> None:
        # Called before anything is built or copied: a bomb stops here, at the first value past a limit.
        self.count += count
        self.text += text
        if self.count > MAX_VALUES:
            self.fail(f"the file holds more than {MAX_VALUES:,} values once its aliases (*name) are repeated: an "
                      "alias repeats a big part of the file too many times" if self.repeated else
                      f"the file holds more than {MAX_VALUES:,} values, more than these files may hold")
        if self.text > MAX_TEXT:
            self.fail(f"the file holds more than {MAX_TEXT // 2**20} million characters of text once its aliases "
                      "(*name) are repeated" if self.repeated else
                      f"the file holds more than {MAX_TEXT // 2**20} million characters of text")

    def _scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR:
            return event.value  # the usual case, without a node
        if tag == _MERGE_TAG:
            return _MERGE
        line = event.start_mark.line + 1
        if tag not in SCALAR_KINDS:
            self.fail(f"the tag {_tag_name(tag)} is not used in these files; write plain text, a number, true/false or "
                      f"null (line {line})")
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            value = self.loader.yaml_constructors[tag](self.loader, node)
        except Exception:  # noqa: BLE001 -- PyYAML's converters raise what they meet: ValueError, KeyError, IndexError...
            # `!!bool maybe`, `!!int 0x`, `!!int` with nothing, `!!float abc`, an integer of more than 4,300 digits
            self.fail(f"{brief(event.value)} is not {SCALAR_KINDS[tag]} (line {line})")
        if type(value) is int and not INT_RANGE[0] <= value <= INT_RANGE[1]:
            self.fail(f"the number on line {line} is too large; whole numbers here fit in 64 bits")
        return value

    def _anchor(self, event: Any) -> None:
        # PyYAML refuses an anchor defined twice too; here it would also let a value grow from itself.
        if event.anchor in self.anchors or event.anchor in self.open:
            self.fail(f"the anchor &{clip(event.anchor, 40)} (line {event.start_mark.line + 1}) is defined twice; "
                      "give each anchor its own name")

    def _alias(self, event: Any) -> tuple[Any, int]:
        name, line = event.anchor, event.start_mark.line + 1
        if name in self.open:
            self.fail(f"the alias *{clip(name, 40)} (line {line}) is inside the value it repeats, "
                      "so it would never end")
        if name not in self.anchors:
            self.fail(f"the alias *{clip(name, 40)} (line {line}) has no anchor &{clip(name, 40)} before it")
        value, count, text, height = self.anchors[name]
        if len(self.stack) + height > MAX_DEPTH:
            self.fail(f"the data is nested more than {MAX_DEPTH} levels deep once its aliases are repeated")
        self.repeated += count
        self._grow(count, text)
        return _copy(value), height

    def _put(self, top: _Open, value: Any, height: int, line: int) -> None:
        if height >= top.height:
            top.height = height + 1
        if type(top.value) is list:
            top.value.append(value)
        elif top.key is _NO_KEY:
            if value is not _MERGE and not isinstance(value, _KEY_TYPES):
                self.fail(f"a key must be a word or a number, not {brief(value)} (line {line})")
            top.key = value
        elif top.key is _MERGE:
            merged = value if isinstance(value, list) else [value]
            if not all(isinstance(m, dict) for m in merged):
                self.fail(f"'<<' merges a mapping, or a list of mappings, into this one (line {line})")
            top.key = _NO_KEY
            top.merges.append(merged)
        else:
            key = top.key
            if key in top.value:
                self.duplicates.append((self.where(), key))
            top.key = _NO_KEY
            top.value[key] = value

    @staticmethod
    def _close(done: _Open) -> Any:
        if not done.merges:
            return done.value
        # YAML's merge: keys written here win, then the first mapping merged, then the next...
        merged: dict[Any, Any] = {}
        for group in reversed(done.merges):
            for mapping in reversed(group):
                merged.update(mapping)
        merged.update(done.value)
        return merged


def _tag_name(tag: str) -> str:
    # "tag:yaml.org,2002:binary" -> "!!binary", as it is written in the file
    return brief("!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag)


def _copy(value: Any) -> Any:
    # An alias's own copy: lists and dicts are new (nesting is within MAX_DEPTH); text and numbers are shared.
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value
