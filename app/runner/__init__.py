"""Running workloads on the clients over SSH: agents, telemetry, caches, ceilings."""

from app.runner.baselines import DiskCeiling, TcpCeiling, disk_ceiling, flush_cost, round_trip, tcp_ceiling
from app.runner.caches import drop_caches
from app.runner.errors import RunError
from app.runner.fio_handle import FioHandle, find_fio
from app.runner.run import ENGINES, ClientWork, Engine, RunResult, TelemetryTarget, WorkloadRunner
from app.runner.telemetry import PathInfo, client_telemetry, export_devices, path_info, server_telemetry

__all__ = [
    "ENGINES",
    "Engine",
    "FioHandle",
    "find_fio",
    "ClientWork",
    "DiskCeiling",
    "PathInfo",
    "RunError",
    "RunResult",
    "TcpCeiling",
    "TelemetryTarget",
    "WorkloadRunner",
    "client_telemetry",
    "disk_ceiling",
    "drop_caches",
    "flush_cost",
    "export_devices",
    "path_info",
    "round_trip",
    "server_telemetry",
    "tcp_ceiling",
]
