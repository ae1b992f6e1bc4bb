"""The torch-free query embedder (``embed.NumpyBert``) against sentence-transformers.

* Torch-free checks (fast): its vectors for the shipped PEP collection's documents match the
  vectors the build stored with sentence-transformers; a batch of mixed lengths equals the
  texts one by one (padding and the attention mask are right); reading word-embedding rows one
  by one equals the whole table; models it cannot reproduce are named, and a collection built
  with one gets a one-line note and bm25, never a traceback.
* Against sentence-transformers itself (slow: imports torch): the same token ids and cosine
  >= 0.99999 on several hundred queries, short and long (past the 256-token cut), non-ASCII,
  empty-ish and odd; and the fallback to sentence-transformers for a model numpy cannot run.
* The build's document embedder (``embed.OnnxInt8``, int8 ONNX Runtime; slow the first time:
  its export imports torch): cosine to the fp32 vectors of the same texts and cut
  (``NumpyBert``) >= ``INT8_MIN_COSINE`` on the fixture corpus' documents and the queries
  above; the same vectors again for the same texts (another instance too); it is what
  ``get_embedder`` (builds, updates) returns; its progress meter.
"""

from __future__ import annotations

import json
import random
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

import sieve_lite
from sieve_lite import embed
from sieve_lite.embed import (
    DEFAULT_MODEL,
    NumpyBert,
    document_text,
    get_query_embedder,
    numpy_unsupported,
    resolve_model_path,
)
from sieve_lite.errors import EnvironmentProblem

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
FIXTURE = Path(__file__).resolve().parent / "fixture_corpus.jsonl"

# Contract of issue 10: >= 0.999. Measured: >= 0.9999999 (float32 rounding); we hold 1e-5.
MIN_COSINE = 0.99999

ODD = [
    "", " ", "\t\n ", "!!!", "a", "I", "?", "*", "walrus", "walrus operator",
    "Which PEP introduced the walrus operator?", "assignment expression*",
    "Zürich São Paulo Łódź ﬁnal Straße", "東京 and İstanbul Σωκράτης ΣΟΦΙΑ",
    "emoji 🐍🔥 text", "COVID-19 e-mail O'Brien 3.14 C++", "a\u0301e\u0300 combining marks",
    "control\x00\x07chars", "ｆｕｌｌｗｉｄｔｈ", "مرحبا بالعالم", "Привет мир", "ℌ𝔢𝔩𝔩𝔬",
    "x " * 400, " ".join(["lorem ipsum dolor sit amet"] * 80), "supercalifragilistic" * 12,
    "AND OR NOT NEAR/5(a b)", "\"fort santiago\"[title] date[1570..1600]", "٣٤٥ १२३ 12345",
    "\u200b\u200dzero width\ufeff", "tab\tseparated\tvalues", "UPPER lower MiXeD",
]


@pytest.fixture(scope="module")
def numpy_bert() -> NumpyBert:
    return NumpyBert(None)


def _queries(n: int = 300, seed: int = 10) -> list[str]:
    """Deterministic queries cut from the fixture corpus (many scripts, lengths 1-300 words)
    plus the odd ones above."""
    rng = random.Random(seed)
    text: list[str] = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        text.append(doc.get("title") or "")
        for s in doc.get("sections") or []:
            text.append(s.get("text") or "")
    words = " ".join(text).split()
    out = list(ODD)
    while len(out) < n:
        size = rng.choice([1, 2, 3, 5, 8, 13, 40, 120, 300])
        start = rng.randrange(max(1, len(words) - size))
        out.append(" ".join(words[start:start + size]))
    return out


def _stored_vectors(coll, ids: list[str]) -> dict[str, np.ndarray]:
    out = {}
    for doc_id in ids:
        (blob,) = coll.conn.execute(
            "SELECT v.embedding FROM doc_vectors v JOIN documents d ON d.rowid = v.rowid "
            "WHERE d.id = ?", (doc_id,)).fetchone()
        out[doc_id] = np.array(struct.unpack(f"{len(blob) // 4}f", blob), dtype=np.float32)
    return out


# ------------------------------------------------------------------------------ torch-free
def test_matches_the_vectors_the_build_stored(numpy_bert: NumpyBert) -> None:
    """The shipped collection was embedded at build time, by sentence-transformers (fp32, 256
    tokens) or by the int8 embedder (128 tokens): the numpy forward pass of the same document
    texts gives the same vectors (fp32), or vectors within the int8 bound of them."""
    with sieve_lite.open(PEPS) as coll:
        assert coll.embed_model == DEFAULT_MODEL
        ids = [i for (i,) in coll.conn.execute(
            "SELECT id FROM documents ORDER BY rowid")][::37]  # 20 documents
        texts = []
        for doc_id in ids:
            doc = coll.document(doc_id)
            texts.append(document_text(doc["title"], [s["text"] for s in doc["sections"]]))
        stored = _stored_vectors(coll, ids)
    ours = numpy_bert.encode(texts)
    cos = np.array([float(ours[i] @ stored[d]) for i, d in enumerate(ids)])
    if cos.max() < MIN_COSINE:
        # Built by the int8 document embedder (issue 21: OnnxInt8, cut at 128 tokens): the
        # fp32 pass of the same cut must land next to the stored vectors.
        short = NumpyBert(None)
        short.max_len = embed.FAST_MAX_TOKENS
        short.tokenizer.enable_truncation(short.max_len)
        ours = short.encode(texts)
        cos = np.array([float(ours[i] @ stored[d]) for i, d in enumerate(ids)])
        assert cos.min() >= INT8_DOC_MIN_COSINE, (cos.min(), ids[int(cos.argmin())])
    else:
        assert cos.min() >= MIN_COSINE, (cos.min(), ids[int(cos.argmin())])
    # every text here is cut at 256 tokens: the long path is exercised
    assert max(len(numpy_bert.tokenizer.encode(t).ids) for t in texts) == numpy_bert.max_len


def test_batches_equal_single_texts(numpy_bert: NumpyBert) -> None:
    texts = _queries(30)
    together = numpy_bert.encode(texts, batch_size=16)
    alone = np.stack([numpy_bert.encode([t])[0] for t in texts])
    assert together.dtype == np.float32 and together.shape == (len(texts), numpy_bert.dim)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.min(np.sum(together * alone, axis=1)) >= MIN_COSINE


def test_word_rows_equal_the_whole_table() -> None:
    """A query reads a few rows of the word-embedding table; a large batch reads all of it
    once. Both give the same vectors."""
    rows = NumpyBert(None)
    texts = _queries(40, seed=3)
    a = rows.encode(texts[:10])
    assert rows.word is None  # few distinct tokens: rows only
    table = NumpyBert(None)
    table.encode(texts)  # > 256 distinct tokens: the table is loaded
    assert table.word is not None
    assert np.array_equal(a, table.encode(texts[:10]))


def _model_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(resolve_model_path(None), dst)
    return dst


def test_models_it_cannot_reproduce_are_named(tmp_path: Path) -> None:
    assert numpy_unsupported(resolve_model_path(None)) is None
    folder = _model_copy(tmp_path)
    pooling = folder / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**cfg, "pooling_mode_mean_tokens": False,
                                   "pooling_mode_cls_token": True}))
    assert "pooling_mode_cls_token" in (numpy_unsupported(folder) or "")
    pooling.write_text(json.dumps(cfg))
    config = folder / "config.json"
    base = json.loads(config.read_text())
    config.write_text(json.dumps({**base, "model_type": "roberta"}))
    assert "not BERT" in (numpy_unsupported(folder) or "")
    config.write_text(json.dumps({**base, "hidden_act": "gelu_new"}))
    assert "activation" in (numpy_unsupported(folder) or "")
    config.write_text(json.dumps(base))
    (folder / "tokenizer.json").unlink()
    assert "tokenizer.json" in (numpy_unsupported(folder) or "")
    with pytest.raises(EnvironmentProblem, match="cannot run without torch"):
        NumpyBert(str(folder))
    (folder / "modules.json").write_text("not json")
    assert "cannot be read" in (numpy_unsupported(folder) or "")


def test_damaged_weights_are_one_line(tmp_path: Path) -> None:
    folder = _model_copy(tmp_path)
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(EnvironmentProblem) as info:
        NumpyBert(str(folder))
    assert "cannot load embedding model" in str(info.value)
    assert "\n" not in str(info.value)


def test_query_embedder_choice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    get_query_embedder.cache_clear()
    try:
        assert isinstance(get_query_embedder(None), NumpyBert)
        monkeypatch.setenv(embed.EMBEDDER_ENV, "bogus")
        get_query_embedder.cache_clear()
        with pytest.raises(EnvironmentProblem, match="use 'numpy' or 'torch'"):
            get_query_embedder(None)
        # A model numpy cannot run, and no sentence-transformers: one line saying both.
        monkeypatch.delenv(embed.EMBEDDER_ENV)
        folder = _model_copy(tmp_path)
        (folder / "tokenizer.json").unlink()
        real_find_spec = embed.importlib.util.find_spec
        monkeypatch.setattr(embed.importlib.util, "find_spec", lambda name, *a: None
                            if name == "sentence_transformers" else real_find_spec(name, *a))
        with pytest.raises(EnvironmentProblem) as info:
            get_query_embedder(str(folder))
        assert "no tokenizer.json" in str(info.value)
        assert "sentence-transformers is not installed" in str(info.value)
        with pytest.raises(EnvironmentProblem, match="is not installed"):
            get_query_embedder("no-such/model")
    finally:
        get_query_embedder.cache_clear()


def test_search_on_a_collection_whose_model_cannot_be_run(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The collection names an embedding model this machine cannot run: hybrid search ranks
    with bm25 and says why in one note; nothing raises."""
    db = tmp_path / "peps.db"
    shutil.copyfile(PEPS, db)
    import apsw

    conn = apsw.Connection(str(db))
    conn.execute("UPDATE meta SET value = 'acme/not-installed-model' WHERE key = 'embed_model'")
    conn.close()
    get_query_embedder.cache_clear()
    try:
        with sieve_lite.open(db) as coll:
            res = coll.search("walrus operator", k=3)
        assert res.ranker == "bm25" and res.results
        assert any("hybrid ranking is unavailable" in n and "acme/not-installed-model" in n
                   for n in res.notes), res.notes
    finally:
        get_query_embedder.cache_clear()


# ------------------------------------------------------------- against sentence-transformers
@pytest.fixture(scope="module")
def st_model():
    pytest.importorskip("sentence_transformers")
    return embed.get_torch_embedder(None)


@pytest.mark.slow
def test_same_tokens_as_sentence_transformers(st_model, numpy_bert: NumpyBert) -> None:
    tok = st_model.model.tokenizer
    for q in _queries():
        want = tok(q.strip(), truncation=True, max_length=numpy_bert.max_len)["input_ids"]
        assert numpy_bert.tokenizer.encode(q.strip()).ids == want, repr(q[:60])


@pytest.mark.slow
def test_same_vectors_as_sentence_transformers(st_model, numpy_bert: NumpyBert) -> None:
    queries = _queries()
    ours, theirs = numpy_bert.encode(queries), st_model.encode(queries)
    cos = np.sum(ours * theirs, axis=1)
    worst = int(np.argmin(cos))
    assert cos[worst] >= MIN_COSINE, (float(cos[worst]), repr(queries[worst][:60]))


@pytest.mark.slow
def test_falls_back_to_sentence_transformers(st_model, tmp_path: Path) -> None:
    """A model numpy cannot reproduce (here: CLS pooling) runs with sentence-transformers."""
    folder = _model_copy(tmp_path)
    pooling = folder / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**cfg, "pooling_mode_mean_tokens": False,
                                   "pooling_mode_cls_token": True}))
    get_query_embedder.cache_clear()
    try:
        chosen = get_query_embedder(str(folder))
        assert isinstance(chosen, embed.Embedder)
        assert chosen.encode(["walrus"]).shape == (1, 384)
    finally:
        get_query_embedder.cache_clear()


# ------------------------------------------------------------- the build's int8 embedder
# Cosine of OnnxInt8's vectors to fp32 ones of the same texts and the same 128-token cut.
# Measured: the fixture documents min 0.988, mean 0.993; the odd queries (one fullwidth word,
# "?", a repeated nonsense word) down to 0.969, mean 0.991. We hold 0.98 for any document,
# 0.95 for any text and 0.985 on average (docs/architecture.md: the benchmark sets' figures).
INT8_DOC_MIN_COSINE = 0.98
INT8_MIN_COSINE = 0.95
INT8_MEAN_COSINE = 0.985


@pytest.fixture(scope="module")
def int8():
    pytest.importorskip("onnxruntime")
    return embed.OnnxInt8(None)


def _fixture_documents() -> list[str]:
    out = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        body = [s.get("text") or "" for s in doc.get("sections") or []] or [doc.get("text", "")]
        out.append(document_text(doc.get("title") or "", body))
    return out


@pytest.mark.slow
def test_int8_vectors_are_close_to_fp32(int8) -> None:
    ref = NumpyBert(None)
    ref.max_len = int8.max_len  # the same cut: only the arithmetic differs
    ref.tokenizer.enable_truncation(int8.max_len)
    docs = _fixture_documents()
    texts = docs + _queries(120, seed=4)
    ours = int8.encode(texts)
    theirs = ref.encode(texts)
    assert ours.dtype == np.float32 and ours.shape == (len(texts), ref.dim)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cos = np.sum(ours * theirs, axis=1)
    assert cos[:len(docs)].min() >= INT8_DOC_MIN_COSINE, float(cos[:len(docs)].min())
    worst = int(np.argmin(cos))
    assert cos[worst] >= INT8_MIN_COSINE, (float(cos[worst]), repr(texts[worst][:60]))
    assert cos.mean() >= INT8_MEAN_COSINE, float(cos.mean())
    # documents are cut at 128 tokens: the long path is exercised
    assert max(len(int8.tokenizer.encode(t).ids) for t in texts) == int8.max_len == 128


@pytest.mark.slow
def test_int8_is_deterministic(int8) -> None:
    texts = _fixture_documents()
    meter = embed.EmbedMeter(total=len(texts))
    first = int8.encode(texts, batch_size=8, progress=meter.add)
    assert meter.done == len(texts) and meter.eta_s == 0
    first = int8.encode(texts)
    assert np.array_equal(first, int8.encode(texts))
    # a text's vector does not depend on the texts embedded with it (an update = a build)
    assert np.array_equal(first[3], int8.encode([texts[3]])[0])
    assert np.array_equal(first[5:9], int8.encode(texts[5:9]))
    again = embed.OnnxInt8(None)  # a new session over the same cached export
    assert again.path == int8.path
    assert np.array_equal(first, again.encode(texts))


def test_builds_default_to_int8(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    made = []

    class Recorder:
        def __init__(self, name=None) -> None:
            made.append(name)

    # The choice only (the sessions themselves are the slow tests' business).
    monkeypatch.setattr(embed, "OnnxInt8", Recorder)
    monkeypatch.setattr(embed, "get_torch_embedder", lambda name: ("torch", name))
    monkeypatch.setattr(embed, "onnx_unsupported", lambda path: None)
    embed.get_embedder.cache_clear()
    try:
        monkeypatch.delenv(embed.BUILD_EMBEDDER_ENV, raising=False)
        assert isinstance(embed.get_embedder(None), Recorder)
        embed.get_embedder.cache_clear()
        monkeypatch.setenv(embed.BUILD_EMBEDDER_ENV, "torch")
        assert embed.get_embedder(None) == ("torch", None)
        embed.get_embedder.cache_clear()
        monkeypatch.setenv(embed.BUILD_EMBEDDER_ENV, "bogus")
        with pytest.raises(EnvironmentProblem, match="use 'onnx' or 'torch'"):
            embed.get_embedder(None)
        # onnxruntime missing: sentence-transformers, as before; forced onnx says why
        embed.get_embedder.cache_clear()
        monkeypatch.setattr(embed, "onnx_unsupported",
                            lambda path: "onnxruntime is not installed")
        monkeypatch.delenv(embed.BUILD_EMBEDDER_ENV)
        assert embed.get_embedder(None) == ("torch", None)
        embed.get_embedder.cache_clear()
        monkeypatch.setenv(embed.BUILD_EMBEDDER_ENV, "onnx")
        with pytest.raises(EnvironmentProblem, match="onnxruntime is not installed"):
            embed.get_embedder(None)
    finally:
        embed.get_embedder.cache_clear()
    assert made == [None]


def test_onnx_unsupported_names_the_reason(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _model_copy(tmp_path)
    (folder / "tokenizer.json").unlink()
    if embed.importlib.util.find_spec("onnxruntime") is not None:
        assert "tokenizer.json" in (embed.onnx_unsupported(folder) or "")
    real_find_spec = embed.importlib.util.find_spec
    monkeypatch.setattr(embed.importlib.util, "find_spec", lambda name, *a: None
                        if name == "onnxruntime" else real_find_spec(name, *a))
    assert embed.onnx_unsupported(resolve_model_path(None)) == "onnxruntime is not installed"
    with pytest.raises(EnvironmentProblem, match="onnxruntime is not installed"):
        embed.OnnxInt8(None)


def test_embed_meter_rate_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    meter = embed.EmbedMeter(total=1000)
    meter._clock = lambda: now[0]
    assert meter.eta_s is None and meter.docs_per_s == 0.0
    meter.start()
    now[0] += 10.0
    meter.add(250)  # 25 documents/s; 750 left: 30 s
    assert meter.docs_per_s == pytest.approx(25.0)
    assert meter.eta_s == pytest.approx(30.0)
    assert meter.describe() == "embedding: 250/1,000 documents, 25.0/s, ETA 0:30"
    endless = embed.EmbedMeter()
    endless._clock = lambda: now[0]
    endless.add(5)
    assert endless.eta_s is None and endless.describe().startswith("embedding: 5 documents")
    # the query embedder feeds a meter the same way, per batch
    counts: list[int] = []
    NumpyBert(None).encode(["a b", "c", "d e f"], batch_size=2, progress=counts.append)
    assert counts == [2, 1]


@pytest.mark.parametrize("getter,env,fast,fast_name", [
    ("get_embedder", "BUILD_EMBEDDER_ENV", "OnnxInt8", "onnx"),
    ("get_query_embedder", "EMBEDDER_ENV", "NumpyBert", "numpy"),
])
def test_the_forced_embedder_is_read_at_every_call(monkeypatch, getter, env, fast, fast_name):
    """``SIEVE_LITE_BUILD_EMBEDDER`` (documents) and ``SIEVE_LITE_EMBEDDER`` (queries) choose
    the embedder each time one is asked for (a benchmark builds one set with torch, then with
    onnx, in one process; the choice was cached by model name alone, so the second build
    silently reused the first embedder)."""
    monkeypatch.setattr(embed, "get_torch_embedder", lambda name: ("torch", name))
    monkeypatch.setattr(embed, fast, lambda name: (fast_name, name))
    monkeypatch.setattr(embed, "onnx_unsupported", lambda path: None)
    monkeypatch.setattr(embed, "resolve_model_path", lambda name: name)
    get = getattr(embed, getter)
    get.cache_clear()
    try:
        got = []
        for forced in ("torch", fast_name, "torch", ""):
            monkeypatch.setenv(getattr(embed, env), forced)
            got.append(get("m")[0])
        assert got == ["torch", fast_name, "torch", fast_name]
    finally:
        get.cache_clear()
