"""Condition code for persistent commands: check it, then run it in a sandbox.

Taught in ``notebooks/13_persistent_commands.ipynb``. "Turn on the dining
light when I open the fridge": the agent writes the condition as a small
Python function, and the poller (:mod:`lares_kit.persistent.monitor`) runs it every tick.
That is model-written code running in our process, so it goes through three
layers, each enough on its own for the attacks in
``lares_kit/data/sandbox_attacks.yaml``:

1. **The checker** (:func:`check_condition`) reads the code as a syntax tree
   and allows a short list of node types: one ``def name():`` with no
   arguments; ``if``/``return``/assignments to plain names; comparisons,
   ``and``/``or``/``not``, ``+ - * / // % **``, literals; calls to the names in
   :data:`ALLOWED_FUNCTIONS` only. No imports, no attribute access at all,
   no names starting with ``_``, no loops, comprehensions, lambdas,
   f-strings, ``try`` or ``:=``. With no loops and no way to call itself, a
   condition runs each line at most once. Checking takes one pass over the
   tree (:class:`Limits` bounds its size), so it is linear in the code.
2. **The guards and the step budget**: every operator, comparison,
   subscript, literal and allowed call is rewritten into a call that refuses
   a result over :class:`Limits` *before* building it (``'a' * 10**10`` never
   allocates; a whole number never grows past ``max_int_bits``, whatever the
   operator) and counts the *steps* it costs: one per item, character or
   64-bit digit it handles. A condition that needs more than
   ``max_steps``, or more than ``time_seconds`` of wall clock, is stopped and
   told so; a tick stops starting conditions after ``tick_seconds``. The
   evaluator does the counting, so the budgets hold in every isolation mode.
   Constant expressions are folded through the same guards at check time,
   and the function runs in an explicit namespace whose ``__builtins__`` is
   an empty dict.
3. **The jail** (``isolation="process"``, the default on POSIX): conditions
   live in one persistent worker process that never sees the Home -- it gets a
   copy of the device states each tick -- under ``RLIMIT_AS`` (memory),
   ``RLIMIT_CPU``, ``RLIMIT_FSIZE=0``, ``RLIMIT_NOFILE`` (no new files or
   sockets) and ``RLIMIT_NPROC=0``; the host kills and restarts it if it stops
   answering. One round trip per tick, not per condition, keeps it cheap.
   ``isolation="inline"`` runs layers 1-2 in this process, for places with no
   subprocesses (JupyterLite) and for the benchmark.

Why a step budget and not a thread or a signal for the inline mode: a thread
cannot be stopped from outside in Python (abandoning it leaves it running),
and a signal reaches only the main thread. The guards already sit in front of
every operation whose cost depends on the data, so counting there stops a
condition between two operations, and each operation is small: a value can
only hold what earlier, counted steps built or read.

This package knows nothing of Homes, clocks or agents: device states are plain
``{device_id: {attribute: value}}`` dicts. It imports only the standard
library because the worker process runs its layers in an interpreter that can
import nothing else (``python -I -S -B .../sandbox/worker.py``). One module per
concept:

* :mod:`~lares_kit.persistent.sandbox.limits` -- what a condition may call and use, and
  what comes back (:class:`Limits`, :class:`Outcome`, :class:`ConditionError`);
* :mod:`~lares_kit.persistent.sandbox.checker` -- layer 1, :func:`check_condition`;
* :mod:`~lares_kit.persistent.sandbox.guards` -- layer 2, the guarded operations and the step meter;
* :mod:`~lares_kit.persistent.sandbox.running` -- a condition compiled and run in this
  process, :func:`run_condition`;
* :mod:`~lares_kit.persistent.sandbox.host` -- :class:`Sandbox`, inline or the host's end of the worker;
* :mod:`~lares_kit.persistent.sandbox.worker` -- layer 3, the jailed worker process.
"""

from .checker import check_condition
from .host import Sandbox
from .limits import ALLOWED_FUNCTIONS, CheckedCondition, ConditionError, Limits, Outcome
from .running import run_condition

__all__ = ["ConditionError", "Limits", "CheckedCondition", "Outcome", "ALLOWED_FUNCTIONS", "check_condition",
           "run_condition", "Sandbox"]
