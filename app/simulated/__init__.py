"""Simulated hosts for the demo (NFS_TUNER_DEMO=1) and the UI tests: a HostSide, nothing else."""

from app.simulated.hosts import SimulatedHosts

__all__ = ["SimulatedHosts"]
