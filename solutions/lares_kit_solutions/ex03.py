"""Reference solutions for ``exercises/03_function_calling_loop.ipynb`` (``lares_kit.learn.exercises.loop.ex03``)."""

from lares_kit import Toolbox
from lares_kit.learn.exercises.loop.ex03 import first_messages

__all__ = ["tool_messages", "run_loop"]

# %% q1
def tool_messages(message, toolbox):
    """One tool message per call of an assistant message, in order.

    Args:
        message: The assistant message from the SDK (``response.choices[0].message``), with its ``tool_calls``.
        toolbox: The Toolbox that runs each call and words its result.
    """
    return [{"role": "tool", "tool_call_id": c.id,
             "content": toolbox.dispatch(c.function.name, c.function.arguments).content}
            for c in message.tool_calls]

# %% q2
def run_loop(client, home, instruction, max_steps=10):
    """Run the function-calling loop; return (status, messages).

    Args:
        client: An OpenAI client, e.g. ``make_client("offline")``.
        home: The home the tools act on.
        instruction: What the user asks, in their words.
        max_steps: The most model turns before giving up with ``"step_limit"``.
    """
    toolbox = Toolbox(home)
    messages = first_messages(home, instruction)
    for step in range(max_steps):
        response = client.chat.completions.create(model="offline", messages=messages,
                                                  tools=toolbox.schemas(), tool_choice="auto")
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            continue  # a reply with no call: the step is lost
        messages += tool_messages(message, toolbox)
        if any(c.function.name == "halt" for c in message.tool_calls):
            return "done", messages
    return "step_limit", messages
