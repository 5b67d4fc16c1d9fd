#!/bin/sh
# Build the single-file nfs-tuner bundle with PyInstaller.
#   packaging/build-bundle.sh            -> build/bundle/nfs-tuner
#   packaging/build-bundle.sh DIST_DIR   -> DIST_DIR/nfs-tuner
# The build venv (only the runtime dependencies from pyproject.toml plus PyInstaller) is
# kept in build/bundle-venv and reused; BUNDLE_VENV moves it, BUNDLE_WORK moves the
# PyInstaller work dir, PYTHON picks the interpreter (Python >= 3.12 with a shared libpython).
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
dist=${1:-$repo/build/bundle}
work=${BUNDLE_WORK:-$repo/build/bundle-work}
venv=${BUNDLE_VENV:-$repo/build/bundle-venv}
pyinstaller_req='pyinstaller>=6.10,<7'
py=${PYTHON:-}
[ -n "$py" ] || py=$(sh "$repo/tests/find-python.sh")

mkdir -p "$(dirname "$venv")"
# Two builds at once share the venv: let one set it up at a time.
exec 9>"$venv.lock"
flock 9

# The runtime dependencies, straight from pyproject.toml (so the bundle gets what a
# pip install gets, not the test tools of the project venv).
reqs=$("$py" -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' "$repo/pyproject.toml")
stamp="$venv/.bundle-reqs"
want=$(printf '%s\n%s\n' "$reqs" "$pyinstaller_req")
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "build-bundle: preparing $venv"
    rm -rf "$venv"
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
    printf '%s\n' "$want" > "$venv/.reqs.txt"
    "$venv/bin/python" -m pip install -q -r "$venv/.reqs.txt"
    printf '%s\n' "$want" > "$stamp"
fi
flock -u 9

echo "build-bundle: building $dist/nfs-tuner"
start=$(date +%s)
# --noconfirm: replace an earlier build; the spec finds the sources from its own path.
"$venv/bin/python" -m PyInstaller --noconfirm --log-level WARN \
    --distpath "$dist" --workpath "$work" "$repo/packaging/nfs-tuner.spec"
end=$(date +%s)
size=$(du -h "$dist/nfs-tuner" | cut -f1)
echo "build-bundle: $dist/nfs-tuner ($size) built in $((end - start)) s"
