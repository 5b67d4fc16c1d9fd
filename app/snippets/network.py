"""MTU for the NIC that carries NFS, in the three usual network stacks, per host."""

from __future__ import annotations

import shlex

from app.snippets import quoting as q
from app.snippets.model import Knobs, Snippet, SnippetContext

MTU_SAFETY = (
    "Every host and switch on the path must carry this MTU, or traffic (SSH included) stalls. "
    "Check first with `ping -M do -s {payload} PEER` from both ends; keep a console open."
)


def networkd_dropin(nic: str, mtu: int) -> str:
    return f"# nfs-tuner: MTU of {nic}\n[Link]\nMTUBytes={mtu}\n"


def networkd_target(nic: str) -> str:
    # a drop-in beside the .network file that already configures the NIC keeps its addresses
    return f"/etc/systemd/network/<the .network file of {nic}>.d/50-nfs-tuner-mtu.conf"


def nmcli_command(nic: str, mtu: int) -> str:
    dev = shlex.quote(nic)
    return (
        f"con=$(nmcli -g GENERAL.CONNECTION device show {dev})\n"
        f'nmcli connection modify "$con" 802-3-ethernet.mtu {mtu}\n'
        f'nmcli connection up "$con"\n'
    )


def nm_keyfile(nic: str, mtu: int) -> str:
    return f"# nfs-tuner: add to the [ethernet] section of the profile for {nic}\n[ethernet]\nmtu={mtu}\n"


def ifupdown_stanza(nic: str, mtu: int) -> str:
    return (
        f"# nfs-tuner: add the mtu line to the existing stanza of {nic}\n"
        f"iface {nic} inet static\n"
        "    # ... keep the address lines you have ...\n"
        f"    mtu {mtu}\n"
    )


def mtu_snippets(config: Knobs, ctx: SnippetContext) -> list[Snippet]:
    if "mtu" not in config:
        return []
    mtu = int(config["mtu"])
    if not 1280 <= mtu <= 9000:
        raise ValueError(f"mtu must be 1280–9000, got {mtu}")
    safety = MTU_SAFETY.format(payload=mtu - 28)  # IPv4 + ICMP headers
    out: list[Snippet] = []
    for host in (ctx.server_host, *ctx.client_hosts):
        nic = q.plain_name(ctx.nic_of(host), "the NIC")
        role = "server" if host == ctx.server_host else "client"
        out += [
            Snippet(f"mtu-networkd:{host}", f"MTU {mtu} on {host} {nic} (systemd-networkd)",
                    networkd_target(nic), networkd_dropin(nic, mtu), safety, role, risky=True),
            Snippet(f"mtu-nmcli:{host}", f"MTU {mtu} on {host} {nic} (NetworkManager, nmcli)",
                    "shell", nmcli_command(nic, mtu), safety, role, risky=True),
            Snippet(f"mtu-nm-keyfile:{host}", f"MTU {mtu} on {host} {nic} (NetworkManager keyfile)",
                    "/etc/NetworkManager/system-connections/<profile of " + nic + ">.nmconnection",
                    nm_keyfile(nic, mtu), safety, role, risky=True),
            Snippet(f"mtu-ifupdown:{host}", f"MTU {mtu} on {host} {nic} (ifupdown)",
                    "/etc/network/interfaces", ifupdown_stanza(nic, mtu), safety, role, risky=True),
        ]
    return out
