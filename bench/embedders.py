"""Query embedders compared: start-up, first query, memory, exactness, batch throughput.

Run from the repository root::

    python bench/embedders.py                      # numpy (NumpyBert) and torch, 5 runs each
    python bench/embedders.py --batch 64           # also documents/s on 64 PEP document texts
    python bench/embedders.py --onnx M.onnx --gguf M.gguf   # also onnxruntime, llama-cpp

Each run is a fresh process that imports numpy, then the embedder's packages, loads the model
and embeds one query; it reports those four times, its peak RSS (``ru_maxrss``) and the vector.
Runs are interleaved across variants; medians are printed with the load average, and each
vector's cosine with sentence-transformers' (the vectors the build stores).

* ``numpy``: ``sieve_lite.embed.NumpyBert`` (safetensors + tokenizers, one BLAS thread).
* ``torch``: sentence-transformers on torch (what the build uses).
* ``onnx``: an ONNX export of the same model run by onnxruntime (one intra-op thread), with the
  model's tokenizer. Make the file once with ``--export-onnx M.onnx`` (needs torch and onnx).
* ``gguf``: llama-cpp-python in embedding mode (mean pooling, one thread). Make an f32 GGUF once
  with ``--export-gguf M.gguf`` (needs the ``gguf`` package; written with its ``GGUFWriter``
  from the model's safetensors and WordPiece vocabulary, spelled as llama.cpp's BERT loader
  expects: ``##`` continuations bare, other tokens after U+2581).

Neither export is part of sieve-lite: they exist to measure the alternatives (the choice and
its figures are in docs/architecture.md).

Document embedders (issue 21: what a build embeds with), ``--docs N``::

    python bench/embedders.py --docs 2000 -n 3          # the latency corpus' first 2,000
    python bench/embedders.py --docs 300 --source peps  # PEP documents (collections/peps.db)

One process loads sentence-transformers fp32 (``Embedder``, the reference: what builds used
before) and the variants of ``OnnxInt8`` (int8 ONNX Runtime at 128 and 256 tokens, on all
cores and on one) and, per round, embeds the same ``document_text`` of N documents with each
in turn (interleaved, so load affects all alike). Printed: the median seconds over the
rounds, the ratio to fp32's median, documents/s, and each variant's cosine to the fp32 vectors
(min, 1st percentile, mean). The first round's vectors are compared with the second's
(determinism).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
QUERY = "Which PEP introduced the walrus operator?"

CHILD = r'''
import json, os, resource, sys, time
variant, arg, query, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
if variant == "numpy":
    import safetensors, threadpoolctl, tokenizers  # noqa: F401
    from sieve_lite.embed import NumpyBert
    t2 = time.perf_counter()
    model = NumpyBert(None)
    embed = model.encode
elif variant == "torch":
    import sentence_transformers  # noqa: F401
    from sieve_lite.embed import Embedder
    t2 = time.perf_counter()
    model = Embedder(None)
    embed = model.encode
elif variant == "onnx":
    import onnxruntime as ort
    from tokenizers import Tokenizer
    from sieve_lite.embed import resolve_model_path
    t2 = time.perf_counter()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(arg, so, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(resolve_model_path(None) / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256)
    def embed(texts):
        out = []
        for t in texts:
            ids = np.array([tok.encode(t.strip()).ids], dtype=np.int64)
            out.append(sess.run(None, {"ids": ids, "mask": np.ones_like(ids)})[0][0])
        return np.array(out, dtype=np.float32)
else:
    from llama_cpp import LLAMA_POOLING_TYPE_MEAN, Llama
    t2 = time.perf_counter()
    llm = Llama(arg, embedding=True, pooling_type=LLAMA_POOLING_TYPE_MEAN, n_ctx=512,
                n_batch=512, n_threads=1, verbose=False)
    def embed(texts):
        return np.array([llm.embed(t, normalize=True) for t in texts], dtype=np.float32)
t3 = time.perf_counter()
vec = embed([query])[0]
t4 = time.perf_counter()
out = {"numpy": t1 - t0, "import": t2 - t1, "load": t3 - t2, "query": t4 - t3,
       "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "vec": [float(x) for x in vec]}
if batch:
    import sieve_lite
    from sieve_lite.embed import document_text
    with sieve_lite.open(os.path.join(os.environ["SIEVE_ROOT"], "collections", "peps.db")) as c:
        ids = [i for (i,) in c.conn.execute("SELECT id FROM documents ORDER BY rowid LIMIT ?",
                                            (batch,))]
        texts = []
        for i in ids:
            d = c.document(i)
            texts.append(document_text(d["title"], [s["text"] for s in d["sections"]]))
    t5 = time.perf_counter()
    embed(texts)
    out["docs_per_s"] = len(texts) / (time.perf_counter() - t5)
print(json.dumps(out))
'''


def export_onnx(path: Path) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    from sieve_lite.embed import resolve_model_path

    bert = SentenceTransformer(str(resolve_model_path(None)), device="cpu")[0].auto_model.eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids, mask):  # type: ignore[no-untyped-def]
            hidden = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).float()
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1)

    ids = torch.ones(1, 8, dtype=torch.long)
    torch.onnx.export(Pooled().eval(), (ids, ids.clone()), str(path), input_names=["ids", "mask"],
                      output_names=["vec"], opset_version=17, dynamo=False,
                      dynamic_axes={"ids": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}})


def export_gguf(path: Path) -> None:
    import gguf
    import numpy as np
    from safetensors.numpy import load_file

    from sieve_lite.embed import resolve_model_path

    folder = resolve_model_path(None)
    cfg = json.loads((folder / "config.json").read_text())
    w = gguf.GGUFWriter(str(path), "bert")
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_layer_norm_eps(cfg["layer_norm_eps"])
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    control = {"[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]"}
    w.add_token_type_count(cfg["type_vocab_size"])
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list([t if t in control else t[2:] if t.startswith("##") else "\u2581" + t
                      for t in tokens])
    w.add_token_types([gguf.TokenType.UNKNOWN if t == "[UNK]" else gguf.TokenType.CONTROL
                       if t in control else gguf.TokenType.NORMAL for t in tokens])
    for key, tok in (("bos", "[CLS]"), ("eos", "[SEP]"), ("sep", "[SEP]"), ("pad", "[PAD]"),
                     ("unk", "[UNK]"), ("mask", "[MASK]")):
        getattr(w, f"add_{key}_token_id")(vocab[tok])
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, cfg["num_hidden_layers"])
    for name, arr in load_file(str(folder / "model.safetensors")).items():
        if name in ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"):
            continue
        w.add_tensor(names.get_name(name, try_suffixes=(".weight", ".bias")),
                     arr.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _doc_texts(n: int, source: str) -> list[str]:
    """``document_text`` of the first ``n`` documents of the latency corpus (bench/corpus.py's
    generator, seed 1) or of the shipped PEP collection."""
    from sieve_lite.embed import document_text

    if source == "peps":
        import sieve_lite

        with sieve_lite.open(ROOT / "collections" / "peps.db") as c:
            ids = [i for (i,) in c.conn.execute("SELECT id FROM documents ORDER BY rowid LIMIT ?",
                                                (n,))]
            docs = [c.document(i) for i in ids]
        return [document_text(d["title"], [s["text"] for s in d["sections"]]) for d in docs]
    from corpus import generate

    out = []
    for d in generate(n, 1):
        out.append(document_text(d["title"], [s["text"] for s in d.get("sections", [])]))
        if len(out) == n:
            break
    return out


def bench_documents(n: int, runs: int, source: str, variants: list[str]) -> None:
    """Time the document embedders side by side in this process (see the module doc)."""
    import time

    import numpy as np

    from sieve_lite.embed import Embedder, OnnxInt8

    sys.path.insert(0, str(ROOT / "bench"))
    texts = _doc_texts(n, source)
    made = {}
    for v in ["st-fp32", *variants]:
        t0 = time.perf_counter()
        if v == "st-fp32":
            made[v] = Embedder(None)
        else:  # onnx-int8-<tokens>[-t<threads>]
            parts = v.split("-")
            threads = int(parts[3][1:]) if len(parts) > 3 else None
            made[v] = OnnxInt8(None, max_tokens=int(parts[2]), threads=threads)
        print(f"loaded {v} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    times: dict[str, list[float]] = {v: [] for v in made}
    vecs: dict[str, list] = {v: [] for v in made}
    load_before = os.getloadavg()
    for r in range(runs):
        for v, model in made.items():
            t0 = time.perf_counter()
            out = model.encode(texts)
            times[v].append(time.perf_counter() - t0)
            if r < 2:
                vecs[v].append(out)
            print(f"round {r + 1} {v}: {times[v][-1]:.1f} s", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    ref = vecs["st-fp32"][0]
    base = statistics.median(times["st-fp32"])
    print(f"{n} documents ({source}), {runs} rounds interleaved in one process, medians; load "
          "average before " + " ".join(f"{x:.2f}" for x in load_before) + ", after "
          + " ".join(f"{x:.2f}" for x in load_after))
    print(f"{'embedder':<18} {'seconds':>8} {'x fp32':>7} {'docs/s':>7} {'cos min':>8} "
          f"{'cos p1':>7} {'cos mean':>9} {'determ.':>8}")
    for v in made:
        med = statistics.median(times[v])
        cos = np.sum(vecs[v][0] * ref, axis=1)
        same = "yes" if len(vecs[v]) < 2 or np.array_equal(vecs[v][0], vecs[v][1]) else "NO"
        print(f"{v:<18} {med:>8.1f} {med / base:>7.2f} {n / med:>7.1f} {cos.min():>8.4f} "
              f"{np.percentile(cos, 1):>7.4f} {cos.mean():>9.5f} {same:>8}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--runs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=0, help="also embed this many PEP documents")
    ap.add_argument("--onnx", type=Path, help="an ONNX export (see --export-onnx)")
    ap.add_argument("--gguf", type=Path, help="a GGUF file (see --export-gguf)")
    ap.add_argument("--export-onnx", type=Path, metavar="PATH")
    ap.add_argument("--export-gguf", type=Path, metavar="PATH")
    ap.add_argument("--docs", type=int, default=0,
                    help="time document embedders on this many documents instead")
    ap.add_argument("--source", choices=["zipf", "peps"], default="zipf")
    ap.add_argument("--variants", nargs="+",
                    default=["onnx-int8-128", "onnx-int8-256", "onnx-int8-128-t1"],
                    help="onnx-int8-<tokens>[-t<threads>] (all cores without -t)")
    opts = ap.parse_args(argv)
    if opts.docs:
        bench_documents(opts.docs, opts.runs, opts.source, opts.variants)
        return
    if opts.export_onnx or opts.export_gguf:
        if opts.export_onnx:
            export_onnx(opts.export_onnx)
        if opts.export_gguf:
            export_gguf(opts.export_gguf)
        return
    variants = {"numpy": "", "torch": ""}
    if opts.onnx:
        variants["onnx"] = str(opts.onnx)
    if opts.gguf:
        variants["gguf"] = str(opts.gguf)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               HF_HUB_OFFLINE="1", SIEVE_ROOT=str(ROOT))
    results: dict[str, list[dict]] = {v: [] for v in variants}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory():
        for _ in range(opts.runs):
            for variant, arg in variants.items():
                proc = subprocess.run([sys.executable, "-c", CHILD, variant, arg, QUERY,
                                       str(opts.batch)], env=env, capture_output=True,
                                      text=True, check=True, timeout=1800)
                results[variant].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    load_after = os.getloadavg()
    import numpy as np

    ref = np.array(results["torch"][0]["vec"], dtype=np.float32)
    print(f"query embedders, {opts.runs} runs each, medians; load average before "
          + " ".join(f"{x:.2f}" for x in load_before) + ", after "
          + " ".join(f"{x:.2f}" for x in load_after))
    head = (f"{'variant':<7} {'numpy s':>8} {'import s':>9} {'load s':>7} {'query s':>8} "
            f"{'total s':>8} {'RSS MB':>7} {'cos torch':>10}")
    if opts.batch:
        head += f" {'docs/s':>7}"
    print(head)
    for variant, runs in results.items():
        med = {k: statistics.median(r[k] for r in runs)
               for k in ("numpy", "import", "load", "query", "rss_mb")}
        total = statistics.median(r["numpy"] + r["import"] + r["load"] + r["query"] for r in runs)
        vec = np.array(runs[0]["vec"], dtype=np.float32)
        line = (f"{variant:<7} {med['numpy']:>8.3f} {med['import']:>9.3f} {med['load']:>7.3f} "
                f"{med['query']:>8.3f} {total:>8.3f} {med['rss_mb']:>7.0f} "
                f"{float(vec @ ref):>10.7f}")
        if opts.batch:
            line += f" {statistics.median(r['docs_per_s'] for r in runs):>7.1f}"
        print(line)


if __name__ == "__main__":
    main()
