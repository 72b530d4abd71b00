"""Real small language models that run offline through llama.cpp (SmolLM2, Gemma 3, Qwen2.5-Coder): the
catalogue of their weights, the chat prompt and constrained calls, and the ``openai`` wire in process.

Taught in ``14_a_small_local_model``.
"""
