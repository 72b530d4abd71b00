"""A tiny agent loop for tests: it builds the messages as the prompt contract says, calls the model, dispatches
its calls with a Toolbox and feeds the results back (the toolkit's own loops are tested in their own files).
"""

from __future__ import annotations

import json

from lares_kit import ScriptedUser, Toolbox
from lares_kit.models import make_client

INITIAL = "WORLD KNOWLEDGE (initial: the state at the start of the task; changes since are only in the history)"


def drive(home, instruction, *, client=None, answers=(), mode="latest", style="auto", parallel=False,
          tools=None, max_steps=40):
    """Run one instruction; returns (steps, user). steps: list of (tool, arguments dict, result text)."""
    client = client or make_client("offline", max_retries=0)
    user = ScriptedUser(answers=list(answers))
    box = Toolbox(home, tools=tools, user=user)
    initial = home.render_knowledge("json")
    history, steps = [], []
    for _ in range(max_steps):
        msgs = [{"role": "system", "content": "You control a smart home through functions."}]
        if mode == "latest":
            msgs.append({"role": "system", "content": "WORLD KNOWLEDGE (latest)\n" + home.render_knowledge("json")})
        elif mode == "initial":
            msgs.append({"role": "system", "content": INITIAL + "\n" + initial})
        msgs += [{"role": "user", "content": instruction}, *history]
        if style == "intent":
            decide = {"type": "function", "function": {"name": "decide_best_function", "description": "Decide.",
                      "parameters": {"type": "object", "required": ["reasoning", "best_function"], "properties": {
                          "reasoning": {"type": "string"}, "best_function": {"type": "string", "enum": box.names}}}}}
            r = client.chat.completions.create(
                model="offline", messages=msgs, tools=[decide],
                tool_choice={"type": "function", "function": {"name": "decide_best_function"}})
            intent = json.loads(r.choices[0].message.tool_calls[0].function.arguments)
            assert intent["reasoning"]
            fn = intent["best_function"]
            summary = {"role": "assistant", "content": f"I have decided to call {fn} because: {intent['reasoning']}"}
            r = client.chat.completions.create(model="offline", messages=msgs + [summary], tools=box.schemas([fn]),
                                               tool_choice={"type": "function", "function": {"name": fn}})
            assert r.choices[0].message.tool_calls[0].function.name == fn
        else:
            r = client.chat.completions.create(model="offline", messages=msgs, tools=box.schemas(),
                                               parallel_tool_calls=parallel)
        message = r.choices[0].message
        assert r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
        if not message.tool_calls:
            steps.append(("text", {}, message.content))
            break
        history.append(message.model_dump(exclude_none=True))
        final = False
        for tc in message.tool_calls:
            obs = box.dispatch(tc.function.name, tc.function.arguments)
            steps.append((tc.function.name, json.loads(tc.function.arguments), obs.content))
            history.append({"role": "tool", "tool_call_id": tc.id, "content": obs.content})
            final = final or obs.final
        if final:
            break
    return steps, user
