#!/usr/bin/env python3
"""Benchmark thumbnailing a 12-megapixel JPEG photo (lib/thumbnails.py), time and memory.

Makes a 4000x3000 JPEG with photo-like content (gradients and noise, EXIF orientation set), then,
each in a fresh subprocess so that peak memory is the operation's own: the baseline (Pillow
decoding the whole image, what a naive thumbnailer starts with) and make_thumbnails. Prints
wall-clock and CPU seconds (best of --repeat), the growth of peak RSS over the process's start,
and the ratio to the baseline. Targets: under 1 s and under 150 MiB.

    python scripts/bench_thumbnails.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 1.0
TARGET_MIB = 150


def make_photo(path: Path) -> None:
    from PIL import Image

    width, height = 4000, 3000
    gradient = Image.linear_gradient("L").resize((width, height))
    noise = Image.effect_noise((width, height), 60)
    photo = Image.merge("RGB", (gradient, noise, gradient.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
    exif = Image.Exif()
    exif[0x0112] = 6
    photo.save(path, "JPEG", quality=90, exif=exif.tobytes())


def peak_rss_kib() -> int:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the
    parent that forked it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise SystemExit("needs Linux /proc")


def child(mode: str, source: str, out: str) -> None:
    from PIL import Image

    if mode != "baseline":
        from chat_appliance.lib.thumbnails import make_thumbnails
    start_rss = peak_rss_kib()
    wall = time.perf_counter()
    cpu = time.process_time()
    if mode == "baseline":
        with Image.open(source) as image:
            image.load()
    else:
        make_thumbnails(Path(source), Path(out))
    result = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
              "mib": (peak_rss_kib() - start_rss) / 1024}
    print(json.dumps(result))


def run(mode: str, source: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", mode, str(source), str(out)],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "photo.jpg"
        make_photo(source)
        print(f"12 MP JPEG: {source.stat().st_size / 1e6:.1f} MB")
        rows = {}
        for mode in ("baseline", "thumbnail"):
            runs = [run(mode, source, Path(tmp) / f"out{i}") for i in range(args.repeat)]
            rows[mode] = {"wall": min(r["wall"] for r in runs), "cpu": min(r["cpu"] for r in runs),
                          "mib": max(r["mib"] for r in runs)}
        base = rows["baseline"]
        print(f"{'':<28}{'wall':>9}{'cpu':>9}{'peak +RSS':>12}")
        for mode, label in (("baseline", "Pillow full decode (baseline)"), ("thumbnail", "make_thumbnails")):
            r = rows[mode]
            print(f"{label:<30}{r['wall']:>7.3f}s{r['cpu']:>8.3f}s{r['mib']:>9.0f} MiB")
        t = rows["thumbnail"]
        print(f"thumbnail / baseline: {t['cpu'] / base['cpu']:.2f}x CPU, {t['mib'] / max(base['mib'], 1):.2f}x memory; "
              f"targets: {'ok' if t['wall'] < TARGET_SECONDS else 'OVER'} (< {TARGET_SECONDS:g} s), "
              f"{'ok' if t['mib'] < TARGET_MIB else 'OVER'} (< {TARGET_MIB} MiB)")


if __name__ == "__main__":
    main()
