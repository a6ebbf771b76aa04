#!/usr/bin/env python3
"""Benchmark thumbnailing a 12-megapixel JPEG photo (lib/thumbnails.py), time and memory.

Makes a 4000x3000 JPEG with photo-like content (gradients and noise, EXIF orientation set), then,
each in a fresh subprocess so that peak memory is the operation's own: the baseline (Pillow
decoding the whole image, what a naive thumbnailer starts with) and make_thumbnails. Prints
wall-clock and CPU seconds (best of --repeat), the growth of peak RSS over the process's start,
and the ratio to the baseline. Targets: under 1 s and under 150 MiB.

    python scripts/bench_thumbnails.py
    python scripts/bench_thumbnails.py --interference [--seconds 5] [--rate 4]

With --interference: against a real `serve`, a member uploads the worst images in a loop (a 3 KB
GIF of 120 one-pixel frames on a 3100x3100 canvas, a PNG of 9400x9400, an EPS file named `.png`,
and the 12 MP photo) while another member's GET /users/me is timed, beside a baseline measured in
the same run with nothing else running; the server's peak RSS is reported too. Target: p99
under 50 ms. `--rate N` holds the uploader to N uploads a second: an uploader that no longer
waits for decodes uploads more images in the same time, so comparing two versions of the server
is fair only at one rate.
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


def run_interference(seconds: float, rate: float | None = None) -> None:
    import threading

    import psutil
    import requests

    sys.path.insert(0, str(ROOT / "scripts"))
    sys.path.insert(0, str(ROOT))
    from benchlib import latencies_while, report, serve_with_member
    from tests.support.images import EPS, gif_canvas_with_tiny_frames, png_of_zeros

    with tempfile.TemporaryDirectory() as tmp:
        photo = Path(tmp) / "photo.jpg"
        make_photo(photo)
        files = [("frames.gif", gif_canvas_with_tiny_frames()), ("big.png", png_of_zeros()),
                 ("drawing.png", EPS), ("photo.jpg", photo.read_bytes())]
        server, owner, member = serve_with_member(Path(tmp) / "instance")
        process = psutil.Process(server.process.pid)
        peak = [process.memory_info().rss]
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                peak[0] = max(peak[0], process.memory_info().rss)
                time.sleep(0.02)

        threading.Thread(target=watch, daemon=True).start()
        try:
            session = requests.Session()
            session.auth = owner
            turn = [0]

            def attack():
                name, data = files[turn[0] % len(files)]
                turn[0] += 1
                session.post(f"{server.url}/api/v1/user_uploads", files={"file": (name, data)}).raise_for_status()

            start_rss = process.memory_info().rss
            baseline = report("baseline (nothing else running)", latencies_while(server.url, member, seconds)[0])
            times, calls = latencies_while(server.url, member, seconds, attack, per_second=rate)
            loaded = report("while the worst images are uploaded", times, calls)
            print(f"server RSS: {start_rss / 2**20:.0f} MiB before, {peak[0] / 2**20:.0f} MiB at its peak")
            print(f"target < 50 ms while the uploads run: p50 {'ok' if loaded[0] < 50 else 'OVER'}, "
                  f"p99 {'ok' if loaded[1] < 50 else 'OVER'} (baseline p50 {baseline[0]:.1f}, p99 {baseline[1]:.1f} ms)")
        finally:
            stop.set()
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--interference", action="store_true", help="time a bystander while the worst images upload")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each --interference measurement")
    parser.add_argument("--rate", type=float, default=None, help="--interference: at most this many uploads a second")
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.interference:
        run_interference(args.seconds, args.rate)
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
