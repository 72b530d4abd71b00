"""The offline model in Home Assistant's dialect: Home Assistant's own recognizer over the names of the
home, reading a request in its tool dialect, and its response templates.

Seen at work in ``17_home_assistant``.
"""
