"""The shipped desktop entry, AppStream metainfo and icons: valid, and consistent with the app."""

from __future__ import annotations

import configparser
import struct
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app import __version__
from app.desktop_entry import APP_ID as CODE_APP_ID
from app.desktop_entry import ICON_SIZES, data_files
from tests.packaging._tools import (
    APP_ID,
    DESKTOP_DIR,
    REPO,
    assert_desktop_file_valid,
    assert_metainfo_valid,
)

DESKTOP = DESKTOP_DIR / f"{APP_ID}.desktop"
METAINFO = DESKTOP_DIR / f"{APP_ID}.metainfo.xml"
SVG = DESKTOP_DIR / f"{APP_ID}.svg"


def _desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def _png_header(path: Path) -> tuple[int, int, int, int]:
    """Width, height, bit depth and colour type from the PNG's IHDR chunk."""
    data = path.read_bytes()[:26]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    return width, height, depth, colour


def test_desktop_file_validates() -> None:
    assert_desktop_file_valid(DESKTOP)


def test_metainfo_validates() -> None:
    assert_metainfo_valid(METAINFO)


def test_ids_agree_across_code_ui_and_data() -> None:
    assert CODE_APP_ID == APP_ID
    # Qt maps windows to the desktop entry by this name (Wayland app_id, taskbar icon).
    assert f'setDesktopFileName("{APP_ID}")' in (REPO / "ui" / "theme.py").read_text(encoding="utf-8")
    entry = _desktop_entry(DESKTOP)
    assert entry["Icon"] == APP_ID
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable[@type='desktop-id']") == DESKTOP.name


def test_desktop_entry_content() -> None:
    entry = _desktop_entry(DESKTOP)
    assert entry["Type"] == "Application"
    assert entry["Exec"] == entry["TryExec"] == "nfs-tuner"
    assert entry["Terminal"] == "false"
    categories = entry["Categories"].rstrip(";").split(";")
    assert {"System", "Network"} <= set(categories)
    keywords = entry["Keywords"].rstrip(";").split(";")
    assert "NFS" in keywords and len(keywords) >= 5


def test_metainfo_matches_the_project() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    root = ET.parse(METAINFO).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("project_license") == project["license"] == "GPL-3.0-or-later"
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("url[@type='homepage']", "").startswith("https://")
    assert root.find("content_rating") is not None
    # The binary AppStream advertises is the one pyproject installs.
    assert root.findtext("provides/binary") in project["gui-scripts"]
    shot = root.findtext("screenshots/screenshot[@type='default']/image", "")
    assert shot.startswith("https://") and "/docs/screenshots/" in shot


def test_newest_release_is_this_version() -> None:
    # Bumping app.__version__ without release notes in the metainfo fails here.
    releases = ET.parse(METAINFO).getroot().findall("releases/release")
    assert releases, "metainfo has no <release>"
    assert releases[0].get("version") == __version__
    assert releases[0].get("date")


@pytest.mark.parametrize("size", ICON_SIZES)
def test_png_icons_have_their_size(size: int) -> None:
    width, height, depth, colour = _png_header(DESKTOP_DIR / f"{APP_ID}-{size}.png")
    assert (width, height) == (size, size)
    assert (depth, colour) == (8, 6), "icons are 8-bit RGBA (transparent corners)"


def test_png_check_rejects_a_wrong_size(tmp_path: Path) -> None:
    png = DESKTOP_DIR / f"{APP_ID}-48.png"
    assert _png_header(png)[:2] != (128, 128)
    (tmp_path / "x.png").write_bytes(b"GIF89a" + bytes(30))
    with pytest.raises(AssertionError):
        _png_header(tmp_path / "x.png")


def test_svg_icon_is_square_and_scalable() -> None:
    root = ET.parse(SVG).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    x, y, w, h = (float(v) for v in root.get("viewBox", "").split())
    assert (x, y) == (0, 0) and w == h > 0
    # Icons must not depend on fonts or external files that a theme cannot resolve.
    text = SVG.read_text(encoding="utf-8")
    assert "<text" not in text and "xlink:href=\"http" not in text and "<image" not in text


def test_every_shipped_file_is_installed_and_every_installed_file_ships() -> None:
    shipped = {p.name for p in DESKTOP_DIR.iterdir() if p.is_file() and p.suffix != ".py"}
    installed = {f.resource for f in data_files()}
    assert installed == shipped


def test_packaging_links_point_at_the_shipped_files() -> None:
    for name in (DESKTOP.name, METAINFO.name, SVG.name):
        link = REPO / "packaging" / name
        assert link.is_symlink(), f"packaging/{name} should link to resources/desktop/{name}"
        assert link.resolve() == (DESKTOP_DIR / name).resolve()
