"""What scripts rely on: the exit statuses and the --json documents, as docs/scripting.md describes them."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from app import cli
from app.commands.exit_status import SIGNALLED, Exit
from app.commands.json_out import FORMATS, format_of
from app.store import Store
from tests.fabricate_session import Recipe, fabricate_session

REPO = Path(__file__).resolve().parents[4]
SCRIPTING = (REPO / "docs" / "scripting.md").read_text(encoding="utf-8")


def _doc_table(heading: str) -> list[list[str]]:
    section = SCRIPTING.split(heading, 1)[1]
    rows = []
    for line in section.splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows[1:]


def test_the_docs_list_every_exit_status_the_code_has() -> None:
    rows = _doc_table("Every command ends with one of these statuses")
    assert [r[0] for r in rows] == [*(str(int(e)) for e in Exit), f"{SIGNALLED} + N"]


def test_the_docs_list_every_json_document_with_its_format() -> None:
    rows = _doc_table("Each `--json` document is one object")
    assert {r[1].strip("`") for r in rows} == {format_of(d) for d in FORMATS}


def test_every_json_document_goes_through_one_writer() -> None:
    """A json.dump in a command would print a document without its format."""
    offenders = []
    for path in (REPO / "app" / "commands").glob("*.py"):
        if path.name == "json_out.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "json" \
                    and node.attr in ("dump", "dumps"):
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, offenders


@pytest.mark.parametrize("argv", [["sessions", "list", "--json"], ["sessions", "show", "1", "--json"]])
def test_a_json_document_names_its_format_first(argv: list[str], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    with Store(db) as store:
        fabricate_session(store, Recipe(samples_per_trial=4, knobs={"rsize": (65536, 1048576)}, repetitions=2))
    assert cli.main(["--db", str(db), *argv]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert next(iter(doc)) == "format" and doc["format"] == format_of(" ".join(argv[:2]))
    assert re.fullmatch(r"nfs-tuner [a-z ]+/\d+", doc["format"])
