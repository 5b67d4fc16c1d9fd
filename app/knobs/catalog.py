"""Every tunable nfs-tuner knows, with its valid values and safety class."""

from __future__ import annotations

from app.knobs.model import KnobSpec, Safety, Scope, Validity

_SIZES = tuple(2**k for k in range(12, 23))  # 4 KiB … 4 MiB: 1 MiB until nfsd's 4 MiB (Linux 6.16)
WDELAY_NOTE = ("Only matters on sync exports: wdelay holds a write briefly to commit it with related ones; "
               "no_wdelay commits each at once (often better for small independent writes).")
ONE_WRITER = "Right only for data one client writes, or that rarely changes."
NOCTO_RISK = (f"Cache coherence: with nocto a client may not see another client's changes when it opens a file. "
              f"{ONE_WRITER}")
HOST_WIDE = ("Host-wide on each client: every filesystem there, not only the test mount, works under it while "
             "the sweep runs (put back after).")
DIRTY_NOTE = (f"{HOST_WIDE} More dirty data held in RAM smooths bursts of writes but makes each flush "
              "longer; the kernel keeps either this or the matching ratio, and the old one is put back.")
SLOTS_NOTE = ("Host-wide on each client: every NFS connection made after it is set takes it, the test mount's and "
              "any other the client opens while the sweep runs (those made before keep theirs; put back after). "
              "The kernel's default, 65536, grows each connection's table as needed; a lower cap bounds the "
              "requests one connection keeps in flight.")
_MIB = 1 << 20
RATIO = r"(100|[1-9]?[0-9])%"  # a dirty-page limit in force as a share of memory (vm.dirty_ratio)
KERNEL_RANGE = r"[0-9]{1,3}–[0-9]{1,3}"  # the attribute cache's own range when no actimeo is set (3–60)
RESTART_NOTE = ("nfsd takes a new value only while stopped: each change stops and restarts it (its threads and "
                "listeners as they were), and every NFSv4 client then waits out the grace period "
                "(nfsv4gracetime, 90 s by default) before opening files. Needs an explicit opt-in.")
MIN_THREADS_NOTE = ("Too low a floor makes a burst wait while threads start; 0 turns self-scaling off. Set through "
                    "nfsdctl with the thread count nfsd has, which it keeps.")
IO_SIZES = ("powers of two from 4 KiB; the mount takes at most what nfsd offers (max_block_size: 1 MiB, up to "
            "4 MiB from Linux 6.16) and what the client's kernel allows")
POOL_MODE_NOTE = ("nfsd takes a new pool mode only while stopped: each change restarts it (its threads and listeners "
                  "as they were), and every NFSv4 client then waits out the grace period. Needs an explicit opt-in.")
ACTIMEO_RISK = (f"Cache coherence: attributes (size, mtime) may be stale for up to actimeo seconds, so a client "
                f"may miss another client's change for that long. {ONE_WRITER}")

SPECS: dict[str, KnobSpec] = {
    s.name: s
    for s in (
        KnobSpec(
            "nfsd_threads", "nfsd threads", Scope.SERVER, "threads",
            Validity("0 stops the NFS service and is never allowed; more than 1024 only costs memory",
                     minimum=1, maximum=1024),
            Safety.SERVICE, "Too few threads make requests wait (pool_stats); 0 would stop the service.",
            (8, 16, 32, 64),
        ),
        KnobSpec(
            "nfsd_min_threads", "nfsd threads, at least", Scope.SERVER, "threads",
            Validity("the floor of a self-scaling nfsd (Linux 7.0, nfsdctl threads -m): 0 keeps a fixed pool of "
                     "nfsd_threads; N runs at least N per pool and starts more, up to nfsd_threads, while requests "
                     "wait (idle ones above N exit after 5 s)", minimum=0, maximum=1024),
            Safety.SERVICE, MIN_THREADS_NOTE,
            (0, 2, 8),
        ),
        KnobSpec(
            "max_block_size", "nfsd max block size", Scope.SERVER, "bytes",
            Validity("the largest read or write nfsd offers; caps the clients' rsize and wsize (4 KiB–4 MiB; "
                     "kernels before 6.16 take at most 1 MiB)", choices=_SIZES),
            Safety.RESTART, RESTART_NOTE,
            (65536, 262144, 1048576),
        ),
        KnobSpec(
            "pool_mode", "nfsd pool mode", Scope.SERVER, "",
            Validity("how nfsd groups its threads: one pool (global), one per CPU (percpu) or per NUMA node "
                     "(pernode), or the kernel's choice (auto); only a host with several CPUs or nodes has several",
                     choices=("global", "percpu", "pernode", "auto")),
            Safety.RESTART, POOL_MODE_NOTE,
            ("global", "percpu"),
        ),
        KnobSpec(
            "export_sync", "export sync/async", Scope.SERVER, "",
            Validity("an export is either sync or async", choices=("sync", "async")),
            Safety.DATA_RISK,
            "async acknowledges writes before they reach the disk: a server crash may lose "
            "data the clients were told was safe. Needs an explicit opt-in.",
            ("sync",),
        ),
        KnobSpec(
            "export_wdelay", "export write delay", Scope.SERVER, "",
            Validity("an export either delays (wdelay, Linux's default) or not", choices=("wdelay", "no_wdelay")),
            Safety.SAFE, WDELAY_NOTE, ("wdelay", "no_wdelay"),
        ),
        KnobSpec(
            "stripe_cache_size", "md stripe_cache_size", Scope.SERVER, "pages",
            Validity("the md driver accepts 17–32768 stripe cache entries", minimum=17, maximum=32768),
            Safety.MEMORY, "Costs page size × member disks × value of RAM on the server.",
            (256, 1024, 4096, 8192),
        ),
        KnobSpec(
            "rsize", "rsize", Scope.TEST_MOUNT, "bytes",
            Validity(IO_SIZES, choices=_SIZES),
            Safety.SAFE, "Applied on nfs-tuner's own test mount; the server may cap it.",
            (32768, 131072, 1048576),
        ),
        KnobSpec(
            "wsize", "wsize", Scope.TEST_MOUNT, "bytes",
            Validity(IO_SIZES, choices=_SIZES),
            Safety.SAFE, "Applied on nfs-tuner's own test mount; the server may cap it.",
            (32768, 131072, 1048576),
        ),
        KnobSpec(
            "nfsvers", "NFS version", Scope.TEST_MOUNT, "",
            Validity("versions the Linux client and knfsd share", choices=("3", "4.1", "4.2")),
            Safety.SAFE, "Applied on nfs-tuner's own test mount.",
            ("3", "4.2"),
        ),
        KnobSpec(
            "nconnect", "nconnect", Scope.TEST_MOUNT, "connections",
            Validity("the Linux client allows 1–16 TCP connections per server", minimum=1, maximum=16),
            Safety.SAFE, "Applied on nfs-tuner's own test mount (Linux 5.3 and newer).",
            (1, 4, 8),
        ),
        KnobSpec(
            "nocto", "close-to-open consistency", Scope.TEST_MOUNT, "",
            Validity("a mount either checks for other clients' changes at each open (cto) or not",
                     choices=("cto", "nocto")),
            Safety.COHERENCE, NOCTO_RISK,
            ("cto", "nocto"),
        ),
        KnobSpec(
            "actimeo", "attribute cache time", Scope.TEST_MOUNT, "seconds",
            Validity("attributes cached 0–600 s (0: not cached); longer is staler", minimum=0, maximum=600,
                     native=KERNEL_RANGE),
            Safety.COHERENCE, ACTIMEO_RISK,
            (3, 30, 60),
        ),
        KnobSpec(
            "dirty_bytes", "dirty-page limit", Scope.CLIENT, "bytes",
            Validity("dirty page cache a client holds before writers must flush it themselves, 1 MiB–64 GiB",
                     minimum=_MIB, maximum=64 << 30, native=RATIO),
            Safety.MEMORY, DIRTY_NOTE,
            (16 * _MIB, 64 * _MIB, 256 * _MIB, 1024 * _MIB),
        ),
        KnobSpec(
            "dirty_background", "background flush", Scope.CLIENT, "bytes",
            Validity("dirty page cache at which a client starts flushing in the background, 1 MiB–64 GiB "
                     "(at or above dirty_bytes the kernel uses half of dirty_bytes)", minimum=_MIB, maximum=64 << 30,
                     native=RATIO),
            Safety.MEMORY, DIRTY_NOTE,
            (4 * _MIB, 16 * _MIB, 64 * _MIB, 256 * _MIB),
        ),
        KnobSpec(
            "rpc_slots", "RPC slots per connection, at most", Scope.CLIENT, "slots",
            Validity("sunrpc allows 2–65536 requests in flight per TCP connection", minimum=2, maximum=65536),
            Safety.SAFE, SLOTS_NOTE,
            (16, 128, 65536),
        ),
        KnobSpec(
            "read_ahead_kb", "client readahead", Scope.TEST_MOUNT, "KiB",
            Validity("readahead of the mount's bdi, 0–65536 KiB", minimum=0, maximum=65536),
            Safety.SAFE, "Set on the test mount's bdi only.",
            (128, 1024, 4096, 16384),
        ),
        KnobSpec(
            "mtu", "MTU", Scope.LINK, "bytes",
            Validity("Ethernet MTU from 1280 to 9000; every switch on the path must agree",
                     minimum=1280, maximum=9000),
            Safety.CONNECTIVITY,
            "A value the network does not carry cuts traffic, SSH included: nfs-tuner checks with "
            "a full-size don't-fragment ping both ways and reverts at once if it fails.",
            (1500, 9000),
        ),
    )
}  # fmt: skip


def spec(name: str) -> KnobSpec:
    try:
        return SPECS[name]
    except KeyError:
        raise KeyError(f"unknown knob {name!r}; known: {', '.join(SPECS)}") from None
