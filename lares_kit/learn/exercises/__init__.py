"""The exercises' checks: one module per notebook in ``exercises/`` (``ex01`` for ``01_shortest_route``...).

Each holds its problems, their checks and hints; the machinery is :mod:`lares_kit.learn.checking`.
"""
