"""``verify DIR`` for a sharded collection: the manifest, then every shard file as ``verify``
checks a one-file collection, then what ties them together.

* ``manifest``: it parses and is in range;
* ``shard-NNN <check>``: each shard's own checks (integrity, schema, metadata, content,
  vectors), named with the shard;
* ``shards``: each file matches its SHA-256 and its metadata matches the manifest (schema,
  tokenizer, model, document count, content hash);
* ``placement``: every document lies in the shard the rule gives its id (and so no id is in
  two shards);
* ``statistics``: the global statistics recomputed from the shard files equal the manifest's.
"""

from __future__ import annotations

from pathlib import Path

from ..checks import Check, VerifyReport
from ..errors import CollectionError, DamagedCollection
from ..verify_file import verify_file
from .manifest import check_shard, load, sha256_file, shard_of


def verify_sharded(path: str | Path) -> VerifyReport:
    p = Path(path)
    report = VerifyReport(str(p))
    add = report.checks.append
    rest = ("shards", "placement", "statistics")
    try:
        man = load(p)
    except CollectionError as e:
        add(Check("manifest", False, str(e)))
        for name in rest:
            add(Check(name, None, "skipped: the manifest cannot be read"))
        return report
    add(Check("manifest", True, f"{len(man.shards)} shards, {man.totals.documents} documents, "
              f"{len(man.df)} words with a df"))
    sound = True
    for e in man.shards:
        f = p / e.file
        if not f.is_file():
            add(Check(f"{e.file} file", False, "missing"))
            sound = False
            continue
        for c in verify_file(f).checks:
            add(Check(f"{e.file[:-3]} {c.name}", c.ok, c.detail))
            sound = sound and bool(c.ok)
    if not sound:
        for name in rest:
            add(Check(name, None, "skipped: a shard file is damaged"))
        return report
    from ..collection import Collection
    from ..store import reads

    try:
        misplaced = 0
        for i, e in enumerate(man.shards):
            f = p / e.file
            with Collection(f) as c:
                check_shard(p, man, i, c.meta, sha256_file(f))
                misplaced += sum(1 for _, doc_id, _, _ in reads.document_list(c.conn)
                                 if shard_of(doc_id, len(man.shards)) != i)
    except DamagedCollection as e:
        add(Check("shards", False, str(e)))
        for name in rest[1:]:
            add(Check(name, None, "skipped: the shards do not match the manifest"))
        return report
    add(Check("shards", True, "every file matches its checksum and the manifest"))
    add(Check("placement", not misplaced,
              f"{misplaced} documents lie outside the shard their id picks" if misplaced
              else "every document lies in the shard its id picks"))
    from .build import global_totals

    totals, df = global_totals([p / e.file for e in man.shards])
    same = totals == man.totals and df == man.df
    add(Check("statistics", same, "the global statistics recomputed from the shards equal "
              "the manifest's" if same else "the manifest's global statistics are not the "
              "shards' (N, lengths or df differ): rebuild"))
    return report
