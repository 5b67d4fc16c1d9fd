#!/bin/sh
# Render the hicolor PNG icons from the scalable SVG. Run once after editing the SVG and
# commit the PNGs, so neither installing nor the bundle needs librsvg.
# Needs rsvg-convert (Debian: apt-get install librsvg2-bin).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir="$here/../resources/desktop"
app=io.github.nfs_tuner.NfsTuner
command -v rsvg-convert >/dev/null 2>&1 || {
    echo "render-icons: rsvg-convert not found; install librsvg2-bin" >&2
    exit 1
}
for size in 48 128 256; do
    rsvg-convert --width "$size" --height "$size" --keep-aspect-ratio \
        "$dir/$app.svg" --output "$dir/$app-$size.png"
    echo "render-icons: wrote resources/desktop/$app-$size.png"
done
