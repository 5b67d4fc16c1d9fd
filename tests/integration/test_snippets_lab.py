"""Rendered snippets fed to the real parsers on the lab hosts (mount, exportfs, the kernel's NFS tables).

Nothing here changes the lab's real state: the fstab line goes into a temp fstab and
mounts on a temp mount point; the exports line is parsed by ``exportfs -a`` inside a
private mount namespace where /etc/exports and /var/lib/nfs are temp copies, so the
server's export table stays as it was (the test checks that too).
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Iterator

import pytest

from app.snippets import SnippetContext
from app.snippets.nfs_files import exports_line, fstab_line
from app.snippets.udev_rules import md_rule, readahead_rule
from tests.conftest import LabHandle

pytestmark = pytest.mark.lab

SERVER_IP = "10.213.7.10"
ORIGINAL_EXPORT = "/srv/nfs 10.213.7.0/24(rw,sync,no_subtree_check,no_root_squash)"
CONFIG = {"nfsvers": "4.2", "rsize": 262144, "wsize": 262144, "nconnect": 2, "export_sync": "sync"}


def lab_ctx(**kw: object) -> SnippetContext:
    base: dict[str, object] = dict(server=SERVER_IP, export_path="/srv/nfs", export_clients="10.213.7.0/24",
                                   export_options=("rw", "no_subtree_check", "no_root_squash"), md_device="md0",
                                   server_host="lab-server", client_hosts=("lab-client1",), nics={})
    base.update(kw)
    return SnippetContext(**base)  # type: ignore[arg-type]


@pytest.fixture
def client_dir(lab: LabHandle) -> Iterator[str]:
    d = lab.run("lab-client1", "mktemp -d /tmp/nfs-tuner-snip.XXXXXX").stdout.strip()
    lab.run("lab-client1", f"mkdir {shlex.quote(d + '/mnt point')}")
    try:
        yield d
    finally:
        point = shlex.quote(d + "/mnt point")
        lab.run("lab-client1", f"mountpoint -q {point} && umount {point}; rm -rf {shlex.quote(d)}", check=False)


def test_fstab_line_passes_mount_fake_and_mounts_with_the_rendered_options(lab: LabHandle, client_dir: str) -> None:
    point = client_dir + "/mnt point"
    line = fstab_line(CONFIG, lab_ctx(mount_point=point))
    assert "\\040" in line
    fstab = shlex.quote(client_dir + "/fstab")
    lab.run("lab-client1", f"printf '%s\\n' {shlex.quote(line)} > {fstab}")
    fake = lab.run("lab-client1", f"mount --fstab {fstab} -fv {shlex.quote(point)} 2>&1", check=False)
    assert fake.returncode == 0, fake.stdout + fake.stderr
    assert "vers=4.2,rsize=262144,wsize=262144,nconnect=2,hard" in fake.stdout
    lab.run("lab-client1", f"findmnt --verify --tab-file {fstab}")

    # a real mount with those options on the temp point: the kernel agrees to them
    lab.run("lab-client1", f"mount --fstab {fstab} {shlex.quote(point)}", timeout=60)
    opts = lab.run("lab-client1", f"findmnt -n -o OPTIONS --mountpoint {shlex.quote(point)}").stdout
    # no nconnect here: it belongs to the client's connection to the server, which the
    # lab's own /mnt/lab mount already set up (the fstab safety note says so)
    for want in ("vers=4.2", "rsize=262144", "wsize=262144", "hard"):
        assert want in opts, opts

    # the readahead udev rule's test (field 4 of /proc/fs/nfsfs/volumes is the bdi) finds this mount
    awk = readahead_rule(4096).split('PROGRAM="', 1)[1].split('", ATTR', 1)[0]
    bdi = lab.run("lab-client1", f"mountpoint -d {shlex.quote(point)}").stdout.strip()
    hit = lab.run("lab-client1", awk.replace("$kernel", shlex.quote(bdi)), check=False)
    miss = lab.run("lab-client1", awk.replace("$kernel", "999:999"), check=False)
    assert (hit.returncode, miss.returncode) == (0, 1), (bdi, hit.stderr)


def test_bad_fstab_options_fail_mount_fake(lab: LabHandle, client_dir: str) -> None:
    """The check above can fail: a mangled line is refused by the same parser."""
    point = client_dir + "/mnt point"
    fstab = shlex.quote(client_dir + "/fstab")
    bad = f"{SERVER_IP}:/srv/nfs {point} nfs vers=4.2 0 0"  # unescaped space splits the fields
    lab.run("lab-client1", f"printf '%s\\n' {shlex.quote(bad)} > {fstab}")
    out = lab.run("lab-client1", f"mount --fstab {fstab} -fv {shlex.quote(point)} 2>&1", check=False)
    assert out.returncode != 0


def _exportfs_in_private_namespace(lab: LabHandle, text: str) -> tuple[int, str]:
    """``exportfs -a`` over ``text`` as /etc/exports, with private /etc/exports and /var/lib/nfs."""
    d = lab.run("lab-server", "mktemp -d /tmp/nfs-tuner-exports.XXXXXX").stdout.strip()
    qd = shlex.quote(d)
    try:
        lab.run("lab-server", f"printf '%s' {shlex.quote(text)} > {qd}/exports && mkdir {qd}/lib && "
                              f"cp -a /var/lib/nfs/. {qd}/lib/")
        inner = (f"mount --bind {qd}/exports /etc/exports && mount --bind {qd}/lib /var/lib/nfs && "
                 "exportfs -a 2>&1 && cat /var/lib/nfs/etab")
        out = lab.run("lab-server", f"unshare -m sh -c {shlex.quote(inner)}", check=False)
        return out.returncode, out.stdout + out.stderr
    finally:
        lab.run("lab-server", f"rm -rf {qd}", check=False)


@pytest.fixture
def spaced_export_dir(lab: LabHandle) -> Iterator[str]:
    path = f"/srv/nfs/nfs-tuner snippet {uuid.uuid4().hex[:8]}"
    lab.run("lab-server", f"mkdir {shlex.quote(path)}")
    try:
        yield path
    finally:
        lab.run("lab-server", f"rmdir {shlex.quote(path)}", check=False)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_exports_line_parses_with_exportfs_and_leaves_the_real_table_alone(
    lab: LabHandle, spaced_export_dir: str, mode: str
) -> None:
    before = lab.run("lab-server", "exportfs -s").stdout
    line = exports_line({**CONFIG, "export_sync": mode}, lab_ctx(export_path=spaced_export_dir))
    assert line.startswith('"/srv/nfs/nfs-tuner snippet ')
    code, out = _exportfs_in_private_namespace(lab, f"{ORIGINAL_EXPORT}\n{line}\n")
    assert code == 0, out
    escaped = spaced_export_dir.replace(" ", "\\040")
    entry = next((ln for ln in out.splitlines() if ln.startswith(escaped + "\t")), None)
    assert entry is not None, out
    opts = entry.split("(", 1)[1].rstrip(")").split(",")
    assert mode in opts and "no_subtree_check" in opts and "no_root_squash" in opts and "rw" in opts
    assert entry.split("\t")[1].startswith("10.213.7.0/24(")
    assert lab.run("lab-server", "exportfs -s").stdout == before


def test_a_broken_exports_line_is_refused_by_exportfs(lab: LabHandle, spaced_export_dir: str) -> None:
    code, out = _exportfs_in_private_namespace(lab, f'"{spaced_export_dir}" 10.213.7.0/24(rw,sync,bogus_option)\n')
    assert code != 0 or "bogus_option" in out
    assert spaced_export_dir.replace(" ", "\\040") not in out


def test_md_udev_rule_names_a_real_writable_attribute(lab: LabHandle) -> None:
    rule = md_rule("md0", 4096)
    attr = rule.split("ATTR{", 1)[1].split("}", 1)[0]
    lab.run("lab-server", f"test -w /sys/block/md0/{attr}")
