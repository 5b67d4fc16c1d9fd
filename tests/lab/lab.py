"""The local NFS lab: three User-Mode Linux hosts on a private bridge.

    lab-server   knfsd, md RAID-5 over three sparse disks, ext4, /srv/nfs exported (sync)
    lab-client1  kernel NFS client, the export mounted at /mnt/lab
    lab-client2  the same

Each guest is a UML kernel started inside a network namespace that the lab creates
(bridge ``br0`` + one tap per guest) and deletes. The only way in is loopback: a
forwarder relays 127.0.0.1:PORT to each guest's sshd, and ``.lab/ssh_config`` names
the hosts. Nothing here routes to the host's own network.

The profile (tests/lab/profiles.py) shapes the switch ports, adds a round trip inside
the guests and gives the server's disks a cost; ``heal`` restarts a guest that stopped
answering, keeping its console. Two watchdogs keep the guests going: one in each guest
reopens a link that stopped (rx_watchdog.py), one on the host gives a guest whose clock
stopped a tick (clock_watchdog.py).

Everything the lab makes lives under the lab directory (default ``<repo>/.lab``)
and in the namespace; ``down`` removes both, whatever state ``up`` stopped in.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.lab.clock_watchdog import LOG_NAME as CLOCK_LOG
from tests.lab.clock_watchdog import MARK as NUDGE_MARK
from tests.lab.kernels import DEFAULT as DEFAULT_KERNEL
from tests.lab.kernels import Kernel, KernelError, kernel
from tests.lab.profiles import PROFILES, Profile, ProfileError, guest_delay_script, host_tc, profile, server_disk_script

REPO = Path(__file__).resolve().parents[2]
GUEST_INIT = Path(__file__).resolve().with_name("guest_init.sh")
SUBNET_PREFIX = "10.213.7"
BRIDGE_IP = f"{SUBNET_PREFIX}.1"
DISK_SIZE = 2 * 1024**3  # per RAID member; sparse
OFFLOADS = ("tso", "gso", "gro", "tx")
# The guest's vec0 keeps tx checksumming fixed on; the rest must be off there too.
GUEST_OFFLOADS = ("tso", "gso", "gro")
TAP_COUNTERS = ("tx_packets", "tx_dropped", "rx_packets", "rx_dropped")  # what a wedge report reads of a guest's tap
BOOT_TIMEOUT = 90.0
HELPERS = ("forwarder", "clock")  # the lab's own host processes in LabState.pids, beside the guests


@dataclass(frozen=True)
class GuestSpec:
    name: str
    role: str  # "server" or "client"
    ip: str
    tap: str
    mem: str
    disks: tuple[str, ...] = ()


GUESTS: tuple[GuestSpec, ...] = (
    GuestSpec("lab-server", "server", f"{SUBNET_PREFIX}.10", "tap0", "1024M", ("md-a.img", "md-b.img", "md-c.img")),
    GuestSpec("lab-client1", "client", f"{SUBNET_PREFIX}.11", "tap1", "768M"),
    GuestSpec("lab-client2", "client", f"{SUBNET_PREFIX}.12", "tap2", "768M"),
)


def tap_of(name: str) -> str:
    """The host tap that is guest ``name``'s cable to the switch."""
    return next(g.tap for g in GUESTS if g.name == name)


class LabError(RuntimeError):
    """A lab step failed; the message names the step, the reason and where to look."""


@dataclass
class LabState:
    netns: str
    profile: str
    ports: dict[str, int] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)  # guest name or one of HELPERS -> pid
    mtu: int = 9000
    rtt_ms: float | None = None  # the wan profile's round trip where not its default
    kernel: str = DEFAULT_KERNEL  # tests/lab/kernels.py: the UML kernel the guests boot


def _run(argv: list[str], *, check: bool = True, timeout: float = 60, input: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input)
    if check and proc.returncode != 0:
        raise LabError(f"`{' '.join(argv)}` exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()}")
    return proc


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


class Lab:
    def __init__(self, lab_dir: Path | None = None, kernels: Path | None = None) -> None:
        self.dir = (lab_dir or Path(os.environ.get("NFS_TUNER_LAB_DIR", REPO / ".lab"))).resolve()
        # fetched kernels, kept across labs and shared by every lab of the checkout (tests/lab/kernels.py)
        self.kernels = kernels or REPO / ".lab" / "kernels"
        tag = hashlib.sha256(str(self.dir).encode()).hexdigest()[:8]
        self.netns = f"nfst-{tag}"
        self.umid_prefix = f"nfst-{tag}"
        self.state_file = self.dir / "state.json"
        self.ssh_config = self.dir / "ssh_config"
        self.known_hosts = self.dir / "known_hosts"
        self.key = self.dir / "keys" / "id_ed25519"
        self.logs = self.dir / "logs"

    # ----------------------------------------------------------------- state
    def _load_state(self) -> LabState | None:
        try:
            return LabState(**json.loads(self.state_file.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def _save_state(self, state: LabState) -> None:
        self.state_file.write_text(json.dumps(asdict(state), indent=2))

    def _ns(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run(["ip", "netns", "exec", self.netns, *argv], check=check)

    def _netns_exists(self) -> bool:
        return Path(f"/run/netns/{self.netns}").exists()

    def is_up(self) -> bool:
        state = self._load_state()
        return bool(state and self._netns_exists() and state.pids and all(_alive(p) for p in state.pids.values()))

    # -------------------------------------------------------------------- up
    def up(self, profile: str = "gigabit", say: Callable[[str], None] = print, rtt_ms: float | None = None,
           kernel: str = DEFAULT_KERNEL) -> LabState:  # fmt: skip
        chosen = _profile(profile, rtt_ms)
        if self.is_up():
            state = self._load_state()
            assert state is not None
            say(f"lab is already up on UML {state.kernel} ({self.ssh_config}); `make lab-down` first to start afresh")
            self.heal(say)  # a guest that stopped answering is named and restarted
            return state
        booted = self._kernel(kernel, say)
        self._preflight(booted)
        self.down(say=lambda _m: None)  # clear what a crashed run left
        state = LabState(netns=self.netns, profile=profile, rtt_ms=rtt_ms, kernel=kernel)
        try:
            self._step("prepare lab files", say, self._prepare_files)
            self._step("create network namespace and bridge", say, self._make_network)
            self._step(f"boot the UML {kernel} guests", say, lambda: self._boot(state, booted))
            self._step("wait for the guests", say, lambda: self._wait_ready(state))
            self._step("turn off tap offloads and shape the link", say, lambda: self._host_links(chosen))
            self._step("start the loopback forwarder", say, lambda: self._forward(state))
            self._save_state(state)
            self._step("start the clock watchdog", say, lambda: self._watch_clocks(state))
            self._save_state(state)
            self._write_ssh_config(state)
            self._step("set guest offloads", say, self._guest_offloads)
            self._step(f"shape the guests ({_describe(chosen)})", say, lambda: self._shape_guests(chosen))
            self._step("mount the export on the clients", say, self._mount_clients)
            self._step("self-test", say, self._self_test)
        except BaseException:
            self._save_state(state)
            if os.environ.get("NFS_TUNER_LAB_KEEP_ON_FAIL"):
                say("lab-up failed: left running for inspection (NFS_TUNER_LAB_KEEP_ON_FAIL)")
                raise
            say(f"lab-up failed: tearing down what was started (logs kept in {self.logs})")
            self.down(say=lambda _m: None)
            raise
        say(f"lab is up on UML {kernel}: ssh -F {self.ssh_config} lab-server (profile {profile}: {_describe(chosen)})")
        return state

    def _kernel(self, name: str, say: Callable[[str], None]) -> Kernel:
        try:
            return kernel(name, self.kernels, say)
        except (KernelError, OSError) as exc:
            raise LabError(f"lab-up failed at step 'get UML {name}': {exc}") from None

    def kernel_name(self) -> str | None:
        """The kernel the running lab's guests booted, or None when no lab state is kept."""
        state = self._load_state()
        return state.kernel if state else None

    def _step(self, name: str, say: Callable[[str], None], func: Callable[[], object]) -> None:
        say(f"lab: {name} …")
        try:
            func()
        except LabError as exc:
            raise LabError(f"lab-up failed at step '{name}': {exc}") from None
        except (OSError, subprocess.SubprocessError) as exc:
            raise LabError(f"lab-up failed at step '{name}': {exc}") from None

    def _preflight(self, booted: Kernel) -> None:
        problems = []
        if os.geteuid() != 0:
            problems.append("the lab needs root (network namespaces, tap devices): run it with sudo")
        for tool in ("ip", "ethtool", "tc", "ssh", "ssh-keygen", "mdadm", "rpc.nfsd", "sshd"):
            if not shutil.which(tool) and not Path("/usr/sbin", tool).exists():
                problems.append(f"`{tool}` is missing: run `make system-deps` as root (tests/system-packages.txt)")
        if booted.release is None:
            problems.append(f"UML {booted.name}'s modules are missing under {booted.modules}: reinstall user-mode-linux")
        if any(c.isspace() for c in str(self.dir)):
            problems.append(f"the lab directory {self.dir} contains white space, which a kernel command line cannot carry")
        if not Path("/dev/net/tun").exists():
            problems.append("/dev/net/tun is missing: this machine cannot make tap devices")
        if problems:
            raise LabError("lab-up cannot start:\n  - " + "\n  - ".join(problems))

    def _prepare_files(self) -> None:
        for sub in ("keys", "disks", "logs", "uml", "hosts"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir / "keys", 0o700)
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "nfs-tuner-lab", "-f", str(self.key)], input="y\n")
        for guest in GUESTS:
            hdir = self.dir / "hosts" / guest.name
            hdir.mkdir(parents=True, exist_ok=True)
            hkey = hdir / "ssh_host_ed25519_key"
            _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", guest.name, "-f", str(hkey)], input="y\n")
            for disk in guest.disks:
                path = self.dir / "disks" / disk
                path.unlink(missing_ok=True)
                with open(path, "wb") as f:
                    f.truncate(DISK_SIZE)
        (self.dir / "sshd_config").write_text(
            "\n".join(
                [
                    "Port 22",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "UseDNS no",
                    "PrintMotd no",
                    "MaxSessions 10",
                    "MaxStartups 30:30:60",
                    "PidFile /run/sshd.pid",
                    "AuthorizedKeysFile .ssh/authorized_keys",
                    "Subsystem sftp internal-sftp",
                    "",
                ]
            )
        )
        for old in self.logs.glob("*.log"):
            old.unlink()

    def _make_network(self) -> None:
        _run(["ip", "netns", "add", self.netns])
        self._ns("ip", "link", "set", "lo", "up")
        self._ns("ip", "link", "add", "br0", "type", "bridge")
        for guest in GUESTS:
            self._ns("ip", "tuntap", "add", guest.tap, "mode", "tap")
            self._ns("ip", "link", "set", guest.tap, "master", "br0", "mtu", "9000", "up")
        # The switch accepts jumbo frames; `lab mtu 1500` makes a black hole on purpose.
        self._ns("ip", "link", "set", "br0", "mtu", "9000", "up")
        self._ns("ip", "addr", "add", f"{BRIDGE_IP}/24", "dev", "br0")

    def _boot(self, state: LabState, booted: Kernel, guests: tuple[GuestSpec, ...] = GUESTS) -> None:
        env_args = [
            f"lab_modules={booted.modules}",
            *([f"lab_userland={booted.userland}"] if booted.userland else []),
            f"lab_dir={self.dir}",
            f"lab_subnet={SUBNET_PREFIX}.0/24",
            f"lab_server_ip={GUESTS[0].ip}",
            f"lab_bridge_ip={BRIDGE_IP}",
            f"lab_client1_ip={GUESTS[1].ip}",
            f"lab_client2_ip={GUESTS[2].ip}",
        ]
        for guest in guests:
            disks = [f"ubd{chr(ord('0') + i)}={self.dir / 'disks' / d}" for i, d in enumerate(guest.disks)]
            argv = [
                "ip", "netns", "exec", self.netns, str(booted.binary),
                "root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
                f"init={GUEST_INIT}", f"mem={guest.mem}",
                f"umid={self.umid_prefix}-{guest.name}", f"uml_dir={self.dir / 'uml'}",
                "con=null", "con0=null,fd:1",
                f"vec0:transport=tap,ifname={guest.tap},mtu=9000",
                *disks, *env_args,
                *booted.boot_args,
                f"lab_name={guest.name}", f"lab_role={guest.role}", f"lab_ip={guest.ip}",
            ]  # fmt: skip
            console = self.logs / f"{guest.name}.log"
            if console.exists():  # a restarted guest's last console is evidence: keep it
                console.replace(console.with_suffix(".log.1"))
            log = open(console, "wb")
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
            state.pids[guest.name] = proc.pid

    def _wait_ready(self, state: LabState, guests: tuple[GuestSpec, ...] = GUESTS) -> None:
        deadline = time.monotonic() + BOOT_TIMEOUT
        pending = {g.name for g in guests}
        while pending:
            for name in sorted(pending):
                log = self.logs / f"{name}.log"
                text = log.read_text(errors="replace") if log.exists() else ""
                if f"LAB-READY {name}" in text:
                    pending.discard(name)
                    continue
                fail = next((ln for ln in text.splitlines() if ln.startswith("LAB-FAIL")), None)
                if fail:
                    raise LabError(f"{name}: {fail.removeprefix('LAB-FAIL ')} (console: {log})")
                if not _alive(state.pids[name]):
                    tail = "\n".join(text.splitlines()[-8:])
                    raise LabError(f"{name}'s kernel exited during boot (console: {log}):\n{tail}")
            if pending and time.monotonic() > deadline:
                steps = {n: self._last_step(n) for n in pending}
                raise LabError(f"guests not ready after {BOOT_TIMEOUT:.0f} s; last steps: {steps} (consoles in {self.logs})")
            time.sleep(0.2)

    def _last_step(self, name: str) -> str:
        log = self.logs / f"{name}.log"
        steps = [ln for ln in log.read_text(errors="replace").splitlines() if ln.startswith("LAB-STEP")] if log.exists() else []
        return steps[-1].removeprefix("LAB-STEP ") if steps else "kernel boot"

    def _host_links(self, chosen: Profile) -> None:
        # The guests have attached to their taps (which resets offloads): turn the
        # offloads off now, on the taps and the bridge. With them on, TCP through
        # UML crawls with retransmits.
        self.taps_offloads_off()
        self._shape_taps(chosen)

    def taps_offloads_off(self) -> None:
        """Offloads off on every tap and the bridge: again after a guest reopened its link (a pulled cable),
        which attaches it to its tap afresh and turns them back on."""
        for dev in [g.tap for g in GUESTS] + ["br0"]:
            self._ns("ethtool", "-K", dev, *(x for o in OFFLOADS for x in (o, "off")))

    def _shape_taps(self, chosen: Profile) -> None:
        for guest in GUESTS:
            for argv in host_tc(guest.tap, chosen):
                self._ns(*argv, check=chosen.rate is not None)

    def _shape_guests(self, chosen: Profile, guests: tuple[GuestSpec, ...] = GUESTS) -> None:
        for guest in guests:
            self.ssh(guest.name, guest_delay_script(chosen))
            if guest.role == "server":
                self.ssh(guest.name, server_disk_script(chosen), timeout=120)

    def set_profile(self, name: str, rtt_ms: float | None = None) -> Profile:
        """Reshape the running lab: the switch ports, the guests' path and the server's disks."""
        chosen = _profile(name, rtt_ms)
        # Saved first: a guest that wedges half-way leaves the others on the new profile, and
        # heal shapes the restarted guest by the saved one, which finishes the switch.
        state = self._load_state()
        if state is not None:
            state.profile, state.rtt_ms = name, rtt_ms
            self._save_state(state)
        self._shape_taps(chosen)
        self._shape_guests(chosen)
        return chosen

    def current_profile(self) -> Profile:
        state = self._load_state()
        return _profile(state.profile, state.rtt_ms) if state else PROFILES["gigabit"]

    def set_mtu(self, mtu: int) -> None:
        """The switch's MTU: 9000 passes jumbo frames; 1500 drops them (a black hole)."""
        if not 576 <= mtu <= 9000:
            raise LabError(f"MTU {mtu} is outside 576..9000")
        for guest in GUESTS:
            self._ns("ip", "link", "set", guest.tap, "mtu", str(mtu))
        self._ns("ip", "link", "set", "br0", "mtu", str(mtu))
        state = self._load_state()
        if state is not None:
            state.mtu = mtu
            self._save_state(state)

    def set_hosts_mtu(self, mtu: int) -> None:
        """Every guest's own MTU (lan0), and the clients' /mnt/lab mounted again to use it.

        TCP fixes a connection's frame size when it connects, so the standing mount's
        connection (made at boot, at 1500) only carries jumbo frames once remade.
        """
        if not 576 <= mtu <= 9000:
            raise LabError(f"MTU {mtu} is outside 576..9000")
        for guest in GUESTS:
            self.ssh(guest.name, f"ip link set dev lan0 mtu {mtu}")
        for guest in (g for g in GUESTS if g.role == "client"):
            self.ssh(guest.name, "umount /mnt/lab && mount -t nfs -o vers=4.2 lab-server:/srv/nfs /mnt/lab", timeout=90)

    def _forward(self, state: LabState) -> None:
        log = open(self.logs / "forwarder.log", "wb")
        argv = [sys.executable, "-m", "tests.lab.forwarder", self.netns, *(f"{g.name}={g.ip}:22" for g in GUESTS)]
        proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        log.close()
        state.pids["forwarder"] = proc.pid
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().split()
        proc.stdout.close()
        if not line or line[0] != "FORWARDER-READY":
            raise LabError(f"the forwarder did not start (see {self.logs / 'forwarder.log'})")
        state.ports = {k: int(v) for k, v in (item.split("=") for item in line[1:])}

    def _watch_clocks(self, state: LabState) -> None:
        log = open(self.logs / CLOCK_LOG, "ab")
        argv = [sys.executable, "-m", "tests.lab.clock_watchdog", str(self.state_file), str(self.logs / CLOCK_LOG),
                *(g.name for g in GUESTS)]  # fmt: skip
        proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        state.pids["clock"] = proc.pid

    def _write_ssh_config(self, state: LabState) -> None:
        entries, known = [], []
        for guest in GUESTS:
            port = state.ports[guest.name]
            entries.append(
                f"Host {guest.name}\n"
                f"    HostName 127.0.0.1\n"
                f"    Port {port}\n"
                f"    User root\n"
                f"    IdentityFile {self.key}\n"
                f"    IdentitiesOnly yes\n"
                f"    UserKnownHostsFile {self.known_hosts}\n"
                f"    StrictHostKeyChecking yes\n"
                f"    ConnectTimeout 10\n"
            )
            pub = (self.dir / "hosts" / guest.name / "ssh_host_ed25519_key.pub").read_text().split()
            known.append(f"[127.0.0.1]:{port} {pub[0]} {pub[1]}")
        self.ssh_config.write_text("# Written by `make lab-up`; ports change with every lab.\n\n" + "\n".join(entries))
        self.known_hosts.write_text("\n".join(known) + "\n")

    # ----------------------------------------------------------- guest steps
    def ssh(self, host: str, command: str, *, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``command`` as root on a lab guest through the loopback forwarder."""
        argv = ["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", host, command]
        try:
            return _run(argv, timeout=timeout, check=check)
        except subprocess.TimeoutExpired:
            raise LabError(f"`{command}` on {host} did not finish in {timeout:.0f} s") from None

    def ssh_start(self, host: str, command: str) -> subprocess.Popen[str]:
        """``command`` started as root on a lab guest; the caller collects it (communicate)."""
        argv = ["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", host, command]
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def _wait_ssh(self, host: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            proc = self.ssh(host, "true", check=False, timeout=15)
            if proc.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise LabError(f"ssh to {host} fails: {proc.stderr.strip()}")
            time.sleep(0.5)

    def _guest_offloads(self, guests: tuple[GuestSpec, ...] = GUESTS) -> None:
        offs = " ".join(f"{o} off" for o in GUEST_OFFLOADS)
        for guest in guests:
            self._wait_ssh(guest.name)
            self.ssh(guest.name, f"ethtool -K vec0 {offs}")

    def _mount_clients(self, guests: tuple[GuestSpec, ...] = GUESTS) -> None:
        for guest in (g for g in guests if g.role == "client"):
            # A lazy unmount first: after a server restart the old mount's handles are stale.
            self.ssh(guest.name, "umount -l /mnt/lab 2>/dev/null; mkdir -p /mnt/lab && mount -t nfs -o vers=4.2 lab-server:/srv/nfs /mnt/lab", timeout=90)

    # ---------------------------------------------------------------- watch
    def console_tail(self, name: str, lines: int = 12) -> str:
        log = self.logs / f"{name}.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return "\n".join(text.splitlines()[-lines:]) or "(no console output)"

    def unhealthy(self, timeout: float = 15) -> dict[str, str]:
        """Guests that do not answer, by name: what is wrong, with the console's tail."""
        state = self._load_state()
        if state is None:
            return {g.name: "the lab is not up" for g in GUESTS}
        found = {}
        for guest in GUESTS:
            pid = state.pids.get(guest.name)
            if not (pid and _alive(pid)):
                problem = "its kernel has exited"
            elif not self._answers(guest.name, timeout):
                problem = f"it does not answer SSH within {timeout:.0f} s"
            else:
                continue
            found[guest.name] = f"{problem}; console ({self.logs / (guest.name + '.log')}) ends:\n{self.console_tail(guest.name)}"
        return found

    def kicks(self) -> dict[str, list[str]]:
        """Per guest, the times its receive watchdog reopened vec0 (rx_watchdog.py), this boot and the last."""
        found: dict[str, list[str]] = {}
        for guest in GUESTS:
            for log in (self.logs / f"{guest.name}.log.1", self.logs / f"{guest.name}.log"):
                if log.exists():
                    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.startswith("LAB-KICK")]
                    found.setdefault(guest.name, []).extend(lines)
        return {name: lines for name, lines in found.items() if lines}

    def nudges(self) -> dict[str, list[str]]:
        """Per guest, the clock watchdog's lines this lab (clock_watchdog.py): each nudge and its outcome."""
        log = self.logs / CLOCK_LOG
        found: dict[str, list[str]] = {}
        for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
            if (words := line.split(f" {NUDGE_MARK} ", 1)[1:]):
                found.setdefault(words[0].split()[0], []).append(line)
        return found

    def _dump_kernel_state(self, name: str) -> Path:
        """A hung guest's memory and blocked tasks (sysrq m, w through its mconsole), kept with its console."""
        mconsole = self.dir / "uml" / f"{self.umid_prefix}-{name}" / "mconsole"
        for key in ("m", "w", "l"):
            # uml_mconsole waits for a reply it never gets here; the request is taken at once.
            _run(["timeout", "3", "uml_mconsole", str(mconsole), "sysrq", key], check=False, timeout=10)
        # The switch's side of the guest's cable, twice: frames queued for a guest that no
        # longer reads them show as tx_dropped growing while tx_packets stands still; a frame
        # the tap refused the guest (what latches its driver) as rx_dropped.
        tap = tap_of(name)
        readings = []
        for _ in range(2):
            readings.append(", ".join(f"{c} {v}" for c, v in self.tap_counters(name).items()))
            time.sleep(1)
        out = self.logs / f"{name}.wedge-{time.strftime('%Y%m%d-%H%M%S')}.txt"
        taps = "".join(f"host {tap}, {when}: {r}\n" for when, r in zip(("first", "1 s later"), readings, strict=True))
        clock = "".join(f"{line}\n" for line in self.nudges().get(name, [])[-5:]) or "clock watchdog: no nudge\n"
        out.write_text(self.console_tail(name, lines=400) + "\n" + taps + clock)
        return out

    def tap_counters(self, name: str) -> dict[str, int]:
        """The host tap's counters for guest ``name``. rx_dropped counts frames the guest wrote that
        the tap refused (down, or an allocation failed): the write error that latches UML's vector
        driver; tx_dropped, frames for a guest that no longer reads them."""
        got = self._ns("cat", *(f"/sys/class/net/{tap_of(name)}/statistics/{c}" for c in TAP_COUNTERS), check=False).stdout.split()
        return {c: int(v) for c, v in zip(TAP_COUNTERS, got, strict=False)}

    def _answers(self, host: str, timeout: float) -> bool:
        try:
            return self.ssh(host, "true", timeout=timeout, check=False).returncode == 0
        except LabError:  # did not finish in time
            return False

    def heal(self, say: Callable[[str], None] = print) -> list[str]:
        """Restart every guest that stopped answering; returns their names.

        A client comes back alone. A restarted server has a new, empty export, so
        the clients mount it again.
        """
        sick = self.unhealthy()
        if not sick:
            return []
        state = self._load_state()
        if state is None or not self._netns_exists():
            raise LabError("the lab is not up: `make lab-up`")
        for name, problem in sick.items():
            say(f"lab: {name} stopped answering: {problem}")
        guests = tuple(g for g in GUESTS if g.name in sick)
        for guest in guests:
            pid = state.pids.get(guest.name)
            if pid and _alive(pid):
                say(f"lab: {guest.name}'s kernel state is in {self._dump_kernel_state(guest.name)}")
            victims = ([pid] if pid else []) + self._lab_processes(guest.name)
            for p in victims:
                _kill_group(p, signal.SIGKILL)
            _wait_gone(victims, 10)
            shutil.rmtree(self.dir / "uml" / f"{self.umid_prefix}-{guest.name}", ignore_errors=True)
        chosen = _profile(state.profile, state.rtt_ms)
        booted = self._kernel(state.kernel, say)
        self._step(f"restart {', '.join(sick)}", say, lambda: self._boot(state, booted, guests))
        self._save_state(state)
        self._step("wait for the restarted guests", say, lambda: self._wait_ready(state, guests))
        for guest in guests:
            self._ns("ethtool", "-K", guest.tap, *(x for o in OFFLOADS for x in (o, "off")))
        self._shape_taps(chosen)
        self._step("set guest offloads", say, lambda: self._guest_offloads(guests))
        self._step("shape the restarted guests", say, lambda: self._shape_guests(chosen, guests))
        if state.mtu != 9000:
            self.set_mtu(state.mtu)
        remount = GUESTS if any(g.role == "server" for g in guests) else guests
        self._step("mount the export again", say, lambda: self._mount_clients(remount))
        say(f"lab: {', '.join(sick)} restarted")
        return list(sick)

    def _self_test(self) -> None:
        problems = []
        for dev in [g.tap for g in GUESTS] + ["br0"]:
            problems += self._offload_problems(dev, self._ns("ethtool", "-k", dev).stdout)
        for guest in GUESTS:
            problems += self._offload_problems(f"{guest.name}:vec0", self.ssh(guest.name, "ethtool -k vec0").stdout, GUEST_OFFLOADS)
        token = f"lab-selftest-{os.getpid()}-{time.time_ns()}"
        self.ssh("lab-client1", f"echo {token} > /mnt/lab/.selftest && sync")
        seen = self.ssh("lab-server", "cat /srv/nfs/.selftest && rm -f /srv/nfs/.selftest").stdout.strip()
        if seen != token:
            problems.append(f"a file written on lab-client1 read back on lab-server as {seen!r}")
        if problems:
            raise LabError("; ".join(problems))

    @staticmethod
    def _offload_problems(dev: str, ethtool_k: str, wanted: tuple[str, ...] = OFFLOADS) -> list[str]:
        names = {"tso": "tcp-segmentation-offload", "gso": "generic-segmentation-offload",
                 "gro": "generic-receive-offload", "tx": "tx-checksumming"}  # fmt: skip
        states = dict(ln.strip().split(": ", 1) for ln in ethtool_k.splitlines() if ": " in ln)
        return [f"{dev}: {names[o]} is {states.get(names[o], '?')}" for o in wanted if not states.get(names[o], "").startswith("off")]

    # ------------------------------------------------------------------ down
    def down(self, say: Callable[[str], None] = print) -> None:
        state = self._load_state()
        pids = dict(state.pids) if state else {}
        # The guests hold nothing worth a clean shutdown (their disks are thrown
        # away), so they are stopped like a power cut: all at once, quickly.
        guests = [pid for name, pid in pids.items() if name not in HELPERS] + self._lab_processes()
        for pid in guests:
            _kill_group(pid, signal.SIGTERM)
        if not _wait_gone(guests, 3):
            for pid in guests + self._lab_processes():  # UML forks helpers that share the command line
                _kill_group(pid, signal.SIGKILL)
        for helper in (pids.get(h) for h in HELPERS):
            if helper and _alive(helper):
                _kill_group(helper, signal.SIGTERM)
        _wait_gone(list(pids.values()) + guests, 5)
        if self._netns_exists():
            _run(["ip", "netns", "del", self.netns], check=False)
        for sub in ("disks", "uml", "hosts", "keys"):
            shutil.rmtree(self.dir / sub, ignore_errors=True)
        for f in (self.state_file, self.ssh_config, self.known_hosts, self.dir / "sshd_config"):
            f.unlink(missing_ok=True)
        leftovers = self._lab_processes()
        if leftovers:
            raise LabError(f"processes of the lab survived: {leftovers}")
        say("lab is down")

    def _lab_processes(self, guest: str = "") -> list[int]:
        found = []
        marker = f"umid={self.umid_prefix}-{guest}".encode() + (b"\0" if guest else b"")
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if marker in (entry / "cmdline").read_bytes() and _alive(int(entry.name)):
                        found.append(int(entry.name))
                except OSError:
                    pass
        return found

    # ---------------------------------------------------------------- status
    def status(self) -> dict[str, object]:
        state = self._load_state()
        report: dict[str, object] = {"lab_dir": str(self.dir), "netns": self.netns, "netns_exists": self._netns_exists()}
        if state is None:
            report["up"] = False
            return report
        hosts = {}
        for guest in GUESTS:
            pid = state.pids.get(guest.name)
            port = state.ports.get(guest.name)
            hosts[guest.name] = {
                "ip": guest.ip,
                "port": port,
                "kernel_alive": bool(pid and _alive(pid)),
                "ssh": bool(port and _ssh_banner(port)),
            }
        report.update(
            up=self.is_up() and all(h["ssh"] for h in hosts.values()),
            kernel=state.kernel,
            profile=state.profile,
            mtu=state.mtu,
            ssh_config=str(self.ssh_config),
            hosts=hosts,
            forwarder_alive=_alive(state.pids.get("forwarder", -1)) if "forwarder" in state.pids else False,
            clock_watchdog_alive=_alive(state.pids.get("clock", -1)) if "clock" in state.pids else False,
        )
        return report


def _profile(name: str, rtt_ms: float | None) -> Profile:
    try:
        return profile(name, rtt_ms)
    except ProfileError as exc:
        raise LabError(str(exc)) from None


def _describe(p: Profile) -> str:
    parts = [f"link {p.rate or 'unshaped'}"]
    if p.rtt_ms:
        parts.append(f"RTT +{p.rtt_ms:g} ms")
    if any(p.disk_ms):
        slow = [cls for cls, ms in zip(("reads", "writes", "flushes"), p.disk_ms, strict=True) if ms]
        parts.append(f"disk {', '.join(slow)} delayed")
    return ", ".join(parts)


def _ssh_banner(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.settimeout(5)
            return sock.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def _kill_group(pid: int, sig: signal.Signals) -> None:
    for target in (lambda: os.killpg(pid, sig), lambda: os.kill(pid, sig)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def _wait_gone(pids: list[int], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        for p in pids:  # reap our own children so they do not linger as zombies
            try:
                os.waitpid(p, os.WNOHANG)
            except ChildProcessError:
                pass
        time.sleep(0.1)
    return True
