import CSpeexDSP

/// The capture path's echo canceller: speexdsp's MDF canceller
/// (`speex_echo_*`) followed by its preprocessor (`speex_preprocess_*`:
/// residual-echo suppression, noise suppression, AGC). This is the only
/// file that calls speexdsp's echo and preprocess functions.
///
/// One frame at a time (`frameSize` samples, mono, at `sampleRate`), with
/// the reference already aligned by the caller (it must lead the echo, see
/// `CaptureProcessor`). speexdsp works on int16: frames are converted here
/// (round to nearest, saturating). `init` allocates; `process` and `reset`
/// do not (mdf.c and preprocess.c only allocate in their `_init`).
///
/// speex_preprocess applies its residual-echo suppression only while its
/// denoiser is enabled, so with `echoSuppression` on and `noiseSuppression`
/// off the denoiser runs with its noise attenuation set to 0 dB.
@usableFromInline
struct EchoCanceller: ~Copyable {
    /// Powers (mean square, full scale = 1) of one processed frame.
    @usableFromInline
    struct FramePowers {
        @usableFromInline var mic: Float = 0
        @usableFromInline var reference: Float = 0
        /// After the linear (adaptive filter) stage.
        @usableFromInline var linear: Float = 0
        /// After residual-echo / noise suppression.
        @usableFromInline var output: Float = 0
        @usableFromInline init() {}
    }

    @usableFromInline let frameSize: Int
    /// Reference channels (loudspeakers): 1, or 2 for speexdsp's
    /// multichannel canceller (`speex_echo_state_init_mc`).
    @usableFromInline let speakers: Int
    /// `SpeexEchoState *`, nil when the canceller is off (tail 0).
    @usableFromInline let echo: OpaquePointer?
    /// `SpeexPreprocessState *`, nil when no suppression or AGC is on.
    @usableFromInline let preprocess: OpaquePointer?
    @usableFromInline let mic16: UnsafeMutablePointer<Int16>
    @usableFromInline let ref16: UnsafeMutablePointer<Int16>
    @usableFromInline let out16: UnsafeMutablePointer<Int16>
    /// Bytes of the buffers above (speexdsp's own state not counted).
    let allocatedBytes: Int

    /// nil when speexdsp cannot allocate its state or an allocation fails.
    init?(frameSize: Int, sampleRate: Int, tailMs: Int, speakers: Int, noiseSuppression: Bool,
          echoSuppression: Bool, agc: Bool) {
        var batch = AllocationBatch()
        guard let m = batch.allocate(repeating: Int16(0), count: frameSize),
              let r = batch.allocate(repeating: Int16(0), count: frameSize * speakers),
              let o = batch.allocate(repeating: Int16(0), count: frameSize) else { return nil }
        var rate = Int32(sampleRate)
        var echoState: OpaquePointer? = nil
        if tailMs > 0 {
            let tail = Int32(sampleRate * tailMs / 1000)
            let made = speakers > 1 ? speex_echo_state_init_mc(Int32(frameSize), tail, 1, Int32(speakers))
                                    : speex_echo_state_init(Int32(frameSize), tail)
            guard let e = made else { return nil }
            _ = speex_echo_ctl(e, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
            echoState = e
        }
        let residual = echoSuppression && echoState != nil
        var pre: OpaquePointer? = nil
        if noiseSuppression || residual || agc {
            guard let p = speex_preprocess_state_init(Int32(frameSize), Int32(sampleRate)) else {
                if let e = echoState { speex_echo_state_destroy(e) }
                return nil
            }
            var on: Int32 = (noiseSuppression || residual) ? 1 : 0
            _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_DENOISE, &on)
            if !noiseSuppression {
                var none: Int32 = 0
                _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &none)
            }
            var agcOn: Int32 = agc ? 1 : 0
            _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_AGC, &agcOn)
            if residual, let e = echoState {
                _ = speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(e))
            }
            pre = p
        }
        self.frameSize = frameSize
        self.speakers = speakers
        echo = echoState
        preprocess = pre
        mic16 = m
        ref16 = r
        out16 = o
        allocatedBytes = batch.commit()
    }

    deinit {
        if let p = preprocess { speex_preprocess_state_destroy(p) }
        if let e = echo { speex_echo_state_destroy(e) }
        Allocation.free(mic16)
        Allocation.free(ref16)
        Allocation.free(out16)
    }

    /// Cancels the echo of `reference` (one frame, `speakers` interleaved
    /// channels) in `mic` (one mono frame) into `out` (may alias `mic`).
    /// Returns the frame's powers (the reference's per sample).
    @_noLocks
    func process(mic: UnsafePointer<Float>, reference: UnsafePointer<Float>,
                 out: UnsafeMutablePointer<Float>) -> FramePowers {
        let n = frameSize
        var powers = FramePowers()
        powers.mic = EchoCanceller.toS16(mic, mic16, count: n)
        powers.reference = EchoCanceller.toS16(reference, ref16, count: n * speakers)
        let m = UnsafePointer(mic16), r = UnsafePointer(ref16), o = out16
        if let e = echo {
            _unsafePerformance { speex_echo_cancellation(e, m, r, o) }
            powers.linear = EchoCanceller.power(o, count: n)
        } else {
            for i in 0..<n { o[i] = m[i] }
            powers.linear = powers.mic
        }
        if let p = preprocess {
            _ = _unsafePerformance { speex_preprocess_run(p, o) }
            powers.output = EchoCanceller.power(o, count: n)
        } else {
            powers.output = powers.linear
        }
        let scale: Float = 1.0 / 32768
        for i in 0..<n { out[i] = Float(o[i]) * scale }
        return powers
    }

    /// Forgets the adapted echo path (after divergence); the preprocessor's
    /// noise estimate is kept. Real-time safe (speex only clears arrays).
    @_noLocks
    func reset() {
        if let e = echo { _unsafePerformance { speex_echo_state_reset(e) } }
    }

    /// float [-1, 1) → int16, rounded to nearest (even), saturating.
    /// Returns the mean square (full scale 1). NaN becomes 0. Eight samples
    /// at a time.
    @_noLocks
    static func toS16(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Int16>, count: Int) -> Float {
        var sum = SIMD8<Float>()
        let low = SIMD8<Float>(repeating: -32768), high = SIMD8<Float>(repeating: 32767)
        // Adding 1.5·2^23 leaves no fraction bits: round to nearest even.
        let magic = SIMD8<Float>(repeating: 12_582_912)
        var i = 0
        while i + 8 <= count {
            var v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD8<Float>.self) * 32768
            v.replace(with: 0, where: v .!= v)  // NaN
            v.replace(with: low, where: v .< low)
            v.replace(with: high, where: v .> high)
            let t = v + magic
            // The integer sits in the low mantissa bits of t, offset by
            // the magic number's own bits.
            let bits = unsafeBitCast(t, to: SIMD8<Int32>.self) &- unsafeBitCast(magic, to: SIMD8<Int32>.self)
            UnsafeMutableRawPointer(y + i).storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: bits),
                                                      as: SIMD8<Int16>.self)
            let r = t - magic
            sum += r * r
            i += 8
        }
        var total = sum.sum()
        while i < count {
            let v = x[i]
            let c = v.isNaN ? 0 : min(max(v * 32768, -32768), 32767)
            let r = (c + 12_582_912) - 12_582_912
            y[i] = Int16(r)
            total += r * r
            i += 1
        }
        return total / (Float(count) * 1_073_741_824)  // 32768²
    }

    @_noLocks
    static func power(_ x: UnsafePointer<Int16>, count: Int) -> Float {
        var sum: Float = 0
        for i in 0..<count {
            let f = Float(x[i]) * (1.0 / 32768)
            sum += f * f
        }
        return sum / Float(count)
    }
}
