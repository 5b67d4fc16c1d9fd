"""The command line read into plain data, and the words the scripts are written with."""

from __future__ import annotations

import argparse

import pytest

from app.commands import arguments
from app.knobs.catalog import SPECS
from app.shell import model
from app.shell.words import knob_names, knob_values, workload_words


@pytest.fixture(scope="module")
def root() -> model.Command:
    return model.command_line()


def _command(root: model.Command, *path: str) -> model.Command:
    found = next((c for c in root.walk() if c.path == path), None)
    assert found is not None, f"no command {path}"
    return found


def _option(cmd: model.Command, flag: str) -> model.Option:
    found = next((o for o in cmd.options if flag in o.flags), None)
    assert found is not None, f"{cmd.name} has no {flag}"
    return found


def test_every_subcommand_of_the_parser_is_read(root: model.Command) -> None:
    names = {" ".join(c.path) for c in root.walk()}
    assert {"sweep", "study ladder", "study dirs", "sessions show", "sessions import", "journal", "completion"} <= names
    assert _command(root, "sessions").subcommand_metavar == "ACTION"


@pytest.mark.parametrize(
    ("path", "flag", "kind"),
    [
        (("sweep",), "--knob", model.Kind.KNOB),
        (("sweep",), "--server", model.Kind.HOST),
        (("sweep",), "--client", model.Kind.HOST),
        (("sweep",), "--workload", model.Kind.WORKLOAD),
        (("sweep",), "--strategy", model.Kind.CHOICE),
        (("sweep",), "--resume", model.Kind.SESSION),
        (("sweep",), "--ssh-config", model.Kind.FILE),
        (("sweep",), "--json", model.Kind.NONE),
        ((), "--db", model.Kind.FILE),
        ((), "--review", model.Kind.FILE),
        (("sessions", "export"), "--csv", model.Kind.DIR),
        (("helper",), "--user", model.Kind.TEXT),
    ],
)
def test_options_know_what_their_value_is(root: model.Command, path: tuple[str, ...], flag: str, kind: model.Kind) -> None:
    assert _option(_command(root, *path), flag).kind is kind


def test_positionals_know_what_they_are(root: model.Command) -> None:
    (show_id,) = _command(root, "sessions", "show").positionals
    assert show_id.kind is model.Kind.SESSION and show_id.metavar == "ID"
    (hosts,) = _command(root, "discover").positionals
    assert hosts.kind is model.Kind.HOST and hosts.repeats
    action, ids = _command(root, "journal").positionals
    assert action.choices == ("list", "check", "revert", "dismiss") and action.optional_value
    assert ids.repeats


def test_repeatable_and_required_options_are_marked(root: model.Command) -> None:
    sweep = _command(root, "sweep")
    assert _option(sweep, "--knob").repeats and not _option(sweep, "--knob").required
    assert not _option(sweep, "--server").required and not _option(sweep, "--server").repeats  # not with --resume
    assert _option(_command(root, "study", "ladder"), "--server").required


def test_suppressed_options_are_left_out_as_help_leaves_them(root: model.Command) -> None:
    flags = {f for o in _command(root, "completion").options for f in o.flags}
    assert "--values" not in flags and flags == {"-h", "--help"}


def test_help_is_filled_in_and_on_one_line() -> None:
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--n", type=int, default=3, help="how many\n  (default %(default)s)")
    (_, n) = model.read(p).options
    assert n.help == "how many (default 3)" and n.kind is model.Kind.TEXT and n.metavar == "N"


def test_a_new_option_of_a_known_type_completes_by_its_type() -> None:
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--peer", type=arguments.host_name)
    p.add_argument("--log", metavar="FILE")
    (_, peer, log) = model.read(p).options
    assert peer.kind is model.Kind.HOST and log.kind is model.Kind.FILE


def test_every_knob_word_is_one_the_parser_takes() -> None:
    assert knob_names() == [f"{name}=" for name in SPECS]
    values = knob_values()
    assert {v.split("=", 1)[0] for v in values} == set(SPECS)
    for word in values:
        arguments.knob_assignment(word)  # raises ArgumentTypeError on a word the parser refuses
    assert "rsize=32768,131072,1048576" in values and "export_sync=async" in values


def test_every_workload_word_is_one_the_parser_takes() -> None:
    words = workload_words()
    assert "seq_read" in words and "small_files" in words
    for word in words:
        assert arguments.workload(word) == word
