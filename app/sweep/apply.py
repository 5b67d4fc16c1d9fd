"""Putting one configuration on the hosts, through the change journal.

Server knobs and the MTU stay as they are while consecutive trials agree on them (a
change is reverted, then the new value applied, so the journal never stacks values).
Clients get a fresh test mount whenever the trial changes something that shapes the mount or its
connection (mount options only take on a new mount; the MTU, rpc_slots and an nfsd restart act on
a new connection): every knob but MOUNT_NEUTRAL's. Otherwise the mount stays, with readahead
changed on its bdi: a remount is about 3 s of a one-CPU client's trial (umount, mkdir, mount, the
checks after), and the caches a fresh mount would start without are dropped before every trial.
A mount the trial does not keep comes down while the server changes (unless nfsd may restart in
the plan: an unmount waits on a restarting server), and the new one is made once the server is ready.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.facts.parse_storage import parse_mountinfo
from app.hosts import HostPool
from app.hosts.side_by_side import side_by_side
from app.runner.kept_data import remove_kept
from app.knobs.catalog import SPECS
from app.knobs.client_sysctls import client_sysctl
from app.knobs.changes import ChangeJournal
from app.knobs.model import Applied, KnobError, Value
from app.knobs.network import PathEnd, link_paths, resolve_address, set_link_mtu
from app.knobs.nfsd_restart import NfsdBlockSizeTarget, NfsdPoolModeTarget, grace_wait
from app.knobs.nfsd_netlink import NfsdMinThreadsTarget, threads_target
from app.knobs.targets import ExportOptionTarget, MountOptions, ScratchMount, read_text, readahead, stripe_cache
from app.knobs.transport import check_fresh, check_mtu, check_nconnect, mount_transport, nfs_connections, other_mounts_of
from app.sweep.held import HeldChanges, Key
from app.sweep.host_side import Applying
from app.sweep.spec import CLIENT_HOST_KNOBS, EXPORT_KNOBS, MOUNT_KNOBS, RESTARTS, SweepSpec

# The server's held knobs, group by group in the order applied (app.sweep.held): a max_block_size
# restart brings back the threads it read, and each export option the option list it read.
# nfsd_min_threads is set with the thread count it reads, so it follows nfsd_threads in the group.
# What a test mount is not made under: changed on a mounted client's bdi (readahead) or on the server without a
# restart (the thread counts, the stripe cache). Any other knob's change (and a knob new to a trial) remounts.
MOUNT_NEUTRAL = frozenset({"read_ahead_kb", "nfsd_threads", "nfsd_min_threads", "stripe_cache_size"})
SERVER_GROUPS: tuple[tuple[str, ...], ...] = (("mtu",), ("nfsd_threads", "nfsd_min_threads", *RESTARTS), ("stripe_cache_size",),
                                              EXPORT_KNOBS)


class ConfigApplier:
    def __init__(
        self,
        journal: ChangeJournal,
        pool: HostPool,
        spec: SweepSpec,
        mount_point: str,
        *,
        md: str | None = None,
        export_client: str | None = None,
    ) -> None:
        self.journal = journal
        self.pool = pool
        self.spec = spec
        self.mount_point = mount_point
        self.md = md
        self.export_client = export_client
        self.held: HeldChanges[Applied] = HeldChanges(journal.revert, lambda a: a.host)  # (host, knob) -> the change set there
        self._clients: dict[str, list[Applied]] = {}
        self._mounted: dict[str, _Mounted] = {}  # client -> what its test mount was made under, while it stands
        self._addresses: dict[str, str] = {}  # client -> the server's address as it sees it
        self._paths: list[tuple[PathEnd, PathEnd]] | None = None  # the MTU's ends, looked up at its first change

    async def _server_target(self, host: str, knob: str):  # type: ignore[no-untyped-def]
        if knob == "nfsd_threads":  # through nfsdctl where the server answers it, else /proc
            return await threads_target(self.pool[host])
        if knob == "nfsd_min_threads":
            return NfsdMinThreadsTarget()
        if knob == "max_block_size":
            return NfsdBlockSizeTarget()
        if knob == "pool_mode":
            return NfsdPoolModeTarget()
        if knob == "stripe_cache_size":
            if not self.md:
                raise KnobError(f"stripe_cache_size needs an md RAID array under {self.spec.export}; there is none")
            return stripe_cache(self.md)
        if knob in EXPORT_KNOBS:
            if not self.export_client:
                raise KnobError(f"{self.spec.server} does not export {self.spec.export}")
            return ExportOptionTarget(self.spec.export, self.export_client, SPECS[knob])
        raise KnobError(f"{knob} is not a server knob")

    async def _revert(self, items: list[Applied]) -> None:
        for item in reversed(items):
            await self.journal.revert(item)
        items.clear()

    async def _make(self, key: Key, value: Value) -> list[Applied]:
        host, knob = key
        if knob == "mtu":
            if self._paths is None:
                self._paths = await link_paths(self.pool, self.spec.server, self.spec.address, list(self.spec.clients))
            return await set_link_mtu(self.journal, self.pool, self.spec.server, self.spec.address,
                                      list(self.spec.clients), int(value), self._paths)  # fmt: skip
        target = client_sysctl(knob) if knob in CLIENT_HOST_KNOBS else await self._server_target(host, knob)
        return [await self.journal.apply(host, target, value)]

    async def _hold(self, host: str, group: tuple[str, ...], config: Mapping[str, Value], out: Applying) -> bool:
        """Hold the group's knobs at ``config``'s values (app.sweep.held); True when one changed."""
        members = [((host, k), config[k]) for k in group if k in config]
        changed = False
        for ((_, knob), value), (applied, made) in zip(members, await self.held.put_group(members, self._make), strict=True):
            out.effective.setdefault(knob, applied[-1].effective if applied else value)
            if made:
                out.notes += [n for a in applied for n in a.notes]
                changed = True
        return changed

    async def _restarted(self, out: Applying) -> None:
        """After nfsd may have restarted: wait out its grace period, so the trial does not measure opens
        waiting for it (none to wait when the value was already in force: nothing restarted)."""
        try:
            waited = await grace_wait(self.pool[self.spec.server])
        except KnobError as exc:
            out.notes.append(f"{exc}: this trial may have measured opens waiting for it")
            return
        if waited >= 1:
            out.notes.append(f"nfsd restarted on {self.spec.server} for {' and '.join(k for k in RESTARTS if k in self.spec.plan.knobs)}; "
                             f"waited {waited:.0f} s for its NFSv4 grace period to end")  # fmt: skip

    async def _host_wide_knobs(self, client: str, config: Mapping[str, Value], out: Applying) -> None:
        """The client's kernel settings, before the mount (the slot table sizes connections made after
        it); each is changed only when the trial's value differs from the one set."""
        for knob in CLIENT_HOST_KNOBS:
            await self._hold(client, (knob,), config, out)

    async def _client(self, client: str, config: Mapping[str, Value], out: Applying) -> None:
        if await self._kept(client, config, out):
            return
        await self._teardown(client, config)  # done already beside the server's changes, unless nfsd restarts
        held = self._clients[client]
        await self._host_wide_knobs(client, config, out)
        mount = ScratchMount(self.spec.address, self.spec.export, self.mount_point)
        opts = MountOptions.from_values({k: v for k, v in config.items() if k in MOUNT_KNOBS})
        conn = self.pool[client]
        address = await self._address(client)
        before = await nfs_connections(conn, address)
        mounted = await self.journal.apply(client, mount, opts.option_string())
        held.append(mounted)
        out.negotiated[client] = mount.taken_options(mounted.effective)  # read back by the journal just now
        after = await nfs_connections(conn, address) if before is not None else None
        if before is None or after is None:
            out.notes.append(f"{client} has no `ss` (iproute2): the test mount's connection was not checked")
        else:
            transport = mount_transport(before, after)
            out.negotiated[client].update(transport.to_negotiated())
            if "mtu" in config:
                check_mtu(transport, int(config["mtu"]), client, self.spec.server)
            if "rpc_slots" in config:
                slots = self.held.items((client, "rpc_slots"))  # what it was before the sweep: the shared one's
                check_fresh(transport, "rpc_slots", config["rpc_slots"], slots[-1].old if slots else None, client,
                            self.spec.server)  # fmt: skip
        taken = MountOptions.taken("nconnect", out.negotiated[client])
        if "nconnect" in config and taken is not None and str(taken) != str(config["nconnect"]):
            mounts = parse_mountinfo(await read_text(conn, "/proc/self/mountinfo")).value  # who pinned it, to name them
            check_nconnect(int(config["nconnect"]), str(taken), other_mounts_of(mounts, address, self.mount_point),
                           client, self.spec.server)
        bdi = await mount.bdi(conn) if "read_ahead_kb" in config else None
        if bdi is not None:
            ra = await self.journal.apply(client, readahead(bdi), config["read_ahead_kb"])
            held.append(ra)
            out.effective.setdefault("read_ahead_kb", ra.effective)
        for knob in MOUNT_KNOBS:
            if knob in config:
                out.effective.setdefault(knob, MountOptions.taken(knob, out.negotiated[client]))
        self._mounted[client] = _Mounted(_mount_key(config), bdi, dict(out.negotiated[client]),
                                         {k: out.effective[k] for k in MOUNT_KNOBS if k in config})

    async def _kept(self, client: str, config: Mapping[str, Value], out: Applying) -> bool:
        """Whether the client's standing test mount serves this trial too (nothing it was made under changed);
        readahead is then changed on its bdi alone, when its value is another."""
        mounted = self._standing(client, config)
        if mounted is None:
            return False
        held = self._clients[client]
        ra = held[-1] if held[-1].knob == "read_ahead_kb" else None
        wanted = config.get("read_ahead_kb")
        if ra is not None and str(ra.requested) != str(wanted):  # another value, or today's (not in this trial)
            await self.journal.revert(held.pop())
            ra = None
        if wanted is not None and ra is None and mounted.bdi is not None:
            ra = await self.journal.apply(client, readahead(mounted.bdi), wanted)
            held.append(ra)
        if ra is not None:
            out.effective.setdefault("read_ahead_kb", ra.effective)
        out.negotiated[client] = dict(mounted.negotiated)
        for knob, value in mounted.effective.items():
            out.effective.setdefault(knob, value)
        return True

    async def _address(self, client: str) -> str:
        if client not in self._addresses:
            try:
                self._addresses[client] = await resolve_address(self.pool[client], self.spec.address)
            except KnobError:  # an IPv6-only name: ss takes the name as given
                self._addresses[client] = self.spec.address
        return self._addresses[client]

    async def shared_mounts(self) -> dict[str, list[str]]:
        """Per client, its other NFS mounts of the server: the test mount will share their connection."""
        out = {}
        for client in self.spec.clients:
            mounts = parse_mountinfo(await read_text(self.pool[client], "/proc/self/mountinfo")).value
            if points := other_mounts_of(mounts, await self._address(client), self.mount_point):
                out[client] = points
        return out

    async def apply(self, config: Mapping[str, Value]) -> Applying:
        out = Applying()
        if any(k in self.spec.plan.knobs for k in RESTARTS):  # a test mount never comes down beside nfsd restarting
            await self._server(config, out)
        else:  # the test mounts this trial does not keep come down while the server changes (its MTU, threads)
            await side_by_side([self._server(config, out),
                                *(self._teardown(client, config) for client in self.spec.clients)])  # fmt: skip
        # the clients side by side (each its own mount, on its own host), once the server is as the trial wants it
        await side_by_side(self._client(client, config, out) for client in self.spec.clients)
        return out

    async def _server(self, config: Mapping[str, Value], out: Applying) -> None:
        for group in SERVER_GROUPS:
            if await self._hold(self.spec.server, group, config, out) and any(k in config for k in RESTARTS if k in group):
                await self._restarted(out)

    def _standing(self, client: str, config: Mapping[str, Value]) -> _Mounted | None:
        """The client's test mount, when it can serve this trial: nothing it was made under changed, and readahead,
        if the trial sets it, has the mount's bdi to go on (read only on a mount made with readahead in its trial)."""
        mounted = self._mounted.get(client)
        if mounted is None or mounted.key != _mount_key(config) or not self._clients.get(client):
            return None
        return None if "read_ahead_kb" in config and mounted.bdi is None else mounted

    async def _teardown(self, client: str, config: Mapping[str, Value]) -> None:
        """Put back the client's test mount (readahead first) when this trial cannot keep it."""
        if self._standing(client, config) is not None:
            return  # _kept serves the trial on it
        self._mounted.pop(client, None)
        await self._revert(self._clients.setdefault(client, []))

    async def forget_data(self, names: Sequence[str], *, avoid: str = "") -> str | None:
        standing = [c for c in self.spec.clients if self._clients.get(c) and c != avoid]  # its test mount stands
        return await remove_kept(self.pool, standing, self.mount_point, names)

    def remount_next(self) -> None:
        self._mounted.clear()

    async def release_clients(self) -> None:
        """Unmount the test mounts between workloads or at the end, and put the clients' kernel
        settings back (the journal reverts)."""
        self._mounted.clear()
        for held in self._clients.values():
            await self._revert(held)
        await self.held.drop_all(lambda key: key[1] in CLIENT_HOST_KNOBS)

    async def release_all(self) -> None:
        """Put back everything this applier holds, the server's too: after a host came back, the trial it lost
        runs again from the hosts' own settings (a mount or a change left from before would be read as today's)."""
        await self.release_clients()
        await self.held.drop_all()
        self._paths = None  # a host that came back may have come back otherwise


@dataclass(frozen=True)
class _Mounted:
    key: tuple[tuple[str, str], ...]  # the trial's values of every knob but MOUNT_NEUTRAL's
    bdi: str | None  # read only when a trial sets readahead
    negotiated: dict[str, Any]
    effective: dict[str, Value]  # the mount knobs' values as the mount took them


def _mount_key(config: Mapping[str, Value]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, str(v)) for k, v in config.items() if k not in MOUNT_NEUTRAL))
