"""`nfs-tuner --install-desktop-entry`: what it writes, where, how it quotes, how it fails."""

from __future__ import annotations

import io
import stat
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app import desktop_entry
from app.desktop_entry import (
    data_files,
    default_data_home,
    find_launcher,
    install_desktop_entry,
    quote_exec_arg,
    render_desktop_entry,
)
from tests.packaging._tools import (
    APP_ID,
    DESKTOP_DIR,
    REPO,
    assert_desktop_file_valid,
    assert_metainfo_valid,
    headless_env,
    require_tool,
    run,
)

EXPECTED = {
    f"applications/{APP_ID}.desktop",
    f"metainfo/{APP_ID}.metainfo.xml",
    f"icons/hicolor/scalable/apps/{APP_ID}.svg",
    f"icons/hicolor/48x48/apps/{APP_ID}.png",
    f"icons/hicolor/128x128/apps/{APP_ID}.png",
    f"icons/hicolor/256x256/apps/{APP_ID}.png",
}


# --- a reference reader of Exec values, written from the desktop entry spec ---------------

def _unescape_string(value: str) -> str:
    """The general escape rule for string values (applied first by readers)."""
    out, i = [], 0
    table = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value) and value[i + 1] in table:
            out.append(table[value[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _split_exec(value: str) -> list[str]:
    """Split an Exec value into arguments the way a launcher does."""
    text = _unescape_string(value)
    args: list[str] = []
    cur: list[str] = []
    i, quoted, started = 0, False, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\" and i + 1 < len(text) and text[i + 1] in '"`$\\':
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
            else:
                cur.append(c)
        elif c == '"':
            quoted = started = True
        elif c == " ":
            if started:
                args.append("".join(cur))
            cur, started = [], False
        else:
            assert c not in "\"'\\><~|&;$*?#()`\t\n", f"reserved {c!r} outside quotes in {value!r}"
            cur.append(c)
            started = True
        i += 1
    assert not quoted, f"unterminated quote in {value!r}"
    if started:
        args.append("".join(cur))
    return [a.replace("%%", "%") for a in args]


@pytest.mark.parametrize(
    ("path", "written"),
    [
        ("/usr/bin/nfs-tuner", "/usr/bin/nfs-tuner"),
        ("/home/a b/.local/bin/nfs-tuner", '"/home/a b/.local/bin/nfs-tuner"'),
        # The spec's own examples: a literal $ is written \\$, a literal backslash \\\\.
        ("/opt/$x/nfs-tuner", '"/opt/\\\\$x/nfs-tuner"'),
        ("/opt/a\\b/nfs-tuner", '"/opt/a\\\\\\\\b/nfs-tuner"'),
        ("/opt/100%/nfs-tuner", "/opt/100%%/nfs-tuner"),
        ("/opt/it's/nfs-tuner", '"/opt/it\'s/nfs-tuner"'),
    ],
)
def test_exec_quoting_follows_the_spec(path: str, written: str) -> None:
    assert quote_exec_arg(path) == written
    assert _split_exec(written) == [path]


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x2FF, exclude_characters="\x7f"), min_size=1))
def test_exec_quoting_round_trips(path: str) -> None:
    assert _split_exec(quote_exec_arg(path)) == [path]


def test_reference_reader_rejects_unquoted_reserved_characters() -> None:
    with pytest.raises(AssertionError):
        _split_exec("/home/a$b/nfs-tuner")


def test_control_characters_are_refused() -> None:
    with pytest.raises(ValueError, match="control character"):
        quote_exec_arg("/opt/a\x01b")


def test_render_rewrites_only_exec_and_tryexec() -> None:
    template = (DESKTOP_DIR / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    text = render_desktop_entry(template, Path("/home/a b/bin/nfs-tuner"))
    changed = [(a, b) for a, b in zip(template.splitlines(), text.splitlines(), strict=True) if a != b]
    assert changed == [
        ("Exec=nfs-tuner", 'Exec="/home/a b/bin/nfs-tuner"'),
        ("TryExec=nfs-tuner", "TryExec=/home/a b/bin/nfs-tuner"),
    ]
    assert render_desktop_entry(template, None) == template


# --- installing ---------------------------------------------------------------------------

def _installed(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and APP_ID in p.name}


def _install(home: Path, launcher: Path | None = Path("/opt/nfs tuner/bin/nfs-tuner")) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = install_desktop_entry(home, launcher=launcher, out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def test_installs_every_file_where_the_xdg_specs_want_it(tmp_path: Path) -> None:
    home = tmp_path / "share"
    rc, out, err = _install(home)
    assert rc == 0, err
    assert _installed(home) == EXPECTED
    for f in data_files():
        if not f.resource.endswith(".desktop"):
            assert (home / f.target).read_bytes() == (DESKTOP_DIR / f.resource).read_bytes()
        assert f"wrote {home / f.target}" in out
        assert stat.S_IMODE((home / f.target).stat().st_mode) == 0o644
    text = (home / "applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    assert 'Exec="/opt/nfs tuner/bin/nfs-tuner"\n' in text
    assert "TryExec=/opt/nfs tuner/bin/nfs-tuner\n" in text
    assert not list(home.rglob(".*.desktop.*")), "temporary files left behind"


def test_installed_copies_validate(tmp_path: Path) -> None:
    home = tmp_path / "share"
    # An awkward but legal launcher path: the quoting must satisfy the validator too.
    assert _install(home, Path("/home/josé/we ird $dir/100%/nfs-tuner"))[0] == 0
    assert_desktop_file_valid(home / "applications" / f"{APP_ID}.desktop")
    assert_metainfo_valid(home / "metainfo" / f"{APP_ID}.metainfo.xml")


def test_installed_tree_validates_as_a_whole(tmp_path: Path) -> None:
    """validate-tree also checks that the metainfo's launchable .desktop file is installed beside it."""
    tool = require_tool("appstreamcli", "appstream")
    root = tmp_path / "root"
    assert _install(root / "usr" / "share")[0] == 0
    out = run([tool, "validate-tree", "--no-net", str(root)])
    assert out.returncode == 0, out.stdout + out.stderr
    assert APP_ID in out.stdout + out.stderr  # it really looked at our component


def test_reinstall_replaces_the_files(tmp_path: Path) -> None:
    home = tmp_path / "share"
    assert _install(home, Path("/old/nfs-tuner"))[0] == 0
    assert _install(home, Path("/new/nfs-tuner"))[0] == 0
    text = (home / "applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    assert "Exec=/new/nfs-tuner\n" in text and "/old/" not in text


def test_unwritable_target_fails_with_a_clear_message(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    home = blocker / "share"  # a directory below a regular file: fails even for root
    rc, out, err = _install(home)
    assert rc == 1
    assert f"cannot write {home}/" in err and "XDG_DATA_HOME" in err
    assert "Installed" not in out


def test_missing_data_files_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(desktop_entry, "RESOURCE_PACKAGE", "resources.not_there")
    rc, _, err = _install(tmp_path)
    assert rc == 1 and "built without its resources.not_there data files" in err
    monkeypatch.undo()
    lost = desktop_entry.DataFile("lost.png", Path("icons/lost.png"))
    monkeypatch.setattr(desktop_entry, "data_files", lambda: (lost,))
    rc, _, err = _install(tmp_path)
    assert rc == 1 and "lost.png is missing from this installation" in err
    assert not (tmp_path / "icons").exists()


def _fake_tool(bindir: Path, name: str, log: Path, rc: int = 0) -> None:
    script = bindir / name
    script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\nexit {rc}\n')
    script.chmod(0o755)


def test_refreshes_menu_and_icon_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir, log, home = tmp_path / "bin", tmp_path / "calls.log", tmp_path / "share"
    bindir.mkdir()
    _fake_tool(bindir, "update-desktop-database", log)
    _fake_tool(bindir, "gtk-update-icon-cache", log, rc=1)
    monkeypatch.setenv("PATH", str(bindir))
    rc, out, err = _install(home)
    assert rc == 0, "a failing cache tool is only a warning"
    calls = log.read_text().splitlines()
    assert calls == [
        f"update-desktop-database -q {home / 'applications'}",
        f"gtk-update-icon-cache -q -f -t {home / 'icons' / 'hicolor'}",
    ]
    assert "ran update-desktop-database" in out
    assert "warning: gtk-update-icon-cache exited with 1" in err


def test_works_without_the_cache_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    rc, out, err = _install(tmp_path / "share")
    assert rc == 0, err
    assert "ran " not in out and err == ""


def test_default_data_home_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_home() == tmp_path
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # the spec says: ignore it
    assert default_data_home() == Path.home() / ".local" / "share"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_data_home() == Path.home() / ".local" / "share"


def test_launcher_is_argv0_with_its_symlink_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "venv" / "bin" / "nfs-tuner"
    real.parent.mkdir(parents=True)
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    link = tmp_path / "bin" / "nfs-tuner"  # what pipx puts in ~/.local/bin
    link.parent.mkdir()
    link.symlink_to(real)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["bin/nfs-tuner", "--install-desktop-entry"])
    assert find_launcher() == link


def test_launcher_falls_back_to_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / "nfs-tuner"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "argv", ["/somewhere/app/__main__.py"])
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_launcher() == exe
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert find_launcher() is None


def test_without_a_launcher_the_entry_runs_from_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(desktop_entry, "find_launcher", lambda: None)
    rc, _, err = _install(tmp_path, launcher=None)
    assert rc == 0 and "no 'nfs-tuner' launcher found" in err
    assert "Exec=nfs-tuner\n" in (tmp_path / "applications" / f"{APP_ID}.desktop").read_text()


# --- through the real entry points ---------------------------------------------------------

def test_entry_point_installs_into_xdg_data_home(tmp_path: Path) -> None:
    launcher = Path(sys.executable).parent / "nfs-tuner"
    if not launcher.exists():
        pytest.skip(f"{launcher} not installed (make venv installs it)")
    out = run([str(launcher), "--install-desktop-entry"], env=headless_env(XDG_DATA_HOME=str(tmp_path)), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert _installed(tmp_path) == EXPECTED
    text = (tmp_path / "applications" / f"{APP_ID}.desktop").read_text()
    assert f"Exec={launcher}\n" in text
    assert_desktop_file_valid(tmp_path / "applications" / f"{APP_ID}.desktop")


def test_headless_cli_installs_too(tmp_path: Path) -> None:
    out = run(
        [sys.executable, "-m", "app", "--install-desktop-entry"],
        env=headless_env(XDG_DATA_HOME=str(tmp_path)), cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    assert _installed(tmp_path) == EXPECTED
