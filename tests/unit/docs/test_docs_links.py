"""The README and docs/ hold together: every relative link finds its file, and the README keeps the
commands an admin (and CI, which reads `make test` as the README's test command) starts from."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[3]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# [text](target) and ![alt](target), the target up to the first space or closing parenthesis
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:, …


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))  # a code block's brackets are not links
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in LINK.findall(text) if not EXTERNAL.match(t) and not t.startswith("#")]


def test_there_are_pages_to_check() -> None:
    assert (REPO / "README.md").is_file() and len(PAGES) > 1


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_a_file_that_exists(page: Path) -> None:
    missing = []
    for target in relative_links(page):
        path = unquote(target.split("#", 1)[0])
        if not (page.parent / path).exists():
            missing.append(target)
    assert not missing, f"{page.relative_to(REPO)} links to files that do not exist: {missing}"


def test_the_link_reader_sees_links_and_skips_code() -> None:
    page = REPO / "README.md"
    links = relative_links(page)
    assert "docs/security.md" in links and any(t.startswith("docs/screenshots/") for t in links)


@pytest.mark.parametrize("command", ["make test", "make run"])
def test_the_readme_keeps_the_commands_to_start_from(command: str) -> None:
    assert command in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_links_every_page_in_docs() -> None:
    linked = {Path(t.split("#", 1)[0]).name for t in relative_links(REPO / "README.md") if t.startswith("docs/")}
    pages = {p.name for p in PAGES if p.parent.name == "docs"}
    assert pages <= linked, f"docs pages the README does not link: {sorted(pages - linked)}"
