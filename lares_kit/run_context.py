"""The context of one run: who speaks, from where, and through which server -- passed, never hidden.

Taught in ``notebooks/12_personalization.ipynb`` (who speaks) and
``notebooks/15_safety_and_failure.ipynb`` (who may ask for what). A
:class:`RunContext` is everything a run knows that is not the world:

* ``source`` -- who gave the instruction (``owner``, ``guest``, ``letterbox``...):
  the home's safety policy judges every call by it, and the goal tells the model;
* ``person`` -- the person speaking, by resident id: whose memory, whose
  profile, whose "my office";
* ``room`` -- where they speak from (a Home Assistant test's satellite): the
  goal says so, so "turn on the light" means the light in that room;
* ``server`` -- what the model's server accepts (a profile name, or a
  ``ServerProfile``); the model-call path learns the rest during the run;
* ``recording`` -- the recording a replay client answers from, when the run is
  a replay (:func:`lares_kit.models.recording.replay.recording_of`).

:func:`lares_kit.run_agent` takes one (``context=``), as do a benchmark
task's set-up (:func:`lares_kit.bench.scene.set_stage` builds it from the
task's ``setup``), ``lares run --source/--person`` and the served home's
service (one context per source of its callers). A fired persistent command
runs in its parent's context with the source that registered it.

The home's clock is not here on purpose: the home keeps one clock
(:mod:`lares_kit.home.clock`) that its events, the poller and every door read,
so a context cannot disagree with the home about the time. ``Home.extra``
holds world data only (policy, residents, guide, layout).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .errors import LaresError
from .safety.policy import DEFAULT_SOURCE

__all__ = ["RunContext"]


@dataclass(frozen=True)
class RunContext:
    """Who speaks, from where, through which server: what a run knows besides the world.

    Examples:
        >>> RunContext().source, RunContext(source="guest", person="ana").person
        ('owner', 'ana')
        >>> RunContext(source="letterbox").but(source="owner").source
        'owner'
        >>> RunContext(person=3)
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: a run's person must be a resident id (text), not 3
    """

    # Who gave the instruction; "" is nobody the policy trusts (a fired condition that named no source).
    source: str = DEFAULT_SOURCE
    # The resident speaking ("" when nobody is named: a design that needs one takes the home's first resident).
    person: str = ""
    # The room id they speak from; None when unknown (a room the home does not have is never said).
    room: str | None = None
    # What the model's server accepts: a name in lares_kit.models.servers.PROFILES or a ServerProfile; None ->
    # $LARES_SERVER, else the toolkit's own models' profile or "auto" (learned).
    server: Any = None
    # The lares_kit.models.recording.replay.Recording a replay client answers from; None when the run is live.
    recording: Any = None

    def __post_init__(self) -> None:
        for name in ("source", "person"):
            value = getattr(self, name)
            if not isinstance(value, str):
                what = "a name such as owner, guest or letterbox" if name == "source" else "a resident id"
                raise LaresError(f"a run's {name} must be {what} (text), not {value!r}")
        if self.room is not None and not isinstance(self.room, str):
            raise LaresError(f"a run's room must be a room id (text) or None, not {self.room!r}")

    def but(self, **changes: Any) -> RunContext:
        """This context with ``changes`` (a fired command's source, a replay's recording).

        Args:
            **changes: Fields to change: ``source``, ``person``, ``room``, ``server``, ``recording``.
        """
        return replace(self, **changes)
