"""Memory: recent turns in the prompt, older ones recalled from a store on disk, and the profile of who is
speaking.

Taught in ``10_memory`` and ``12_personalization``.
"""
