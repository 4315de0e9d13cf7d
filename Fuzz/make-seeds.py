#!/usr/bin/env python3
"""Writes the hand-made seed inputs of Fuzz/Corpus/<target>/ (see the byte
layout read by Sources/FuzzEngineC/FuzzEngineC.swift and
Sources/FuzzSessionC/FuzzSessionC.swift). Run from Fuzz/: python3 make-seeds.py"""
import os, struct

def u16(v): return list(struct.pack('<H', v))
def u32(v): return list(struct.pack('<I', v & 0xFFFFFFFF))

def write(target, name, data):
    d = os.path.join('Corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(bytes(data))

# ---- FuzzEngineC: mode byte, then ops. `slot` is present unless mirror.
def engine_program(mirror, rate_sel=1, chan_sel=0, quality=None):
    s = [] if mirror else [0]
    p = []
    # create: op 0, slot, mask (rate|channels|quality)
    mask = 0x001 | 0x002 | (0x080 if quality is not None else 0)
    p += [0] + s + u16(mask) + [6] + [0] + ([quality] if quality is not None else [])   # 48000 Hz (idx 0), 2 ch
    # add media 44.1k stereo: op 2, slot, domain sel 1, rate sel, chan sel, mask 0
    p += [2] + s + [1, rate_sel, chan_sel, 0]
    # add call 16k mono with drift compensation: mask 0x04 (target) -> f32 sel 27 (30)
    p += [2] + s + [0, 2, 1, 0x04, 25]
    for k in range(4):
        # push f32 2000 frames to source 0: op 5, slot, sel 0, idx 0, garbage, count(s=3,u16), passAccepted, seed
        p += [5] + s + [0, k % 2] + u32(0x12345) + [3] + u16(2000) + [1] + u32(0x1000 + k)
        # push s16 800 frames: op 7
        p += [7] + s + [1, 1] + u32(7) + [3] + u16(800) + [1] + u32(0x2000 + k)
        # render 480 frames f32 then s16: op 8, slot, s16 bool, choice 3 (raw), count s=3 u16
        p += [8] + s + [0, 3, 3] + u16(480)
        p += [9] + s + [1, 3, 3] + u16(480)
    p += [10] + s + [0, 0] + u32(1) + [36 + 0]          # set gain: live id, f32 raw bits next
    p += [12] + s + [1, 8, 1]                             # domain gain media 16, set
    p += [13] + s + [2, 1]                                # output format 16000 Hz / 1 ch
    p += [8] + s + [0, 0, 0]                              # render max_frames
    p += [14] + s + u32(99)                               # stats
    p += [15] + [5, 20] + s                               # events
    p += [4] + s + [0, 0] + u32(0)                        # remove
    p += [5] + s + [5, 0] + u32(0) + [3] + u16(10) + [1] + u32(1)  # push to removed id
    p += [17, 0, 16, 19, 5] + s
    return p

write('FuzzEngineC', 'seed-c-basic', [2] + engine_program(False))
write('FuzzEngineC', 'seed-c-44k-best', [3] + engine_program(False, rate_sel=1, quality=2))
write('FuzzEngineC', 'seed-mirror', [1] + engine_program(True))
write('FuzzEngineC', 'seed-mirror-hot', [9] + engine_program(True, rate_sel=4))
# Capture: create with mask 0x200 (capture rate 16 kHz idx 0, mono idx 0,
# tail 200 idx 0, switches 3), add a 16 kHz call voice, then rounds of push
# 160 / render 480 / capture 160 (f32, op 20; s16, op 21) and hints/publish
# gains (op 22: ms idx, domain idx, gain f32 idx, which).
def capture_program(rate_idx=0, chan_idx=0):
    p = [0, 0] + u16(0x0200) + [rate_idx, chan_idx, 0, 3]
    p += [2, 0, 0, 2, 1, 0]
    p += [22, 0, 0, 0, 4, 0]                              # delay hint 40 ms
    p += [22, 0, 0, 0, 4, 1]                              # publish gain 0.5
    for k in range(12):
        p += [5, 0, 0, 0] + u32(1) + [3] + u16(160) + [1] + u32(0x3000 + k)
        p += [8, 0, 0, 3, 3] + u16(480)
        p += [20 + (k % 2), 0, 3, 3] + u16(160) + [k % 2] + u32(0x4000 + k)
    p += [20, 0, 1, 0, 0] + u32(5)                        # max_frames + 1
    p += [22, 0, 5, 2, 12, 2]                             # bad hint, NULLs
    p += [14, 0] + u32(99)
    return p
write('FuzzEngineC', 'seed-capture-16k', [2] + capture_program())
write('FuzzEngineC', 'seed-capture-48k-stereo', [2] + capture_program(1, 1))
# Swift API: mode 0; config mask 0; add (op 0) media(bool 0) 48k stereo, no extras; push; render.
swift = [0, 0]
swift += [0, 0, 0, 0, 0, 0, 0]
swift += [1, 1, 0, 0, 3] + u16(2000) + [1, 2, 0, 50, 10]
swift += [2, 3] + u16(480) + [1, 0]
swift += [1, 1, 0, 1, 3] + u16(333) + [1, 2, 0, 50, 10]   # wrong channel count
swift += [2, 3] + u16(480) + [0, 3] + u16(100) + [0]     # short buffer
swift += [6, 7]
write('FuzzEngineC', 'seed-swift', swift)

# ---- FuzzSessionC: mode byte (%4 != 0: C ABI), settings mask u32, ops.
def now(delta): return [4] + u16(delta)
p = [1] + u32(0)
p += [1, 5, 7] + list(b'rtc-sdk') + [3, 1]               # register "rtc-sdk" (capacity 255)
p += [2, 5, 6] + list(b'player') + [3, 1]
p += [2, 4, 3] + [0xC0, 0x80, 0xFF] + [2, 0]              # register a non-UTF-8 name
p += [4, 0, 0, 2, 0] + now(10)                            # rtc: request CALL, mode none
p += [5, 0, 1, 0, 0] + now(10)                            # player: request PLAYBACK
p += [10, 0] + now(1)                                     # activation_result(0)
p += [19, 5, 255]                                         # drain actions
p += [7, 0, 1, 4, 1, 1, 5] + now(20)                      # observe from player: PLAY_AND_RECORD...
p += [8] + now(5) + [9, 1] + now(600)                     # interruption began / ended(resume)
p += [18] + now(1000)                                     # tick
p += [13, 3, 5, 4, 2, 0, 4, 2, 0, 5] + now(3)             # route: HFP
p += [15, 2] + now(1) + [16] + now(1) + [17] + now(1)     # permission granted, bg, fg
p += [18, 0] + u16(0)                                     # tick back in time
p += [22] + u16(300)                                      # flood
p += [19, 5, 255, 20, 5, 255, 21, 5, 23, 2, 23, 3]
write('FuzzSessionC', 'seed-c-call', p)
write('FuzzSessionC', 'seed-c-small-queue', [2] + u32(1 << 16) + [0] + p[5:])
# Swift API mode.
sw = [0] + u16(0)
sw += [0, 0, 5, 0, 0] + list(b'abcde')
sw += [1, 0, 0, 0x22, 0, 0, 0, 9, 0, 0, 0]
sw += [5, 0, 0, 6, 0, 0, 1, 11, 0, 0, 13, 0, 0, 12, 0, 0, 255]
write('FuzzSessionC', 'seed-swift', sw)
print('seeds written')
