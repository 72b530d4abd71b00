"""lares_kit: build, run and measure LLM agents that act in a simulated home.

Start with ``notebooks/00_start_here.ipynb``. The package stays light to
import: openai, matplotlib, ipywidgets and the mcp SDK load only when a model
client, a widget or an MCP connection is first asked for.

>>> import lares_kit
>>> home = lares_kit.load_world("lares-home")
>>> home.robot.room
'hallway'
"""

from __future__ import annotations

from .home.graph import Device, Home, Item
from .home.worlds import WorldError, check_home, load_world
from .lazy_exports import lazy_exports
from .tools.toolbox import Observation, Toolbox, ToolError
from .tools.users import NoAnswer, ScriptedUser

__version__ = "0.1.0"
__all__ = ["Home", "Device", "Item", "load_world", "check_home", "WorldError", "Toolbox", "Observation", "ToolError",
           "ScriptedUser", "NoAnswer", "make_client", "run_agent", "mcp_tools", "Episode", "STATUSES", "Question",
           "LaresError", "make_async_client", "RunContext", "speak", "read_wav", "wav_bytes", "Recognizer",
           "home_grammar", "Microphone"]

# Lazy names: imported on first use so `import lares_kit` does not pull in openai (lares_kit.lazy_exports).
_LAZY = {
    "make_client": "lares_kit.models",
    "make_async_client": "lares_kit.models",
    "run_agent": "lares_kit.agents",
    "Episode": "lares_kit.episode",
    "STATUSES": "lares_kit.episode",
    "Question": "lares_kit.episode_steps",
    "LaresError": "lares_kit.errors",
    "mcp_tools": "lares_kit.serve.client",
    "RunContext": "lares_kit.run_context",
    # voice (lesson 19): espeak-ng speaks, pocketsphinx hears -- loaded only when asked for
    "speak": "lares_kit.voice.speech",
    "read_wav": "lares_kit.voice.audio",
    "wav_bytes": "lares_kit.voice.audio",
    "Recognizer": "lares_kit.voice.hear",
    "home_grammar": "lares_kit.voice.grammar",
    "Microphone": "lares_kit.voice.record",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
