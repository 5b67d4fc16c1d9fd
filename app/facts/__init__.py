"""Facts about hosts: typed dataclasses and the pure parsers that build them."""

from app.facts.build import build_host_facts
from app.facts.model import (
    BlockDevice,
    ClientCandidate,
    ExportEntry,
    ExportFilesystem,
    HostFacts,
    MdArray,
    MountEntry,
    Nfs4Client,
    NfsdState,
    NfsMount,
    Nic,
    OsInfo,
    Parsed,
    PoolStats,
    Python3,
    TcpPeer,
)
from app.facts.script import GATHER_SCRIPT, split_sections

__all__ = [
    "GATHER_SCRIPT",
    "BlockDevice",
    "ClientCandidate",
    "ExportEntry",
    "ExportFilesystem",
    "HostFacts",
    "MdArray",
    "MountEntry",
    "Nfs4Client",
    "NfsMount",
    "NfsdState",
    "Nic",
    "OsInfo",
    "Parsed",
    "PoolStats",
    "Python3",
    "TcpPeer",
    "build_host_facts",
    "split_sections",
]
