"""Reading the YAML and JSON files people write: world files, task suites, saved episodes, bench records.

A file written by hand -- or by someone testing the toolkit -- can hold
anything: bytes that are not UTF-8, a date that does not exist, a number of
5,000 digits, JSON nested 100,000 deep, or a YAML *alias bomb* (a few lines
whose aliases repeat each other into billions of values). This module turns
every file into plain data (dicts, lists, text, numbers, true/false, null) or
into one :class:`~lares_kit.errors.DataFileError` sentence naming the file
and the key; no ValueError, RecursionError or MemoryError gets through.

The limits, and why they are where they are (a 5,000-device building is a
1 MB file of about 86,000 keys and values, 7 levels deep):

* :data:`MAX_BYTES` -- the file itself (8 MB);
* :data:`MAX_VALUES` -- keys, values and what aliases repeat (500,000, a
  25,000-device building), counted before each repeat is copied, so a bomb
  stops there, never after a billion, and within a second or two;
* :data:`MAX_TEXT` -- characters of text once aliases are repeated;
* :data:`MAX_DEPTH` -- levels of nesting (50), so code that walks the data
  recursively (``copy.deepcopy``, ``json.dumps``) never runs out of stack.

YAML is read as YAML 1.2's core schema: ``on``/``yes`` are words (only
true/false are booleans) and dates are text (``2024-02-30`` is the text
"2024-02-30", not a failed date). Explicit tags other than ``!!str``,
``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!seq`` and ``!!map`` are
refused. A key written twice in one mapping is a
:class:`DuplicateKeyWarning` (the later value wins, as in PyYAML and JSON).

This module reads files; checking what the data means is
:mod:`lares_kit.worlds` and :mod:`lares_kit.bench.tasks`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import yaml

from .errors import DataFileError, LaresWarning, brief, clip

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_TEXT", "MAX_VALUES", "DuplicateKeyWarning", "YamlLoader", "parse_data",
           "parse_json", "path_kind", "read_data_file", "read_text_file"]

MAX_BYTES = 8 * 2**20  # a 25,000-device generated building is 5 MB of JSON
MAX_VALUES = 500_000  # keys and values, aliases repeated: a 25,000-device building, ~30 MB of objects at worst
MAX_TEXT = 16 * 2**20  # characters of text, aliases repeated (a repeated long string costs its length)
MAX_DEPTH = 50  # nesting levels; real files use fewer than 10
INT_RANGE = (-2**63, 2**63 - 1)  # whole numbers beyond a 64-bit integer are refused: no home setting needs one

Error = Callable[[str, str, str], Exception]  # (file, key path, message) -> the exception to raise


class DuplicateKeyWarning(LaresWarning):
    """A mapping in a file has the same key twice; the later value is used."""


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

# What each scalar tag is, for "x is not <kind>" sentences; other tags are refused.
SCALAR_KINDS = {_TAG + "null": "null", _TAG + "bool": "true or false", _TAG + "int": "a whole number",
                _TAG + "float": "a number", _TAG + "str": "text"}
_STR, _MERGE_TAG = _TAG + "str", _TAG + "merge"
_MAPPING_TAGS = (None, "!", _TAG + "map")
_SEQUENCE_TAGS = (None, "!", _TAG + "seq")
_KEY_TYPES = (str, int, float, bool, type(None))


def path_kind(path: str | os.PathLike) -> str:
    """``"file"``, ``"folder"``, ``"missing"`` or ``"other"`` (a device, a pipe, a name the system refuses).

    Unlike ``Path.is_file()``, never raises: a 5,000-character name is "other", not an OSError.

    Examples:
        >>> path_kind("worlds"), path_kind("no/such/file.yaml"), path_kind("x" * 5000)
        ('folder', 'missing', 'other')
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except (OSError, ValueError):  # a name too long, a NUL byte in it, no permission to look
        return "other"
    return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else "other"


def read_text_file(path: str | os.PathLike, error: Error = DataFileError) -> str:
    """The text of a UTF-8 file of at most :data:`MAX_BYTES`, or ``error(file, "", sentence)``.

    Examples:
        >>> read_text_file("no/such/file.yaml")
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: no/such/file.yaml: file not found
    """
    source = str(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)  # read() with a limit: a FIFO or /dev/zero cannot make it hang or grow
    except FileNotFoundError:
        raise error(source, "", "file not found") from None
    except IsADirectoryError:
        raise error(source, "", "this is a folder, not a file") from None
    except OSError as exc:
        raise error(source, "", f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(raw) > MAX_BYTES:
        raise error(source, "", f"the file is bigger than {MAX_BYTES // 2**20} MB, the most these files may be")
    try:
        return raw.decode("utf-8-sig")  # -sig: a byte-order mark some editors write is not part of the text
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise error(source, "", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} on line {line} cannot be read; "
                                "save the file as UTF-8") from None


def read_data_file(path: str | os.PathLike, error: Error = DataFileError) -> Any:
    """The data in a YAML or JSON file, within the limits above, or ``error(file, key path, sentence)``.

    Examples:
        >>> import tempfile, pathlib
        >>> bomb = pathlib.Path(tempfile.mkdtemp()) / "bomb.yaml"
        >>> _ = bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x, x]\\n"
        ...     + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\\n"
        ...               for p, c in zip("abcdefgh", "bcdefghi")))
        >>> read_data_file(bomb)
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: .../bomb.yaml: f[3]: the file holds more than 500,000 values once its aliases (*name) are repeated: ...
    """
    return parse_data(read_text_file(path, error), str(path), error)


def parse_data(text: str, source: str = "<text>", error: Error = DataFileError) -> Any:
    """YAML (or JSON, which is YAML too and reads much faster) as plain data, within the limits above.

    Examples:
        >>> parse_data("state: {on: false}\\nname: 2024-02-30")
        {'state': {'on': False}, 'name': '2024-02-30'}
        >>> parse_data('{"state": {"on": false}}')
        {'state': {'on': False}}
        >>> parse_data("level: !!int 0x", "home.yaml")
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: home.yaml: level: '0x' is not a whole number (line 1)
    """
    if text.lstrip()[:1] in ("{", "[", "\""):
        # Generated worlds are JSON (`lares worlds generate`): the json module reads a 5,000-device world
        # in a hundredth of a second, a YAML parser in seconds.
        try:
            return parse_json(text, source, error)
        except _NotJson:
            pass  # YAML flow style that is not JSON: the YAML reader below says what is wrong, if anything
    return _YamlReader(text, source, error).read()


class _NotJson(Exception):
    pass


def parse_json(text: str, source: str = "<text>", error: Error = DataFileError, *, strict: bool = False) -> Any:
    """JSON as plain data, within the limits above; ``strict``: a syntax error is an error (else :class:`_NotJson`).

    Examples:
        >>> parse_json('{"rooms": [{"id": "hall"}]}', "x.json")
        {'rooms': [{'id': 'hall'}]}
        >>> parse_json('{"rooms": [{"id": "hall"}', "x.json", strict=True)
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: x.json: not valid JSON at line 1, column 26: Expecting ',' delimiter
        >>> parse_json("[" * 100_000, "x.json", strict=True)
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: x.json: the data is nested more than 50 levels deep
    """
    # Every value but the first in a list or mapping follows a comma, every key comes before a colon, so
    # this counts an upper bound of the values before the parser builds any of them.
    estimate = text.count(",") + text.count(":") + 2 * (text.count("{") + text.count("[")) + 1
    if estimate > 2 * MAX_VALUES:
        raise error(source, "", f"the file holds more than {MAX_VALUES:,} values, more than these files may hold")
    doubled: list[tuple[dict[str, Any], list[str]]] = []  # mappings that had a key twice, and those keys

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        mapping = dict(pairs)
        if len(mapping) != len(pairs):
            doubled.append((mapping, [k for k, n in Counter(k for k, _ in pairs).items() if n > 1]))
        return mapping

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        if not strict:
            raise _NotJson() from None
        raise error(source, "", f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise error(source, "", f"the data is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # the json module's other complaint: an integer of more than 4,300 digits
        raise error(source, "", f"a number in the file cannot be read ({clip(str(exc), 80)})") from None
    try:
        counted = _check_tree(data)
    except _Refused as bad:
        path = ""
        for key in reversed(bad.keys):
            path = f"{path}[{key}]" if type(key) is int else _key_path(path, key)
        raise error(source, path, bad.message) from None
    if counted > MAX_VALUES:
        raise error(source, "", f"the file holds more than {MAX_VALUES:,} values, more than these files may hold")
    if doubled:
        places = {id(m): keys for m, keys in doubled}
        found = [(_key_path(path, key), key) for path, mapping in _mappings(data, "") if id(mapping) in places
                 for key in places[id(mapping)]]
        _warn_duplicates(source, found)
    return data


class _Refused(Exception):
    """A limit broken somewhere in JSON data; ``keys`` collects the key path on the way out, innermost first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message, self.keys = message, []


def _check_tree(value: Any, depth: int = 0) -> int:
    # The depth and number limits on data that came from JSON; returns how many values it holds.
    # No key paths are built on the way in (a 5,000-device world has 90,000 values): only on the way out of a refusal.
    if depth > MAX_DEPTH:
        raise _Refused(f"the data is nested more than {MAX_DEPTH} levels deep")
    kind = type(value)
    count = 1
    if kind is dict:
        for key, inner in value.items():
            try:
                count += 1 + _check_tree(inner, depth + 1)
            except _Refused as bad:
                bad.keys.append(str(key))  # JSON keys are text; a list index below stays an int
                raise
    elif kind is list:
        for n, inner in enumerate(value):
            try:
                count += _check_tree(inner, depth + 1)
            except _Refused as bad:
                bad.keys.append(n)
                raise
    elif kind is int and not INT_RANGE[0] <= value <= INT_RANGE[1]:
        raise _Refused(f"the number {brief(value)} is too large; whole numbers here fit in 64 bits")
    return count


def _mappings(value: Any, path: str) -> Any:
    # (key path, mapping) for every mapping in the data, to name where a doubled key is
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            yield from _mappings(v, _key_path(path, k))
    elif isinstance(value, list):
        for n, v in enumerate(value):
            yield from _mappings(v, f"{path}[{n}]")


def _key_path(path: str, key: Any) -> str:
    # "devices[0].state" + "on" -> "devices[0].state.on"; a key made of a whole paragraph is cut
    name = key if isinstance(key, str) and len(key) <= 40 else brief(key)
    return f"{path}.{name}" if path else str(name)


def _warn_duplicates(source: str, found: list[tuple[str, Any]]) -> None:
    for path, key in found[:5]:
        warnings.warn(f"{clip(source, 300)}: {path or '(top level)'}: the key {brief(key)} is written twice; "
                      "the later value is used", DuplicateKeyWarning, stacklevel=4)
    if len(found) > 5:
        warnings.warn(f"{clip(source, 300)}: {len(found) - 5} more keys are written twice", DuplicateKeyWarning,
                      stacklevel=4)


# ---------------------------------------------------------------- YAML
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
                path = _key_path(path, frame.key)
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
        _warn_duplicates(self.source, self.duplicates)
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
            self.fail(f"the alias *{clip(name, 40)} (line {line}) is inside the value it repeats, so it would never end")
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
