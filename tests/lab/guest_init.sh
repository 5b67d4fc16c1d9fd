#!/bin/sh
# PID 1 of a lab guest (a User-Mode Linux kernel booted on the host's own root,
# read-only through hostfs). The kernel hands us the lab_* parameters of its
# command line as environment variables. Everything writable lives on tmpfs, so a
# guest leaves nothing on the host. Each step is announced on the console
# ("LAB-STEP name") so that lab-up can say which one failed and why ("LAB-FAIL").
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
STEP=boot

step() { STEP=$1; echo "LAB-STEP $1"; }
hang() { while :; do sleep 3600; done; }  # PID 1 must never exit
fail() { echo "LAB-FAIL $STEP: $*"; hang; }
run() { out=$("$@" 2>&1) || fail "$* -> $out"; }

if [ -z "${lab_stage2:-}" ]; then
    # Stage 1: the kernel booted on the host's root (hostfs, read-only). knfsd
    # cannot export through hostfs, so NFSv4's pseudo-root could not be built on
    # it. Move onto a tmpfs root that binds the host's /usr, /etc, /var and /opt,
    # keep the host's whole tree at /host, and run again from there.
    step pivot
    run mount -t tmpfs -o mode=755 tmpfs /mnt
    for d in usr etc var opt; do
        mkdir -p "/mnt/$d" && run mount --bind "/$d" "/mnt/$d"
    done
    for d in bin sbin lib lib64; do
        [ -L "/$d" ] && ln -s "$(readlink "/$d")" "/mnt/$d"
    done
    mkdir -p /mnt/proc /mnt/sys /mnt/dev /mnt/run /mnt/tmp /mnt/root /mnt/home /mnt/srv /mnt/mnt /mnt/host
    cd /mnt || fail "cannot enter the new root"
    run pivot_root . host
    export lab_stage2=1 lab_dir="/host$lab_dir"
    exec /bin/sh "/host$0"
fi

step mounts
run mount -t proc proc /proc
run mount -t sysfs sysfs /sys
mountpoint -q /dev || run mount -t devtmpfs devtmpfs /dev  # the kernel may have done it
mkdir -p /dev/pts /dev/shm 2>/dev/null
run mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
for d in /tmp /run /var/lib /var/log /var/tmp; do
    [ -d "$d" ] || continue
    run mount -t tmpfs -o mode=755 tmpfs "$d"
done
chmod 1777 /tmp /var/tmp
chmod 700 /root  # sshd's StrictModes refuses a key under a group-writable home

step modules
# The host has no /lib/modules to mount over (and hostfs is read-only), so the UML
# modules (lab_modules: the host's package's, or a fetched kernel's in the lab
# directory) are mounted under /run and modprobe is pointed there, also for the
# kernel's own on-demand loads.
kver=$(uname -r)
mkdir -p "/run/modroot/lib/modules/$kver"
run mount -t hostfs -o "${lab_modules:-/usr/lib/uml/modules}/$kver" none "/run/modroot/lib/modules/$kver"
printf '#!/bin/sh\nexec /sbin/modprobe -d /run/modroot "$@"\n' > /run/modprobe
chmod 755 /run/modprobe
echo /run/modprobe > /proc/sys/kernel/modprobe
for m in sunrpc nfsd nfs nfsv3 nfsv4 raid456 bridge sch_netem ifb act_mirred cls_matchall; do run /run/modprobe "$m"; done

step memory
# The lab's guest wedge, reproduced (2026-11-24) with the kernel's own 2 MiB reserve: a
# client reading a file larger than its RAM over NFS fills the page cache; vec0's
# receive ring is refilled with atomic high-order buffers (MTU 9000 plus vnet
# headers), which need free blocks above 512 KiB; none are left, compaction
# (kcompactd) blocks in D state on page-cache pages whose NFS reads wait for those
# very buffers, and the network dies with the guest ("server not responding", SSH
# silent; sysrq m showed 10 MiB free, nothing above order 7). A 32 MiB reserve keeps
# the high-order blocks free, so the ring never depends on compaction: the same read
# runs for ever with it. Dirty data is kept small for the same reason.
echo 32768 > /proc/sys/vm/min_free_kbytes
echo 16777216 > /proc/sys/vm/dirty_background_bytes
echo 67108864 > /proc/sys/vm/dirty_bytes
# Bit 4 silences drop_caches' console line: the benchmarks drop caches before every cold
# read, and a wedged guest's console tail must show the kernel's last words, not those.
echo 4 > /proc/sys/vm/drop_caches

step userland
# A fetched kernel brings the newer tools it needs (tests/lab/kernels.py: nfsdctl, with its
# own C library under /run/lab-userland/lib). They join /usr/sbin as the distribution puts
# them: a tmpfs of links to the host's /usr/sbin, with theirs beside them.
if [ -n "${lab_userland:-}" ]; then
    mkdir -p /run/lab-userland /run/lab-sbin
    run mount -t hostfs -o "$lab_userland" none /run/lab-userland
    run mount -t tmpfs -o mode=755 tmpfs /run/lab-sbin
    run cp -as /host/usr/sbin/. /run/lab-sbin/
    for tool in /run/lab-userland/sbin/*; do ln -sf "$tool" "/run/lab-sbin/${tool##*/}"; done
    run mount --bind /run/lab-sbin /usr/sbin
fi

step identity
hostname "$lab_name"
mkdir -p /run/lab-etc
{
    echo "127.0.0.1 localhost"
    echo "$lab_server_ip lab-server"
    echo "$lab_client1_ip lab-client1"
    echo "$lab_client2_ip lab-client2"
} > /run/lab-etc/hosts
echo "$lab_name" > /run/lab-etc/hostname
# Two extra logins for privilege tests: tuner (passwordless sudo) and nosudo.
cp /etc/passwd /etc/shadow /etc/group /run/lab-etc/
echo "tuner:x:2001:100:nfs-tuner lab:/home/tuner:/bin/sh" >> /run/lab-etc/passwd
echo "nosudo:x:2002:100:nfs-tuner lab, no sudo:/home/nosudo:/bin/sh" >> /run/lab-etc/passwd
echo "tuner:*:19000:0:99999:7:::" >> /run/lab-etc/shadow
echo "nosudo:*:19000:0:99999:7:::" >> /run/lab-etc/shadow
mkdir -p /run/lab-etc/sudoers.d
echo "tuner ALL=(ALL) NOPASSWD: ALL" > /run/lab-etc/sudoers.d/lab
chmod 440 /run/lab-etc/sudoers.d/lab
for f in hosts hostname passwd shadow group sudoers.d; do
    run mount --bind "/run/lab-etc/$f" "/etc/$f"
done

step network
# UML's vec0 cannot raise its MTU above 1500 once running (its maximum is fixed),
# but it can start at 9000. So vec0 is the "cable" at 9000 and the host's NIC is
# lan0, a bridge over it, whose MTU moves freely between 68 and 9000 like a real
# NIC's; it starts at the usual 1500.
run ip link set lo up
run ip link set vec0 up
run ip link add lan0 type bridge
run ip link set vec0 master lan0
run ip link set lan0 mtu 1500 up
run ip addr add "$lab_ip/24" dev lan0
# UML's vec0 hears of received frames by an edge-triggered epoll: one missed edge while
# the host's tap queue is full and the guest never receives again (SSH silent, NFS reads
# waiting for ever, memory plentiful). The watchdog reopens vec0 when the switch stops
# answering and says so on the console ("LAB-KICK"): see rx_watchdog.py.
python3 "${0%/*}/rx_watchdog.py" vec0 "$lab_bridge_ip" </dev/null >/dev/null 2>&1 &

step sshd
mkdir -p /run/sshd /root/.ssh
chmod 700 /root/.ssh
cp "$lab_dir/keys/id_ed25519.pub" /root/.ssh/authorized_keys
for u in tuner nosudo; do
    mkdir -p "/home/$u/.ssh"
    cp "$lab_dir/keys/id_ed25519.pub" "/home/$u/.ssh/authorized_keys"
    chown -R "$u:100" "/home/$u"
    chmod 700 "/home/$u" "/home/$u/.ssh"
done
run /usr/sbin/sshd -f "$lab_dir/sshd_config" -h "$lab_dir/hosts/$lab_name/ssh_host_ed25519_key" \
    -E /var/log/sshd.log

step rpc
mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery /var/lib/nfs/sm /var/lib/nfs/sm.bak /run/rpcbind
touch /var/lib/nfs/etab /var/lib/nfs/rmtab
chown statd /var/lib/nfs/sm /var/lib/nfs/sm.bak 2>/dev/null
run mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs
run rpcbind -w
run rpc.statd --no-notify

if [ "$lab_role" = server ]; then
    step disks
    # Each RAID member is a dm-delay device over its ubd disk, passing straight
    # through (0 ms) until a lab profile gives reads, writes and flushes the cost of
    # a real disk (`dmsetup load` on the running lab: tests/lab/profiles.py).
    run /run/modprobe dm-delay
    members=""
    for d in a b c; do
        sectors=$(blockdev --getsz "/dev/ubd$d") || fail "cannot size /dev/ubd$d"
        run dmsetup create "lab-md-$d" --table "0 $sectors delay /dev/ubd$d 0 0 /dev/ubd$d 0 0 /dev/ubd$d 0 0"
        members="$members /dev/mapper/lab-md-$d"
    done
    run dmsetup mknodes
    step raid
    # shellcheck disable=SC2086
    run mdadm --create /dev/md0 --run --quiet --level=5 --raid-devices=3 --chunk=512 \
        --assume-clean $members
    step filesystem
    # 2.5 million inodes (ext4's default ratio gives 262,144 here): a directory study of a
    # million entries per layout fits (benchmarks/dir_scaling.py).
    run mkfs.ext4 -q -F -N 2500000 -E lazy_itable_init=1,lazy_journal_init=1 -L labexport /dev/md0
    mkdir -p /srv/nfs
    # noinit_itable: no background zeroing of the 2.5 million inodes' tables (640 MB through the
    # RAID) while the lab runs; the members are fresh sparse files, zero already.
    run mount -o noatime,noinit_itable /dev/md0 /srv/nfs
    chmod 1777 /srv/nfs

    step nfsd
    echo "/srv/nfs $lab_subnet(rw,sync,no_subtree_check,no_root_squash)" > /run/lab-etc/exports
    run mount --bind /run/lab-etc/exports /etc/exports
    run mount -t nfsd nfsd /proc/fs/nfsd
    # knfsd caps rsize/wsize by RAM (128 KiB at this size): allow the 1 MiB maximum.
    echo 1048576 > /proc/fs/nfsd/max_block_size
    # A short v4 grace period, so a fresh lab serves NFSv4 opens within seconds.
    echo 10 > /proc/fs/nfsd/nfsv4gracetime
    echo 15 > /proc/fs/nfsd/nfsv4leasetime
    run exportfs -ra
    run rpc.mountd
    run rpc.nfsd 8
fi

step ready
echo "LAB-READY $lab_name"
hang
