"""Scenario f of aec_eval.py: real recorded human speech in several rooms.

Far end: June Wallack's fr-CA voice prompts (Debian asterisk-core-sounds-fr-wav,
8 kHz, CC-BY-SA-3.0: a telephone far end). Near-end talker: Allison Smith's
en-US prompts (asterisk-core-sounds-en-g722, G.722 16 kHz wideband, decoded with
ffmpeg; CC-BY-SA-3.0). Rooms from pyroomacoustics (RT60 0.3/0.5/0.7 s,
loudspeaker 0.3/0.6/1.0 m), pink background noise, music in the playout.

Engines on the same files: RTMix (`rtmix-cli aec`, no delay hint), optionally
an older rtmix-cli (`--cli-old`), and plain speexdsp (200 ms tail + preprocess
with its residual-echo suppression, reference aligned by the true delay:
speex_baseline.c), and WebRTC AEC3 (PyPI livekit's AudioProcessingModule, no
delay hint) when livekit is installed.

Talker metrics (double talk, far end active): the clean talker's active 20 ms
frames (within 25 dB of its active level) whose output power is more than
10 dB below the clean talker's ("muted"), their share and the longest run;
PESQ WB from the talker's first onset; AECMOS (speechmos, offline ONNX, first
20 s of double talk and of far-end single talk). ERLE over 1 s windows with the
talker silent and the far end active, after 5 s: median and 10th percentile.
"""
import glob
import math
import os
import subprocess

import numpy as np
import soundfile as sf
from scipy import signal

SOUNDS = "/usr/share/asterisk/sounds"
ROOMS = [  # (name, dims, rt60, distance)
    ("small 0.3 s, 0.3 m", [4.0, 3.5, 2.7], 0.3, 0.3),
    ("class 0.5 s, 0.6 m", [7.0, 6.0, 3.0], 0.5, 0.6),
    ("hall 0.7 s, 1.0 m", [9.0, 7.0, 3.5], 0.7, 1.0),
]
# Held out (scenario g): rooms no tuning looked at.
HELD_OUT_ROOMS = [
    ("office 0.4 s, 0.5 m", [4.0, 3.5, 2.7], 0.4, 0.5),
    ("lab 0.6 s, 0.8 m", [7.0, 6.0, 3.2], 0.6, 0.8),
    ("big 0.9 s, 1.2 m", [10.0, 8.0, 4.0], 0.9, 1.2),
]
FRAME_S = 0.02


def load_prompts(pattern, rate_out, ffmpeg_g722=False, limit=60, seed=0):
    files = sorted(glob.glob(pattern))
    if not files:
        raise SystemExit(f"no prompts at {pattern}: apt-get install asterisk-core-sounds-en-g722 "
                         "asterisk-core-sounds-fr-wav ffmpeg")
    rng = np.random.default_rng(seed)
    rng.shuffle(files)
    clips = []
    for f in files[:limit]:
        if ffmpeg_g722:
            raw = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "g722", "-i", f,
                                  "-f", "f32le", "-ac", "1", "-ar", "16000", "-"], check=True,
                                 capture_output=True).stdout
            x, rate = np.frombuffer(raw, dtype=np.float32).astype(np.float64), 16000
        else:
            x, rate = sf.read(f, dtype="float64")
        if x.ndim > 1:
            x = x.mean(axis=1)
        # trim silence at both ends (prompts are padded)
        e = np.abs(x) > 0.01 * np.abs(x).max()
        idx = np.nonzero(e)[0]
        if len(idx) < rate // 5:
            continue
        x = x[max(0, idx[0] - rate // 50):idx[-1] + rate // 20]
        g = math.gcd(rate_out, rate)
        clips.append(signal.resample_poly(x, rate_out // g, rate // g))
    return clips


def sequence(clips, seconds, rate, gap, lead, seed):
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    out = np.zeros(n)
    pos = int(lead * rate)
    i = 0
    while pos < n:
        c = clips[i % len(clips)]
        m = min(len(c), n - pos)
        out[pos:pos + m] = c[:m]
        pos += len(c) + int(rng.uniform(*gap) * rate)
        i += 1
    return out


def pink(n, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(n)
    b = [0.049922035, -0.095993537, 0.050612699, -0.004408786]
    a = [1, -2.494956002, 2.017265875, -0.522189400]
    x = signal.lfilter(b, a, w)
    return x / math.sqrt(np.mean(x ** 2))


def rir(rate, dims, rt60, dist):
    import pyroomacoustics as pra
    e_abs, max_order = pra.inverse_sabine(rt60, dims)
    r = pra.ShoeBox(dims, fs=rate, materials=pra.Material(e_abs), max_order=min(max_order, 40))
    src = [dims[0] / 2 - 0.4, dims[1] / 2, 1.2]
    r.add_source(src)
    r.add_microphone([src[0] + dist, src[1], src[2]])
    r.compute_rir()
    h = np.asarray(r.rir[0][0], dtype=np.float64)
    g = pra.constants.get("frac_delay_length") // 2
    return h[g:]


def frame_powers(x, rate):
    f = int(FRAME_S * rate)
    k = len(x) // f
    return (x[:k * f].reshape(k, f) ** 2).mean(axis=1)


def talker_metrics(near, echo, out, rate, start):
    """Muted share, longest muted run (ms), frames counted: double talk only."""
    a = int(start * rate)
    pn = frame_powers(near[a:], rate)
    pe = frame_powers(echo[a:], rate)
    po = frame_powers(out[a:len(near)], rate)
    k = min(len(pn), len(po), len(pe))
    pn, pe, po = pn[:k], pe[:k], po[:k]
    level = np.mean(pn[pn > pn.max() * 1e-4])
    active = pn > level * 10 ** (-25 / 10)
    far = pe > np.median(pe[pe > 0]) * 10 ** (-20 / 10)
    sel = active & far
    muted = sel & (po < pn * 0.1)
    longest = run = 0
    for i in range(k):
        if sel[i]:
            run = run + 1 if muted[i] else 0
            longest = max(longest, run)
        # frames outside the selection neither extend nor break a run
    share = muted.sum() / max(1, sel.sum())
    return float(share), longest * FRAME_S * 1000, int(sel.sum()), pn, po, sel


def erle_windows(mic, near, echo, out, rate, t0=5.0):
    rows = []
    k = min(len(out), len(mic)) // rate
    pe = np.array([np.mean(echo[i * rate:(i + 1) * rate] ** 2) for i in range(k)])
    med = np.median(pe[pe > 0])
    for i in range(k):
        s = slice(i * rate, (i + 1) * rate)
        if np.max(np.abs(near[s])) > 1e-5 or pe[i] < med * 10 ** (-15 / 10):
            continue
        rows.append((float(i), 10 * math.log10(np.mean(mic[s] ** 2) / max(np.mean(out[s] ** 2), 1e-20))))
    return rows


def stats(rows, t0=5.0):
    v = [e for t, e in rows if t >= t0]
    if not v:
        return float("nan"), float("nan")
    return float(np.median(v)), float(np.percentile(v, 10))


def run_speex(binary, mic, reference, rate, delay_samples, work, tag):
    lead = int(0.002 * rate)
    shift = max(0, delay_samples - lead)
    ref = np.concatenate([np.zeros(shift), reference])[:len(mic)]
    pm, pr, po = (os.path.join(work, f"{tag}-{x}.f32") for x in ("mic", "ref", "out"))
    mic.astype(np.float32).tofile(pm)
    ref.astype(np.float32).tofile(pr)
    subprocess.run([binary, str(rate), "200", pm, pr, po], check=True)
    y = np.fromfile(po, dtype=np.float32).astype(np.float64)
    # speex_preprocess adds one frame of latency
    f = rate // 100
    y = np.concatenate([y[f:], np.zeros(f)])
    return np.pad(y, (0, max(0, len(mic) - len(y))))[:len(mic)]


def run_aec3(mic, reference, rate, delay_ms=None):
    """WebRTC AEC3 through PyPI livekit's AudioProcessingModule (its bundled
    WebRTC audio processing: AEC3 + its suppressor, noise suppression, high-pass
    filter), 10 ms frames in lockstep: the reference frame, then the mic frame.
    delay_ms None: no hint (AEC3 estimates the delay itself, set to 0 as a
    host without one would). Returns None when livekit is not installed."""
    try:
        from livekit import rtc
    except Exception:  # noqa: BLE001
        return None
    apm = rtc.AudioProcessingModule(echo_cancellation=True, noise_suppression=True, high_pass_filter=True)
    f = rate // 100
    q = lambda x: np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)
    m16, r16 = q(mic), q(np.pad(reference, (0, max(0, len(mic) - len(reference))))[:len(mic)])
    out = np.zeros(len(mic))
    for i in range(0, len(mic) - f + 1, f):
        apm.process_reverse_stream(rtc.AudioFrame(r16[i:i + f].tobytes(), rate, 1, f))
        frame = rtc.AudioFrame(m16[i:i + f].tobytes(), rate, 1, f)
        apm.set_stream_delay_ms(int(delay_ms or 0))
        apm.process_stream(frame)
        out[i:i + f] = np.frombuffer(frame.data, dtype=np.int16) / 32768.0
    return out


def aecmos(reference, mic, out, rate, a, b, talk):
    try:
        from speechmos import aecmos as am
    except Exception as e:  # noqa: BLE001
        # --aecmos asked for it: say why instead of printing n/a.
        raise SystemExit(f"--aecmos: speechmos failed to load ({e}); pip install -r scripts/aec-eval/requirements.txt")
    def r16(x):
        g = math.gcd(16000, rate)
        return np.clip(signal.resample_poly(x[a:b], 16000 // g, rate // g), -1, 1)
    res = am.run({"lpb": r16(reference), "mic": r16(mic), "enh": r16(out)}, sr=16000, talk_type=talk)
    return res["echo_mos"], res["deg_mos"]
