"""Putting one configuration on the hosts, through the change journal.

Server knobs and the MTU stay as they are while consecutive trials agree on them (a
change is reverted, then the new value applied, so the journal never stacks values).
Clients get a fresh test mount for every trial — mount options only take on a new
mount, and a fresh one starts with nothing cached — and readahead on its new bdi.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.facts.parse_storage import parse_mountinfo
from app.hosts import HostPool
from app.knobs.catalog import SPECS
from app.knobs.client_sysctls import client_sysctl
from app.knobs.changes import ChangeJournal
from app.knobs.model import Applied, KnobError, Value
from app.knobs.network import resolve_address, set_link_mtu
from app.knobs.targets import ExportOptionTarget, MountOptions, ScratchMount, nfsd_threads, read_text, readahead, stripe_cache
from app.knobs.transport import check_fresh, check_mtu, mount_transport, nfs_connections, other_mounts_of
from app.sweep.host_side import Applying
from app.sweep.spec import CLIENT_HOST_KNOBS, EXPORT_KNOBS, MOUNT_KNOBS, SweepSpec


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
        self._server: dict[str, tuple[Value, list[Applied]]] = {}
        self._clients: dict[str, list[Applied]] = {}
        self._host_wide: dict[tuple[str, str], tuple[Value, Applied]] = {}  # (client, knob) -> what is set there
        self._addresses: dict[str, str] = {}  # client -> the server's address as it sees it

    def _server_target(self, knob: str):  # type: ignore[no-untyped-def]
        if knob == "nfsd_threads":
            return nfsd_threads()
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

    async def _server_knob(self, knob: str, value: Value, out: Applying) -> None:
        held = self._server.get(knob)
        if held is not None and str(held[0]) == str(value):
            out.effective[knob] = held[1][-1].effective if held[1] else value
            return
        if held is not None:
            await self._revert(held[1])
        if knob == "mtu":
            applied = await set_link_mtu(self.journal, self.pool, self.spec.server, self.spec.address,
                                         list(self.spec.clients), int(value))  # fmt: skip
        else:
            applied = [await self.journal.apply(self.spec.server, self._server_target(knob), value)]
        self._server[knob] = (value, applied)
        out.effective[knob] = applied[-1].effective if applied else value
        out.notes += [n for a in applied for n in a.notes]

    async def _export(self, config: Mapping[str, Value], out: Applying) -> None:
        """The export's options: each restores the whole option list it read, so when one changes, all
        held are put back (the last applied first) and applied again in order."""
        if any(k in self._server and k in config and str(self._server[k][0]) != str(config[k]) for k in EXPORT_KNOBS):
            for knob in reversed(EXPORT_KNOBS):
                if (held := self._server.pop(knob, None)) is not None:
                    await self._revert(held[1])
        for knob in EXPORT_KNOBS:
            if knob in config:
                await self._server_knob(knob, config[knob], out)

    async def _host_wide_knobs(self, client: str, config: Mapping[str, Value], out: Applying) -> None:
        """The client's kernel settings, before the mount (the slot table sizes connections made after
        it); one is changed only when the trial's value differs from the one set."""
        for knob in CLIENT_HOST_KNOBS:
            if knob not in config:
                continue
            held = self._host_wide.get((client, knob))
            if held is not None and str(held[0]) == str(config[knob]):
                out.effective.setdefault(knob, held[1].effective)
                continue
            if held is not None:
                await self.journal.revert(held[1])
                del self._host_wide[(client, knob)]
            applied = await self.journal.apply(client, client_sysctl(knob), config[knob])
            self._host_wide[(client, knob)] = (config[knob], applied)
            out.effective.setdefault(knob, applied.effective)
            out.notes += applied.notes

    async def _client(self, client: str, config: Mapping[str, Value], out: Applying) -> None:
        await self._revert(self._clients.setdefault(client, []))  # readahead first, then the mount
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
                check_fresh(transport, "rpc_slots", client, self.spec.server)
        if "read_ahead_kb" in config:
            ra = await self.journal.apply(client, readahead(await mount.bdi(conn)), config["read_ahead_kb"])
            held.append(ra)
            out.effective.setdefault("read_ahead_kb", ra.effective)
        for knob in MOUNT_KNOBS:
            if knob in config:
                out.effective.setdefault(knob, MountOptions.taken(knob, out.negotiated[client]))

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
        for knob in ("mtu", "nfsd_threads", "stripe_cache_size"):
            if knob in config:
                await self._server_knob(knob, config[knob], out)
        await self._export(config, out)
        for client in self.spec.clients:
            await self._client(client, config, out)
        return out

    async def release_clients(self) -> None:
        """Unmount the test mounts between workloads or at the end, and put the clients' kernel
        settings back (the journal reverts)."""
        for held in self._clients.values():
            await self._revert(held)
        for key in list(self._host_wide):
            await self.journal.revert(self._host_wide.pop(key)[1])
