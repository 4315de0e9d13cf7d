/// Sample-level kernels of the mix: channel mapping with gain, and output
/// conversion. Pure functions over raw pointers; no state.
enum Mixing {
    /// Adds `frames` frames of `input` (interleaved, `inChannels`) into `mix`
    /// (interleaved, `outChannels`) with a per-frame gain. Mono→stereo
    /// duplicates; stereo→mono averages.
    @_noLocks
    static func accumulate(_ input: UnsafePointer<Float>, inChannels: Int,
                           into mix: UnsafeMutablePointer<Float>, outChannels: Int,
                           frames: Int, gains: UnsafePointer<Float>) {
        switch (inChannels, outChannels) {
        case (1, 1):
            for i in 0..<frames { mix[i] += input[i] * gains[i] }
        case (1, 2):
            for i in 0..<frames {
                let v = input[i] * gains[i]
                mix[2 * i] += v
                mix[2 * i + 1] += v
            }
        case (2, 2):
            for i in 0..<frames {
                let g = gains[i]
                mix[2 * i] += input[2 * i] * g
                mix[2 * i + 1] += input[2 * i + 1] * g
            }
        default:  // (2, 1)
            for i in 0..<frames {
                mix[i] += (input[2 * i] + input[2 * i + 1]) * 0.5 * gains[i]
            }
        }
    }

    /// As `accumulate` with one gain for every frame.
    @_noLocks
    static func accumulate(_ input: UnsafePointer<Float>, inChannels: Int,
                           into mix: UnsafeMutablePointer<Float>, outChannels: Int,
                           frames: Int, gain g: Float) {
        switch (inChannels, outChannels) {
        case (1, 1):
            for i in 0..<frames { mix[i] += input[i] * g }
        case (1, 2):
            for i in 0..<frames {
                let v = input[i] * g
                mix[2 * i] += v
                mix[2 * i + 1] += v
            }
        case (2, 2):
            for i in 0..<(2 * frames) { mix[i] += input[i] * g }
        default:  // (2, 1)
            let h = 0.5 * g
            for i in 0..<frames { mix[i] += (input[2 * i] + input[2 * i + 1]) * h }
        }
    }

    /// Float to int16: x · 32768 rounded to nearest (ties to even),
    /// saturated to −32768...32767. The exact inverse of `convertFromS16`
    /// for every int16 value (−32768 included).
    @_noLocks
    static func convertToS16(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Int16>, count: Int) {
        for i in 0..<count {
            // Clamp first (min/max, branch-free), then round: no `x + 0.5`,
            // which rounds 0.49999997 up to 1.
            // Adding and removing 1.5·2^23 rounds to nearest even in the
            // default FP mode (exact for |x| < 2^22).
            let scaled = min(max(input[i] * 32768, -32768), 32767)
            output[i] = Int16((scaled + 12_582_912) - 12_582_912)
        }
    }

    /// Copies PCM into a ring span, replacing NaN/Inf by 0 (counted) and
    /// subnormals by 0 (not counted: they cost ~100× per operation on x86 in
    /// the resamplers and the mix). Returns how many samples were NaN/Inf.
    @_noLocks
    static func copySanitized(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var bad = 0
        // Four at a time (SIMD4: one register on SSE and NEON), the same
        // result per sample as the loop below: finite and normal → kept,
        // subnormal or ±0 → +0, NaN/±Inf → +0 and counted.
        let tiny = SIMD4<Float>(repeating: .leastNormalMagnitude)
        let infinity = SIMD4<Float>(repeating: .infinity)
        let zero = SIMD4<Float>()
        let src = UnsafeRawPointer(input), dst = UnsafeMutableRawPointer(output)
        var i = 0
        while i &+ 4 <= count {
            let x = src.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Float>.self)
            let a = x.replacing(with: -x, where: x .< zero)  // |x|; NaN stays NaN
            let finite = a .< infinity                               // false for NaN and ±Inf
            let y = x.replacing(with: zero, where: .!(finite .& (a .>= tiny)))
            dst.storeBytes(of: y, toByteOffset: i &* 4, as: SIMD4<Float>.self)
            if any(.!finite) {
                for lane in 0..<4 where !finite[lane] { bad &+= 1 }
            }
            i &+= 4
        }
        for i in i..<count {
            let x = input[i]
            if x.isFinite {
                output[i] = x.magnitude < Float.leastNormalMagnitude ? 0 : x
            } else {
                output[i] = 0
                bad += 1
            }
        }
        return bad
    }

    /// int16 PCM to float (sample / 32768) into a ring span.
    @_noLocks
    static func convertFromS16(_ input: UnsafePointer<Int16>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { output[i] = Float(input[i]) * (1.0 / 32768.0) }
    }
}
