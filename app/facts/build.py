"""Assemble HostFacts from the gather script's output: pure, never raises."""

from __future__ import annotations

from app.facts.model import ExportFilesystem, HostFacts, MdArray, MountEntry
from app.facts.parse_nfs import (
    client_candidates,
    nfs_mounts,
    parse_etc_exports,
    parse_exportfs,
    parse_mountstats,
    parse_nfsd,
    parse_nfsd_clients,
    parse_tcp,
)
from app.facts.parse_storage import (
    merge_md,
    mount_for_path,
    parse_bdi,
    parse_block,
    parse_md_sysfs,
    parse_mdstat,
    parse_mountinfo,
)
from app.facts.parse_system import (
    parse_cpu_count,
    parse_int_section,
    parse_sysctls,
    parse_meminfo,
    parse_nfs_utils,
    parse_nics,
    parse_os_release,
    parse_python3,
    parse_tools,
    parse_uname,
)
from app.facts.script import split_sections

CUT_SHORT = "the discovery script's output was cut short"


def export_filesystems(
    exports: list[str], mounts: tuple[MountEntry, ...], md: tuple[MdArray, ...]
) -> tuple[ExportFilesystem, ...]:
    md_names = {a.name for a in md}
    out: list[ExportFilesystem] = []
    for path in dict.fromkeys(exports):
        entry = mount_for_path(mounts, path)
        if entry is None:
            continue
        dev_name = entry.source.rsplit("/", 1)[-1]
        out.append(
            ExportFilesystem(
                export_path=path,
                mount_point=entry.mount_point,
                fstype=entry.fstype,
                source=entry.source,
                options=entry.options + ("," + entry.super_options if entry.super_options else ""),
                md_array=dev_name if dev_name in md_names else "",
            )
        )
    return tuple(out)


def build_host_facts(host: str, output: str) -> HostFacts:
    """Facts of one host from GATHER_SCRIPT's output (any text is accepted)."""
    sec = split_sections(output)
    problems: list[str] = []
    if "end" not in sec:
        problems.append(CUT_SHORT)

    g = sec.get
    os_info = parse_os_release(g("os_release", ""))
    uname = parse_uname(g("uname", ""))
    cpus = parse_cpu_count(g("cpu", ""))
    mem = parse_meminfo(g("meminfo", ""))
    page = parse_int_section(g("page_size", ""), "the page size")
    sysctls = parse_sysctls(g("sysctl", ""))
    nics = parse_nics(g("ip_addr", ""), g("net_sys", ""))
    block = parse_block(g("block", ""))
    md = parse_mdstat(g("mdstat", ""))
    md_sys = parse_md_sysfs(g("md_sysfs", ""))
    mounts = parse_mountinfo(g("mountinfo", ""))
    stats = parse_mountstats(g("mountstats", ""))
    bdi = parse_bdi(g("bdi", ""))
    exports = parse_exportfs(g("exportfs", ""))
    if not exports.value and g("etc_exports", "").strip():
        configured = parse_etc_exports(g("etc_exports", ""))
        if configured.value:
            problems.append("exportfs -v showed nothing; exports taken from /etc/exports (may not be active)")
            exports = configured
    nfsd = parse_nfsd(sec)
    v4 = parse_nfsd_clients(g("nfsd_clients", ""))
    peers = parse_tcp(g("tcp", ""), local_port=2049)
    nfs = nfs_mounts(mounts.value, stats.value, bdi.value)
    py = parse_python3(g("python3", ""))
    utils = parse_nfs_utils(g("nfs_utils", ""))
    tools = parse_tools(g("tools", ""))
    md_arrays = merge_md(md.value, md_sys.value)

    for parsed in (os_info, uname, cpus, mem, page, nics, block, md, mounts, exports, nfsd, v4, peers, nfs, py, utils):
        problems.extend(parsed.problems)
    hostname, kernel, arch = uname.value
    is_server = bool(nfsd.value.running or exports.value)
    candidates = client_candidates(peers.value, v4.value) if is_server else ()
    return HostFacts(
        host=host,
        hostname=hostname,
        os=os_info.value,
        kernel=kernel,
        arch=arch,
        nfs_utils_version=utils.value,
        cpu_count=cpus.value,
        mem_total_kb=mem.value,
        page_size=page.value,
        sysctls=sysctls.value,
        nics=nics.value,
        block_devices=block.value,
        md_arrays=md_arrays,
        exports=exports.value,
        export_filesystems=export_filesystems([e.path for e in exports.value], mounts.value, md_arrays),
        nfsd=nfsd.value,
        nfs_peers=peers.value if is_server else (),
        nfs4_clients=v4.value,
        client_candidates=candidates,
        nfs_mounts=nfs.value,
        python3=py.value,
        tools=tools.value,
        problems=tuple(dict.fromkeys(problems)),
    )
