"""Reference solutions for ``exercises/14_valid_not_right.ipynb`` (``lares_kit.learn.exercises.field.ex14``)."""

__all__ = ["first_repeat", "argument_error", "read_call"]

# %% q1
def first_repeat(episode):
    made = set()
    for step in episode.tool_calls:
        if step.call_text in made:
            return step.turn
        made.add(step.call_text)
    return None

# %% q2
TYPES = {"string": str, "boolean": bool, "object": dict, "array": list, "integer": int, "number": (int, float)}


def argument_error(parameters, arguments):
    properties = parameters.get("properties", {})
    for key in parameters.get("required", []):
        if key not in arguments:
            return f"missing {key!r}"
    for key, value in arguments.items():
        if key not in properties:
            return f"unknown argument {key!r}: it takes {', '.join(properties) or 'no arguments'}"
        spec = properties[key]
        kind = spec.get("type")
        if kind in TYPES:
            # True is an int in Python, but not a number in JSON; 1 is not a boolean
            if not isinstance(value, TYPES[kind]) or (isinstance(value, bool) and kind in ("integer", "number")):
                return f"{key!r} must be a {kind}, not {value!r}"
        if "enum" in spec and value not in spec["enum"]:
            return f"{key!r} must be one of {spec['enum']}, not {value!r}"
    return None

# %% q3
import json


def read_call(text):
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char != "{":
            continue
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "name" in value:
            return value["name"], value.get("arguments", {})
    return None
