"""The offline model's rules for kinds of request beyond one plain command: comfort, a contradiction, a
danger, the impossible, lists, memory, the safety policy's question, and asking for live context.

Seen at work in ``07_asking_the_user``, ``10_memory`` and ``15_safety_and_failure``.
"""
