"""Ceilings a tuned result is measured against: TCP client→server, and the server's own disk.

TCP: iperf3 when both ends have it (the standard tool an admin trusts), else the load
agent's tcp_sink on the server and tcp_source on the client. Disk: the agent's
sequential write (fsync'd) and read (caches dropped) on the server itself, in a fresh
subdirectory of the export, so NFS and the network are out of the picture.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass

from app.events import EventBus
from app.hosts import HostConnection, HostError, HostPool
from app.hosts.remote_args import UnsafeValue, address
from app.runner.agent_handle import AgentHandle
from app.runner.errors import RunError
from app.runner.run import ClientWork, WorkloadRunner
from experiments.agent_protocol import AgentEvent, AgentNotice
from experiments.workloads import MIB, SeqRead, SeqWrite, TcpSink, TcpSource
from app.vocabulary.hosts import host_detail

IPERF_PORT = 5201


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
    srv = await pool[server].start(["iperf3", "-s", "-1", "-p", str(IPERF_PORT)])
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
