"""Reference solutions for ``exercises/13_safe_condition.ipynb`` (``lares_kit.learn.exercises.building.ex13``)."""

__all__ = ["fridge_open", "too_warm", "any_light_on"]

# %% q1
fridge_open = """
def fridge_is_open():
    return get('fridge', 'door') == 'open'
"""

# %% q2
too_warm = """
def meeting_room_too_warm():
    return get('meeting-2-sensor', 'temperature') > 25 and not get('meeting-2-window', 'open')
"""

# %% q3
any_light_on = """
def any_light_on():
    return any([get('hall-light', 'on'), get('kitchen-light', 'on')])
"""
