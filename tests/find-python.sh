#!/bin/sh
# Print the path of a Python >= 3.12 interpreter, or explain which to install.
ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }
for cand in "${PYTHON:-}" python3.14 python3.13 python3.12 python3; do
    [ -n "$cand" ] || continue
    path=$(command -v "$cand" 2>/dev/null) || continue
    if ok "$path"; then echo "$path"; exit 0; fi
done
# pyenv installs that are not the global version (the shim then refuses to run them)
for path in "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 /usr/local/bin/python3.1[2-9] /opt/python*/bin/python3; do
    [ -x "$path" ] && ok "$path" && { echo "$path"; exit 0; }
done
cat >&2 <<'MSG'
nfs-tuner needs Python 3.12 or newer, and none was found.
  Debian 13 / Ubuntu 24.04:  sudo apt-get install python3 python3-venv
  Debian 12 / Ubuntu 22.04:  install python3.12 (pyenv, or the deadsnakes PPA on Ubuntu:
                             sudo apt-get install python3.12 python3.12-venv)
Then run make again, or point to it: make PYTHON=/path/to/python3.12 run
MSG
exit 1
