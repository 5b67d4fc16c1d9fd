"""Every option of every command says what it is, in full, once; refusals name the flag that helps."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from collections.abc import Iterator

import pytest

from app import cli
from app.sweep.spec import LOOPING, SWEEPABLE


def _parsers(parser: argparse.ArgumentParser, name: str = "nfs-tuner") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, p in action.choices.items():
                yield from _parsers(p, f"{name} {sub}")


def _help(parser: argparse.ArgumentParser, flag: str) -> str:
    (action,) = [a for a in parser._actions if flag in a.option_strings]
    return str(action.help or "")


def test_every_option_of_every_command_has_help_that_repeats_no_label() -> None:
    missing, doubled = [], []
    for name, parser in _parsers(cli.build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction | argparse._VersionAction):
                continue
            text = action.help or ""
            if not text.strip():
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
            if m := re.search(r"\b([\w-]+): \1:", text):
                doubled.append(f"{name} {action.option_strings}: {m.group(0)!r}")
    assert not missing, f"options without help: {missing}"
    assert not doubled, doubled


def test_workload_help_lists_every_workload_it_takes() -> None:
    parsers = dict(_parsers(cli.build_parser()))
    sweep = " ".join(_help(parsers["nfs-tuner sweep"], "--workload").split())
    assert "…" not in sweep and all(w in sweep for w in SWEEPABLE), sweep
    ladder = " ".join(_help(parsers["nfs-tuner study ladder"], "--workload").split())
    assert all(w in ladder for w in LOOPING), ladder


def test_strategy_help_names_each_strategy_once() -> None:
    text = _help(dict(_parsers(cli.build_parser()))["nfs-tuner sweep"], "--strategy")
    assert text.count("adaptive:") == 1 and text.count("grid:") == 1 and text.count("ofat:") == 1, text


@pytest.mark.parametrize(("argv", "flag"), [
    (["sweep", "--knob", "export_sync=sync,async"], "--async-opt-in"),
    (["sweep", "--knob", "max_block_size=64K,1M"], "--restart-opt-in"),
    (["study", "ladder", "--knob", "export_sync=async"], "--async-opt-in"),
    (["study", "dirs", "--knob", "max_block_size=64K"], "--restart-opt-in"),
])
def test_a_knob_that_needs_an_opt_in_is_refused_naming_the_flag(
        argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([*argv, "--server", "nfs1", "--client", "c1"]) == 2
    err = capsys.readouterr().err
    assert f"sweep it only with {flag}" in err, err
    assert cli.main([*argv, "--server", "nfs1", "--client", "c1", flag, "--help"]) == 0  # the flag it names exists


def test_a_sweep_needs_its_hosts_but_with_resume(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sweep", "--knob", "rsize=1M"]) == 2
    err = capsys.readouterr().err
    assert "--server HOST and --client HOST" in err and "--resume ID" in err and "Traceback" not in err


def test_resume_refuses_a_plan_flag_beside_it_rather_than_ignore_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--db", str(tmp_path / "s.db"), "sweep", "--resume", "1"]
    assert cli.main([*argv, "--knob", "rsize=1M", "--client", "c2"]) == 2
    err = capsys.readouterr().err
    assert "leave out --client, --knob" in err and "--ssh-config, --deadman-timeout and --json" in err
    assert not (tmp_path / "s.db").exists()
    assert cli.main([*argv, "--deadman-timeout", "30", "--json"]) == 1  # accepted; no such database
    assert "no session database" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()
