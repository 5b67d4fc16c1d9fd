"""Ceilings a tuned result is measured against: TCP client→server, and the server's own disk.

TCP: iperf3 when both ends have it (the standard tool an admin trusts), else the load
agent's tcp_sink on the server and tcp_source on the client. Disk: the agent's
sequential write (fsync'd) and read (caches dropped) on the server itself, in a fresh
subdirectory of the export, so NFS and the network are out of the picture.

Beside them, two probes of a second or two each that the diagnosis reads: the round trip
from a client to the server (ping), and the export's flush cost, what one synced small
write costs there (the agent's small-file creates, each fsync'd, on the server itself):
what every commit of a sync export waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from dataclasses import dataclass

from app.events import EventBus
from app.hosts import HostConnection, HostError, HostPool
from app.hosts.remote_args import UnsafeValue, address
from app.runner.agent_handle import AgentHandle
from app.runner.errors import RunError
from app.runner.run import ClientWork, WorkloadRunner
from experiments.agent_protocol import AgentEvent, AgentNotice
from experiments.workloads import KIB, MIB, SeqRead, SeqWrite, SmallFiles, TcpSink, TcpSource
from app.vocabulary.hosts import host_detail

IPERF_PORT = 5201
PINGS = 5  # a second's worth at ping's shortest interval for a login (0.2 s)
FLUSH_FILES = 24  # synced creates the flush probe times: seconds even on a slow disk (60 ms each: 1.5 s)
FLUSH_CAP_S = 30.0
_RTT = re.compile(r"= *([0-9.]+)/[0-9.]+/[0-9.]+")  # iputils' "rtt min/avg/max/mdev = …", busybox's "round-trip …"


@dataclass(frozen=True, slots=True)
class TcpCeiling:
    client: str
    bps: float  # payload bytes per second, client → server
    tool: str  # "iperf3" or "agent"


@dataclass(frozen=True, slots=True)
class DiskCeiling:
    host: str
    write_bps: float
    read_bps: float
    cache_mode: str  # how honest the read was ("dropped" when caches were dropped)


async def _has(conn: HostConnection, tool: str) -> bool:
    result = await conn.run(["sh", "-c", f"command -v {tool}"])
    return result.ok and bool(result.stdout.strip())


async def _iperf3(pool: HostPool, server: str, client: str, address: str, duration_s: float) -> float:
    # `timeout`: it leaves also when its one test never comes (a client that could not connect)
    srv = await pool[server].start(["timeout", str(round(duration_s) + 40), "iperf3", "-s", "-1", "-p", str(IPERF_PORT)])
    async with srv:
        await asyncio.sleep(0.5)  # let it listen; -1 makes it leave after one test
        result = await pool[client].run(
            ["iperf3", "-c", address, "-p", str(IPERF_PORT), "-t", str(max(1, round(duration_s))), "-J"],
            timeout=duration_s + 30,
        )
        srv.terminate()
    try:
        return float(json.loads(result.stdout)["end"]["sum_received"]["bits_per_second"]) / 8.0
    except (ValueError, KeyError, TypeError):
        raise RunError(client, f"iperf3 to {address} failed: {(result.stderr or result.stdout).strip()[:300]}") from None


async def _agent_tcp(pool: HostPool, server: str, client: str, address: str, duration_s: float, python: str) -> float:
    listening = asyncio.get_running_loop().create_future()

    def on_sink(agent: AgentHandle, event: AgentEvent) -> None:
        if isinstance(event, AgentNotice) and event.type == "listening" and not listening.done():
            listening.set_result(int(event.data["port"]))

    sink = AgentHandle(pool[server], TcpSink().to_agent_config(), on_sink, python=python)
    await sink.start()
    try:
        waiter = asyncio.ensure_future(sink.ended.wait())
        done, _ = await asyncio.wait({listening, waiter}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not listening.done():
            raise sink.error or RunError(server, "the TCP sink did not start listening")
        source = AgentHandle(
            pool[client], TcpSource(host=address, port=listening.result(), duration_s=duration_s).to_agent_config(),
            lambda a, e: None, python=python,
        )
        await source.start()
        await source.wait(duration_s + 30)
        if source.error is not None:
            raise source.error
        if source.summary is None or source.summary.throughput_bps <= 0:
            raise RunError(client, "the TCP source reported no throughput")
        return source.summary.throughput_bps
    finally:
        sink.stop()
        await sink.wait()


async def tcp_ceiling(
    pool: HostPool, server: str, client: str, server_address: str, duration_s: float = 5.0, python: str = "python3"
) -> TcpCeiling:
    """TCP throughput from ``client`` to ``server_address``; iperf3 first, the agent as fallback."""
    try:  # a client's mount may have named it: it becomes iperf3's -c word
        address(server_address, "server address")
    except UnsafeValue as exc:
        raise RunError(client, str(exc)) from None
    try:
        if await _has(pool[client], "iperf3") and await _has(pool[server], "iperf3"):
            with contextlib.suppress(RunError):
                return TcpCeiling(client, await _iperf3(pool, server, client, server_address, duration_s), "iperf3")
    except HostError as exc:
        raise RunError(client, f"measuring TCP throughput failed: {host_detail(client, str(exc))}") from exc
    return TcpCeiling(client, await _agent_tcp(pool, server, client, server_address, duration_s, python), "agent")


async def disk_ceiling(
    pool: HostPool, server: str, export_path: str, file_size: int = 256 * MIB, python: str = "python3"
) -> DiskCeiling:
    """The server's local sequential write and read on the export's file system."""
    runner = WorkloadRunner(pool, EventBus(), python={server: python})
    where = [ClientWork(server, export_path)]
    w = await runner.run(0, SeqWrite(file_size=file_size, fsync=True), where)
    if w.error is not None:
        raise w.error
    r = await runner.run(0, SeqRead(file_size=file_size), where, drop_caches_on=[server])
    if r.error is not None:
        raise r.error
    ws, rs = w.summaries[server], r.summaries[server]
    return DiskCeiling(server, ws.throughput_bps, rs.throughput_bps, rs.cache_mode)


def ping_least_ms(output: str) -> float | None:
    """The shortest round trip of ping's summary line, in ms; None when it has none. The path's own: an average
    takes in a late first answer (an address lookup, a host waking): on the lab's gigabit LAN, 0.19-0.26 ms at
    least, 9.9 ms for a run's first, 2.2 ms on average, which the diagnosis took for a long round trip)."""
    match = _RTT.search(output)
    return float(match.group(1)) if match else None


async def round_trip(pool: HostPool, client: str, server_address: str) -> float | None:
    """The round trip from ``client`` to the server in ms (ping), or None when ping cannot say (no ping,
    no answer, no permission): a missing figure the diagnosis names, never a failed baseline."""
    try:
        target = address(server_address, "server address")
    except UnsafeValue as exc:
        raise RunError(client, str(exc)) from None
    try:
        result = await pool[client].run(["ping", "-n", "-q", "-c", str(PINGS), "-i", "0.2", "-W", "2", target],
                                        timeout=15)  # fmt: skip
    except HostError:
        return None
    return ping_least_ms(result.stdout) if result.ok else None


async def flush_cost(pool: HostPool, server: str, export_path: str, python: str = "python3") -> float | None:
    """Seconds one small write synced to disk costs on the export's file system (on the server itself);
    None when the probe could not time it."""
    runner = WorkloadRunner(pool, EventBus(), python={server: python})
    result = await runner.run(0, SmallFiles(count=FLUSH_FILES, file_size=4 * KIB, fsync=True),
                              [ClientWork(server, export_path)], max_s=FLUSH_CAP_S)  # fmt: skip
    if result.error is not None:
        raise result.error
    summary = result.summaries.get(server)
    create = summary.phases.get("create", {}) if summary is not None else {}
    ops, seconds = create.get("ops", 0), create.get("seconds", 0)
    return seconds / ops if ops > 0 and seconds > 0 else None
