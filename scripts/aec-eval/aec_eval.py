#!/usr/bin/env python3
"""Echo-canceller evaluation for RTMix's capture path (`rtmix-cli aec`).

Generates scenarios (real speech from espeak-ng, synthetic music, a simulated
room from pyroomacoustics, device delay, clock drift, noise, double talk),
runs `rtmix-cli aec` on each and prints markdown tables.

    python3 scripts/aec-eval/aec_eval.py                 # all scenarios, quick
    python3 scripts/aec-eval/aec_eval.py --scenario a,b  # some of them
    python3 scripts/aec-eval/aec_eval.py --full          # + the 10-minute drift run

Definitions (printed with the tables as well):
- Delay truth: a playout sample rendered in block b whose echo reaches the
  microphone file tau samples later has delay tau (the lockstep timing of
  `rtmix-cli aec`: render 10 ms, then capture the same 10 ms). Here
  tau = device delay + direct-path propagation (distance / 343 m/s).
- ERLE: 10*log10(mic power / output power) over 1 s windows in which the
  near end is silent (no talker samples in the window) and the far end is
  active (echo within 15 dB of its median level); median over the windows
  after the stated convergence period. The output is aligned to the mic by the
  CLI (capture latency removed).
- Convergence time: start of the first qualifying window from which every
  later qualifying window stays above the threshold.
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import soundfile as sf
from scipy import signal

PLAY_RATE = 48_000
C = 343.0
DIST = 0.4                  # loudspeaker to microphone, metres
RT60 = 0.4
ROOM = [5.0, 4.0, 3.0]
ECHO_DBFS = -25.0           # echo RMS at the microphone (far end active)
NEAR_DBFS = -27.0           # near-end talker RMS at the microphone (while talking)
NOISE_DBFS = -80.0          # white noise floor at the microphone
CONVERGE_S = 5.0            # excluded from the median ERLE
DEVICE_DELAY_MS = 40        # default bulk delay for scenarios other than b

# ---------------------------------------------------------------- signals ---

def espeak(text, voice, pitch, speed, workdir, tag):
    path = os.path.join(workdir, f"espeak-{tag}.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", path, text],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    x, rate = sf.read(path, dtype="float64")
    if x.ndim > 1:
        x = x.mean(axis=1)
    g = math.gcd(PLAY_RATE, rate)
    return signal.resample_poly(x, PLAY_RATE // g, rate // g)


FAR_SENTENCES = [
    "The quarterly numbers look better than we expected, mostly thanks to the new customers in the north.",
    "Could you send me the slides after the meeting? I would like to go through them again tomorrow morning.",
    "We should probably move the release by one week, the testing is not finished yet.",
    "I think the audio is a bit delayed on my side, can you hear me clearly now?",
    "Let us keep the next call short, fifteen minutes should be enough for the update.",
]
NEAR_SENTENCES = [
    "Yes, I can hear you, but there is a little echo when the music is playing.",
    "My battery is almost empty, so I will switch to the phone in a minute.",
    "Please repeat the last number, I did not catch it because of the noise.",
    "That sounds fine to me, let us decide on Friday after the review.",
]


def talker(sentences, voice, pitch, speed, seconds, workdir, tag, seed, gap=(0.3, 0.8), lead=0.0):
    """Sentences with pauses, looped to `seconds` at PLAY_RATE; RMS of the
    active parts normalised to 1."""
    rng = np.random.default_rng(seed)
    clips = [espeak(s, voice, pitch, speed, workdir, f"{tag}{i}") for i, s in enumerate(sentences)]
    n = int(seconds * PLAY_RATE)
    out = np.zeros(n)
    pos = int(lead * PLAY_RATE)
    i = 0
    while pos < n:
        c = clips[i % len(clips)]
        m = min(len(c), n - pos)
        out[pos:pos + m] = c[:m]
        pos += len(c) + int(rng.uniform(*gap) * PLAY_RATE)
        i += 1
    return out / active_rms(out)


def active_rms(x, rate=PLAY_RATE, frame_s=0.02):
    f = int(rate * frame_s)
    k = len(x) // f
    p = (x[:k * f].reshape(k, f) ** 2).mean(axis=1)
    active = p > p.max() * 1e-4
    return math.sqrt(p[active].mean()) if active.any() else 1.0


def music(seconds, seed=5):
    """Chords (C G Am F arpeggios), bass and drums at 100 bpm; RMS 1."""
    rng = np.random.default_rng(seed)
    fs = PLAY_RATE
    n = int(seconds * fs)
    out = np.zeros(n)
    eighth = int(fs * 0.3)
    chords = [[60, 64, 67, 72], [59, 62, 67, 71], [57, 60, 64, 69], [57, 60, 65, 69]]
    bass = [36, 43, 45, 41]
    pattern = [0, 1, 2, 3, 2, 1, 2, 1]
    hz = lambda m: 440.0 * 2 ** ((m - 69) / 12)

    def add(start, x):
        m = min(len(x), n - start)
        if m > 0:
            out[start:start + m] += x[:m]

    def note(freq, amp, decay, harmonics, length):
        t = np.arange(length) / fs
        env = np.exp(-t / decay) * np.minimum(1, t / 0.004)
        v = sum((0.55 ** (h - 1)) * np.sin(2 * np.pi * freq * h * t) for h in range(1, harmonics + 1)
                if freq * h < 0.45 * fs)
        return amp * env * v

    noise_len = int(0.25 * fs)
    b, a = signal.butter(2, [1200 / (fs / 2), 3500 / (fs / 2)], btype="band")
    bh, ah = signal.butter(2, 7000 / (fs / 2), btype="high")
    for k, start in enumerate(range(0, n, eighth)):
        bar, step = k // 8, k % 8
        chord = chords[bar % 4]
        add(start, note(hz(chord[pattern[step]] + (12 if step >= 4 else 0)), 0.16 * rng.uniform(0.85, 1),
                        0.45, 6, int(1.5 * fs)))
        if step in (0, 4):
            add(start, note(hz(bass[bar % 4]), 0.22, 0.9, 4, int(2.5 * fs)))
            t = np.arange(int(0.5 * fs)) / fs
            f = 48 + 82 * np.exp(-t / 0.04)
            add(start, 0.5 * np.sin(2 * np.pi * np.cumsum(f) / fs) * np.exp(-t / 0.16))
        if step in (2, 6):
            t = np.arange(noise_len) / fs
            add(start, 0.35 * signal.lfilter(b, a, rng.standard_normal(noise_len)) * np.exp(-t / 0.09))
        if step % 2 == 1:
            t = np.arange(noise_len) / fs
            add(start, 0.05 * signal.lfilter(bh, ah, rng.standard_normal(noise_len)) * np.exp(-t / 0.025))
    return out / math.sqrt((out ** 2).mean())


def room_rir(rate, seed=0):
    """Loudspeaker -> mic response at `rate`, direct path at DIST/C*rate samples
    (pyroomacoustics' fractional-delay offset removed)."""
    import pyroomacoustics as pra
    e_abs, max_order = pra.inverse_sabine(RT60, ROOM)
    r = pra.ShoeBox(ROOM, fs=rate, materials=pra.Material(e_abs), max_order=max_order)
    r.add_source([2.0, 2.0, 1.3])
    r.add_microphone([2.0 + DIST, 2.0, 1.3])
    r.compute_rir()
    h = np.asarray(r.rir[0][0], dtype=np.float64)
    g = pra.constants.get("frac_delay_length") // 2
    return h[g:], float(pra.experimental.measure_rt60(h, fs=rate))


def resample(x, src, dst):
    if src == dst:
        return x.copy()
    g = math.gcd(src, dst)
    return signal.resample_poly(x, dst // g, src // g)


def drift(x, ppm):
    """Resample by (1 + ppm*1e-6) output samples per input sample.

    A clock offset is a physical effect with no interpolation error of its
    own, so the simulation must not add one: resample_poly's default filter
    (Kaiser beta 5, 10 taps a side per phase) left an error 56-61 dB under a
    sine up to 0.375 of the sample rate (-28 dB at 0.44), which capped the
    drifting runs' ERLE near 60 dB at 16 kHz whatever the canceller did.
    This one (Kaiser beta 12, 64 taps a side, cut-off at 0.98 of Nyquist)
    leaves -128 dB or less up to 0.44 of the sample rate
    (scripts/aec-eval/drift_check.py measures both)."""
    if ppm == 0:
        return x
    den = 1_000_000
    num = den + int(round(ppm))
    g = math.gcd(num, den)
    up, down = num // g, den // g
    return signal.resample_poly(x, up, down, window=drift_filter(up, down))


def drift_filter(up, down, half=64, beta=12.0, cutoff=0.98):
    m = max(up, down)
    return signal.firwin(2 * half * m + 1, cutoff / m, window=("kaiser", beta))


def db(p):
    return 10 * math.log10(p) if p > 0 else -200.0

# --------------------------------------------------------------- scenario ---

class Scene:
    """One generated case: playout (48 kHz mono) + microphone at `rate`."""

    def __init__(self, rate, far, media, *, ref_media=True, delay_ms=DEVICE_DELAY_MS, ppm=0.0,
                 jump_at_s=None, jump_ms=0, near=None, rir=None):
        self.rate = rate
        play = far + (media if media is not None else 0)
        peak = np.abs(play).max()
        scale = 10 ** (-3 / 20) / peak                      # playout peak -3 dBFS
        self.playout = play * scale
        self.reference = self.playout if ref_media or media is None else far * scale
        n = int(len(far) * rate / PLAY_RATE)
        h = rir[rate]
        room = signal.oaconvolve(resample(self.playout, PLAY_RATE, rate), h)[:n]
        room = drift(room, ppm)[:n]
        room = np.pad(room, (0, max(0, n - len(room))))
        # Echo level: ECHO_DBFS RMS over windows where the far end is active.
        room *= 10 ** (ECHO_DBFS / 20) / active_rms(room, rate)
        d = int(round(delay_ms * rate / 1000))
        echo = np.zeros(n)
        if jump_at_s is None:
            echo[d:] = room[:n - d]
        else:
            j = int(jump_at_s * rate)
            d2 = d + int(round(jump_ms * rate / 1000))
            echo[d:j] = room[:j - d]
            echo[j:] = room[j - d2:n - d2]
        self.echo = echo
        self.near = np.zeros(n) if near is None else resample(near, PLAY_RATE, rate)[:n] * 10 ** (NEAR_DBFS / 20)
        rng = np.random.default_rng(11)
        self.noise = rng.standard_normal(n) * 10 ** (NOISE_DBFS / 20)
        self.mic = self.echo + self.near + self.noise
        self.true_delay_ms = delay_ms + DIST / C * 1000
        self.jump_ms = jump_ms
        if np.abs(self.mic).max() >= 1:
            raise SystemExit("mic clips: lower the levels")

    def write(self, directory):
        os.makedirs(directory, exist_ok=True)
        sf.write(os.path.join(directory, "playout.wav"), self.reference.astype(np.float32), PLAY_RATE, subtype="FLOAT")
        sf.write(os.path.join(directory, "mic.wav"), self.mic.astype(np.float32), self.rate, subtype="FLOAT")
        if self.near.any():  # the microphone's parts, as scenarios f-h keep them
            sf.write(os.path.join(directory, "talker.wav"), self.near.astype(np.float32), self.rate, subtype="FLOAT")
            sf.write(os.path.join(directory, "echo.wav"), self.echo.astype(np.float32), self.rate, subtype="FLOAT")
        return directory


ORACLE_DIR = None  # --oracle-dir
RTMIX_ARGS = []  # --rtmix-args: appended to every `rtmix-cli aec` run


# Scenario i: bins of time since the move (s) for where a talker's muted frames lie.
SINCE_BINS = [(0, 0.5), (0.5, 1), (1, 2), (2, 4), (4, 10)]


def run_aec(cli, directory, extra, tag):
    out = os.path.join(directory, f"out-{tag}.wav")
    js = os.path.join(directory, f"out-{tag}.json")
    cmd = [cli, "aec", "--mic", os.path.join(directory, "mic.wav"), "--ref", os.path.join(directory, "playout.wav"),
           "-o", out, "--format", "f32", "--json", js, "--quiet", "--settle", str(CONVERGE_S)] + extra + RTMIX_ARGS
    env = dict(os.environ)
    if ORACLE_DIR:  # debug builds only (talk-features.patch): per-scene state decisions
        env["RTMIX_ORACLE"] = os.path.join(ORACLE_DIR, os.path.basename(directory.rstrip("/")) + ".bin")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    y, _ = sf.read(out, dtype="float64")
    with open(js) as f:
        report = json.load(f)
    return y, report


def erle_windows(scene, out):
    """[(t_start, erle_db)] over qualifying 1 s windows (near end silent, far end active)."""
    r = scene.rate
    k = min(len(out), len(scene.mic)) // r
    p_echo = np.array([np.mean(scene.echo[i * r:(i + 1) * r] ** 2) for i in range(k)])
    med = np.median(p_echo[p_echo > 0]) if (p_echo > 0).any() else 0
    rows = []
    for i in range(k):
        s = slice(i * r, (i + 1) * r)
        if np.any(scene.near[s] != 0) and np.max(np.abs(scene.near[s])) > 1e-5:
            continue
        if p_echo[i] < med * 10 ** (-15 / 10):
            continue
        rows.append((float(i), db(np.mean(scene.mic[s] ** 2)) - db(np.mean(out[s] ** 2))))
    return rows


def median_after(rows, t0=CONVERGE_S):
    v = [e for t, e in rows if t >= t0]
    return float(np.median(v)) if v else float("nan")


def convergence(rows, threshold):
    for idx, (t, _) in enumerate(rows):
        if all(e >= threshold for _, e in rows[idx:]):
            return t
    return None


def fmt(v, d=1, unit=""):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{d}f}{unit}"

# -------------------------------------------------------------- scenarios ---

class Eval:
    def __init__(self, args):
        self.args = args
        self.cli = args.cli
        self.work = args.workdir or tempfile.mkdtemp(prefix="aec-eval-")
        os.makedirs(self.work, exist_ok=True)
        self.rates = [int(r) for r in args.rates.split(",")]
        self.pool = cf.ThreadPoolExecutor(max_workers=args.jobs)
        self.rir = {}
        for r in self.rates:
            self.rir[r], rt = room_rir(r)
            print(f"room {ROOM} m, loudspeaker {DIST} m from the mic, RT60 target {RT60} s, "
                  f"measured {rt:.2f} s at {r} Hz", file=sys.stderr)
        self.results = {}
        self.talker_rows = []
        self._far = {}
        self._media = {}
        self._near = {}

    def far(self, seconds):
        if seconds not in self._far:
            self._far[seconds] = talker(FAR_SENTENCES, "en-us", 45, 165, seconds, self.work, "far", 1, lead=0.2)
        return self._far[seconds] * 10 ** (-22 / 20)          # far voice RMS -22 dBFS before scaling

    def media(self, seconds):
        if seconds not in self._media:
            self._media[seconds] = music(seconds)
        return self._media[seconds] * 10 ** (-26 / 20)

    def near(self, seconds, start_s):
        key = (seconds, start_s)
        if key not in self._near:
            self._near[key] = talker(NEAR_SENTENCES, "en-gb+f3", 70, 155, seconds, self.work, "near", 2,
                                     gap=(1.5, 3.0), lead=start_s)
        return self._near[key]

    def scene_dir(self, name):
        return os.path.join(self.work, name)

    def submit(self, scene, name, extra, tag):
        d = scene.write(self.scene_dir(name)) if not os.path.exists(os.path.join(self.scene_dir(name), "mic.wav")) \
            else self.scene_dir(name)
        return self.pool.submit(run_aec, self.cli, d, extra, tag)

    # a. reference = full mix vs voice only
    def scenario_a(self):
        secs = self.args.seconds
        far, media = self.far(secs), self.media(secs)
        jobs = []
        for rate in self.rates:
            for ref_media, label in [(True, "full mix"), (False, "voice only (media outside the engine)")]:
                s = Scene(rate, far, media, ref_media=ref_media, rir=self.rir)
                name = f"a-{rate}-{'mix' if ref_media else 'voice'}"
                jobs.append((rate, label, s, self.submit(s, name, [], "default")))
        lines = ["### a. Mixed stream: reference = full mix vs voice only",
                 f"{secs:.0f} s, playout = far-end speech + music at 48 kHz, device delay {DEVICE_DELAY_MS} ms, "
                 f"no hint; ERLE median over echo-only 1 s windows after {CONVERGE_S:.0f} s.", "",
                 "| capture | reference | median ERLE | min ERLE | conv. >30 dB | conv. >40 dB | engine delay | source |",
                 "|---|---|---|---|---|---|---|---|"]
        for rate, label, s, job in jobs:
            out, rep = job.result()
            rows = erle_windows(s, out)
            post = [e for t, e in rows if t >= CONVERGE_S]
            sm = rep["summary"]
            lines.append(f"| {rate // 1000} kHz | {label} | {fmt(median_after(rows))} dB | {fmt(min(post) if post else None)} dB "
                         f"| {fmt(convergence(rows, 30), 0, ' s')} | {fmt(convergence(rows, 40), 0, ' s')} "
                         f"| {fmt(sm['finalDelayMs'])} ms (true {s.true_delay_ms:.1f}) | {sm['finalDelaySource']} |")
        return lines

    # b. delay: hint vs auto
    def scenario_b(self):
        secs = self.args.seconds
        far, media = self.far(secs), self.media(secs)
        jobs = []
        for rate in self.rates:
            for d in [0, 50, 100, 200, 300, 400, 500]:
                s = Scene(rate, far, media, delay_ms=d, rir=self.rir)
                name = f"b-{rate}-{d}"
                hint = str(int(round(s.true_delay_ms)))
                jobs.append((rate, d, s, self.submit(s, name, ["--delay-ms", hint], "hint"),
                             self.submit(s, name, [], "auto")))
        lines = ["### b. Delay: correct hint vs no hint",
                 f"{secs:.0f} s, full-mix reference. True delay = device delay + direct path ({DIST} m = "
                 f"{DIST / C * 1000:.2f} ms): a playout sample rendered in block b whose echo is tau samples later in "
                 f"the mic file has delay tau. Hint = true delay rounded to 1 ms. ERLE median after {CONVERGE_S:.0f} s.", "",
                 "| capture | device delay | true delay | ERLE hint | ERLE auto | conv. >30 dB auto | estimate auto (source) | est. error | delay changes |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for rate, d, s, jh, ja in jobs:
            oh, rh = jh.result()
            oa, ra = ja.result()
            rows_a = erle_windows(s, oa)
            sa = ra["summary"]
            lines.append(f"| {rate // 1000} kHz | {d} ms | {s.true_delay_ms:.1f} ms | {fmt(median_after(erle_windows(s, oh)))} dB "
                         f"| {fmt(median_after(rows_a))} dB | {fmt(convergence(rows_a, 30), 0, ' s')} "
                         f"| {fmt(sa['finalDelayMs'])} ms ({sa['finalDelaySource']}) "
                         f"| {sa['finalDelayMs'] - s.true_delay_ms:+.1f} ms | {sa['delayChanges']} |")
        return lines

    # c. delay jump
    def scenario_c(self):
        secs = max(20.0, self.args.seconds)
        at = secs / 2
        far, media = self.far(secs), self.media(secs)
        jobs = []
        for rate in self.rates:
            s = Scene(rate, far, media, jump_at_s=at, jump_ms=100, rir=self.rir)
            jobs.append((rate, s, self.submit(s, f"c-{rate}", [], "auto")))
        lines = ["### c. Delay jump +100 ms at the middle, no hint",
                 f"{secs:.0f} s, device delay {DEVICE_DELAY_MS} ms -> {DEVICE_DELAY_MS + 100} ms at t = {at:.0f} s. "
                 "Per-second ERLE (echo-only windows) and the engine's delay estimate at the end of each second.", ""]
        for rate, s, job in jobs:
            out, rep = job.result()
            rows = dict(erle_windows(s, out))
            est = {int(round(r["t"])) - 1: r for r in rep["rows"]}
            t0 = int(at) - 3
            secs_shown = [t for t in range(t0, int(secs))]
            lines.append(f"**{rate // 1000} kHz** (true delay {s.true_delay_ms:.1f} -> {s.true_delay_ms + 100:.1f} ms)")
            lines.append("")
            lines.append("| t (s) | " + " | ".join(str(t) for t in secs_shown) + " |")
            lines.append("|---|" + "---|" * len(secs_shown))
            lines.append("| ERLE (dB) | " + " | ".join(fmt(rows.get(float(t))) for t in secs_shown) + " |")
            lines.append("| delay est. (ms) | " + " | ".join(fmt(est[t]['delayMs'], 0) if t in est else "n/a" for t in secs_shown) + " |")
            back = None
            after = [(t, e) for t, e in sorted(rows.items()) if t >= int(at)]
            for idx, (t, e) in enumerate(after):
                if all(x >= 30 for _, x in after[idx:]):
                    back = t + 1 - at
                    break
            pre = [e for t, e in rows.items() if CONVERGE_S <= t < int(at)]
            lines.append("")
            lines.append(f"median ERLE before the jump {fmt(float(np.median(pre)) if pre else None)} dB; back above 30 dB "
                         f"for good {fmt(back, 0, ' s')} after the jump; resets {rep['summary']['resets']}, "
                         f"delay changes {rep['summary']['delayChanges']}")
            lines.append("")
        return lines + self.path_changes(secs, far, media)

    def path_changes(self, secs, far, media):
        """Other jumps and phases of the jump against the estimator's hops:
        ERLE over 0.25 s windows (the goal: none under 20 dB after a path
        change), and a +100 ms jump in double talk (the talker's muted
        share, as in scenario f)."""
        import real_speech as rs
        # (label, jump time, jump ms, delay before, the host's hint of the delay before or None)
        cases = [("+100 ms at 10.00 s", 10.0, 100, 40, None), ("+100 ms at 10.13 s", 10.13, 100, 40, None),
                 ("+100 ms at 10.26 s", 10.26, 100, 40, None), ("+100 ms at 10.39 s", 10.39, 100, 40, None),
                 ("+30 ms", 10.0, 30, 40, None), ("+300 ms", 10.0, 300, 40, None),
                 ("-30 ms (140 -> 110 ms)", 10.0, -30, 140, None), ("-100 ms (140 -> 40 ms)", 10.0, -100, 140, None),
                 ("+100 ms at 10.00 s, hint 41 ms (the delay before)", 10.0, 100, 40, 41),
                 ("-100 ms (140 -> 40 ms), hint 141 ms", 10.0, -100, 140, 141),
                 ("-250 ms (300 -> 50 ms)", 10.0, -250, 300, None)]
        near = self.near(secs, 8.0)
        starting = self.near(secs, 10.0)
        jobs = []
        for rate in self.rates:
            for i, (label, at, jump, d0, hint) in enumerate(cases):
                s = Scene(rate, far, media, jump_at_s=at, jump_ms=jump, delay_ms=d0, rir=self.rir)
                extra = ["--delay-ms", str(hint)] if hint is not None else []
                jobs.append((rate, label, at, s, None, self.submit(s, f"c-{rate}-jump{i}", extra, "hint" if extra else "auto")))
            # The same double talk without the jump: what the talker loses
            # anyway (onsets), against which the jump's rows are read.
            s0 = Scene(rate, far, media, jump_at_s=10.0, jump_ms=0, near=near, rir=self.rir)
            jobs.append((rate, "no jump, double talk (the same scene)", 10.0, s0, 8.0,
                         self.submit(s0, f"c-{rate}-dt0", [], "auto")))
            s = Scene(rate, far, media, jump_at_s=10.0, jump_ms=100, near=near, rir=self.rir)
            jobs.append((rate, "+100 ms at 10.00 s, double talk", 10.0, s, 8.0, self.submit(s, f"c-{rate}-dt", [], "auto")))
            jobs.append((rate, "+100 ms at 10.00 s, double talk, hint 41 ms", 10.0, s, 8.0,
                         self.submit(s, f"c-{rate}-dt", ["--delay-ms", "41"], "hint")))
            # The talker starts as the path moves (a student answers while
            # the laptop is being moved): the moved echo and the new talker
            # arrive together.
            s0 = Scene(rate, far, media, jump_at_s=10.0, jump_ms=0, near=starting, rir=self.rir)
            jobs.append((rate, "no jump, the talker starting at 10.00 s (the same scene)", 10.0, s0, 10.0,
                         self.submit(s0, f"c-{rate}-dts0", [], "auto")))
            s = Scene(rate, far, media, jump_at_s=10.0, jump_ms=100, near=starting, rir=self.rir)
            jobs.append((rate, "+100 ms at 10.00 s, the talker starting at 10.00 s", 10.0, s, 10.0,
                         self.submit(s, f"c-{rate}-dts", [], "auto")))
            jobs.append((rate, "+100 ms at 10.00 s, the talker starting at 10.00 s, hint 41 ms", 10.0, s, 10.0,
                         self.submit(s, f"c-{rate}-dts", ["--delay-ms", "41"], "hint")))
        lines = ["**Path changes, 0.25 s windows** (no hint unless a row says so: a host that measured its latency "
                 "before the path moved; the talker case: near-end talker from 8 s as in e). "
                 "Windows under 20 dB among the 17 from 0.25 s before the jump to 4 s after; the leak ends where the "
                 "last such window ends; the first windows' ERLE after the jump.", "",
                 "| capture | jump | windows < 20 dB | leak until | ERLE per 0.25 s from the jump (dB) | talker muted (longest run) |",
                 "|---|---|---|---|---|---|"]
        for rate, label, at, s, talk_from, job in jobs:
            out, _ = job.result()
            out = np.pad(out, (0, max(0, len(s.mic) - len(out))))[:len(s.mic)]
            if talk_from is None:
                n = int(0.25 * rate)
                w = []
                for q in range(17):
                    a = int((at - 0.25 + 0.25 * q) * rate)
                    w.append(db(np.mean(s.mic[a:a + n] ** 2)) - db(np.mean(out[a:a + n] ** 2)))
                bad = [q for q, e in enumerate(w) if e < 20]
                until = f"+{0.25 * (max(bad) + 1) - 0.25:.2f} s" if bad else "-"
                lines.append(f"| {rate // 1000} kHz | {label} | {len(bad)} | {until} | "
                             + " ".join(f"{e:.0f}" for e in w[1:9]) + " | - |")
            else:
                share, longest, count, *_ = rs.talker_metrics(s.near, s.echo, out, rate, talk_from)
                # The echo where the talker pauses (20 ms frames 40 dB under
                # its level, far end active), from the talker's start to the
                # jump and from the jump on (4 s): what a suppressor that
                # lets the talker through leaves.
                def pause_erle(t0, t1):
                    a, b = int(t0 * rate), int(t1 * rate)
                    pn, pe = rs.frame_powers(s.near[a:b], rate), rs.frame_powers(s.echo[a:b], rate)
                    pm, po = rs.frame_powers(s.mic[a:b], rate), rs.frame_powers(out[a:b], rate)
                    level = np.mean(pn[pn > pn.max() * 1e-4])
                    pauses = (pn < level * 10 ** (-40 / 10)) & (pe > np.median(pe[pe > 0]) * 10 ** (-20 / 10))
                    return db(pm[pauses].sum()) - db(po[pauses].sum()), int(pauses.sum())
                after = pause_erle(at, at + 4)
                if talk_from < at:
                    before = pause_erle(talk_from, at)
                    where = (f"ERLE in the talker's pauses {before[0]:.0f} dB before the jump, {after[0]:.0f} dB "
                             f"in the 4 s after ({before[1]} / {after[1]} frames)")
                else:
                    where = f"ERLE in the talker's pauses {after[0]:.0f} dB in the 4 s after ({after[1]} frames)"
                lines.append(f"| {rate // 1000} kHz | {label} | - | - | {where} "
                             f"| {100 * share:.1f} % of {count} ({longest:.0f} ms) |")
        lines.append("")
        return lines

    # d. drift
    def scenario_d(self):
        secs = 600.0 if self.args.full else 60.0
        far, media = self.far(secs), self.media(secs)
        jobs = []
        for rate in self.rates:
            for ppm in [0, 200, -200]:
                # Lockstep, a slower microphone clock brings the echo earlier
                # by ppm x the length; over 10 minutes at -200 ppm that is
                # 120 ms, more than the device delay: start that scene later
                # so that its echo never comes before its reference was
                # played (the 60 s run keeps the common delay).
                delay = DEVICE_DELAY_MS + (max(0, -ppm) * 1e-6 * secs * 1000 if secs > 60 else 0)
                s = Scene(rate, far, media, ppm=ppm, rir=self.rir, delay_ms=delay)
                name = f"d-{rate}-{ppm}-{int(secs)}"
                for paced in ([False, True] if ppm else [False]):
                    extra = ["--clock-ppm", str(ppm)] if paced else []
                    jobs.append((rate, ppm, paced, s, self.submit(s, name, extra, "paced" if paced else "lockstep")))
        t_conv = 10.0
        acausal = []
        lines = ["### d. Clock drift between playout and mic",
                 f"{secs:.0f} s, no hint; mic clock +/-200 ppm relative to the playout clock: the echo is resampled by "
                 "1 + ppm*1e-6, and with `--clock-ppm` the CLI also interleaves render and capture calls as two devices "
                 "with that offset would (without it the calls stay in lockstep, so only the acoustic path drifts and "
                 "the engine's call-count drift follower cannot see it). Engine drift convention: > 0 = playout clock "
                 "faster, so the expected estimate is -ppm. ERLE median over echo-only windows after "
                 f"{t_conv:.0f} s; the last-quarter median shows whether it holds."
                 + (f" The -200 ppm scene's device delay is {DEVICE_DELAY_MS + 200e-6 * secs * 1000:.0f} ms, so that "
                    "its echo, coming earlier all the time in lockstep, never precedes its reference." if secs > 60 else ""),
                 "",
                 "| capture | drift | calls | median ERLE | last-quarter ERLE | engine drift est. (expected) | engine delay at end (true) | delay changes | resets |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for rate, ppm, paced, s, job in jobs:
            out, rep = job.result()
            rows = erle_windows(s, out)
            last = [e for t, e in rows if t >= 0.75 * secs]
            sm = rep["summary"]
            # Lockstep: mic sample m is processed with playout sample m, so the echo
            # delay grows by ppm*1e-6 per second. Paced: in real time it stays put.
            end_true = s.true_delay_ms + (0 if paced else ppm * 1e-6 * secs * 1000)
            lines.append(f"| {rate // 1000} kHz | {ppm:+d} ppm | {'paced' if paced else 'lockstep'} | {fmt(median_after(rows, t_conv))} dB "
                         f"| {fmt(float(np.median(last)) if last else None)} dB | {fmt(sm['finalDriftPpm'])} ppm ({-ppm if paced else 0:+d}) "
                         f"| {fmt(sm['finalDelayMs'])} ms ({end_true:.1f}) | {sm['delayChanges']} | {sm['resets']} |")
            if end_true < 0:
                acausal.append((rate, ppm, s.true_delay_ms / (-ppm * 1e-6) / 1000))
        for rate, ppm, at in acausal:
            lines.append("")
            lines.append(f"{rate // 1000} kHz {ppm:+d} ppm lockstep: from {at:.0f} s on the simulated echo arrives before "
                         "its reference was played (the true delay falls below 0), which no canceller can follow; "
                         "real devices on two clocks in one duplex callback under- or overrun first. Its ERLE after "
                         "that says nothing.")
        return lines

    # e. double talk
    def scenario_e(self):
        from pesq import pesq
        secs = max(20.0, self.args.seconds)
        start = 8.0
        far, media = self.far(secs), self.media(secs)
        near = self.near(secs, start)
        configs = [("default (NS + RES)", []), ("--no-res", ["--no-res"]), ("--no-ns (RES alone)", ["--no-ns"]), ("--no-ns --no-res (canceller only)", ["--no-ns", "--no-res"])]
        jobs = []
        for rate in self.rates:
            s = Scene(rate, far, media, near=near, rir=self.rir)
            name = f"e-{rate}"
            futs = [(label, self.submit(s, name, extra, f"cfg{i}")) for i, (label, extra) in enumerate(configs)]
            jobs.append((rate, s, futs))
        lines = ["### e. Double talk",
                 f"{secs:.0f} s; near-end talker (espeak-ng en-gb+f3, {NEAR_DBFS:.0f} dBFS at the mic, echo "
                 f"{ECHO_DBFS:.0f} dBFS) from {start:.0f} s while the far end (speech + music) plays throughout. "
                 "PESQ WB (16 kHz; 48 kHz downsampled) of the output from the first near-end onset to the end against the "
                 "clean near-end; segmental SNR of the near-end component over 20 ms frames where the near end is active "
                 "(clamped to [-10, 35] dB); ERLE over the single-talk windows after the convergence period.", "",
                 "| capture | settings | PESQ WB | seg. SNR | ERLE single talk | double-talk frames | out vs near-end lag |",
                 "|---|---|---|---|---|---|---|"]
        for rate, s, futs in jobs:
            a = int(start * rate)
            ref16 = resample(s.near[a:], rate, 16_000)
            mic16 = resample(s.mic[a:], rate, 16_000)
            base = pesq(16_000, ref16, mic16, "wb")
            lines.append(f"| {rate // 1000} kHz | unprocessed mic | {base:.2f} | {fmt(segsnr(s.near, s.mic, rate, a))} dB | - | - | - |")
            for label, fut in futs:
                out, rep = fut.result()
                out16 = resample(out[a:len(s.mic)], rate, 16_000)
                m = min(len(ref16), len(out16))
                score = pesq(16_000, ref16[:m], out16[:m], "wb")
                lines.append(f"| {rate // 1000} kHz | {label} | {score:.2f} | {fmt(segsnr(s.near, out, rate, a))} dB "
                             f"| {fmt(median_after(erle_windows(s, out)))} dB | {rep['summary']['doubleTalkFrames']} "
                             f"| {lag_samples(s.near[a:], out[a:len(s.mic)], rate)} samples |")
        return lines

    # f. real recorded speech, several rooms, talker metrics, baselines
    def scenario_f(self):
        import real_speech as rs
        return self.real_speech("f", rs.ROOMS, seeds=(3, 4, 7, 8, 11), echo_db=ECHO_DBFS, near_db=NEAR_DBFS,
                                delay_ms=DEVICE_DELAY_MS)

    def scenario_g(self):
        """Held out: rooms, prompts, levels and delay that no tuning looked at
        (a tuning that only holds on the scenes it was tuned on is not done)."""
        import real_speech as rs
        return self.real_speech("g", rs.HELD_OUT_ROOMS, seeds=(13, 14, 17, 18, 31), echo_db=-22.0, near_db=-30.0,
                                delay_ms=80)

    def scenario_j(self):
        """No echo at the microphone (a headset, a device that cancels its
        own echo): f's and g's scenes, the far end playing, the talker and
        the noise only at the microphone. Nothing needs suppressing: the
        talker must pass as a talker alone would."""
        import real_speech as rs
        return (self.real_speech("jf", rs.ROOMS, seeds=(3, 4, 7, 8, 11), echo_db=ECHO_DBFS, near_db=NEAR_DBFS,
                                 delay_ms=DEVICE_DELAY_MS, no_echo=True) + [""] +
                self.real_speech("jg", rs.HELD_OUT_ROOMS, seeds=(13, 14, 17, 18, 31), echo_db=-22.0, near_db=-30.0,
                                 delay_ms=80, no_echo=True))

    def scenario_h(self):
        """More contents: f's and g's rooms with four other prompt, sequence
        and noise seed sets (RTMix and speexdsp; no AEC3 or AECMOS). A tuning
        must hold beyond the scenes it was tuned on."""
        import real_speech as rs
        sets = [(21, 22, 23, 24, 25), (41, 42, 43, 44, 45), (51, 52, 53, 54, 55), (61, 62, 63, 64, 65)]
        first = len(self.talker_rows)
        table = []
        for i, sd in enumerate(sets):
            for kind, rooms, echo_db, near_db, delay in (("f", rs.ROOMS, ECHO_DBFS, NEAR_DBFS, DEVICE_DELAY_MS),
                                                          ("g", rs.HELD_OUT_ROOMS, -22.0, -30.0, 80)):
                part = self.real_speech(f"h{i}{kind}", rooms, seeds=sd, echo_db=echo_db, near_db=near_db,
                                        delay_ms=delay, lean=True)
                table += [f"| {sd[0]}… ({kind}) " + line for line in part
                          if line.startswith("| ") and "unprocessed" not in line and "---" not in line
                          and not line.startswith("| capture")]
        lines = ["### h. Recorded speech, more contents (f's and g's rooms, four other seed sets)",
                 "As f (talker -27 dBFS against echo -25, 40 ms) and g (talker -30 against -22, 80 ms), no hint, with the "
                 "prompt order, sequences and noise drawn from four other seed sets.", ""]
        for label in sorted({r[3] for r in self.talker_rows[first:]}):
            rows = [r for r in self.talker_rows[first:] if r[3] == label]
            over = sum(1 for r in rows if r[4] > 0.03)
            long_runs = sum(1 for r in rows if r[5] > 100)
            lines.append(f"- **{label}**: {len(rows)} runs; talker muted median {100 * float(np.median([r[4] for r in rows])):.1f} %, "
                         f"max {100 * max(r[4] for r in rows):.1f} %, over 3 % in {over}; longest run max "
                         f"{max(r[5] for r in rows):.0f} ms, over 100 ms in {long_runs}; ERLE median of medians "
                         f"{float(np.median([r[6] for r in rows])):.1f} dB, of p10 {float(np.median([r[7] for r in rows])):.1f} dB; "
                         f"DT PESQ mean {float(np.mean([r[8] for r in rows])):.2f}")
        lines += ["", "| seeds | capture | room | engine | ERLE median | ERLE p10 | muted frames | longest muted run | "
                  "PESQ WB (DT) | AECMOS DT | AECMOS ST |", "|---|---|---|---|---|---|---|---|---|---|---|"] + table
        return lines

    def scenario_i(self):
        """Echo-path changes on recorded speech: f's and g's rooms (their
        levels), the path moving at 10 s (+30, +100, +300, -100, -250 ms), with
        no talker or a talker who starts 0, 0.2, 0.5 or 1 s after the move
        (a student answers while the laptop is being moved). RTMix (no hint),
        speexdsp (200 ms tail + preprocess, reference aligned by the delay
        before the move: it cannot know the move) and AEC3 (no hint). Echo:
        0.25 s windows from the move to 4 s after, those where the echo stands
        within 10 dB of its median level (the goal: none under 20 dB).
        Talker: its muted frames from its start (as f)."""
        import real_speech as rs
        secs = 20.0
        at = 10.0
        jumps = [(100, 40), (-100, 140), (300, 40), (30, 40), (-250, 300)]
        starts = [None, 0.0, 0.2, 0.5, 1.0]
        far_clips = rs.load_prompts(f"{rs.SOUNDS}/fr_CA_f_June/*.wav", PLAY_RATE, seed=71)
        near_clips = rs.load_prompts(f"{rs.SOUNDS}/en_US_f_Allison/*.g722", PLAY_RATE, ffmpeg_g722=True, seed=72)
        media = self.media(secs)
        base = self.args.speex_baseline
        jobs = []
        k = 0
        for rate in self.rates:
            for kind, rooms, echo_db, near_db in (("f", rs.ROOMS, ECHO_DBFS, NEAR_DBFS), ("g", rs.HELD_OUT_ROOMS, -22.0, -30.0)):
                for ri, (rname, dims, rt60, dist) in enumerate(rooms):
                    h = rs.rir(rate, dims, rt60, dist)
                    for jump, d0 in jumps:
                        for st in starts:
                            k += 1
                            seed = 1000 + 37 * k
                            far = rs.sequence(far_clips, secs, PLAY_RATE, (0.2, 0.6), 0.2, seed)
                            far /= active_rms(far)
                            play = far * 10 ** (-22 / 20) + media * 10 ** (-30 / 20)
                            play *= 10 ** (-3 / 20) / np.abs(play).max()
                            n = int(secs * rate)
                            ref = resample(play, PLAY_RATE, rate)[:n]
                            room = signal.oaconvolve(ref, h)[:n]
                            room *= 10 ** (echo_db / 20) / active_rms(room, rate)
                            d, j = int(round(d0 * rate / 1000)), int(at * rate)
                            d2 = d + int(round(jump * rate / 1000))
                            echo = np.zeros(n)
                            echo[d:j] = room[:j - d]
                            echo[j:] = room[j - d2:n - d2]
                            nr = np.zeros(n)
                            if st is not None:
                                near = rs.sequence(near_clips, secs, PLAY_RATE, (0.8, 2.0), at + st, seed + 1)
                                nr = resample(near / active_rms(near), PLAY_RATE, rate)[:n] * 10 ** (near_db / 20)
                            mic = echo + nr + rs.pink(n, seed + 2) * 10 ** (-70 / 20)
                            name = f"i-{rate}-{kind}{ri}-{jump:+d}-{'none' if st is None else st}"
                            directory = os.path.join(self.work, name)
                            os.makedirs(directory, exist_ok=True)
                            sf.write(os.path.join(directory, "playout.wav"), play.astype(np.float32), PLAY_RATE, subtype="FLOAT")
                            sf.write(os.path.join(directory, "mic.wav"), mic.astype(np.float32), rate, subtype="FLOAT")
                            if st is not None:  # the microphone's talker alone, to look at what was cut
                                sf.write(os.path.join(directory, "talker.wav"), nr.astype(np.float32), rate, subtype="FLOAT")
                            job = self.pool.submit(run_aec, self.cli, directory, [], "auto")
                            true_delay = d + int(round(dist / C * rate))
                            jobs.append((rate, kind, jump, st, mic, nr, echo, ref, true_delay, directory, job))
        engines = ["RTMix", "speexdsp", "WebRTC AEC3"]
        rows = {}
        by_time = {}
        for rate, kind, jump, st, mic, nr, echo, ref, true_delay, directory, job in jobs:
            outs = {"RTMix": job.result()[0]}
            if base and not self.args.rtmix_only:
                outs["speexdsp"] = rs.run_speex(base, mic, ref, rate, true_delay, directory, "speex")
            aec3 = None if self.args.rtmix_only else rs.run_aec3(mic, ref, rate)
            if aec3 is not None:
                outs["WebRTC AEC3"] = aec3
            for eng, out in outs.items():
                out = np.pad(out, (0, max(0, len(mic) - len(out))))[:len(mic)]
                key = (rate, kind, eng)
                if st is None:
                    n = int(0.25 * rate)
                    pe = [np.mean(echo[int(q * n):int(q * n) + n] ** 2) for q in range(int(5 / 0.25), int(secs / 0.25))]
                    med = float(np.median(pe))
                    w = []
                    for q in range(16):
                        a = int((at + 0.25 * q) * rate)
                        if np.mean(echo[a:a + n] ** 2) < med * 0.1:
                            continue
                        w.append((q, db(np.mean(mic[a:a + n] ** 2)) - db(np.mean(out[a:a + n] ** 2))))
                    bad = [q for q, e in w if e < 20]
                    # The same windows over the 4 s before the move: what the
                    # room leaves anyway (a control for the move's own leak).
                    before = 0
                    for q in range(16):
                        a = int((at - 4 + 0.25 * q) * rate)
                        if np.mean(echo[a:a + n] ** 2) >= med * 0.1 and \
                                db(np.mean(mic[a:a + n] ** 2)) - db(np.mean(out[a:a + n] ** 2)) < 20:
                            before += 1
                    rows.setdefault(key, {"echo": [], "talk": []})["echo"].append(
                        (jump, len(bad), min(e for _, e in w), 0.25 * (max(bad) + 1) if bad else 0.0, before))
                else:
                    share, longest, count, pn, po, sel = rs.talker_metrics(nr, echo, out, rate, at + st)
                    rows.setdefault(key, {"echo": [], "talk": []})["talk"].append((jump, st, share, longest))
                    # where the muted frames lie: time since the move
                    since = st + np.arange(len(sel)) * rs.FRAME_S
                    for b, (lo, hi) in enumerate(SINCE_BINS):
                        inside = sel & (since >= lo) & (since < hi)
                        acc = by_time.setdefault(eng, [[0, 0] for _ in SINCE_BINS])
                        acc[b][0] += int((inside & (po < pn * 0.1)).sum())
                        acc[b][1] += int(inside.sum())
        lines = ["### i. Echo-path changes on recorded speech: the echo and a talker who starts with the move",
                 f"f's rooms (talker {NEAR_DBFS:.0f} dBFS against echo {ECHO_DBFS:.0f}) and g's (-30 against -22), "
                 "recorded prompts as f, 20 s, the path moving at 10 s by +30, +100, +300, -100 or -250 ms; "
                 "no talker (echo only: 0.25 s windows from the move to 4 s after where the echo stands within 10 dB of "
                 "its median level; the goal: none under 20 dB) or a talker from 0, 0.2, 0.5 or 1 s after the move "
                 "(muted frames from its start, as f; the goal: at most 3 %, no run over 100 ms). RTMix without a "
                 "hint; speexdsp with its reference aligned by the delay before the move; AEC3 without a hint.", "",
                 "| capture | rooms | engine | echo only: scenes with a window < 20 dB | windows < 20 dB | the 4 s before the move: scenes, windows < 20 dB | worst window (median of scenes) | echo leaks until (longest) | talker: muted median / mean / max | scenes over 3 % | runs over 100 ms |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        for rate in self.rates:
            for kind in ("f", "g"):
                for eng in engines:
                    r = rows.get((rate, kind, eng))
                    if not r:
                        continue
                    e, t = r["echo"], r["talk"]
                    sh = np.array([x[2] for x in t])
                    lines.append(f"| {rate // 1000} kHz | {kind} | {eng} | {sum(1 for x in e if x[1])} of {len(e)} | "
                                 f"{sum(x[1] for x in e)} | {sum(1 for x in e if x[4])}, {sum(x[4] for x in e)} | "
                                 f"{min(x[2] for x in e):.0f} dB ({np.median([x[2] for x in e]):.0f}) | "
                                 f"+{max(x[3] for x in e):.2f} s | {100 * np.median(sh):.1f} / {100 * sh.mean():.1f} / "
                                 f"{100 * sh.max():.1f} % | {int((sh > 0.03).sum())} of {len(sh)} | "
                                 f"{sum(1 for x in t if x[3] > 100)} |")
        lines += ["", "By the talker's start (both rates and room sets; muted median / mean):", "",
                  "| engine | " + " | ".join(f"from +{s} s" for s in starts[1:]) + " |",
                  "|---|" + "---|" * (len(starts) - 1)]
        for eng in engines:
            cells = []
            for s0 in starts[1:]:
                v = np.array([x[2] for (rate, kind, e2), r in rows.items() if e2 == eng for x in r["talk"] if x[1] == s0])
                cells.append(f"{100 * np.median(v):.1f} / {100 * v.mean():.1f} %" if len(v) else "-")
            if any(c != "-" for c in cells):
                lines.append(f"| {eng} | " + " | ".join(cells) + " |")
        lines += ["", "Talker frames muted by time since the move (all talker scenes pooled: muted / counted):", "",
                  "| engine | " + " | ".join(f"{lo:g}-{hi:g} s" for lo, hi in SINCE_BINS) + " |",
                  "|---|" + "---|" * len(SINCE_BINS)]
        for eng in engines:
            if eng in by_time:
                lines.append(f"| {eng} | " + " | ".join(
                    f"{100 * m / max(1, c):.1f} % ({m}/{c})" for m, c in by_time[eng]) + " |")
        lines += ["", "By the move (both rates and room sets; echo only: windows < 20 dB, worst; talker muted mean):", "",
                  "| engine | " + " | ".join(f"{j:+d} ms" for j, _ in jumps) + " |", "|---|" + "---|" * len(jumps)]
        for eng in engines:
            cells = []
            for j0, _ in jumps:
                e = [x for (rate, kind, e2), r in rows.items() if e2 == eng for x in r["echo"] if x[0] == j0]
                t = [x[2] for (rate, kind, e2), r in rows.items() if e2 == eng for x in r["talk"] if x[0] == j0]
                cells.append(f"{sum(x[1] for x in e)}, {min(x[2] for x in e):.0f} dB; {100 * np.mean(t):.1f} %" if e else "-")
            if any(c != "-" for c in cells):
                lines.append(f"| {eng} | " + " | ".join(cells) + " |")
        lines.append("")
        return lines

    def real_speech(self, tag, rooms, seeds, echo_db, near_db, delay_ms, lean=False, no_echo=False):
        """lean: no AEC3, AECMOS or pictures (scenario h); each engine's
        talker figures also go to self.talker_rows. no_echo: the microphone
        hears the talker and the noise only (a headset; scenario j): the
        echo it would have heard only selects the double-talk frames, and
        there is no ERLE or far-end single talk to score."""
        import real_speech as rs
        from pesq import pesq
        secs = max(30.0, self.args.seconds)
        start = 8.0
        base = self.args.speex_baseline
        far_seed, near_seed, far_seq, near_seq, noise_seed = seeds
        far_clips = rs.load_prompts(f"{rs.SOUNDS}/fr_CA_f_June/*.wav", PLAY_RATE, seed=far_seed)
        near_clips = rs.load_prompts(f"{rs.SOUNDS}/en_US_f_Allison/*.g722", PLAY_RATE, ffmpeg_g722=True, seed=near_seed)
        far = rs.sequence(far_clips, secs, PLAY_RATE, (0.2, 0.6), 0.2, far_seq)
        far /= active_rms(far)
        near = rs.sequence(near_clips, secs, PLAY_RATE, (0.8, 2.0), start, near_seq)
        near /= active_rms(near)
        media = self.media(secs)
        play = far * 10 ** (-22 / 20) + media * 10 ** (-30 / 20)
        play *= 10 ** (-3 / 20) / np.abs(play).max()
        engines = [("RTMix", self.cli)] + ([("RTMix before (--cli-old)", self.args.cli_old)] if self.args.cli_old else [])
        rows = []
        jobs = []
        for rate in self.rates:
            for ri, (rname, dims, rt60, dist) in enumerate(rooms):
                h = rs.rir(rate, dims, rt60, dist)
                n = int(secs * rate)
                room = signal.oaconvolve(resample(play, PLAY_RATE, rate), h)[:n]
                room *= 10 ** (echo_db / 20) / active_rms(room, rate)
                d = int(round(delay_ms * rate / 1000))
                echo = np.zeros(n)
                echo[d:] = room[:n - d]
                nr = resample(near, PLAY_RATE, rate)[:n] * 10 ** (near_db / 20)
                noise = rs.pink(n, noise_seed + ri) * 10 ** (-70 / 20)
                if self.args.echo_gain_db:  # a quieter loudspeaker: the echo alone
                    echo = echo * 10 ** (self.args.echo_gain_db / 20)
                mic = (0 if no_echo else echo) + nr + noise
                if self.args.mic_gain_db:  # a quieter (or hotter) microphone: all of it, the talker's and echo's
                    gm = 10 ** (self.args.mic_gain_db / 20)   # metrics scaled alike
                    mic, nr, echo = mic * gm, nr * gm, echo * gm
                name = f"{tag}-{rate}-{ri}"
                directory = os.path.join(self.work, name)
                os.makedirs(directory, exist_ok=True)
                sf.write(os.path.join(directory, "playout.wav"), play.astype(np.float32), PLAY_RATE, subtype="FLOAT")
                sf.write(os.path.join(directory, "mic.wav"), mic.astype(np.float32), rate, subtype="FLOAT")
                # The microphone's parts, for analysis (mic = echo + talker + noise).
                sf.write(os.path.join(directory, "talker.wav"), nr.astype(np.float32), rate, subtype="FLOAT")
                sf.write(os.path.join(directory, "echo.wav"), echo.astype(np.float32), rate, subtype="FLOAT")
                true_delay = d + int(round(dist / C * rate))
                futs = [(label, self.pool.submit(run_aec, cli, directory, [], f"e{i}")) for i, (label, cli) in enumerate(engines)]
                jobs.append((rate, rname, mic, nr, echo, resample(play, PLAY_RATE, rate)[:n], true_delay, directory, futs))
        title = ("f. Real recorded speech, three rooms, double talk" if tag == "f" else
                 f"{tag}. No echo at the microphone (a headset): f's and g's scenes without their echo, "
                 "the far end playing throughout" if no_echo else
                 f"{tag}. Real recorded speech, held out: three other rooms, other prompts and seeds, "
                 f"the talker {echo_db - near_db:.0f} dB under the echo, {delay_ms} ms delay (no tuning looked at these)")
        lines = [f"### {title}",
                 f"{secs:.0f} s; far end: recorded fr-CA voice prompts (June Wallack, 8 kHz) + music at -30 dB under it; "
                 f"near-end talker: recorded en-US prompts (Allison Smith, G.722 16 kHz) from {start:.0f} s, {near_db:.0f} dBFS "
                 f"against echo {echo_db:.0f} dBFS; pink noise -70 dBFS; device delay {delay_ms} ms, no hint. "
                 "speexdsp: 200 ms tail + preprocess (its residual-echo suppression), reference aligned by the true delay. "
                 "WebRTC AEC3: PyPI livekit's AudioProcessingModule (AEC3 + suppressor, noise suppression, high-pass), "
                 "no delay hint. "
                 "Muted = the talker's active 20 ms frames in double talk whose output is > 10 dB below the clean talker. "
                 "ERLE over 1 s windows with the talker silent, after 5 s. AECMOS echo/degradation (speechmos, 16 kHz, "
                 "double talk = 20 s from the talker's onset; far-end single talk = 2 s to the onset)."
                 + (f" The microphone {self.args.mic_gain_db:+.0f} dB (everything it hears)." if self.args.mic_gain_db else "")
                 + (f" The echo {self.args.echo_gain_db:+.0f} dB (a quieter loudspeaker)." if self.args.echo_gain_db else ""), "",
                 "| capture | room | engine | ERLE median | ERLE p10 | muted frames | longest muted run | PESQ WB (DT) | AECMOS DT echo / deg | AECMOS far-end ST echo / deg |",
                 "|---|---|---|---|---|---|---|---|---|---|"]
        plots = []
        for rate, rname, mic, nr, echo, ref, true_delay, directory, futs in jobs:
            outs = [(label, fut.result()[0]) for label, fut in futs]
            if base:
                outs.append(("speexdsp", rs.run_speex(base, mic, ref, rate, true_delay, directory, "speex")))
            aec3 = None if lean else rs.run_aec3(mic, ref, rate)
            if aec3 is not None:
                outs.append(("WebRTC AEC3 (livekit)", aec3))
            a = int(start * rate)
            ref16 = resample(nr[a:], rate, 16_000)
            mic16 = resample(mic[a:], rate, 16_000)
            p_mic = pesq(16_000, ref16, mic16, "wb")
            lines.append(f"| {rate // 1000} kHz | {rname} | unprocessed mic | - | - | - | - | {p_mic:.2f} | - | - |")
            curves = []
            for label, out in outs:
                out = np.pad(out, (0, max(0, len(mic) - len(out))))[:len(mic)]
                erows = [] if no_echo else rs.erle_windows(mic, nr, echo, out, rate)
                med, p10 = rs.stats(erows)
                share, longest, count, pn, po, sel = rs.talker_metrics(nr, echo, out, rate, start)
                out16 = resample(out[a:], rate, 16_000)
                m = min(len(ref16), len(out16))
                score = pesq(16_000, ref16[:m], out16[:m], "wb")
                self.talker_rows.append((tag, rate, rname, label, share, longest, med, p10, score))
                mos = rs.aecmos(ref, mic, out, rate, a, a + 20 * rate, "dt") if self.args.aecmos and not lean else None
                mos_s = f"{mos[0]:.2f} / {mos[1]:.2f}" if mos else "n/a"
                # far-end single talk: 2 s to the talker's onset
                st = rs.aecmos(ref, mic, out, rate, 2 * rate, a, "st") if self.args.aecmos and not lean and not no_echo else None
                st_s = f"{st[0]:.2f} / {st[1]:.2f}" if st else "n/a"
                lines.append(f"| {rate // 1000} kHz | {rname} | {label} | {fmt(med)} dB | {fmt(p10)} dB | "
                             f"{100 * share:.1f} % of {count} | {longest:.0f} ms | {score:.2f} | {mos_s} | {st_s} |")
                curves.append((label, erows, pn, po, sel))
            plots.append((rate, rname, curves))
        if self.args.markdown and not lean and not no_echo:
            png = os.path.splitext(self.args.markdown)[0] + f"-{tag}.png"
            plot_f(plots, png, start)
            lines += ["", f"Pictures: `{os.path.basename(png)}` (ERLE per 1 s window; the talker's level in "
                      "(clean) and out per 20 ms frame, muted frames marked)."]
        return lines


def plot_f(plots, path, start):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(plots), 2, figsize=(16, 2.6 * len(plots)), squeeze=False)
    for row, (rate, rname, curves) in enumerate(plots):
        ax = axes[row][0]
        for label, erows, _, _, _ in curves:
            ax.plot([t for t, _ in erows], [e for _, e in erows], marker=".", label=label)
        ax.set_title(f"{rate // 1000} kHz, {rname}: ERLE (1 s echo-only windows)", fontsize=8)
        ax.set_ylabel("dB")
        ax.legend(fontsize=6)
        ax = axes[row][1]
        label, _, pn, po, sel = curves[0]
        t = start + np.arange(len(pn)) * 0.02
        ax.plot(t, 10 * np.log10(pn + 1e-12), lw=0.6, label="talker clean")
        ax.plot(t, 10 * np.log10(po + 1e-12), lw=0.6, label=f"{label} out")
        muted = sel & (po < pn * 0.1)
        ax.plot(t[muted], 10 * np.log10(pn[muted] + 1e-12), "rx", ms=3, label="muted frame")
        ax.set_ylim(-90, -10)
        ax.set_title(f"{rate // 1000} kHz, {rname}: talker level in/out (20 ms)", fontsize=8)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def lag_samples(x, y, rate, max_ms=60):
    """Lag of y relative to x (samples) at the cross-correlation peak, |lag| <= max_ms."""
    m = min(len(x), len(y))
    c = signal.correlate(y[:m], x[:m], mode="full", method="fft")
    mid = m - 1
    w = int(max_ms * rate / 1000)
    seg = c[mid - w:mid + w + 1]
    return int(np.argmax(np.abs(seg))) - w


def segsnr(near, y, rate, start):
    f = int(0.02 * rate)
    vals = []
    thr = (10 ** (NEAR_DBFS / 20)) ** 2 * 10 ** (-25 / 10)     # frames within 25 dB of the talker level
    for i in range(start, min(len(near), len(y)) - f, f):
        s = near[i:i + f]
        ps = np.mean(s ** 2)
        if ps < thr:
            continue
        pe = np.mean((y[i:i + f] - s) ** 2)
        vals.append(min(35.0, max(-10.0, db(ps) - db(pe))))
    return float(np.mean(vals)) if vals else None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="a,b,c,d,e,f", help="comma-separated subset of a,b,c,d,e,f,g,h,i,j (g: f's held-out rooms; h: their rooms with four more contents; i: echo-path changes on recorded speech; j: f's and g's scenes with no echo at the microphone, a headset; g, h, i and j are not in the default set)")
    ap.add_argument("--full", action="store_true", help="10-minute drift run (d) instead of 60 s")
    ap.add_argument("--seconds", type=float, default=20.0, help="length of scenarios a, b, c, e (default 20)")
    ap.add_argument("--rates", default="16000,48000", help="capture rates (default 16000,48000)")
    ap.add_argument("--cli", help="rtmix-cli binary (default: build it in release mode)")
    ap.add_argument("--scratch-path", default=os.environ.get("RTMIX_SCRATCH", ".build"),
                    help="swift build scratch path when building the CLI (default $RTMIX_SCRATCH or .build)")
    ap.add_argument("--workdir", help="keep generated files here (default: a temporary directory, removed)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel rtmix-cli runs (default 2)")
    ap.add_argument("--markdown", help="also write the tables to this file (and scenario f's and g's pictures beside it)")
    ap.add_argument("--cli-old", help="scenarios f, g: also run this (older) rtmix-cli")
    ap.add_argument("--oracle-dir", help="debug builds with scripts/aec-eval/talk-features.patch: run each scene "
                    "with RTMIX_ORACLE=DIR/<scene>.bin (the suppressor's state per 10 ms frame; talk_model.py --predict)")
    ap.add_argument("--speex-baseline", help="scenarios f, g: speex_baseline binary (default: compile speex_baseline.c)")
    ap.add_argument("--rtmix-only", action="store_true", help="scenario i: RTMix alone (no speexdsp or AEC3 rows; "
                    "quicker while tuning)")
    ap.add_argument("--aecmos", action="store_true", help="scenarios f, g: AECMOS scores (speechmos)")
    ap.add_argument("--mic-gain-db", type=float, default=0.0, help="scenarios f, g, h, j: the microphone this many dB "
                    "quieter (< 0) or hotter, the talker, echo and noise alike (a microphone's gain)")
    ap.add_argument("--echo-gain-db", type=float, default=0.0, help="scenarios f, g, h: the echo alone this many dB "
                    "quieter (< 0) or louder (a loudspeaker's volume)")
    ap.add_argument("--rtmix-args", default="", help="options appended to every `rtmix-cli aec` run, e.g. "
                    "'--tail-ms 300' (the tables then say so; speexdsp and AEC3 stay as they are)")
    args = ap.parse_args()
    global ORACLE_DIR, RTMIX_ARGS
    ORACLE_DIR = args.oracle_dir
    RTMIX_ARGS = shlex.split(args.rtmix_args)

    if shutil.which("espeak-ng") is None and set(args.scenario.split(",")) - {"f", "g", "h", "i", "j"}:
        sys.exit("espeak-ng not found: apt-get install espeak-ng")
    if not args.cli:
        scratch = args.scratch_path
        subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch, "--product", "rtmix-cli"],
                       cwd=repo, check=True, stdout=sys.stderr)
        bindir = subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch, "--show-bin-path"],
                                cwd=repo, check=True, capture_output=True, text=True).stdout.strip()
        args.cli = os.path.join(bindir, "rtmix-cli")
    if set(args.scenario.split(",")) & {"f", "g", "h", "i", "j"} and not args.speex_baseline:
        args.speex_baseline = os.path.join(tempfile.mkdtemp(prefix="speex-baseline-"), "speex_baseline")
        subprocess.run(["cc", "-O2", "-o", args.speex_baseline, os.path.join(here, "speex_baseline.c"),
                        "-lspeexdsp", "-lm"], check=True)
    sys.path.insert(0, here)
    keep = args.workdir is not None
    ev = Eval(args)
    out = [f"## RTMix AEC evaluation ({'full' if args.full else 'quick'})", "",
           f"Room {ROOM[0]}x{ROOM[1]}x{ROOM[2]} m (pyroomacoustics, RT60 {RT60} s), loudspeaker {DIST} m from the mic, "
           f"echo {ECHO_DBFS:.0f} dBFS RMS, noise {NOISE_DBFS:.0f} dBFS, playout 48 kHz mono float, 10 ms lockstep frames, "
           f"tail 200 ms, CLI defaults (NS + residual-echo suppression on)"
           + (f"; RTMix runs with `{args.rtmix_args}`." if RTMIX_ARGS else "."), ""]
    try:
        for sc in [s.strip() for s in args.scenario.split(",") if s.strip()]:
            fn = getattr(ev, f"scenario_{sc}", None)
            if fn is None:
                sys.exit(f"unknown scenario '{sc}'")
            print(f"scenario {sc} ...", file=sys.stderr)
            out += fn() + [""]
    finally:
        ev.pool.shutdown()
        if not keep:
            shutil.rmtree(ev.work, ignore_errors=True)
    text = "\n".join(out)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
