#!/usr/bin/env python3
"""How much error the evaluation's clock-drift simulation adds by itself.

Resamples sines by 1 + 200 ppm with scipy's default resample_poly filter and
with aec_eval.drift's filter, and prints the error against the sine computed
at the new sample times (dB under the sine). A drifting run's ERLE cannot
exceed this: the canceller's reference never carries the simulator's error.
Usage: drift_check.py [rate]   (default 16000)
"""
import sys

import numpy as np
from scipy import signal

sys.path.insert(0, __import__("os").path.dirname(__file__))
from aec_eval import drift_filter  # noqa: E402

rate = int(sys.argv[1]) if len(sys.argv) > 1 else 16000
up, down = 5001, 5000  # +200 ppm
t = np.arange(3 * rate)
freqs = [f for f in (0.03, 0.125, 0.25, 0.375, 0.4375, 0.46875, 0.4875)]
for label, window in (("resample_poly default (Kaiser 5, 10 a side)", ("kaiser", 5.0)),
                      ("aec_eval.drift (Kaiser 12, 64 a side, 0.98)", drift_filter(up, down))):
    cells = []
    for fn in freqs:
        x = np.sin(2 * np.pi * fn * t)
        y = signal.resample_poly(x, up, down, window=window)
        ref = np.sin(2 * np.pi * fn * np.arange(len(y)) * down / up)
        a, b = rate, len(y) - rate
        e = y[a:b] - ref[a:b]
        cells.append(f"{fn * rate:.0f} Hz {10 * np.log10(np.mean(e ** 2) / np.mean(ref[a:b] ** 2)):.0f} dB")
    print(f"{label}: " + ", ".join(cells))
