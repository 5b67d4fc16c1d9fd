#!/bin/sh
# Build nfs-tuner_<version>-1_<arch>.deb: the app in a private Python environment under
# /usr/lib/nfs-tuner (its own CPython >= 3.12 and the PyPI wheels of pyproject.toml, since
# Debian 12 has neither Python 3.12 nor PySide6, and Debian 13's PySide6 6.8 is older than
# the 6.9.2 nfs-tuner needs), a /usr/bin launcher, the man page, the completions of bash, zsh
# and fish, the desktop entry, AppStream metainfo and icons.
#   packaging/deb/build-deb.sh WHEEL [OUT_DIR]     (make deb builds the wheel first)
# PYTHON: the interpreter to embed, a self-contained CPython prefix (pyenv, or ./configure
# --prefix): its bin/python3.X, libpython and standard library are copied. DEB_COMPRESS:
# dpkg-deb's compressor (default xz; the install test uses gzip -1 to save a minute).
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=${2:-$repo/build}
py=${PYTHON:-}
[ -n "$py" ] || py=$(sh "$repo/tests/find-python.sh")
compress=${DEB_COMPRESS:-xz}
level=${DEB_COMPRESS_LEVEL:-6}
start=$(date +%s)

for tool in dpkg-deb dpkg-shlibdeps patchelf fakeroot; do
    command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing (Debian: dpkg-dev, patchelf, fakeroot)" >&2; exit 1; }
done

version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$repo/app/__init__.py")
debver="$version-1"
arch=$(dpkg --print-architecture)
work="$out/deb-work"
root="$work/root"
lib="$root/usr/lib/nfs-tuner"
rm -rf "$work"
mkdir -p "$lib/bin" "$lib/lib" "$root/DEBIAN"

# 1. The interpreter: its binary, libpython and standard library, found beside the binary ($ORIGIN).
eval "$("$py" -c "import sys, sysconfig as s; v = sys.version_info
print(f'prefix={sys.base_prefix} pyver={v[0]}.{v[1]} shared={s.get_config_var(\"Py_ENABLE_SHARED\") or 0}')")"
case "$prefix" in
    /usr|/usr/local) echo "build-deb: $py is the system's Python ($prefix), which cannot be copied whole;" \
        "give a self-contained CPython >= 3.12 as PYTHON (e.g. a pyenv install)" >&2; exit 1 ;;
esac
cp "$prefix/bin/python$pyver" "$lib/bin/python$pyver"
ln -s "python$pyver" "$lib/bin/python3"
if [ "$shared" = 1 ]; then
    cp -P "$prefix"/lib/libpython"$pyver".so* "$lib/lib/"
    patchelf --set-rpath '$ORIGIN/../lib' "$lib/bin/python$pyver"
fi

(cd "$prefix/lib" && tar -cf - --exclude='*.a' --exclude=__pycache__ --exclude="python$pyver/test" --exclude="python$pyver/idlelib" \
    --exclude="python$pyver/tkinter" --exclude="python$pyver/turtledemo" --exclude="python$pyver/ensurepip" \
    --exclude="python$pyver/lib2to3" --exclude="python$pyver/config-*" --exclude="python$pyver/site-packages/*" \
    --exclude="python$pyver/lib-dynload/_tkinter*" --exclude="python$pyver/lib-dynload/_test*" \
    --exclude="python$pyver/lib-dynload/xxlimited*" --exclude="python$pyver/lib-dynload/_xxtest*" \
    --exclude="python$pyver/lib-dynload/_ctypes_test*" --exclude="python$pyver/ctypes/macholib/fetch_macholib*" \
    "python$pyver") | tar -xf - -C "$lib/lib"
# A source build keeps its debug symbols (30 MB in libpython): stripped, as Debian ships them. Its
# extension modules find libpython beside the interpreter, not in the build machine's prefix.
find "$lib" -type f \( -name "python$pyver" -o -name 'libpython*.so*' -o -path '*/lib-dynload/*.so' \) \
    -exec strip --strip-unneeded {} +
find "$lib/lib/python$pyver/lib-dynload" -name '*.so' -exec patchelf --set-rpath '$ORIGIN/../..' {} \;
find "$lib/lib" -maxdepth 1 -name 'libpython*.so.*' -exec patchelf --remove-rpath {} \;
staged="$lib/bin/python$pyver"
"$staged" -I -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib' || {
    echo "build-deb: the copied interpreter does not start or lacks a module" >&2; exit 1; }

# 2. nfs-tuner and its dependencies from PyPI, installed by the build's pip into the copy.
"$py" -m pip --python "$staged" install -q --no-compile --no-warn-script-location --disable-pip-version-check \
    --root-user-action=ignore "$wheel"
find "$lib/bin" -mindepth 1 ! -name "python$pyver" ! -name python3 -exec rm -f {} +  # pip's scripts name the build dir
site="$lib/lib/python$pyver/site-packages"
"$py" "$repo/packaging/deb/prune_env.py" "$site"

# 3. The launcher: -I (no PYTHONPATH or user site can change the app), -B (no bytecode written at run
#    time: postinst compiles it once, prerm removes it, so removal leaves nothing).
mkdir -p "$root/usr/bin"
cat > "$root/usr/bin/nfs-tuner" <<LAUNCHER
#!/bin/sh
# nfs-tuner, in its own Python environment (/usr/lib/nfs-tuner)
exec /usr/lib/nfs-tuner/bin/python$pyver -I -B -c 'import sys; from ui.entry import main; sys.argv[0] = sys.argv.pop(1); sys.exit(main())' "\$0" "\$@"
LAUNCHER
chmod 0755 "$root/usr/bin/nfs-tuner"

# 4. The man page and the completions, made by the packaged app itself from its parser.
share="$root/usr/share"
mkdir -p "$share/man/man1" "$share/bash-completion/completions" "$share/zsh/vendor-completions" \
    "$share/fish/vendor_completions.d"
"$staged" -I -B -m app.shell.manpage | gzip -9n > "$share/man/man1/nfs-tuner.1.gz"
"$staged" -I -B -m app completion bash > "$share/bash-completion/completions/nfs-tuner"
"$staged" -I -B -m app completion zsh > "$share/zsh/vendor-completions/_nfs-tuner"
"$staged" -I -B -m app completion fish > "$share/fish/vendor_completions.d/nfs-tuner.fish"

# 5. Desktop entry, metainfo, icons: the files the wheel carries.
desk="$repo/resources/desktop"
id=io.github.nfs_tuner.NfsTuner
install -D -m 0644 "$desk/$id.desktop" "$share/applications/$id.desktop"
install -D -m 0644 "$desk/$id.metainfo.xml" "$share/metainfo/$id.metainfo.xml"
install -D -m 0644 "$desk/$id.svg" "$share/icons/hicolor/scalable/apps/$id.svg"
for n in 48 128 256; do
    install -D -m 0644 "$desk/$id-$n.png" "$share/icons/hicolor/${n}x$n/apps/$id.png"
done

# 6. Documentation: copyright, changelog, what is embedded (versions an admin checks for advisories).
doc="$share/doc/nfs-tuner"
mkdir -p "$doc" "$share/lintian/overrides"
cp "$repo/packaging/deb/copyright" "$doc/copyright"
date=$(date -R -d "$(sed -n 's/.*<release version="'"$version"'" date="\([0-9-]*\)".*/\1/p' "$desk/$id.metainfo.xml") 12:00")
printf 'nfs-tuner (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- nfs-tuner maintainers <nfs-tuner@users.noreply.github.com>  %s\n' \
    "$debver" "$version" "$date" | gzip -9n > "$doc/changelog.Debian.gz"
{ echo "Python $("$staged" -I -c 'import platform; print(platform.python_version())') (from $prefix)";
  "$py" -m pip --python "$staged" list --format=freeze --disable-pip-version-check 2>/dev/null; } > "$doc/embedded.txt"
cp "$repo/packaging/deb/lintian-overrides" "$share/lintian/overrides/nfs-tuner"

# Libraries and sources are not programs: only the interpreter is executable. No bytecode ships.
find "$lib/lib" -type f -perm /111 -exec chmod a-x {} +
# A module's "#!" line (cgi.py's /usr/local/bin/python) names an interpreter that is not there and
# never runs it: blanked, keeping line numbers for tracebacks.
find "$lib/lib" -name '*.py' -exec grep -l '^#!' {} + | xargs -r sed -i '1s/^#!.*/#/'
find "$lib" -name __pycache__ -type d -prune -exec rm -rf {} +

# 7. Maintainer scripts and control: Depends from the ELF files (dpkg-shlibdeps), libraries inside
#    the package found in it.
install -m 0755 "$repo/packaging/deb/postinst" "$repo/packaging/deb/prerm" "$root/DEBIAN/"
sed -i "s/@PYVER@/$pyver/" "$root/DEBIAN/postinst"
elves=$(find "$lib" -type f \( -name '*.so*' -o -path "*/bin/python$pyver" \) -exec sh -c \
    'for f; do [ "$(head -c 4 "$f" | od -An -c | tr -d " ")" = "177ELF" ] && echo "$f"; done' sh {} +)
mkdir -p "$work/debian"
printf 'Source: nfs-tuner\n\nPackage: nfs-tuner\nArchitecture: any\n' > "$work/debian/control"
libdirs=$(find "$lib" -name '*.so*' -type f -exec dirname {} + | sort -u | sed 's/^/-l/' | tr '\n' ' ')
# shellcheck disable=SC2086
depends=$(cd "$work" && dpkg-shlibdeps -O --ignore-missing-info $libdirs $elves 2>"$work/shlibdeps.log" \
    | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { cat "$work/shlibdeps.log" >&2; echo "build-deb: dpkg-shlibdeps failed" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$debver/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    "$repo/packaging/deb/control" > "$root/DEBIAN/control"
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"

deb="$out/nfs-tuner_${debver}_$arch.deb"
fakeroot dpkg-deb --root-owner-group -Z"$compress" -z"$level" --build "$root" "$deb" >/dev/null
echo "build-deb: $deb ($(du -h "$deb" | cut -f1), $((size / 1024)) MiB installed) in $(( $(date +%s) - start )) s"
