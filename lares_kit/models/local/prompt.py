"""What the local model reads and writes: the chat prompt, the schema of a valid call, and reading the reply.

Part of the local model (:mod:`~lares_kit.models.local.llama`); plain functions over Chat
Completions request data, with no llama.cpp in sight, so they run (and are
tested) without the ``[local]`` extra:

* :func:`chat_messages` -- a request's messages as chat turns any template accepts, functions listed last;
* :func:`system_in_first_user` -- the same turns for a template with no system turn (Gemma);
* :func:`template_messages` -- the messages for a template that lays out tools and calls itself (Qwen's);
* :func:`call_schema` -- the JSON schema of one valid reply, which llama.cpp compiles into a grammar;
* :func:`tagged_grammar` -- that grammar inside ``<tool_call>`` tags, as Qwen writes a call;
* :func:`parse_call` and :func:`argument_problem` -- the call in a reply, and whether it is valid.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_TEXT", "argument_problem", "call_schema", "chat_messages", "offered", "parse_call",
           "system_in_first_user", "tagged_grammar", "template_messages"]

MAX_TEXT = 200  # characters, for free-text arguments under the grammar, so a rambling model still closes its JSON


# ------------------------------------------------------------------ the prompt
def offered(tools: list[dict[str, Any]], tool_choice: Any) -> list[dict[str, Any]]:
    """The functions (``tool["function"]``) a reply may call: the forced one, all of them, or none.

    Args:
        tools: the request's ``tools`` list (``{"type": "function", "function": {...}}`` items); None or [] for none.
        tool_choice: the request's ``tool_choice``: ``"auto"``, ``"required"``, ``"none"``, one named function as
            ``{"type": "function", "function": {"name": ...}}``, or None.

    Examples:
        >>> tools = [{"type": "function", "function": {"name": n}} for n in ("set_light", "halt")]
        >>> [f["name"] for f in offered(tools, {"type": "function", "function": {"name": "halt"}})]
        ['halt']
        >>> offered(tools, "none")
        []
    """
    functions = [t["function"] for t in tools or []]
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        return [f for f in functions if f["name"] == name]
    return [] if tool_choice == "none" else functions


def _signature(fn: dict[str, Any]) -> str:
    # One line per function, shorter than its JSON schema (a third of the tokens), e.g.
    # set_light(light_id: "kitchen-light"|"office-light", on: boolean) - Switch a light on or off.
    params = []
    for name, spec in (fn.get("parameters") or {}).get("properties", {}).items():
        if "enum" in spec:
            kind = "|".join(json.dumps(v) for v in spec["enum"])
        else:
            kind = "|".join(spec["type"]) if isinstance(spec.get("type"), list) else str(spec.get("type", "value"))
            kind += f" ({spec['description']})" if spec.get("description") and kind == "string" else ""
        params.append(f"{name}: {kind}")
    return f"{fn['name']}({', '.join(params)}) - {fn.get('description', '')}".strip(" -")


def _instructions(functions: list[dict[str, Any]], forced: bool) -> str:
    listing = "\n".join(_signature(f) for f in functions)
    if forced:
        name = functions[0]["name"]
        return (f"Call the function {name} now.\n{listing}\nAnswer with the call and nothing else, as JSON: "
                f'{{"name": "{name}", "arguments": {{...}}}}')
    return (f"Functions you can call:\n{listing}\nAnswer with one function call and nothing else, as JSON: "
            '{"name": "<function name>", "arguments": {...}}')


def _one_line(text: str) -> str:
    # JSON inside a system message (the world knowledge), re-written on one line: same data, fewer tokens.
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return text
    try:
        return text[:start] + json.dumps(json.loads(text[start:end + 1])) + text[end + 1:]
    except json.JSONDecodeError:
        return text


def _call_text(message: dict[str, Any]) -> str:
    # An assistant turn as the model would have written it: its text, then each call as JSON.
    parts = [message["content"]] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except json.JSONDecodeError:
            args = fn.get("arguments")
        parts.append(json.dumps({"name": fn.get("name"), "arguments": args}))
    return "\n".join(parts)


def chat_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                  tool_choice: Any = None) -> list[dict[str, Any]]:
    """The request's messages as plain system/user/assistant turns any chat template accepts.

    The leading system messages become one (JSON in them on one line);
    tool results become user turns
    ("Result of NAME: ..."); calls become the JSON the model is asked to
    write; neighbours with the same role are joined (some templates insist
    that user and assistant alternate). The function list goes *last*, so
    the long shared beginning of every request stays the same.

    Args:
        messages: the request's ``messages``, in Chat Completions shape, oldest first.
        tools: the request's ``tools``; None or [] adds no function list.
        tool_choice: the request's ``tool_choice`` (see :func:`offered`); a named function asks for that call only.

    Examples:
        >>> tools = [{"type": "function", "function": {"name": "halt", "description": "Stop.",
        ...           "parameters": {"type": "object", "properties": {}}}}]
        >>> out = chat_messages([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        ...                     tools, "auto")
        >>> [m["role"] for m in out], out[-1]["content"].splitlines()[2]
        (['system', 'user'], 'Functions you can call:')
    """
    names: dict[str, str] = {}  # tool_call_id -> function name
    turns: list[dict[str, str]] = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if isinstance(content, list):  # content parts: keep the text
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if role in ("system", "developer"):
            role, content = "system" if all(t["role"] == "system" for t in turns) else "user", _one_line(content or "")
        elif role == "assistant":
            for call in m.get("tool_calls") or []:
                names[call.get("id", "")] = (call.get("function") or {}).get("name", "")
            content = _call_text(m)
        elif role in ("tool", "function"):
            name = names.get(m.get("tool_call_id", ""), m.get("name", "the call"))
            role, content = "user", f"Result of {name}: {content}"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + (content or "")
        else:
            turns.append({"role": role, "content": content or ""})
    functions = offered(tools or [], tool_choice)
    if functions:
        text = _instructions(functions, isinstance(tool_choice, dict))
        if turns and turns[-1]["role"] == "user":
            turns[-1]["content"] += "\n\n" + text
        else:
            turns.append({"role": "user", "content": text})
    return turns


def system_in_first_user(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    """The turns with the system text moved to the start of the first user turn, a blank line after it.

    For a chat template with no system turn: Gemma's own template does this,
    while llama-cpp-python's ``gemma`` format drops system messages silently.

    Args:
        turns: chat turns as :func:`chat_messages` returns them (at most one system turn, first).

    Examples:
        >>> system_in_first_user([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
        [{'role': 'user', 'content': 'Be brief.\\n\\nhi'}]
        >>> system_in_first_user([{"role": "system", "content": "Be brief."}])
        [{'role': 'user', 'content': 'Be brief.'}]
    """
    system = "\n\n".join(t["content"] for t in turns if t["role"] == "system" and t["content"])
    rest = [dict(t) for t in turns if t["role"] != "system"]
    if not system:
        return rest
    if rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}" if rest[0]["content"] else system
    else:
        rest.insert(0, {"role": "user", "content": system})
    return rest


def _arguments(raw: Any) -> Any:
    # A call's arguments as the template writes them (tojson of a dict); the wire carries them as a JSON string.
    if not isinstance(raw, str):
        return raw if raw is not None else {}
    try:
        return json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw  # written as the string it is: the model sees what was sent


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's messages for a chat template that lays out the tools and calls itself (Qwen2.5's).

    Such a template takes OpenAI's shapes -- ``tool_calls`` on assistant
    messages, ``role: "tool"`` results -- and writes them in the model's own
    format (``<tool_call>`` and ``<tool_response>`` for Qwen), so little is
    changed: the leading system messages become one (the template puts only
    the first beside the tools; JSON in them on one line), content parts
    become text, a call's JSON-string arguments become the object the template
    writes, and neighbouring assistant or user messages are joined (an
    assistant's reason, then its call, is one turn as the model writes it).
    Later system messages stay system turns, as the template has them.

    Args:
        messages: the request's ``messages``, in Chat Completions shape, oldest first.

    Examples:
        >>> out = template_messages([
        ...     {"role": "system", "content": "Be brief."}, {"role": "system", "content": "KNOWLEDGE"},
        ...     {"role": "user", "content": "hi"}, {"role": "assistant", "content": "I will stop."},
        ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
        ...      "function": {"name": "halt", "arguments": "{\\"message_to_user\\": \\"Bye.\\"}"}}]},
        ...     {"role": "tool", "tool_call_id": "c1", "content": "Bye."}])
        >>> [(m["role"], m["content"]) for m in out]
        [('system', 'Be brief.\\n\\nKNOWLEDGE'), ('user', 'hi'), ('assistant', 'I will stop.'), ('tool', 'Bye.')]
        >>> out[2]["tool_calls"][0]["function"]
        {'name': 'halt', 'arguments': {'message_to_user': 'Bye.'}}
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if isinstance(content, list):  # content parts: keep the text
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        content = content or ""
        if role in ("system", "developer"):
            role, content = "system", _one_line(content)
            if out and all(t["role"] == "system" for t in out):  # still the leading block: one system message
                out[0]["content"] += "\n\n" + content
                continue
        turn: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant" and m.get("tool_calls"):
            turn["tool_calls"] = [{"type": "function", "function": {
                "name": (c.get("function") or {}).get("name", ""),
                "arguments": _arguments((c.get("function") or {}).get("arguments"))}} for c in m["tool_calls"]]
        if out and role in ("assistant", "user") and out[-1]["role"] == role and "tool_calls" not in out[-1]:
            turn["content"] = "\n\n".join(t for t in (out[-1]["content"], content) if t)
            out[-1] = turn  # the earlier text, then this message's text and calls
            continue
        out.append(turn)
    return out


# ------------------------------------------------------------------ the grammar
def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    # Free-text strings get a length limit, so the grammar always lets the JSON close in time.
    if schema.get("type") == "string" and "enum" not in schema:
        return {**schema, "maxLength": min(schema.get("maxLength", MAX_TEXT), MAX_TEXT)}
    if isinstance(schema.get("properties"), dict):
        return {**schema, "properties": {k: _bounded(v) for k, v in schema["properties"].items()}}
    return schema


def call_schema(tools: list[dict[str, Any]], tool_choice: Any = "auto") -> dict[str, Any] | None:
    """The JSON schema of one valid reply: ``{"name": ..., "arguments": ...}``, one branch per offered function.

    None when no call is wanted (no tools, or ``tool_choice="none"``).

    Args:
        tools: the request's ``tools`` list.
        tool_choice: the request's ``tool_choice`` (see :func:`offered`); ``"none"`` wants no call.

    Examples:
        >>> tools = [{"type": "function", "function": {"name": "set_light", "parameters": {"type": "object",
        ...     "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}}]
        >>> call_schema(tools)["properties"]["name"]
        {'const': 'set_light'}
        >>> call_schema(tools, "none") is None
        True
    """
    branches = [{"type": "object", "required": ["name", "arguments"], "additionalProperties": False,
                 "properties": {"name": {"const": f["name"]},
                                "arguments": _bounded({"type": "object", "properties": {},
                                                       "additionalProperties": False} | f.get("parameters", {}))}}
                for f in offered(tools, tool_choice)]
    if not branches:
        return None
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def tagged_grammar(gbnf: str, open_tag: str = "<tool_call>\n", close_tag: str = "\n</tool_call>", *,
                   text_too: bool = False) -> str:
    """A GBNF grammar for a call (llama.cpp's from :func:`call_schema`) wrapped in tags, as Qwen writes one.

    The JSON grammar's ``root`` rule is renamed, and a new ``root`` puts the
    tags around it: the model writes its own ``<tool_call>`` tokens, then a
    call valid for the schema, then the closing tag. With ``text_too`` the
    model may instead answer in plain text (``tool_choice="auto"``: a model
    that knows tools decides itself whether to call one), which must not
    start with ``<``: once it opens a tag, the call is held to the schema.

    Args:
        gbnf: a grammar whose start rule is ``root`` (``llama_cpp.llama_grammar.json_schema_to_gbnf``'s output).
        open_tag: the text before the call.
        close_tag: the text after it.
        text_too: also allow a reply in plain text instead of a call.

    Examples:
        >>> print(tagged_grammar('root ::= "{" space "}" space\\nspace ::= " "?'))
        root ::= "<tool_call>\\n" lares-call "\\n</tool_call>"
        lares-call ::= "{" space "}" space
        space ::= " "?
        >>> print("\\n".join(tagged_grammar('root ::= "{}"', text_too=True).splitlines()[:2]))
        root ::= "<tool_call>\\n" lares-call "\\n</tool_call>" | lares-text
        lares-text ::= [^<] [^<]*
    """
    body = re.sub(r"^root ::=", "lares-call ::=", gbnf, count=1, flags=re.MULTILINE)
    if text_too:
        return (f"root ::= {json.dumps(open_tag)} lares-call {json.dumps(close_tag)} | lares-text\n"
                f"lares-text ::= [^<] [^<]*\n{body}")
    return f"root ::= {json.dumps(open_tag)} lares-call {json.dumps(close_tag)}\n{body}"


# ------------------------------------------------------------------ the reply
def parse_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The first ``{"name": ..., "arguments": {...}}`` object in a reply, or None.

    Also reads a list of calls (the first one), ``<tool_call>`` tags,
    ``"parameters"`` for ``"arguments"`` and line breaks left raw inside a
    string, as small models write them (llama-cpp-python's JSON grammar lets
    them through).

    Args:
        text: the model's reply text, which may hold prose around the call.

    Examples:
        >>> parse_call('Sure! {"name": "halt", "arguments": {"message_to_user": "Done."}}')
        ('halt', {'message_to_user': 'Done.'})
        >>> parse_call("<tool_call>[{\\"name\\": \\"look_with_robot\\"}]</tool_call>")
        ('look_with_robot', {})
        >>> parse_call('{"name": "halt", "arguments": {"message_to_user": "Done.\\nBye."}}')
        ('halt', {'message_to_user': 'Done.\\nBye.'})
        >>> parse_call("I would turn on the kitchen light.") is None
        True
    """
    decoder = json.JSONDecoder(strict=False)  # strict JSON refuses control characters inside strings
    for start, char in enumerate(text):
        if char not in "{[":
            continue
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        value = value[0] if isinstance(value, list) and value else value
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            args = value.get("arguments", value.get("parameters", {}))
            return value["name"], args if isinstance(args, dict) else {"value": args}
    return None


_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list, "integer": int, "number": (int, float)}


def argument_problem(parameters: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """What makes ``arguments`` invalid for a function's ``parameters`` schema, or None.

    Checks what the grammar enforces: required keys, no unknown keys, types
    and enums. (Free-text length is not a validity rule.)

    Args:
        parameters: the function's JSON schema for its arguments (``properties``, ``required``, ``type``, ``enum``).
        arguments: the arguments the model sent, already parsed from JSON.

    Examples:
        >>> p = {"type": "object", "properties": {"light_id": {"type": "string", "enum": ["kitchen-light"]}},
        ...      "required": ["light_id"]}
        >>> argument_problem(p, {"light_id": "kitchen-light"}) is None
        True
        >>> argument_problem(p, {"light_id": "attic-light"})
        "'light_id' must be one of ['kitchen-light']"
    """
    props = parameters.get("properties", {})
    for key in parameters.get("required", []):
        if key not in arguments:
            return f"missing {key!r}"
    for key, value in arguments.items():
        spec = props.get(key)
        if spec is None:
            return f"unknown argument {key!r}"
        kinds = spec.get("type") if isinstance(spec.get("type"), list) else [spec.get("type")]
        known = [k for k in kinds if k in _TYPES]
        # bool is an int in Python, but not an integer or number in JSON schema
        if known and not any(isinstance(value, _TYPES[k])
                             and not (isinstance(value, bool) and k in ("integer", "number"))
                             for k in known):
            return f"{key!r} must be a {' or '.join(known)}"
        if "enum" in spec and value not in spec["enum"]:
            return f"{key!r} must be one of {spec['enum']}"
    return None
