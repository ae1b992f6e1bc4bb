"""The documentation of the command line against the real thing.

* ``docs/cli.md`` is exactly what ``python -m sieve_lite.cli.reference --write`` generates from
  the commands (so a changed option or help text fails here until it is regenerated);
* every ``$ sieve-lite ...`` example of ``docs/output.md`` prints what is shown under it;
* every key table of ``docs/output.md`` lists exactly the keys of the real object.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sieve_lite.cli import reference

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
OUTPUT_MD = (ROOT / "docs" / "output.md").read_text(encoding="utf-8")
HINT = "regenerate with: python -m sieve_lite.cli.reference --write"

pytestmark = pytest.mark.skipif(not PEPS.exists(), reason="collections/peps.db is missing")


def test_cli_reference_is_current() -> None:
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == \
        reference.render_cli_md(), HINT


def test_the_reference_covers_every_command() -> None:
    from sieve_lite.cli import cli

    text = reference.render_cli_md()
    for name in cli.commands:
        assert f"### `sieve-lite {name}`" in text
    assert "### `sieve-lite config set`" in text


EXAMPLES = reference.examples(OUTPUT_MD)


def test_output_md_has_examples_of_each_machine_format() -> None:
    commands = " ".join(c for c, _ in EXAMPLES)
    for fmt in ("json", "jsonl", "tsv", "trec"):
        assert f"--format {fmt}" in commands


@pytest.mark.parametrize("command,documented", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_output_md_examples_are_real(command: str, documented: str) -> None:
    assert reference.run_example(command) == documented, HINT


def table_keys(heading: str) -> list[str]:
    """The backticked keys in the first column of the first table after ``heading``."""
    rest = OUTPUT_MD[OUTPUT_MD.index(heading):]
    if not heading.startswith("|"):
        rest = "|" + rest.split("\n\n|", 1)[1]
    keys = []
    for line in rest.split("\n\n", 1)[0].splitlines()[2:]:
        m = re.match(r"\| `([a-z_]+)` \|", line)
        if m:
            keys.append(m.group(1))
    return keys


def _json(command: str) -> Any:
    return json.loads(reference.run_example(command))


def test_search_card_and_hit_tables_match_real_objects() -> None:
    full = _json("sieve-lite search collections/peps.db 'zen OR aphorism*' --ranker bm25 "
                 "--format json --explain --sql")
    lines = reference.run_example("sieve-lite search collections/peps.db 'zen[title] AND "
                                  "date[..1990]' --ranker bm25 -k 2 --format jsonl")
    head, *hits = [json.loads(line) for line in lines.splitlines()]
    assert set(table_keys("### `search` object")) == set(full) | set(head)
    assert set(head) == (set(full) - {"results", "explain", "sql"}) | {"shown"}
    card = full["results"][0]
    assert table_keys("### card") == list(card)
    assert set(table_keys("### `jsonl` and the `hit` line")) == set(hits[0]) - set(card)
    assert all(h["fallback"] is True and h["type"] == "hit" for h in hits)


def test_fetch_and_info_tables_match_real_objects() -> None:
    fetched = _json("sieve-lite fetch collections/peps.db pep-0020 Abstract --format json")
    assert table_keys("### `fetch` object") == list(fetched)
    info = _json("sieve-lite info collections/peps.db --format json")
    assert table_keys("### `info` object") == list(info)


def test_config_table_matches_the_real_object(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sieve_lite.cli import cli

    r = CliRunner().invoke(cli, ["config", "--json"],
                           env={"SIEVE_LITE_CONFIG": str(tmp_path / "c.toml")})
    assert table_keys("## `config`") == list(json.loads(r.stdout))


def test_mcp_tables_match_real_structured_content() -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from sieve_lite.mcp_server import CollectionPool, build_server

    async def calls(server: Any) -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, args) for name, args in
                    [("collections", {}), ("manual", {}),
                     ("search", {"query": "walrus[auther]"})]]

    with CollectionPool([PEPS], connections=1) as pool:
        listing, manual, error = anyio.run(calls, build_server(pool))
    assert table_keys("### `collections` object") == list(listing.structured_content)
    entry = listing.structured_content["collections"][0]
    assert table_keys("| key (of an entry) |") == list(entry)
    assert table_keys("### `manual` object") == list(manual.structured_content)
    assert error.is_error and table_keys("### `error` object") == list(error.structured_content)
    assert set(error.structured_content["error"]) == {"kind", "message", "column", "length",
                                                      "query"}
