#!/usr/bin/env python3
"""Drift without clock information on the recorded-speech rooms.

Takes the scenes of an `aec_eval.py --scenario h --workdir DIR` run (f's and
g's six rooms at 16 and 48 kHz, four contents) and, for each, builds an
echo-only microphone: the scene's echo resampled by 1 + ppm·1e-6 (so that,
with the calls in lockstep, the echo slides against its reference as with a
microphone clock ppm off the loudspeaker's; FFT resampling, no interpolation
error of its own) plus the scene's own noise, for +200 and -200 ppm and for
no drift (`--ppm P`, repeatable, for other offsets: one table per offset,
the runs without drift shared). Each rtmix-cli given runs on every microphone (`aec`, no hint, no
clock information); the table gives the median ERLE after 10 s (the CLI's
summary) and the final drift estimate, and the summary how far each drifting
run falls under the same scene without drift.

Usage: drift_rooms.py --scenes DIR [--prefix h0 ...] [--ppm 200 --ppm 80 ...] --workdir OUT CLI [CLI ...]
"""
import argparse
import json
import os
import subprocess

import numpy as np
import soundfile as sf
from scipy import signal


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", required=True, help="workdir of an aec_eval.py scenario h run")
    ap.add_argument("--prefix", action="append", help="scene name prefixes (default h0, h1, h2 and h3: all four "
                    "contents; until 2026-12-03 only h0 and h2, whose runs fail less often)")
    ap.add_argument("--workdir", required=True, help="where the drifted microphones and outputs go")
    ap.add_argument("--ppm", type=float, action="append",
                    help="drift between the clocks, run at + and - (repeatable; default 200: the issue's figure; "
                    "slower slides fail differently, see docs/capture.md)")
    ap.add_argument("cli", nargs="+", help="rtmix-cli binaries to compare")
    args = ap.parse_args()
    prefixes = tuple(args.prefix or ["h0", "h1", "h2", "h3"])
    scenes = [d for d in sorted(os.listdir(args.scenes)) if d.startswith(prefixes)]
    if not scenes:
        raise SystemExit(f"no scenes starting with {prefixes} in {args.scenes}")
    ppms = args.ppm or [200.0]
    offsets = (0.0,) + tuple(x for p in ppms for x in (p, -p))

    def make(name, ppm):
        out = os.path.join(args.workdir, f"{name}-{ppm:+.0f}")
        if os.path.exists(os.path.join(out, "mic.wav")):
            return out
        os.makedirs(out, exist_ok=True)
        src = os.path.join(args.scenes, name)
        echo, rate = sf.read(os.path.join(src, "echo.wav"))
        mic, _ = sf.read(os.path.join(src, "mic.wav"))
        talker, _ = sf.read(os.path.join(src, "talker.wav"))
        n = min(len(echo), len(mic), len(talker))
        noise = mic[:n] - echo[:n] - talker[:n]
        slid = echo[:n]
        if ppm:
            x = signal.resample(echo[:n], int(round(n * (1 + ppm * 1e-6))))[:n]
            slid = np.zeros(n)
            slid[:len(x)] = x
        sf.write(os.path.join(out, "mic.wav"), (slid + noise).astype(np.float32), rate, subtype="FLOAT")
        os.symlink(os.path.abspath(os.path.join(src, "playout.wav")), os.path.join(out, "playout.wav"))
        return out

    result = {}
    for name in scenes:
        for ppm in offsets:
            d = make(name, ppm)
            for i, cli in enumerate(args.cli):
                js = os.path.join(d, f"out{i}.json")
                subprocess.run([cli, "aec", "--mic", os.path.join(d, "mic.wav"), "--ref", os.path.join(d, "playout.wav"),
                                "-o", os.path.join(d, f"out{i}.wav"), "--json", js, "-q", "--settle", "10"],
                               check=True, capture_output=True)
                s = json.load(open(js))["summary"]
                result[(name, ppm, i)] = (s["medianErleDb"], s["finalDriftPpm"])
    for p in ppms:
        for i, cli in enumerate(args.cli):
            print(f"## {cli}" + (f", ±{p:.0f} ppm" if len(ppms) > 1 else "") + "\n")
            print(f"| scene | no drift | {p:+.0f} ppm (estimate) | {-p:+.0f} ppm (estimate) |")
            print("|---|---|---|---|")
            gaps = []
            groups = {}
            for name in scenes:
                base = result[(name, 0.0, i)][0]
                cells = []
                for ppm in (p, -p):
                    erle, est = result[(name, ppm, i)]
                    gaps.append(base - erle)
                    groups.setdefault((name[:2], name.split("-")[1]), []).append(base - erle)
                    cells.append(f"{erle:.1f} dB ({est:+.0f})")
                print(f"| {name} | {base:.1f} dB | " + " | ".join(cells) + " |")
            g = np.array(gaps)
            print(f"\nUnder no drift: median {np.median(g):.1f} dB, max {g.max():.1f} dB, "
                  f"more than 3 dB in {(g > 3).sum()} of {len(g)} runs.")
            print("By contents and rate (runs more than 3 dB under / runs, worst): " + "; ".join(
                f"{c} {r[:2]} kHz {sum(x > 3 for x in v)} / {len(v)}, {max(v):.1f} dB"
                for (c, r), v in sorted(groups.items())) + "\n")

if __name__ == "__main__":
    main()
