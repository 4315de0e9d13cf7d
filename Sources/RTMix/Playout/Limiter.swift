import CRTMixSupport

/// The last stage of the mix: keeps the output finite and inside [-1, 1]
/// without discontinuities, and leaves it bit-exact while it stays under
/// the threshold.
///
/// Two parts:
/// 1. A peak-hold gain (one-pole attack ~1 ms; hold 30 ms; release ~80 ms)
///    that brings sustained overloads down to the threshold smoothly. The
///    hold is refreshed by every peak that comes back within 0.1 dB of the
///    threshold after the gain, so on a sustained overload (50 Hz and up)
///    the gain settles to a constant instead of following each cycle (a gain
///    that moves within the period is distortion). The gain is exactly 1
///    whenever no overload has been seen recently. No look-ahead: no added
///    latency.
/// 2. A soft clipper that catches what the attack lets through: identity up
///    to the threshold T, then T + k·u/(1+u) with k = 1 − T and
///    u = (|x| − T)/k. It is continuous with a continuous first derivative
///    at T and reaches 1.0 only in the limit (a sample of ±Float.max). At a
///    0 dBFS threshold (T = 1, k = 0) it is a hard clip at ±1.0, so every
///    sample in [-1, 1] (every int16 value) passes bit-exact.
/// Non-finite samples are replaced by 0 and counted; subnormal samples are
/// flushed to 0 (they can cost ~100× per operation on x86).
struct Limiter {
    let threshold: Float
    let knee: Float
    let attack: Float
    let release: Float
    let holdFrames: Int
    /// Gain reduction 1 − gain, kept as the small number it is so that the
    /// release reaches exactly 0 (a gain near 1 has too little Float
    /// precision to creep up to 1 by small steps). Never subnormal: it is
    /// 0 or at least 1e-7 after a release step, and attack steps from 0 are
    /// ≥ attack · ulp(1) (normal).
    var reduction: Float = 0
    /// Frames left before the release may start.
    var holdLeft: Int = 0
    var minGain: Float = 1
    var gain: Float { @_noLocks get { 1 - reduction } }

    /// Peaks whose gained level is at least this fraction of the threshold
    /// (−0.09 dB) refresh the hold.
    static var holdLevel: Float { @_noLocks get { 0.99 } }

    init(thresholdDb: Float, sampleRate: Int) {
        threshold = min(1, rtmix_support_db_to_linear(thresholdDb))
        knee = 1 - threshold
        attack = rtmix_support_one_pole_coeff(0.001, Float(sampleRate))
        release = rtmix_support_one_pole_coeff(0.080, Float(sampleRate))
        holdFrames = max(1, sampleRate * 30 / 1000)
    }

    /// Result of processing one block.
    struct BlockReport {
        var changedFrames = 0
        var nonfiniteSamples = 0
        /// Lowest gain applied in the block (1 when untouched).
        var lowestGain: Float = 1
        /// Largest finite |sample| of the block before limiting (measured
        /// only when the block is not left untouched; 0 otherwise).
        var peak: Float = 0
        init() {}
    }

    @_noLocks
    func softClip(_ y: Float) -> Float {
        let a = y.magnitude
        if a <= threshold { return y }
        // u/(1+u) written as 1 − 1/(1+u): a huge finite sample makes u
        // overflow to +Inf, and Inf/Inf would be NaN; 1/(1+Inf) is 0.
        let u = (a - threshold) / knee
        let shaped = threshold + knee * (1 - 1 / (1 + u))
        return y < 0 ? -shaped : shaped
    }

    /// `x`, or 0 when `x` is subnormal (branch-free select). NaN and ±Inf
    /// are kept (they fail `<`) for the caller to count.
    @_noLocks @inline(__always)
    static func flushed(_ x: Float) -> Float { x.magnitude < Float.leastNormalMagnitude ? 0 : x }

    /// Limits `frames` interleaved frames of `channels` in place.
    @_noLocks
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) -> BlockReport {
        var report = BlockReport()
        // Fast path, the common case: no gain reduction pending and every
        // sample finite and under the threshold. One branch-free pass (NaN
        // and ±Inf fail `<=` too) that also flushes subnormals; the block is
        // otherwise left untouched.
        if reduction == 0 {
            var over: UInt32 = 0
            let t = threshold
            for i in 0..<(frames * channels) {
                let x = buffer[i]
                over |= x.magnitude <= t ? 0 : 1
                buffer[i] = Limiter.flushed(x)
            }
            if over == 0 { return report }
        }
        var red = reduction
        var hold = holdLeft
        var lowest = minGain
        let holdAt = threshold * Limiter.holdLevel
        for f in 0..<frames {
            let frame = buffer + f * channels
            var peak: Float = 0
            for c in 0..<channels {
                let x = frame[c]
                if !x.isFinite {
                    frame[c] = 0
                    report.nonfiniteSamples += 1
                } else {
                    frame[c] = Limiter.flushed(x)
                    if x.magnitude > peak { peak = x.magnitude }
                }
            }
            if peak > report.peak { report.peak = peak }
            let wanted: Float = peak > threshold ? 1 - threshold / peak : 0
            if wanted > red {
                red += (wanted - red) * attack
                hold = holdFrames
            } else if red > 0 {
                if peak * (1 - red) >= holdAt {
                    hold = holdFrames  // the overload goes on: keep the gain
                } else if hold > 0 {
                    hold -= 1
                } else {
                    red += (wanted - red) * release
                    if red < 1e-7 { red = 0 }
                }
            }
            let g = 1 - red
            if g < lowest { lowest = g }
            if g < report.lowestGain { report.lowestGain = g }
            if red == 0 && peak <= threshold { continue }  // untouched: bit-exact
            report.changedFrames += 1
            for c in 0..<channels { frame[c] = Limiter.flushed(softClip(frame[c] * g)) }
        }
        reduction = red
        holdLeft = hold
        minGain = lowest
        return report
    }
}
