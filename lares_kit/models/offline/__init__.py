"""The offline model: a deterministic, rule-based stand-in for an LLM with tools.

Introduced in ``notebooks/00_start_here.ipynb``; every notebook runs on it,
and each says what a real LLM would do differently. It is *not* a language
model: it matches words against the home described in the prompt
and follows fixed rules. It exists so that every notebook and test runs with
no API key and no network, through the real ``openai`` SDK (see
:mod:`lares_kit.models.transport` and :mod:`lares_kit.models.serving.server`). A real
LLM would handle far more phrasings, and also make mistakes this one cannot.
This package is the rules and nothing else: the client, the transport, the
wire format and the server around it live beside it in :mod:`lares_kit.models`.

It decides only from the request -- the instruction, the tools offered, the
knowledge the agent put in the prompt, the tool results so far -- never from
the home itself. This package imports nothing from the home side
(``lares_kit.home.graph``, ``worlds``, ``tools``, ``safety``, ``agents``...; a test
checks that): only the leaf contracts both sides share --
:mod:`lares_kit.sentences.markers` (who is talking, a refusal), :mod:`lares_kit.safety.confirmation`
(the gate's question and what a yes is) -- and :mod:`lares_kit.sentences.wording`.

The prompt contract (what an agent must send for it to work)
-----------------------------------------------------------
* **Instruction**: the content of the *last* message with role ``user``
  (a user message starting with ``Observation:`` does not count). Agent
  control text ("I have decided to call X because...", "now call X") goes in
  ``assistant`` or ``system`` messages, never ``user``.
* **World knowledge**: a ``system`` message whose content starts with
  ``WORLD KNOWLEDGE`` and holds ``Home.knowledge()`` as JSON between its
  first ``{`` and last ``}`` (pretty or compact), or as the outline lines of
  :func:`lares_kit.knowledge.formats.render_outline` (the ``outline`` and
  ``retrieval`` formats). Its header says
  ``(latest)`` or ``(initial: ...)``. Without one (knowledge "none") the model
  knows only the ids in the tool schemas' enums: it can still switch
  ``kitchen-light`` for "the kitchen", but for a search it asks the user (if
  ``ask_user`` is offered) or halts saying it has no map.
* **History**: assistant messages with ``tool_calls`` and the ``tool``
  messages answering them, read through the result contract of
  :mod:`lares_kit.tools.toolbox` (``Error: ...``; ``(<light-id>) is now on.`` or
  ``are now on.``; ``Also here: Name, a <type> (<id>); ...``, where the
  article may be ``an`` or none and ``, a <type>`` may be left out;
  ``The user answered: ...``).
  Beliefs are rebuilt every turn from the knowledge plus these facts, so the
  same history works with latest or initial knowledge.
* **Tools** it uses: ``toggle_light(light_id)``, ``set_light(light_id, on)``
  (preferred when offered), ``move_robot(destination_room_id)``,
  ``look_with_robot()``, ``set_device(device_id, attribute, value)``,
  ``read_device(device_id)``, ``ask_user(question)``,
  ``halt(message_to_user)``. Names match loosely (``toggleLight`` works).
* **Modes**: with ``tool_choice`` naming a function, that function is always
  called. If it is the intent tool ``decide_best_function(reasoning,
  best_function)``, the model names the function it would call next (from
  the enum) with a one-sentence reasoning that ends with the call it means,
  ``Call: NAME {arguments}``, when that fits the reasoning's ``maxLength``.
  Any other forced function gets the arguments the last decision in the
  request states for it (an intent-action step's lean action call carries
  little else), else the arguments for what the model intends. With ``auto``/``required`` and
  several tools it calls the next one -- or, when ``parallel_tool_calls`` is
  not false and the instruction asks for several independent device changes,
  all of them at once (as OpenAI models do; omitted means true).
* **Text modes**: no tools and a system prompt asking for ``Thought:`` /
  ``Action:`` / ``Final Answer:`` -- the ReAct format of
  :mod:`lares_kit.models.offline.designs.react`; ``response_format`` json_object or
  json_schema -- JSON valid for the schema (:mod:`lares_kit.models.offline.formats`); otherwise a plain
  sentence.

**A teaching fault**: under the model name ``offline-multi`` (``FAULTY_MODEL``)
the same rules answer, except in the ReAct text mode: when the next step is
several independent device changes, it writes *one Action per change* after
a single Thought -- the failure the smart-building paper reports (its
multi-task score fell to 30% because the model wrote several Actions despite
"only one JSON" in the prompt). ``response_format`` json_schema constrains it
back to one object, as it does a real model. ``notebooks/09_react_two_models``
shows the failure and three fixes.

What it can do: direct control by room, name or alias; searches with the
robot (the nearest unsearched room next, by a shortest route over exits;
lights on where it is dark -- or where a look says "too dark", switching the
light that sentence names -- look, go on until found, then act); asking about facts it cannot observe (is it
daytime?) and acting on the answer; refusing rooms and devices the home does
not have, or a device the named room does not have (naming the nearest one);
refusing a clear request for what no device or tool here can do -- "make me
a coffee", "call the fire brigade", "carry this upstairs" -- with what is
missing and what the tools do (:mod:`lares_kit.models.offline.request_kinds.infeasible`);
answering simple questions from the knowledge; asking about a
request that defeats itself and doing what the answer says, once
(:mod:`lares_kit.models.offline.request_kinds.contradiction`). Anything else -- text that asks for
nothing it can read -- it halts and says it is a rule-based stand-in that
could not understand.

**Its first tier is Home Assistant's recognizer.** Before any rule of its
own reads an instruction, ``hassil`` -- the recognizer of Home Assistant's
built-in voice assistant -- matches it against the sentence templates of
``home-assistant-intents`` in the home's language (the knowledge's
``"language"``; English by default), with the rooms, devices and floors of
the request as its slot lists (:mod:`.ha.recognizer`). A recognized intent is a
goal; where Home Assistant has a reply for it in that language, that reply is
the final message (:mod:`.ha.responses`). Only what hassil does not match goes to
the rules below: searches, conditions, memory, several commands in one
sentence, loose wordings ("pop the light on"), refusals and hazards.

**Two tool dialects.** A prompt with Home Assistant's *static context*
instead of the world knowledge, and its intent tools (``HassTurnOn``,
``GetLiveContext``...) instead of the Lares tools, is read into the same
beliefs and answered with intent calls (:mod:`.ha.reading`, :mod:`.request`).

Where each rule lives (one request flows top to bottom)
--------------------------------------------------------
* :mod:`.designs` -- the rules that read one design's prompts, each with the
  design it reads, named by that design's ``AgentSpec.stand_in``: SAGE's tree
  of prompts (:mod:`.designs.sage`), intent-action's intent tool and the call
  its reasoning states (:mod:`.designs.intent_action`), ReAct text and its
  Action as JSON (:mod:`.designs.react`). What follows is the core every
  design shares;
* :mod:`.replying` -- the reply to one request: a design's own rules, else a
  forced function, tool calls (parallel when allowed), JSON or plain text;
* :mod:`.request` and :mod:`.reading` -- the request as
  :class:`~.reading.Beliefs` (the map, the instruction, the facts the history
  established), in either dialect (:mod:`.ha.reading`);
* :mod:`.ha.recognizer` -- the first tier: hassil's intent as a
  :class:`~.goals.Goal`, with :mod:`.ha.responses` for Home Assistant's replies;
* :mod:`.vocabulary` -- the words of the home: rooms and devices named in an
  instruction, and how a message names a device;
* :mod:`.understanding` -- the instruction as a :class:`~.understanding.Goal`;
  the instruction shapes beyond one command in :mod:`.request_kinds.comfort`,
  :mod:`.compound`, :mod:`.request_kinds.contradiction`, :mod:`.request_kinds.hazards`,
  :mod:`.request_kinds.infeasible`, :mod:`.request_kinds.remembering`;
* :mod:`.planning` -- the next :class:`~.planning.Intention` (with
  :mod:`.request_kinds.confirming` for a safety gate's question and :mod:`.request_kinds.live_context`
  for an overview without states);
* :mod:`.calls` and :mod:`.formats` -- an intention as a call of the tools
  offered, or as JSON text.
"""

from .replying import FAULTY_MODEL, MODEL_NAME, Reply, respond

__all__ = ["FAULTY_MODEL", "MODEL_NAME", "Reply", "respond"]
