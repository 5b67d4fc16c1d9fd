"""Snippets that execute (issue 12, class 3): every value rendered into a snippet is data.

Hostile values go into every field a snippet is rendered from (paths, hosts, client
specs, device and NIC names, inventory names, the stored workload). For each one,
every format either refuses it (a ``refused:`` snippet that says why, the others
kept) or carries it without new syntax: the same lines as with a plain value, and
through the real consumers (ansible-playbook, fio --parse-only) nothing runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.snippets import Snippet, SnippetContext, render_all
from tests.unit.app.snippets.test_snippets import FULL, ctx

HOSTILE = [
    "{{ lookup('pipe', 'touch /tmp/nfs-tuner-pwned') }}",
    "{% for x in [1] %}x{% endfor %}",
    "{# comment #}",
    "/srv/a\nexec_prerun=touch /tmp/nfs-tuner-pwned",
    "/srv/a\rb",
    "/srv/a\0b",
    "/srv/a\u2028b",
    "/srv/a\u2029b",
    "/srv/a\x85b",
    "/srv/a\tb",
    "/srv/$(touch /tmp/nfs-tuner-pwned)",
    "/srv/${HOME}",
    "/srv/`id`",
    "/srv/a;b",
    "/srv/a#b",
    '/srv/"quoted"',
    "/srv/it's",
    "/srv/back\\slash",
    "-oremount,bind",
    "/srv/&anchor *alias",
    "!!python/object/apply:os.system ['id']",
    "/srv/\x1b]0;title\x07",
    "/srv/" + "x" * 5000,
    "/srv/a b",
]
FIELDS = ["export_path", "mount_point", "server", "export_clients", "md_device", "server_host"]


def _lines(snippets: list[Snippet]) -> dict[str, int]:
    return {s.key: s.text.count("\n") for s in snippets if not s.key.startswith("refused:")}


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("field", FIELDS)
def test_a_hostile_value_is_refused_or_carried_without_new_lines(field: str, value: str) -> None:
    plain = _lines(render_all(FULL, ctx()))
    snippets = render_all(FULL, ctx(**{field: value}))
    for s in snippets:
        if s.key.startswith("refused:"):
            assert s.text == "" and "will not write" in s.safety
    assert len(snippets) >= 3, "other formats are kept when one refuses"
    for key, n in _lines(snippets).items():
        if key in plain:
            assert n == plain[key], (key, snippets)
    # The playbook never carries a module argument Ansible would template.
    book = next((s.text for s in snippets if s.key == "ansible"), "")
    for line in book.splitlines():
        if "{{" in line or "{%" in line:
            assert "!unsafe" in line, line


@pytest.mark.parametrize("name", ["lab-client1\nlab-x", "a:b", "all", "{{ x }}", "-x", "a b", ""])
def test_hostile_inventory_and_nic_names_are_refused(name: str) -> None:
    snippets = render_all({"mtu": 9000, "read_ahead_kb": 4096},
                          ctx(client_hosts=(name,), nics={"lab-server": name, "lab-client1": name}))  # fmt: skip
    text = "".join(s.text for s in snippets)
    if name not in ("all",):
        assert any(s.key.startswith("refused:") for s in snippets)
    assert "\nlab-x" not in text


HOSTILE_WORKLOADS = [
    {"kind": "seq_read", "block_size": "4096\nexec_prerun=touch {marker}"},
    {"kind": "seq_read\nexec_prerun=touch {marker}"},
    {"kind": "seq_write", "file_size": "1m\nexec_postrun=touch {marker}"},
    {"kind": "seq_read", "jobs": "1\n[evil]\nexec_prerun=touch {marker}"},
    {"kind": "seq_read", "duration_s": "$(touch {marker})"},
    {"kind": "seq_read", "block_size": float("inf")},
    {"kind": "seq_read", "block_size": [1, 2]},
    {"kind": "small_files", "files": "10;exec_prerun=touch {marker}"},
]

_FIO = shutil.which("fio")


@pytest.mark.skipif(_FIO is None, reason="fio is not installed (tests/system-packages.txt)")
@pytest.mark.parametrize("workload", HOSTILE_WORKLOADS, ids=range(len(HOSTILE_WORKLOADS)))
def test_a_hostile_stored_workload_never_adds_fio_options(workload: dict[str, object], tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    spec = json.loads(json.dumps(workload).replace("{marker}", str(marker)).replace("Infinity", "1e999"))
    snippets = render_all(FULL, ctx(mount_point=str(tmp_path), workload=spec))
    fio = [s for s in snippets if s.key == "fio"]
    for s in fio:
        assert "exec_" not in s.text and "[evil]" not in s.text
        job = tmp_path / "job.fio"
        job.write_text(s.text)
        subprocess.run([str(_FIO), "--parse-only", str(job)], capture_output=True, timeout=60, cwd=tmp_path)
    assert not marker.exists()


_ANSIBLE = shutil.which("ansible-playbook")


@pytest.mark.slow  # a real ansible-playbook run: seconds
@pytest.mark.skipif(_ANSIBLE is None or os.geteuid() != 0, reason="needs ansible-playbook and root (a local play)")
def test_jinja_in_an_export_path_does_not_run_in_ansible_playbook(tmp_path: Path) -> None:
    """The reported hole: ansible-playbook templated an export path and ran its lookup('pipe')."""
    marker = tmp_path / "pwned"
    c = ctx(export_path=f"/srv/{{{{ lookup('pipe', 'touch {marker}') }}}}", server_host="localhost",
            client_hosts=("localhost",), md_device=None)  # fmt: skip
    book = tmp_path / "book.yml"
    book.write_text(next(s.text for s in render_all(FULL, c) if s.key == "ansible"))
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_HOME": str(tmp_path / "home")}
    # --check: nothing is changed on this machine; templating happens all the same.
    subprocess.run([str(_ANSIBLE), "--check", "-c", "local", "-i", "localhost,", "-e", "ansible_become=false", str(book)],
                   capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)  # fmt: skip
    assert not marker.exists()


def test_the_context_type_is_what_the_suite_fills() -> None:
    assert set(FIELDS) <= set(SnippetContext.__dataclass_fields__)
