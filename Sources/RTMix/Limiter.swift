import CRTMixSupport

/// The last stage of the mix: keeps the output finite and inside (-1, 1)
/// without discontinuities, and leaves it bit-exact while it stays under
/// the threshold.
///
/// Two parts:
/// 1. A peak-following gain (one-pole attack ~1 ms, release ~80 ms) that
///    brings sustained overloads down to the threshold smoothly. The gain is
///    exactly 1 whenever no overload has been seen recently.
/// 2. A soft clipper that catches what the attack lets through: identity up
///    to the threshold T, then T + k·u/(1+u) with k = 1 − T and
///    u = (|x| − T)/k. It is continuous with a continuous first derivative
///    at T and reaches 1.0 only in the limit (a sample of ±Float.max).
/// Non-finite samples are replaced by 0 and counted.
@usableFromInline
struct Limiter {
    @usableFromInline let threshold: Float
    @usableFromInline let knee: Float
    @usableFromInline let attack: Float
    @usableFromInline let release: Float
    /// Gain reduction 1 − gain, kept as the small number it is so that the
    /// release reaches exactly 0 (a gain near 1 has too little Float
    /// precision to creep up to 1 by small steps).
    @usableFromInline var reduction: Float = 0
    @usableFromInline var minGain: Float = 1
    @usableFromInline var gain: Float { @_noLocks get { 1 - reduction } }

    init(thresholdDb: Float, sampleRate: Int) {
        threshold = min(0.999, rtmix_support_db_to_linear(thresholdDb))
        knee = 1 - threshold
        attack = rtmix_support_one_pole_coeff(0.001, Float(sampleRate))
        release = rtmix_support_one_pole_coeff(0.080, Float(sampleRate))
    }

    /// Result of processing one block.
    @usableFromInline
    struct BlockReport {
        @usableFromInline var changedFrames = 0
        @usableFromInline var nonfiniteSamples = 0
        /// Lowest gain applied in the block (1 when untouched).
        @usableFromInline var lowestGain: Float = 1
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

    /// Limits `frames` interleaved frames of `channels` in place.
    @_noLocks
    mutating func process(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) -> BlockReport {
        var report = BlockReport()
        // Fast path, the common case: no gain reduction pending and every
        // sample finite and under the threshold. One branch-free pass (NaN
        // and ±Inf fail `<=` too); the block is left untouched.
        if reduction == 0 {
            var over: UInt32 = 0
            let t = threshold
            for i in 0..<(frames * channels) { over |= buffer[i].magnitude <= t ? 0 : 1 }
            if over == 0 { return report }
        }
        var red = reduction
        var lowest = minGain
        for f in 0..<frames {
            let frame = buffer + f * channels
            var peak: Float = 0
            for c in 0..<channels {
                let x = frame[c]
                if !x.isFinite {
                    frame[c] = 0
                    report.nonfiniteSamples += 1
                } else if x.magnitude > peak {
                    peak = x.magnitude
                }
            }
            let wanted: Float = peak > threshold ? 1 - threshold / peak : 0
            if wanted > red {
                red += (wanted - red) * attack
            } else if red > 0 {
                red += (wanted - red) * release
                if red < 1e-7 { red = 0 }
            }
            let g = 1 - red
            if g < lowest { lowest = g }
            if g < report.lowestGain { report.lowestGain = g }
            if red == 0 && peak <= threshold { continue }  // untouched: bit-exact
            report.changedFrames += 1
            for c in 0..<channels { frame[c] = softClip(frame[c] * g) }
        }
        reduction = red
        minGain = lowest
        return report
    }
}
