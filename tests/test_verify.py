"""``sieve-lite verify``: each check passes on a sound file and fails on the damage it is for;
the manifest a build writes and ``info`` shows; ``"format"`` in every ``--json``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from sieve_lite.verify import model_dimension, verify

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "import sys; from sieve_lite.cli import main; "
       "sys.argv[0] = 'sieve-lite'; main()"]


def sieve(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def copy(src: Path, tmp: Path, name: str = "copy.db") -> Path:
    dst = tmp / name
    shutil.copyfile(src, dst)
    return dst


def edit(path: Path, sql: str) -> None:
    conn = apsw.Connection(str(path))
    conn.execute(sql)
    conn.close()


def statuses(path: Path) -> dict[str, bool | None]:
    return {c.name: c.ok for c in verify(path).checks}


def test_sound_file_passes_every_check(examples_db: Path) -> None:
    r = sieve("verify", str(examples_db), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["format"] == 1 and report["ok"] is True
    assert [c["name"] for c in report["checks"]] == ["integrity", "schema", "metadata",
                                                    "content", "vectors"]
    assert all(c["ok"] for c in report["checks"])
    r = sieve("verify", str(examples_db))
    assert r.returncode == 0 and r.stdout.splitlines()[-1].endswith(": sound")


def test_text_changed_after_the_build_fails_the_content_hash(examples_db: Path,
                                                             tmp_path: Path) -> None:
    db = copy(examples_db, tmp_path)
    edit(db, "UPDATE documents SET title = 'Something else' WHERE id = 'pep-0238'")
    assert statuses(db) == {"integrity": True, "schema": True, "metadata": True,
                            "content": False, "vectors": True}
    r = sieve("verify", str(db))
    assert r.returncode == 3
    assert "FAILED   content" in r.stdout and "changed after the build" in r.stdout


def test_a_section_count_that_lies(examples_db: Path, tmp_path: Path) -> None:
    db = copy(examples_db, tmp_path)
    edit(db, "DELETE FROM sections WHERE rowid = (SELECT max(rowid) FROM sections)")
    report = verify(db)
    content = next(c for c in report.checks if c.name == "content")
    assert content.ok is False and "1241 sections, but the metadata says 1242" in content.detail


def test_corrupt_fts_index_fails_integrity(examples_db: Path, tmp_path: Path) -> None:
    db = copy(examples_db, tmp_path)
    edit(db, "UPDATE fts_body_data SET block = randomblob(length(block)) WHERE id = "
             "(SELECT id FROM fts_body_data ORDER BY length(block) DESC LIMIT 1)")
    report = verify(db)
    assert report.checks[0].ok is False and "fts5" in report.checks[0].detail


def test_altered_schema_skips_what_depends_on_it(examples_db: Path, tmp_path: Path) -> None:
    db = copy(examples_db, tmp_path)
    edit(db, "CREATE VIEW v AS SELECT 1")
    assert statuses(db) == {"integrity": True, "schema": False, "metadata": None,
                            "content": None, "vectors": None}
    r = sieve("verify", str(db))
    assert r.returncode == 3 and "skipped" in r.stdout and "unexpected view v" in r.stdout


def test_metadata_out_of_range(examples_db: Path, tmp_path: Path) -> None:
    db = copy(examples_db, tmp_path)
    edit(db, "UPDATE meta SET value = 'inf' WHERE key = 'avg_words'")
    assert statuses(db)["metadata"] is False


def test_not_a_collection_is_a_usage_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    r = sieve("verify", str(junk))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a SQLite file" in r.stderr


def test_vectors_against_the_model() -> None:
    """The shipped collection: 384-dimension vectors, the installed MiniLM says 384."""
    peps = ROOT / "collections" / "peps.db"
    check = next(c for c in verify(peps).checks if c.name == "vectors")
    assert check.ok and "736 vectors of dimension 384" in check.detail


def test_model_dimension_reads_the_config(tmp_path: Path) -> None:
    from sieve_lite.embed import resolve_model_path

    assert model_dimension(resolve_model_path(None)) == 384
    (tmp_path / "modules.json").write_text(json.dumps([
        {"path": "", "type": "sentence_transformers.models.Transformer"},
        {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}]))
    for sub, conf in (("1_Pooling", {"word_embedding_dimension": 768}),
                      ("2_Dense", {"out_features": 256})):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "config.json").write_text(json.dumps(conf))
    assert model_dimension(tmp_path) == 256
    assert model_dimension(tmp_path / "nowhere") is None


# ---------------------------------------------------------------------- manifest and JSON
def test_manifest_from_build_options_shown_by_info(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "a", "title": "A", "text": "x y"}) + "\n")
    r = sieve("build", "d.jsonl", "-o", "m.db", "--no-embed", "--name", "demo",
              "--description", "A [tiny] demo", "--collection-version", "2.1",
              "--license", "CC0-1.0", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = json.loads(sieve("info", str(tmp_path / "m.db"), "--json").stdout)
    assert {k: info[k] for k in ("name", "description", "version", "license", "source")} == {
        "name": "demo", "description": "A [tiny] demo", "version": "2.1",
        "license": "CC0-1.0", "source": "auto: d.jsonl"}
    assert info["documents"] == 1 and info["schema_version"] >= 1
    assert info["content_hash"] and info["embed_model"] is None
    text = sieve("info", str(tmp_path / "m.db")).stdout
    assert "A [tiny] demo" in text and "CC0-1.0" in text


@pytest.mark.parametrize("args", [
    ("info", "{db}"), ("search", "{db}", "generator", "--ranker", "bm25"),
    ("fetch", "{db}", "pep-0238", "Abstract"), ("fetch", "{db}", "pep-0238"),
    ("verify", "{db}"), ("get", "{db}", "-o", "{tmp}/got.db"),
], ids=lambda a: a[0] + ("-outline" if a == ("fetch", "{db}", "pep-0238") else ""))
def test_every_json_output_has_a_format_version(examples_db: Path, tmp_path: Path,
                                                args: tuple[str, ...]) -> None:
    argv = [a.format(db=examples_db, tmp=tmp_path) for a in args]
    r = sieve(*argv, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["format"] == 1
