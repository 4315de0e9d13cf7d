import CRTMixSupport

/// Near-end talk over the echo, per 10 ms frame: the residual-echo
/// suppressor's state decision (near end present: the talker's bins pass;
/// echo only: the residual is taken 25 dB louder).
///
/// The rule it replaced counted talk only where the output kept more than
/// 6 dB over the near-end residual *and* within 10 dB of the linear echo
/// estimate: a talker more than 10 dB under the echo failed the second
/// test and the echo-only state cut it (scenario h: 15 of 48 runs over 3 %
/// of the talker's frames muted). Run with the true talker activity (an
/// oracle) instead, the same suppressor kept the talker (4 runs over 3 %)
/// and removed more echo, so the decision was what failed
/// (docs/capture.md).
///
/// This detector scores twelve features with a logistic model, each
/// feature also as its ~100 ms average (`ema`):
/// - from the suppressor's broadband sums: kept over the linear echo
///   estimate, kept over the residual, output over the echo estimate,
///   output over the echo the reference explains, and the share of the
///   kept power where the microphone stands over that echo;
/// - per band (16 bands, 0–8 kHz): the output over the echo the reference
///   explains and over the held echo estimate, as their largest, third
///   largest and mean (log). A talker shows in bands the far end leaves
///   weak; a residual follows the echo's spectrum;
/// - the echo's coupling: the path gain learnt over 0–8 kHz (the echo the
///   reference explains over the held reference), within −35 … −5 dB. A
///   quieter microphone (or loudspeaker) leaves speexdsp's filter less
///   converged, and the ratios above then read a talker as echo; this one
///   scale, not a ratio of the frame's signals, lets the model tell the
///   two apart (docs/capture.md, "The microphone's gain").
/// The weights were fitted (scikit-learn's logistic regression) to frames
/// labelled with the talker's true activity in scenario h at three
/// microphone gains (0, −10, −20 dB: 144 runs of six rooms, recorded
/// speech, four seed sets; `scripts/aec-eval/talk_model.py`) and to five
/// recordings of the live loopback's suspend case, echo only, weighted 6
/// (a dry path whose delay creeps; `scripts/aec-eval/live-record`), and
/// checked on other contents (scenarios f and g at 0 / −10 / −20 dB: at
/// most 1.6 / 2.0 / 7.9 % of the talker muted) and on eight more live
/// recordings (2.9 % of their frames scored as talk; docs/capture.md, "The
/// microphone's gain"). A call's first 5 s of far end are scored by the
/// model before (`startWeights`). Talk is a score over
/// `threshold` in two frames running (the suppressor holds the state) with
/// the kept power within 25 dB of the echo estimate (`audibleFloor`).
/// Plain stored values (SIMD4 lanes), no allocation per frame; the suppressor
/// keeps the band sums.
struct NearEndDetector {
    typealias V = SIMD4<Float>
    /// Feature weights: this frame's features (0…3, 4…7, 8…11) and their
    /// ~100 ms averages, with the features' normalisation folded in.
    let weights: (V, V, V)
    let averageWeights: (V, V, V)
    let bias: Float
    /// The model before the coupling (fitted at one microphone level,
    /// lane 11 unused), which scores a call's first `settleFrames` frames
    /// with far end: the model above, fitted on frames after them, held a
    /// reverberant room's converging filter over its weak coupling as talk
    /// (docs/capture.md, "The microphone's gain").
    let startWeights: (V, V, V)
    let startAverageWeights: (V, V, V)
    let startBias: Float
    let settleFrames = 500
    /// The score (logit) over which a frame counts as talk.
    let threshold: Float
    /// Talk needs the output to keep at least this share of the linear
    /// echo estimate's power (−25 dB): without it the model, fitted on
    /// recorded speech, read frames of the synthetic scenes' converged
    /// filter (kept 40 dB under the echo) as talk.
    let audibleFloor: Float = 0.00316

    /// Band edges, Hz: 16 bands over 0–8 kHz (speech's energy), finer
    /// where the far end's and the talker's pitch and first formants lie.
    static let edgesHz: (Float, Float, Float, Float, Float, Float, Float, Float, Float,
                         Float, Float, Float, Float, Float, Float, Float, Float) =
        (0, 250, 500, 750, 1000, 1250, 1500, 1750, 2000, 2500, 3000, 3500, 4000, 5000, 6000, 7000, 8000)

    /// Per band, the first bin past it (a multiple of 4, at most `half`),
    /// bands 0…3, 4…7, 8…11, 12…15.
    let stops: (SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>, SIMD4<Int32>)
    /// Bands with at least one block of bins (the rest lie above Nyquist).
    let bandCount: Int
    let inverseCount: Float
    /// The features' ~100 ms averages.
    var ema: (V, V, V) = (V(repeating: 0), V(repeating: 0), V(repeating: 0))
    /// The last frame's score (logit), for tests and tracing.
    var score: Float = 0
    /// Frames in a row scored as talk.
    var run = 0

    init(bins half: Int, binHz: Float) {
        var s = [Int32](repeating: 0, count: 16)
        var count = 0
        var start = 0
        withUnsafeBytes(of: NearEndDetector.edgesHz) { raw in
            let e = raw.bindMemory(to: Float.self)
            for b in 0..<16 {
                var stop = Int((e[b + 1] / binHz / 4).rounded()) * 4
                stop = min(max(stop, start), half - half % 4)
                s[b] = Int32(stop)
                if stop > start { count = b + 1 }
                start = stop
            }
        }
        stops = (SIMD4(s[0], s[1], s[2], s[3]), SIMD4(s[4], s[5], s[6], s[7]),
                 SIMD4(s[8], s[9], s[10], s[11]), SIMD4(s[12], s[13], s[14], s[15]))
        bandCount = count
        inverseCount = count > 0 ? 1 / Float(count) : 0
        // scripts/aec-eval/talk_model.py --train 'D0/h*,D-10/h*,D-20/h*,DA/*'
        //   --weight 'DA/*=6' --threshold 0.3 --swift
        // (2026-11-29: scenario h, 48 runs at each of three microphone
        // gains, and five recordings of the live loopback's suspend case,
        // echo only, each frame weighted 6: 376,302 frames with the far
        // end; f and g at the three gains and eight more recordings held
        // out, docs/capture.md).
        weights = (V(-1.05265, 0.953587, 0.213603, 1.00092), V(0.584809, 0.350316, -0.315846, 0.342385),
                   V(0.431766, 0.176314, -0.726736, -0.943711))
        averageWeights = (V(4.13043, -1.15647, -2.06321, -1.00511), V(2.78789, 1.04234, -1.51014, -0.0782579),
                          V(1.24785, -0.48671, 0.15731, 0.0495106))
        bias = -3.74545
        // p > 0.3: a missed talker frame is cut, a false one keeps some
        // residual (cross-validated on h with the first feature version:
        // 7 runs over 3 % muted against 12 at p > 0.5, for an ERLE median
        // of 49.3 against 51.3 dB; docs/capture.md).
        threshold = -0.847298
        // The model of 2026-11-27 (scenario h at one level and five live
        // recordings; docs/capture.md, "The path gain and the live loopback").
        startWeights = (V(-0.356465, 0.76782, -0.198318, 0.761251), V(0.607316, 0.393695, -0.144373, 0.655424),
                        V(0.619045, -0.206092, -0.988757, 0))
        startAverageWeights = (V(4.23395, -1.00783, -2.0827, -1.39685), V(3.42476, 1.57795, -1.94626, 1.25104),
                               V(0.440843, 0.280738, -1.28211, 0))
        startBias = -3.98613
    }

    /// Band `b`'s first bin past it.
    @_noLocks @inline(__always)
    func stop(_ b: Int) -> Int {
        let lane = b & 3
        switch b >> 2 {
        case 0: return Int(stops.0[lane])
        case 1: return Int(stops.1[lane])
        case 2: return Int(stops.2[lane])
        default: return Int(stops.3[lane])
        }
    }

    /// log10 of each lane (x > 0), to about 1e-4: exponent plus a
    /// polynomial of the mantissa.
    @_noLocks @inline(__always)
    static func log10(_ x: V) -> V {
        let bits = unsafeBitCast(x, to: SIMD4<UInt32>.self)
        let e = V(SIMD4<Int32>(truncatingIfNeeded: bits &>> 23) &- 127)
        let m = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: V.self)
        // ln(m), m in [1, 2): a quartic fit.
        var p = V(repeating: -0.056570851) * m + 0.44717955
        p = p * m - 1.4699568
        p = p * m + 2.8212026
        p = p * m - 1.7417939
        return e * 0.30103 + p * 0.43429448
    }

    /// Four bands' totals from their four partial sums each (`p`: band
    /// after band, four floats each).
    @_noLocks @inline(__always)
    static func bandTotals(_ p: UnsafePointer<Float>) -> V {
        var r0 = V(), r1 = V(), r2 = V(), r3 = V()
        let a = p.loadFloat4(), b = (p + 4).loadFloat4(), c = (p + 8).loadFloat4(), d = (p + 12).loadFloat4()
        _unsafePerformance { rtmix_support_transpose4(a, b, c, d, &r0, &r1, &r2, &r3) }
        return (r0 + r1) + (r2 + r3)
    }

    /// The largest and third largest so far (`top.0 ≥ top.1 ≥ top.2`).
    @_noLocks @inline(__always)
    static func insert(_ v: Float, _ top: inout (Float, Float, Float)) {
        top.2 = max(top.2, min(top.1, v))
        top.1 = max(top.1, min(top.0, v))
        top.0 = max(top.0, v)
    }

    /// This frame's twelve features, lanes 0…3, 4…7, 8…11, from the
    /// suppressor's sums (`e` output, `y` linear echo estimate, `r`
    /// near-end residual, `kept`, `talk`: the kept power where the
    /// microphone stands over the echo the reference explains, `x` the
    /// held reference over the bands' bins) and per
    /// band (`bands`: 16 outputs, 16 held echo estimates, 16 echoes the
    /// reference explains, each as four partial sums):
    /// 0 log kept/echo estimate, 1 log kept/residual, 2 log output/echo
    /// estimate, 3 log output/path echo, 4 talk/kept; per band the log
    /// output over the path echo (5 largest, 6 third largest, 7 mean) and
    /// over the held echo estimate (8, 9, 10); 11 log path echo/reference
    /// (the coupling, within −3.5 … −0.5); each clamped to ±8.
    @_noLocks
    func features(e: Float, y: Float, r: Float, kept: Float, talk: Float, x: Float,
                  bands: UnsafePointer<Float>) -> (V, V, V) {
        let tiny: Float = 1e-20
        let none = -Float.greatestFiniteMagnitude
        var path: Float = 0, sum2: Float = 0, sum3: Float = 0
        var top2 = (none, none, none), top3 = (none, none, none)
        var c = 0
        while c < bandCount {
            let ev = NearEndDetector.bandTotals(bands + (4 &* c)) + 1e-12
            let hv = NearEndDetector.bandTotals(bands + (64 &+ 4 &* c)) + 1e-12
            let pv = NearEndDetector.bandTotals(bands + (128 &+ 4 &* c))
            let d2 = NearEndDetector.log10(ev / (pv + 1e-12))
            let d3 = NearEndDetector.log10(ev / hv)
            let n = min(4, bandCount &- c)
            if n == 4 {
                path += pv.sum()
                sum2 += d2.sum()
                sum3 += d3.sum()
            }
            for j in 0..<n {
                if n < 4 {
                    path += pv[j]
                    sum2 += d2[j]
                    sum3 += d3[j]
                }
                NearEndDetector.insert(d2[j], &top2)
                NearEndDetector.insert(d3[j], &top3)
            }
            c &+= 4
        }
        if bandCount < 3 {  // the third largest of fewer: the smallest
            top2.2 = bandCount == 2 ? top2.1 : top2.0
            top3.2 = bandCount == 2 ? top3.1 : top3.0
        }
        if bandCount == 0 { top2 = (0, 0, 0); top3 = (0, 0, 0) }
        let logs = NearEndDetector.log10(V(kept / (y + tiny), kept / (r + tiny), e / (y + tiny), e / (path + tiny)) + 1e-6)
        // The echo's coupling (path gain × held reference over the held
        // reference, 0–8 kHz), kept within the span the model was fitted
        // on (−35 … −5 dB): a scale, not a ratio of the frame's signals.
        let coupling = min(max(NearEndDetector.log10(V(path / (x + tiny) + 1e-9, 1, 1, 1))[0], -3.5), -0.5)
        let lo = V(repeating: -8), hi = V(repeating: 8)
        func clamp(_ v: V) -> V { v.replacing(with: lo, where: v .< lo).replacing(with: hi, where: v .> hi) }
        return (clamp(logs),
                clamp(V(talk / (kept + tiny), top2.0, top2.2, sum2 * inverseCount)),
                clamp(V(top3.0, top3.2, sum3 * inverseCount, coupling)))
    }

    /// Scores this frame's features (and updates their averages); true when
    /// talk has now been scored in two frames running.
    @_noLocks
    mutating func update(_ f: (V, V, V), settled: Bool = true) -> Bool {
        ema.0 += 0.1 * (f.0 - ema.0)
        ema.1 += 0.1 * (f.1 - ema.1)
        ema.2 += 0.1 * (f.2 - ema.2)
        let w = settled ? weights : startWeights, a = settled ? averageWeights : startAverageWeights
        let s = w.0 * f.0 + w.1 * f.1 + w.2 * f.2 + a.0 * ema.0 + a.1 * ema.1 + a.2 * ema.2
        score = (settled ? bias : startBias) + s.sum()
        run = score > threshold ? run + 1 : 0
        return run >= 2
    }
}
