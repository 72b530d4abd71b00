"""Reference solutions of the exercises: ``exNN.py`` has one ``# %% qN`` section per problem.

Each section is the whole answer cell of the notebook, as a teacher would
write it; ``make solutions`` pastes the sections into copies of the
notebooks (``exercises/solutions/``), and ``qN.solution()`` shows one.
Every file is an importable module, so the tests can check the answers
without a kernel.
"""
