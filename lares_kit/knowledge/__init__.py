"""World knowledge in the prompt: when it is taken (latest, initial, none), how it is written (one renderer
per format), and which rooms an instruction is about.

Taught in ``05_world_knowledge`` (modes) and ``16_scaling_up`` (formats and retrieval).
"""
