"""The schema generator: type hints and docstrings -> JSON schema, and its errors."""

from typing import Literal

import pytest

from lares_kit import Toolbox, load_world
from lares_kit.tools.schema import LightId, RoomId, SchemaError, tool_schema


def documented(x):  # helper: wrap an annotation into a documented one-argument tool
    def tool(value: x) -> str:
        """A tool.

        Args:
            value: the value.
        """
    return tool


@pytest.mark.parametrize("hint, schema", [
    (str, {"type": "string"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (bool, {"type": "boolean"}),
    (list[str], {"type": "array", "items": {"type": "string"}}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (Literal["on", "off"], {"type": "string", "enum": ["on", "off"]}),
    (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    (str | None, {"type": "string"}),
    (bool | float | str, {"type": ["boolean", "number", "string"]}),
    (RoomId, {"type": "string"}),
    (dict, {"type": "object"}),
])
def test_types_map_to_exact_schema(hint, schema):
    prop = tool_schema(documented(hint))["function"]["parameters"]["properties"]["value"]
    assert {k: v for k, v in prop.items() if k != "description"} == schema


def test_id_types_become_enums_when_the_home_is_known():
    schema = Toolbox(load_world("lares-home")).schema("move_robot")
    assert schema["function"]["parameters"]["properties"]["destination_room_id"]["enum"] == \
        ["lounge", "hallway", "kitchen", "bedroom", "office"]


def test_description_and_required_and_defaults():
    def find(name: str, room: RoomId | None = None) -> str:
        """Find something.

        Args:
            name: what to find.
            room: where to look first.
        """
    s = tool_schema(find, {RoomId: ["a", "b"]})["function"]
    assert s["name"] == "find" and s["description"] == "Find something."
    assert s["parameters"]["required"] == ["name"]
    assert s["parameters"]["properties"]["room"] == {"type": "string", "enum": ["a", "b"],
                                                     "description": "where to look first."}
    assert s["parameters"]["additionalProperties"] is False


def test_injected_parameters_are_hidden():
    def lamp(home, user, light_id: LightId) -> str:
        """Lamp.

        Args:
            light_id: a light.
        """
    assert list(tool_schema(lamp)["function"]["parameters"]["properties"]) == ["light_id"]


def test_missing_hint_is_an_error():
    def f(x) -> str:
        """F.

        Args:
            x: thing.
        """
    with pytest.raises(SchemaError, match=r"f\(x\): add a type hint"):
        tool_schema(f)


def test_undocumented_argument_is_an_error():
    def f(x: str) -> str:
        """F with no Args section."""
    with pytest.raises(SchemaError, match=r"f\(x\): describe it under 'Args:'"):
        tool_schema(f)


def test_missing_docstring_is_an_error():
    def f(x: str) -> str:
        return x
    with pytest.raises(SchemaError, match="add a docstring"):
        tool_schema(f)


def test_documenting_a_parameter_that_does_not_exist_is_an_error():
    def f(x: str) -> str:
        """F.

        Args:
            x: thing.
            y: not a parameter.
        """
    with pytest.raises(SchemaError, match="documents 'y'"):
        tool_schema(f)


def test_bare_list_and_unsupported_types_are_errors():
    with pytest.raises(SchemaError, match="say what the list holds"):
        tool_schema(documented(list))
    with pytest.raises(SchemaError, match="has no JSON schema"):
        tool_schema(documented(set[str]))


def test_multiline_argument_docs_are_joined():
    def f(x: str) -> str:
        """F.

        Args:
            x: first line
                and second line.

        Returns:
            something.
        """
    assert tool_schema(f)["function"]["parameters"]["properties"]["x"]["description"] == "first line and second line."
