#!/usr/bin/env python3
"""Fits the near-end detector's logistic model (Sources/RTMix/Capture/NearEndDetector.swift).

Input: per-frame feature dumps, one file per run (float32 rows: oracle label,
far end active, output active, the detector's 12 features), written by a
capture build with scripts/aec-eval/talk-features.patch applied (a debug
build: it reads RTMIX_ORACLE, the talker's true activity per 10 ms frame,
drives the suppressor's state with it, and writes the rows to RTMIX_DBG).
To make them (docs/capture.md, "The near-end detector"):

  aec_eval.py --scenario h,f,g --cli BIN --workdir W          # the scenes
  git apply scripts/aec-eval/talk-features.patch && \
    swift build -c release --product rtmix-cli --scratch-path .build-dbg
  talk_model.py --prepare W --cli .build-dbg/release/rtmix-cli --dumps D

The model in the code (2026-11-29) was fitted on scenario h at three
microphone gains (`aec_eval.py --mic-gain-db -10` and `-20`, each in a
workdir of its own, dumped to D-10 and D-20) and on five live recordings (DA),
and checked on f and g at the same gains and on eight more recordings (DB):

  talk_model.py --train 'D0/h*,D-10/h*,D-20/h*,DA/*' --weight 'DA/*=6' \
                --test 'D-20/[fg]*' --threshold 0.3 --swift

A scene without talker.wav (scripts/aec-eval/live-record's recordings of the
live loopback) is labelled echo only throughout.

Frames after the first 5 s with the far end active are used; the label is the
talker's activity (its 20 ms power within 25 dB of its mean level: the same
frames the evaluation counts). Each feature is also used as its ~100 ms
average (a one-pole average, 0.1 per frame, as the detector keeps it).

  talk_model.py --train 'D/h*.f32' [--test 'D/[fg]*.f32'] [--threshold P] [--swift]
                [--weight GLOB=W ...] [--predict OUTDIR]

Prints the frame-level true/false positive rates on the training and test
frames; --swift prints the weights with the normalisation folded in, ready for
NearEndDetector; --predict writes each run's decisions (talk in two frames
running, far end active) as one byte per frame for an oracle build.
"""
import argparse, fnmatch, glob, math, os
import numpy as np
from sklearn.linear_model import LogisticRegression

NF = 12
ROW = 3 + NF
SKIP = 500  # 5 s of 10 ms frames


def load(path):
    a = np.fromfile(path, dtype=np.float32).reshape(-1, ROW).astype(np.float64)
    f = a[:, 3:3 + NF]
    ema = np.zeros_like(f)
    s = np.zeros(NF)
    for i in range(len(f)):
        s = s + 0.1 * (f[i] - s)
        ema[i] = s
    return a, np.hstack([f, ema])


USE = list(range(NF))


WEIGHTS = []  # (glob, weight): --weight


def stack(paths):
    X, L, W = [], [], []
    for p in paths:
        a, x = load(p)
        x = x[:, USE + [NF + i for i in USE]]
        m = (a[:, 1] > 0)
        m[:SKIP] = False
        X.append(x[m]); L.append(a[m, 0] > 0)
        w = 1.0
        for g, gw in WEIGHTS:
            if fnmatch.fnmatch(p, g):
                w = gw
        W.append(np.full(int(m.sum()), w))
    return np.vstack(X), np.concatenate(L), np.concatenate(W)


def rates(clf, mu, sd, X, L, ths):
    p = clf.predict_proba((X - mu) / sd)[:, 1]
    def share(m):  # "n/a" where the frames have no such label (echo-only recordings)
        return f"{m.mean():.3f}" if m.size else "n/a"
    return "  ".join(f"p>{t}: TPR {share(p[L] > t)} FPR {share(p[~L] > t)}" for t in ths)


def prepare(workdir, cli, dumps):
    """Labels each scene of `workdir` (oracle.bin from talker.wav) and runs the
    debug CLI on it with the evaluation's settings, dumping the features."""
    import subprocess
    import soundfile as sf
    os.makedirs(dumps, exist_ok=True)
    for d in sorted(glob.glob(os.path.join(workdir, "*", "mic.wav"))):
        scene = os.path.dirname(d)
        talker = os.path.join(scene, "talker.wav")
        if os.path.exists(talker):
            t, rate = sf.read(talker, dtype="float64")
            if t.ndim > 1:
                t = t.mean(axis=1)
            f = rate // 100
            k = len(t) // f
            p = (t[:k * f].reshape(k, f) ** 2).mean(axis=1)
            level = np.mean(p[p > p.max() * 1e-4])
            active = p > level * 10 ** (-25 / 10)
        else:  # no near end in the scene: every frame is echo only
            info = sf.info(d)
            active = np.zeros(int(info.frames) // (info.samplerate // 100), dtype=bool)
        active.astype(np.uint8).tofile(os.path.join(scene, "oracle.bin"))
        name = os.path.basename(scene)
        env = dict(os.environ, RTMIX_ORACLE=os.path.join(scene, "oracle.bin"),
                   RTMIX_DBG=os.path.join(dumps, name + ".f32"))
        subprocess.run([cli, "aec", "--mic", os.path.join(scene, "mic.wav"), "--ref", os.path.join(scene, "playout.wav"),
                        "-o", os.path.join(dumps, name + "-out.wav"), "--format", "f32", "--quiet", "--settle", "5.0"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        print("dumped", name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prepare", metavar="WORKDIR")
    ap.add_argument("--cli")
    ap.add_argument("--dumps")
    ap.add_argument("--train")
    ap.add_argument("--test")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--swift", action="store_true")
    ap.add_argument("--predict")
    ap.add_argument("--weight", action="append", default=[], metavar="GLOB=W",
                    help="weigh the frames of the runs matching GLOB by W (e.g. the live recordings, few against "
                         "many simulated runs); repeatable")
    ap.add_argument("--features", help="comma-separated feature indices to use (default: all)")
    args = ap.parse_args()
    if args.features:
        USE[:] = [int(i) for i in args.features.split(",")]
    for spec in args.weight:
        g, w = spec.rsplit("=", 1)
        WEIGHTS.append((g, float(w)))
    if args.prepare:
        prepare(args.prepare, args.cli, args.dumps)
        return
    def paths(spec):  # comma-separated globs
        return sorted(set(p for g in spec.split(",") for p in glob.glob(g)))
    train = paths(args.train)
    Xtr, Ltr, Wtr = stack(train)
    mu, sd = Xtr.mean(0), Xtr.std(0) + 1e-9
    clf = LogisticRegression(max_iter=5000, C=1.0).fit((Xtr - mu) / sd, Ltr, sample_weight=Wtr)
    ths = (0.3, 0.4, 0.5, 0.7)
    print(f"train ({len(train)} runs, {len(Ltr)} frames, talk {Ltr.mean():.3f}):", rates(clf, mu, sd, Xtr, Ltr, ths))
    if args.test:
        test = paths(args.test)
        Xte, Lte, _ = stack(test)
        print(f"test ({len(test)} runs, {len(Lte)} frames, talk {Lte.mean():.3f}):", rates(clf, mu, sd, Xte, Lte, ths))
    w_used = clf.coef_[0] / sd
    b = clf.intercept_[0] - float((clf.coef_[0] * mu / sd).sum())
    w = np.zeros(2 * NF)
    for j, i in enumerate(USE):
        w[i] = w_used[j]
        w[NF + i] = w_used[len(USE) + j]
    if args.swift:
        def vecs(v):
            v = list(v) + [0] * (12 - len(v))
            return ", ".join("V(" + ", ".join(f"{x:.6g}" for x in v[i:i + 4]) + ")" for i in (0, 4, 8))
        print(f"weights = ({vecs(w[:NF])})")
        print(f"averageWeights = ({vecs(w[NF:])})")
        print(f"bias = {b:.6g}")
        print(f"threshold = {math.log(args.threshold / (1 - args.threshold)):.6g}  // p > {args.threshold}")
    if args.predict:
        os.makedirs(args.predict, exist_ok=True)
        for p in sorted(glob.glob(os.path.join(os.path.dirname(args.train.split(",")[0]), "*.f32"))):
            a, x = load(p)
            t = (x @ w + b) > math.log(args.threshold / (1 - args.threshold))
            t &= x[:, 0] > math.log10(0.00316)  # the detector's audible floor (kept over echo estimate)
            trig = t & np.concatenate([[False], t[:-1]]) & (a[:, 1] > 0)
            trig.astype(np.uint8).tofile(os.path.join(args.predict, os.path.basename(p)[:-4] + ".bin"))


if __name__ == "__main__":
    main()
