"""The parts of nfs-tuner(1) that the parser cannot say: exit status, environment, files, examples.

Each is checked against the code by tests/unit/app/shell/test_manpage.py: every exit status a
command returns is listed, every NFS_TUNER_ variable the code reads is named, the default
paths are the ones app.paths gives, and every example parses with the real parser.
"""

from __future__ import annotations

from app.commands import exit_status

NAME_LINE = "tune an NFS server and its clients with real workloads"

INTRODUCTION = (
    "nfs-tuner connects to an NFS server and its clients over SSH, measures what the hardware can do "
    "(a TCP ceiling per client, the server's disk), tries configurations of the tunables with real I/O "
    "on a test mount of its own, watches throughput, stability and latency, and recommends a "
    "configuration with the evidence behind it, as ready-to-paste fstab, exports, sysctl and Ansible "
    "snippets. Every change it makes on a host is journaled first and put back at the end, by "
    "nfs-tuner itself or, should it die, by a dead-man switch on the host.",
    "With no COMMAND, the desktop wizard opens (it needs a display); every COMMAND runs headless, on a "
    "terminal or from a script.",
    "Hosts are named as in the SSH config (~/.ssh/config, or --ssh-config FILE): aliases, users, ports, "
    "keys, ssh-agent and ProxyJump work as they do for ssh(1). Host keys are checked strictly: a key "
    "seen for the first time must be trusted (discover --trust-new-keys HOST), a changed one is refused.",
)

EXIT_STATUS: tuple[tuple[str, str], ...] = exit_status.WORDS  # one home: app.commands.exit_status

ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("NFS_TUNER_DB", "The session database, when --db is not given."),
    ("NFS_TUNER_DEMO", "Set to 1: the wizard runs over simulated hosts (the real engine, nothing "
                       "touched), with a throwaway database of its own."),
    ("NFS_TUNER_DEBUG", "Set to 1: an unexpected error shows its traceback instead of one line and the log file."),
    ("XDG_DATA_HOME", "Where the session database and nfs-tuner's known_hosts live (default ~/.local/share); "
                      "--install-desktop-entry writes below it too."),
    ("XDG_STATE_HOME", "Where the log file lives (default ~/.local/state)."),
    ("SSH_AUTH_SOCK", "The ssh-agent to take keys from, as for ssh(1)."),
    ("QT_QPA_PLATFORM", "Qt's display platform for the wizard (e.g. offscreen, xcb, wayland)."),
)  # fmt: skip

FILES: tuple[tuple[str, str], ...] = (
    ("~/.local/share/nfs-tuner/sessions.db", "The session database: every session, trial, sample, journal "
                                             "entry and recommendation (SQLite). Never holds a password."),
    ("~/.local/share/nfs-tuner/known_hosts", "Host keys trusted on first use in nfs-tuner (besides "
                                             "~/.ssh/known_hosts, which is read too)."),
    ("~/.local/state/nfs-tuner/log/nfs-tuner.log", "Warnings and tracebacks of unexpected errors."),
    ("~/.ssh/config", "The SSH config the hosts are named in (--ssh-config FILE for another)."),
    ("/mnt/nfs-tuner-*", "On a client: nfs-tuner's own test mounts, made for a trial and removed after; "
                         "the admin's mounts are never touched."),
    ("/run/nfs-tuner/", "On a host: the dead-man switch's state while a session runs there."),
    ("/usr/local/sbin/nfs-tuner-helper", "On a host, optionally: the narrow sudo helper printed by "
                                         "nfs-tuner helper, as a login's only sudoers entry."),
)  # fmt: skip

# (what it does, the command line): each line parses with nfs-tuner's own parser.
EXAMPLES: tuple[tuple[str, str], ...] = (
    ("What the hosts are: OS, CPU, RAM, NICs, disks, exports, nfsd and mounts.",
     "nfs-tuner discover nfs1 client1 client2"),
    ("Trust a host key seen for the first time (its fingerprint is printed).",
     "nfs-tuner discover --trust-new-keys nfs1"),
    ("Every tunable with its current value, valid values and safety class.",
     "nfs-tuner knobs --server nfs1 --client client1"),
    ("What limits the hosts and the plan nfs-tuner proposes for a file server of many small files, within "
     "45 minutes: the diagnosis, each knob with its reason, each host's changes and the estimate; nothing is "
     "changed.",
     "nfs-tuner sweep --server nfs1 --client client1 --client client2 --use small_files --budget 45m --dry-run"),
    ("The same plan, run: measured, diagnosed, proposed, printed with its reasons, then swept.",
     "nfs-tuner sweep --server nfs1 --client client1 --client client2 --use small_files --budget 45m"),
    ("A first sweep: two workloads, three knobs, the default adaptive strategy.",
     "nfs-tuner sweep --server nfs1 --client client1 --client client2 --export /srv/nfs "
     "--knob rsize=128K,1M --knob nfsd_threads=8,32 --knob read_ahead_kb=128,4096 "
     "--workload seq_read --workload seq_write"),
    ("The most throughput whose p99 latency stays at or under 5 ms.",
     "nfs-tuner sweep --server nfs1 --client client1 --knob nconnect=1,4,8 --p99-max-ms 5"),
    ("Go on with a sweep that paused or was stopped.",
     "nfs-tuner sweep --server nfs1 --client client1 --resume 7"),
    ("Where the server saturates, and which layer.",
     "nfs-tuner study ladder --server nfs1 --client client1 --client client2 --workload rand_read --max-streams 64"),
    ("The create rate against directory size, flat and hashed.",
     "nfs-tuner study dirs --server nfs1 --client client1 --entries 1000000"),
    ("What was measured and recommended, with the snippets.", "nfs-tuner sessions show 7"),
    ("A self-contained HTML report to hand on.", "nfs-tuner report 7 --to report.html"),
    ("Changes not yet put back after a crash, then put them back.", "nfs-tuner journal revert"),
    ("The narrow sudo helper, to review and install on each host.", "nfs-tuner helper --user tuner"),
    ("Completion for the running bash.", "nfs-tuner completion bash"),
)  # fmt: skip

SEE_ALSO = ("ssh(1)", "ssh_config(5)", "nfs(5)", "exports(5)", "nfs.conf(5)", "nfsd(8)", "sudoers(5)")
