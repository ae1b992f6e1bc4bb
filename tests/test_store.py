"""Opening collection files: what is refused, and how."""

import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

import sieve_lite
from sieve_lite.errors import DamagedCollection


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy.db"
    shutil.copyfile(src, dst)
    return dst


def test_a_file_missing_a_table_of_its_version_is_refused(examples_db: Path,
                                                          tmp_path: Path) -> None:
    db = _copy(Path(examples_db), tmp_path)
    conn = apsw.Connection(str(db))
    conn.execute("DROP TABLE fts_doc")
    conn.close()
    with pytest.raises(DamagedCollection, match="missing table fts_doc,.*rebuild"):
        sieve_lite.open(db)
    before = db.read_bytes()
    cli = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
    proc = subprocess.run([*cli, "search", str(db), "x"], capture_output=True, text=True)
    assert proc.returncode == 3  # a damaged collection (issue #12's exit codes)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert db.read_bytes() == before


def test_document_reads_every_field_back(examples_db: Path) -> None:
    with sieve_lite.open(examples_db) as coll:
        doc = coll.document("ex-nodate")
        assert doc is not None
        assert doc["author"] == ["Ada Lovelace", "Charles Babbage"]
        assert doc["sections"] == [{"heading": "(intro)", "text":
                                    "A flat document about rock and roll music without a date."}]
        assert coll.document("no-such-id") is None
