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
        /// The canceller is about to misbehave (see `watch`): reset it.
        @usableFromInline var trouble = false
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
    /// [mic pre-emphasis memory, output pre-emphasis memory, frames in a
    /// row the linear stage added energy]
    @usableFromInline let watchState: UnsafeMutablePointer<Float>
    /// Bytes of the buffers above (speexdsp's own state not counted).
    let allocatedBytes: Int

    /// nil when speexdsp cannot allocate its state or an allocation fails.
    init?(frameSize: Int, sampleRate: Int, tailMs: Int, speakers: Int, noiseSuppression: Bool,
          echoSuppression: Bool, agc: Bool) {
        var batch = AllocationBatch()
        guard let m = batch.allocate(repeating: Int16(0), count: frameSize),
              let r = batch.allocate(repeating: Int16(0), count: frameSize * speakers),
              let o = batch.allocate(repeating: Int16(0), count: frameSize),
              let w = batch.allocate(repeating: Float(0), count: 4) else { return nil }
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
        watchState = w
        allocatedBytes = batch.commit()
    }

    deinit {
        if let p = preprocess { speex_preprocess_state_destroy(p) }
        if let e = echo { speex_echo_state_destroy(e) }
        Allocation.free(mic16)
        Allocation.free(ref16)
        Allocation.free(out16)
        Allocation.free(watchState)
    }

    /// Cancels the echo of `reference` (one frame, `speakers` interleaved
    /// channels) in `mic` (one mono frame) into `out` (may alias `mic`).
    /// Returns the frame's powers (the reference's per sample).
    /// `echoEstimate` (optional, one frame) receives the linear stage's
    /// echo estimate (microphone − linear output) before preprocessing.
    @_noLocks
    func process(mic: UnsafePointer<Float>, reference: UnsafePointer<Float>,
                 out: UnsafeMutablePointer<Float>,
                 echoEstimate: UnsafeMutablePointer<Float>? = nil) -> FramePowers {
        let n = frameSize
        var powers = FramePowers()
        // A frame whose pre-emphasised energy could reach the N·1e9 that
        // mdf.c treats as broken (it then resets and prints from the
        // real-time thread) goes to speexdsp 12 dB down, its output back up:
        // a full-scale signal alternating every sample reaches
        // (1.9 × 32767)² ≈ 3.9e9 per sample after the pre-emphasis, the
        // limit is 2e9 (N = 2 frames); at quarter scale 2.4e8. Everything
        // else goes at full scale: scaling all input down cost 10–20 dB of
        // ERLE (speexdsp adapts more slowly on quieter int16 input), and
        // so did scaling every frame above an eighth of the limit (a
        // full-scale noise reference). Without a canceller, nothing changes.
        let gain: Float = echo != nil && (EchoCanceller.hot(mic, count: n, stride: 1)
            || EchoCanceller.hot(reference, count: n * speakers, stride: 1)) ? 0.25 : 1
        let back = 1 / (gain * gain)
        powers.mic = back * EchoCanceller.toS16(mic, mic16, count: n, gain: gain)
        powers.reference = back * EchoCanceller.toS16(reference, ref16, count: n * speakers, gain: gain)
        let m = UnsafePointer(mic16), r = UnsafePointer(ref16), o = out16
        if let e = echo {
            _unsafePerformance { speex_echo_cancellation(e, m, r, o) }
            powers.linear = back * EchoCanceller.power(o, count: n)
            powers.trouble = watch(mic: m, out: o)
            if let est = echoEstimate {
                let scale = 1 / (32768 * gain)
                for i in 0..<n { est[i] = (Float(m[i]) - Float(o[i])) * scale }
            }
        } else {
            for i in 0..<n { o[i] = m[i] }
            powers.linear = powers.mic
        }
        if let p = preprocess {
            _ = _unsafePerformance { speex_preprocess_run(p, o) }
            powers.output = back * EchoCanceller.power(o, count: n)
        } else {
            powers.output = powers.linear
        }
        let scale: Float = 1 / (32768 * gain)
        for i in 0..<n { out[i] = Float(o[i]) * scale }
        return powers
    }

    /// The frame's pre-emphasised energy per sample, in int16 units²,
    /// above 1e9 (half of mdf.c's limit; its DC notch has a gain of about 1
    /// away from DC).
    @_noLocks
    static func hot(_ x: UnsafePointer<Float>, count: Int, stride: Int) -> Bool {
        var previous: Float = 0, sum: Float = 0
        for i in 0..<count {
            var v = x[i]
            if !v.isFinite { v = 0 }
            v = min(max(v, -1), 1)
            let d = v - 0.9 * previous
            sum += d * d
            previous = v
        }
        // × 32768² against 1e9 per sample
        return sum * 1_073_741_824 > 1e9 * Float(count)
    }

    /// Watches for what makes mdf.c reset itself and print a warning
    /// (`speex_warning` → fprintf on the real-time thread): 50 frames in a
    /// row whose foreground error (pre-emphasised) exceeds 4 × the
    /// pre-emphasised, DC-notched microphone + a floor, or an error energy
    /// beyond N·1e9. Our test is looser (2 × the microphone, a lower floor,
    /// the frame mean standing in for the notch) and fires at 25 frames, or
    /// at once when the output's pre-emphasised power nears saturation, so
    /// the caller resets the canceller first. Returns true when it should.
    @_noLocks
    func watch(mic m: UnsafePointer<Int16>, out o: UnsafePointer<Int16>) -> Bool {
        let n = frameSize
        var mean: Float = 0
        for i in 0..<n { mean += Float(m[i]) }
        mean /= Float(n)
        var memM = watchState[0], memO = watchState[1]
        var pm: Float = 0, po: Float = 0
        for i in 0..<n {
            let x = Float(m[i]) - mean, y = Float(o[i])
            let dm = x - 0.9 * memM, dout = y - 0.9 * memO
            pm += dm * dm
            po += dout * dout
            memM = x
            memO = y
        }
        watchState[0] = memM
        watchState[1] = memO
        pm /= Float(n)
        po /= Float(n)
        if po > 2.5e8 && po > 2 * pm {  // an eighth of mdf.c's 2e9 per sample, and not from the mic
            watchState[2] = 0
            return true
        }
        if po > 2 * pm + 150 {
            watchState[2] += 1
        } else {
            watchState[2] = 0
        }
        if watchState[2] >= 25 {
            watchState[2] = 0
            return true
        }
        return false
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
    static func toS16(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Int16>, count: Int,
                      gain: Float = 1) -> Float {
        var sum = SIMD8<Float>()
        let low = SIMD8<Float>(repeating: -32768), high = SIMD8<Float>(repeating: 32767)
        // Adding 1.5·2^23 leaves no fraction bits: round to nearest even.
        let magic = SIMD8<Float>(repeating: 12_582_912)
        var i = 0
        while i + 8 <= count {
            var v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD8<Float>.self) * (32768 * gain)
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
            let c = v.isNaN ? 0 : min(max(v * 32768 * gain, -32768), 32767)
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
