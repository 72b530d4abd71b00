"""The files people write and the toolkit writes: finding world files and suites by id or path, reading
YAML and JSON within limits, writing results atomically, and where a user's files live.

Used by every lesson that loads a world (``01_the_home_as_a_graph`` first); taught by none on its own.
"""
