#!/bin/sh
# `make test`: every test, within CI's 30 minutes on two cores, as seven runs side by side:
#   1. the lab's tests of share 1 on the lab in .lab, on $KERNEL as are shares 2 and 3, on this terminal;
#   2. those of share 2 on a second lab (.lab-share2);
#   3. those of share 3 on a third (.lab-share3);
#   4. on a fourth lab (.lab-second) of the second kernel ($SECOND; empty: none), the tests marked every_kernel;
#   5. on a fifth (.lab-calibrated) of that kernel, those marked calibrated (tests of the lab's figures,
#      measured on 6.1, its default kernel; on another kernel they are not chosen);
#   6. the packaging tests (tests/packaging), niced a little;
#   7. every other test that needs no lab, niced as much: the guests keep their timing.
# The shares boot UML 7.2, which catches its guests' system calls with seccomp: it costs the host half the
# CPU of 6.1's ptrace (tests/lab/kernels.py), and CPU is what bounds this run (UML's guests cost host CPU for
# every syscall): together the runs keep both cores busy, so the whole takes about their CPU work over two,
# and balancing them (tests/conftest.py says which files are in which share) saves only a lone run's tail.
# The logs of 2-6 are printed when they end; the status is the worst.
# Each run has its own --basetemp: pytest's numbered temporary directories are pruned by whichever run
# starts next, and the runs here overlap.
# Usage: tests/run-suites.sh PYTHON KERNEL SECOND_KERNEL [PYTEST_ARGS...]
set -u
py=$1
kernel=$2
second=$3
shift 3
export NFS_TUNER_LAB_KERNEL="$kernel"
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# pytest's 5: the arguments selected none of that run's tests (e.g. PYTEST_ARGS names one file)
ok() { [ "$1" = 0 ] || [ "$1" = 5 ]; }

NFS_TUNER_LAB_SHARE=2 NFS_TUNER_LAB_DIR="$here/.lab-share2" \
    "$py" -m pytest -m lab --basetemp="$logs/share2" "$@" >"$logs/share2.log" 2>&1 &
share2=$!

NFS_TUNER_LAB_SHARE=3 NFS_TUNER_LAB_DIR="$here/.lab-share3" \
    "$py" -m pytest -m lab --basetemp="$logs/share3" "$@" >"$logs/share3.log" 2>&1 &
share3=$!

second_pid=
calibrated_pid=
if [ -n "$second" ]; then
    NFS_TUNER_LAB_KERNEL="$second" NFS_TUNER_LAB_DIR="$here/.lab-second" "$py" -m pytest -m "lab and every_kernel" \
        --basetemp="$logs/second" "$@" >"$logs/second.log" 2>&1 &
    second_pid=$!
    NFS_TUNER_LAB_KERNEL="$second" NFS_TUNER_LAB_DIR="$here/.lab-calibrated" "$py" -m pytest -m "lab and calibrated" \
        --basetemp="$logs/calibrated" "$@" >"$logs/calibrated.log" 2>&1 &
    calibrated_pid=$!
fi

# The packages (wheel, .deb and lintian, the bundle: minutes of CPU) in a run of their own, less niced: done
# while the labs run, not after them at the end of the niced run.
# (PYTEST_ARGS given: they choose, in the one niced run.)
packaging=
skip=
if [ $# -eq 0 ]; then
    nice -n 5 "$py" -m pytest -m "not lab" --basetemp="$logs/packaging" tests/packaging >"$logs/packaging.log" 2>&1 &
    packaging=$!
    skip=--ignore=tests/packaging
fi

# Niced, its UI tests' waits (bounds for a hang, tests/ui/conftest.py) are stretched to match.
NFS_TUNER_TEST_WAIT_SCALE=4 nice -n 5 "$py" -m pytest -m "not lab" --basetemp="$logs/rest" $skip "$@" >"$logs/rest.log" 2>&1 &
rest=$!

NFS_TUNER_LAB_SHARE=1 "$py" -m pytest -m lab --basetemp="$logs/share1" "$@"
first=$?
wait "$share2"
share2_code=$?
wait "$share3"
share3_code=$?
second_code=5
calibrated_code=5
if [ -n "$second_pid" ]; then
    wait "$second_pid"
    second_code=$?
    wait "$calibrated_pid"
    calibrated_code=$?
fi
packaging_code=5
if [ -n "$packaging" ]; then
    wait "$packaging"
    packaging_code=$?
fi
wait "$rest"
rest_code=$?
echo
echo "==================== the lab's share 2 ===================="
cat "$logs/share2.log"
echo
echo "==================== the lab's share 3 ===================="
cat "$logs/share3.log"
echo
if [ -n "$second_pid" ]; then
    echo "==================== the lab on the second kernel ($second): every_kernel ===================="
    cat "$logs/second.log"
    echo
    echo "==================== the lab on the second kernel ($second): calibrated ===================="
    cat "$logs/calibrated.log"
    echo
fi
if [ -n "$packaging" ]; then
    echo "==================== the packages ===================="
    cat "$logs/packaging.log"
    echo
fi
echo "==================== every other test that needs no lab ===================="
cat "$logs/rest.log"
echo
echo "run-suites: lab share 1 exit $first; share 2 exit $share2_code; share 3 exit $share3_code; the second" \
    "kernel exit $second_code, calibrated $calibrated_code; the packages exit $packaging_code; the rest exit $rest_code"
status=0
for c in "$first" "$share2_code" "$share3_code" "$second_code" "$calibrated_code" "$packaging_code" "$rest_code"; do
    ok "$c" || status=1
done
exit "$status"
