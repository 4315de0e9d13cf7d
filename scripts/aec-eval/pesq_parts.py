"""Double-talk PESQ taken apart on scenario f's and g's scenes (12: both
rates): where a talker's PESQ is lost. For each scene, PESQ WB against the
clean talker from its onset (8 s) of
  mic            the microphone (echo + talker + noise), unprocessed
  ne raw         the microphone without its echo (talker + noise)
  rtmix          RTMix (`rtmix-cli aec`, defaults, no hint)
  rtmix nores    RTMix without its residual-echo suppressor (--no-res)
  rtmix ne       RTMix on the microphone without its echo (a headset)
  rtmix ne nores the same without its suppressor
  speex          speexdsp: 200 ms tail + preprocess with its residual-echo
                 suppression, reference aligned by the true delay
  speex lin+ns   the same without its residual-echo suppression
  speex lin      its linear filter alone
  speex ne       speexdsp on the microphone without its echo
  speex lin+ns ne  its linear filter (fed the reference, nothing to model)
                 and its noise suppression on that microphone
  ns only ne     speexdsp's noise suppression alone on that microphone:
                 the ceiling of these chains
Usage: pesq_parts.py RTMIX-CLI [WORKDIR]   (needs the asterisk sounds, as f)
Evaluation only."""
import os, sys, subprocess, tempfile
import numpy as np, soundfile as sf
from scipy import signal
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aec_eval as ae
import real_speech as rs
from pesq import pesq
import concurrent.futures as cf

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = sys.argv[1]
WORK = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="pesq-parts-")
os.makedirs(WORK, exist_ok=True)
# speex_baseline.c with MODE: 0 whole, 1 without its residual-echo
# suppression, 2 the linear filter alone.
SB = os.path.join(WORK, "speex_modes")
with open(os.path.join(HERE, "speex_baseline.c")) as f:
    c = f.read()
c = c.replace("speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_ECHO_STATE, e);",
              'int mode = getenv("MODE") ? atoi(getenv("MODE")) : 0; '
              "if (mode == 0) speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_ECHO_STATE, e);")
c = c.replace("speex_preprocess_run(p, o);", "if (mode != 2) speex_preprocess_run(p, o);")
assert c.count("mode") == 3
with open(SB + ".c", "w") as f:
    f.write(c)
subprocess.run(["cc", "-O2", "-o", SB, SB + ".c", "-lspeexdsp", "-lm"], check=True)
ae.RTMIX_ARGS = []
ae.ORACLE_DIR = None

def speex(mic, ref, rate, delay, d, tag, mode):
    lead = int(0.002 * rate); shift = max(0, delay - lead)
    r = np.concatenate([np.zeros(shift), ref])[:len(mic)]
    pm, pr, po = (os.path.join(d, f"{tag}-{x}.f32") for x in ("mic", "ref", "out"))
    mic.astype(np.float32).tofile(pm); r.astype(np.float32).tofile(pr)
    subprocess.run([SB, str(rate), "200", pm, pr, po], check=True, env=dict(os.environ, MODE=str(mode)))
    y = np.fromfile(po, dtype=np.float32).astype(np.float64)
    f = rate // 100
    if mode != 2:
        y = np.concatenate([y[f:], np.zeros(f)])
    return np.pad(y, (0, max(0, len(mic) - len(y))))[:len(mic)]

def rtmix(d, micname, extra, tag):
    out = os.path.join(d, f"out-{tag}.wav")
    cmd = [CLI, "aec", "--mic", os.path.join(d, micname), "--ref", os.path.join(d, "playout.wav"), "-o", out,
           "--format", "f32", "--quiet"] + extra
    subprocess.run(cmd, check=True, capture_output=True)
    y, _ = sf.read(out, dtype="float64")
    return y

def scenes(tag, rooms, seeds, echo_db, near_db, delay_ms):
    secs = 30.0; start = 8.0; PLAY = ae.PLAY_RATE
    far_seed, near_seed, far_seq, near_seq, noise_seed = seeds
    far_clips = rs.load_prompts(f"{rs.SOUNDS}/fr_CA_f_June/*.wav", PLAY, seed=far_seed)
    near_clips = rs.load_prompts(f"{rs.SOUNDS}/en_US_f_Allison/*.g722", PLAY, ffmpeg_g722=True, seed=near_seed)
    far = rs.sequence(far_clips, secs, PLAY, (0.2, 0.6), 0.2, far_seq); far /= ae.active_rms(far)
    near = rs.sequence(near_clips, secs, PLAY, (0.8, 2.0), start, near_seq); near /= ae.active_rms(near)
    ev = ae.Eval.__new__(ae.Eval); ev._media = {}
    media = ae.Eval.media(ev, secs)
    play = far * 10 ** (-22 / 20) + media * 10 ** (-30 / 20)
    play *= 10 ** (-3 / 20) / np.abs(play).max()
    for rate in (16000, 48000):
        for ri, (rname, dims, rt60, dist) in enumerate(rooms):
            h = rs.rir(rate, dims, rt60, dist); n = int(secs * rate)
            room = signal.oaconvolve(ae.resample(play, PLAY, rate), h)[:n]
            room *= 10 ** (echo_db / 20) / ae.active_rms(room, rate)
            dd = int(round(delay_ms * rate / 1000)); echo = np.zeros(n); echo[dd:] = room[:n - dd]
            nr = ae.resample(near, PLAY, rate)[:n] * 10 ** (near_db / 20)
            noise = rs.pink(n, noise_seed + ri) * 10 ** (-70 / 20)
            d = os.path.join(WORK, f"{tag}-{rate}-{ri}"); os.makedirs(d, exist_ok=True)
            sf.write(os.path.join(d, "playout.wav"), play.astype(np.float32), PLAY, subtype="FLOAT")
            sf.write(os.path.join(d, "mic.wav"), (echo + nr + noise).astype(np.float32), rate, subtype="FLOAT")
            sf.write(os.path.join(d, "mic-ne.wav"), (nr + noise).astype(np.float32), rate, subtype="FLOAT")
            true_delay = dd + int(round(dist / ae.C * rate))
            yield (tag, rate, rname, d, echo, nr, noise, ae.resample(play, PLAY, rate)[:n], true_delay, start)

def one(sc):
    tag, rate, rname, d, echo, nr, noise, ref, td, start = sc
    mic = echo + nr + noise; ne = nr + noise
    outs = {
        "mic": mic, "ne raw": ne,
        "rtmix": rtmix(d, "mic.wav", [], "r"),
        "rtmix nores": rtmix(d, "mic.wav", ["--no-res"], "rn"),
        "rtmix ne": rtmix(d, "mic-ne.wav", [], "rne"),
        "rtmix ne nores": rtmix(d, "mic-ne.wav", ["--no-res"], "rnen"),
        "speex": speex(mic, ref, rate, td, d, "s0", 0),
        "speex lin+ns": speex(mic, ref, rate, td, d, "s1", 1),
        "speex lin": speex(mic, ref, rate, td, d, "s2", 2),
        "speex ne": speex(ne, ref, rate, td, d, "s0n", 0),
        "speex lin+ns ne": speex(ne, ref, rate, td, d, "s1r", 1),
        "ns only ne": speex(ne, ref * 0, rate, td, d, "s1n", 1),
    }
    a = int(start * rate)
    ref16 = ae.resample(nr[a:], rate, 16000)
    res = {}
    for k, y in outs.items():
        y = np.pad(y, (0, max(0, len(mic) - len(y))))[:len(mic)]
        o16 = ae.resample(y[a:], rate, 16000); m = min(len(ref16), len(o16))
        res[k] = pesq(16000, ref16[:m], o16[:m], "wb")
    return (tag, rate, rname, res)

allsc = list(scenes("f", rs.ROOMS, (3, 4, 7, 8, 11), ae.ECHO_DBFS, ae.NEAR_DBFS, ae.DEVICE_DELAY_MS)) + \
        list(scenes("g", rs.HELD_OUT_ROOMS, (13, 14, 17, 18, 31), -22.0, -30.0, 80))
with cf.ThreadPoolExecutor(2) as pool:
    rows = list(pool.map(one, allsc))
keys = list(rows[0][3].keys())
print("| set | rate | room | " + " | ".join(keys) + " |")
print("|" + "---|" * (3 + len(keys)))
for tag, rate, rname, res in rows:
    print(f"| {tag} | {rate//1000} | {rname} | " + " | ".join(f"{res[k]:.2f}" for k in keys) + " |")
