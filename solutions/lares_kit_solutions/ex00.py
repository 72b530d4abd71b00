"""Reference solutions for ``exercises/00_first_run.ipynb`` (``lares_kit.learn.exercises.loop.ex00``)."""

__all__ = ["tools_called", "lit_rooms", "changed_devices"]

# %% q1
tools_called = ["set_light", "halt"]

# %% q2
def lit_rooms(home):
    """The ids of the lit rooms, sorted.

    Args:
        home: A Home, e.g. ``load_world("lares-home")``.
    """
    return sorted(room for room in home.graph if home.is_lit(room))

# %% q3
def changed_devices(episode):
    """{device id: final state} for every device whose state changed during the episode.

    Args:
        episode: A finished Episode: its ``initial_state`` and ``final_state`` hold the true states.
    """
    before, after = episode.initial_state["devices"], episode.final_state["devices"]
    return {device: state for device, state in after.items() if state != before.get(device)}
