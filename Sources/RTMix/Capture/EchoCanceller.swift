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
struct EchoCanceller: ~Copyable {
    /// Powers (mean square, full scale = 1) of one processed frame.
    struct FramePowers {
        var mic: Float = 0
        var reference: Float = 0
        /// After the linear (adaptive filter) stage.
        var linear: Float = 0
        /// After residual-echo / noise suppression.
        var output: Float = 0
        /// The mean of the linear stage's output times its echo estimate
        /// (microphone − output), when the estimate is asked for: about 0
        /// while the estimate is the echo (what is left is orthogonal to
        /// it, a talker included), about −(its power) when it is not (a
        /// moved echo path: `EchoFilterCheck`).
        var errorEcho: Float = 0
        /// The canceller is about to misbehave (see `watch`): reset it.
        var trouble = false
        init() {}
    }

    let frameSize: Int
    /// Reference channels (loudspeakers): 1, or 2 for speexdsp's
    /// multichannel canceller (`speex_echo_state_init_mc`).
    let speakers: Int
    /// `SpeexEchoState *`, nil when the canceller is off (tail 0).
    let echo: OpaquePointer?
    /// The filter's length in samples (0 when off).
    let tailSamples: Int
    /// `SpeexPreprocessState *`, nil when no suppression or AGC is on.
    let preprocess: OpaquePointer?
    let mic16: UnsafeMutablePointer<Int16>
    let ref16: UnsafeMutablePointer<Int16>
    let out16: UnsafeMutablePointer<Int16>
    /// mdf.c's reset test mirrored (see `watch`).
    let watchState: UnsafeMutablePointer<Float>
    /// The preprocessor runs speexdsp's residual-echo suppression (it was
    /// given the echo state).
    let residualSuppression: Bool
    /// Frames left in a pause of that suppression
    /// (`pauseResidualSuppression`; one element).
    let pauseLeft: UnsafeMutablePointer<Int>
    /// Bytes of the buffers above (speexdsp's own state not counted).
    let allocatedBytes: Int

    /// nil when speexdsp cannot allocate its state or an allocation fails.
    init?(frameSize: Int, sampleRate: Int, tailMs: Int, speakers: Int, noiseSuppression: Bool,
          echoSuppression: Bool, agc: Bool) {
        var batch = AllocationBatch()
        guard let m = batch.allocate(repeating: Int16(0), count: frameSize),
              let r = batch.allocate(repeating: Int16(0), count: frameSize * speakers),
              let o = batch.allocate(repeating: Int16(0), count: frameSize),
              let w = batch.allocate(repeating: Float(0), count: 9),
              let pl = batch.allocate(repeating: 0, count: 1) else { return nil }
        var rate = Int32(sampleRate)
        var echoState: OpaquePointer? = nil
        let tail = tailMs > 0 ? sampleRate * tailMs / 1000 : 0
        if tail > 0 {
            let made = speakers > 1 ? speex_echo_state_init_mc(Int32(frameSize), Int32(tail), 1, Int32(speakers))
                                    : speex_echo_state_init(Int32(frameSize), Int32(tail))
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
        tailSamples = tail
        echo = echoState
        preprocess = pre
        mic16 = m
        ref16 = r
        out16 = o
        // [notch memory ×2, microphone emphasis memory, output emphasis
        // memory, frames in the run over the limit, notch radius, notch
        // den², frames of headroom left, frames under in a row]
        // mdf.c's notch radius for the rate it was given (SET_SAMPLING_RATE)
        let radius: Float = sampleRate < 12000 ? 0.9 : (sampleRate < 24000 ? 0.982 : 0.992)
        w[5] = radius
        let rd = Double(radius), gap: Double = 1 - rd
        let den2: Double = rd * rd + 0.7 * gap * gap
        w[6] = Float(den2)
        watchState = w
        pauseLeft = pl
        residualSuppression = residual && pre != nil
        allocatedBytes = batch.commit()
    }

    deinit {
        if let p = preprocess { speex_preprocess_state_destroy(p) }
        if let e = echo { speex_echo_state_destroy(e) }
        Allocation.free(mic16)
        Allocation.free(ref16)
        Allocation.free(out16)
        Allocation.free(watchState)
        Allocation.free(pauseLeft)
    }

    /// Cancels the echo of `reference` (one frame, `speakers` interleaved
    /// channels) in `mic` (one mono frame) into `out` (may alias `mic`).
    /// Returns the frame's powers (the reference's per sample).
    /// `echoEstimate` (optional, one frame) receives the linear stage's
    /// echo estimate (microphone − linear output) before preprocessing,
    /// and `errorEcho` is filled; the caller, which processes the output
    /// further (the residual-echo suppressor), then measures the output's
    /// power itself (`output` is left 0).
    /// `passMicrophone`: the linear stage runs and its powers are measured,
    /// but the microphone itself goes on to the preprocessor and the echo
    /// estimate is 0 (no echo at the microphone, `EchoAbsence`: a filter
    /// with nothing to model subtracts what it makes of the reference,
    /// which cost a talker 0.6–1.0 PESQ).
    @_noLocks
    func process(mic: UnsafePointer<Float>, reference: UnsafePointer<Float>,
                 out: UnsafeMutablePointer<Float>,
                 echoEstimate: UnsafeMutablePointer<Float>? = nil, passMicrophone: Bool = false) -> FramePowers {
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
        // After an int16 output that saturated, the next second goes 12 dB
        // down too (`watch` cannot see mdf.c's error energy through a
        // clipped output).
        let gain: Float = echo != nil && (watchState[7] > 0 || EchoCanceller.hot(mic, count: n, stride: 1)
            || EchoCanceller.hot(reference, count: n * speakers, stride: 1)) ? 0.25 : 1
        let back = 1 / (gain * gain)
        powers.mic = back * EchoCanceller.toS16(mic, mic16, count: n, gain: gain)
        powers.reference = back * EchoCanceller.toS16(reference, ref16, count: n * speakers, gain: gain)
        let m = UnsafePointer(mic16), r = UnsafePointer(ref16), o = out16
        if let e = echo {
            _unsafePerformance { speex_echo_cancellation(e, m, r, o) }
            if let est = echoEstimate {
                let (linear, cross) = EchoCanceller.estimate(mic: m, output: UnsafePointer(o), scale: 1 / (32768 * gain),
                                                             into: est, count: n)
                powers.linear = back * linear
                powers.errorEcho = back * cross
            } else {
                powers.linear = back * EchoCanceller.power(o, count: n)
            }
            powers.trouble = watch(mic: m, out: o)
            if passMicrophone {
                for i in 0..<n { o[i] = m[i] }
                if let est = echoEstimate { for i in 0..<n { est[i] = 0 } }
            }
        } else {
            for i in 0..<n { o[i] = m[i] }
            powers.linear = powers.mic
        }
        if let p = preprocess {
            if pauseLeft[0] > 0 {
                pauseLeft[0] -= 1
                if pauseLeft[0] == 0, let e = echo {
                    _ = _unsafePerformance { speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(e)) }
                }
            }
            _ = _unsafePerformance { speex_preprocess_run(p, o) }
            if echoEstimate == nil { powers.output = back * EchoCanceller.power(o, count: n) }
        } else {
            powers.output = powers.linear
        }
        EchoCanceller.toFloat(o, scale: 1 / (32768 * gain), into: out, count: n)
        return powers
    }

    /// The frame's pre-emphasised energy per sample, in int16 units²,
    /// above 1e9 (half of mdf.c's limit; its DC notch has a gain of about 1
    /// away from DC).
    @_noLocks
    static func hot(_ x: UnsafePointer<Float>, count: Int, stride: Int) -> Bool {
        // d[i] = c(x[i]) − 0.9·c(x[i − 1]), c: non-finite → 0, clamped to
        // ±1; four samples at a time, the previous clamped sample carried
        // from lane 3.
        let one = SIMD4<Float>(1, 1, 1, 1), minusOne = SIMD4<Float>(-1, -1, -1, -1)
        var sums = SIMD4<Float>(0, 0, 0, 0)
        var previous: Float = 0
        var i = 0
        while i &+ 4 <= count {
            var v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD4<Float>.self)
            v.replace(with: 0, where: .!(v - v .== SIMD4<Float>(0, 0, 0, 0)))  // NaN, ±inf
            v.replace(with: minusOne, where: v .< minusOne)
            v.replace(with: one, where: v .> one)
            let before = SIMD4<Float>(previous, v[0], v[1], v[2])
            let d = v - 0.9 * before
            sums += d * d
            previous = v[3]
            i &+= 4
        }
        var sum = sums.sum()
        while i < count {
            var v = x[i]
            if !v.isFinite { v = 0 }
            v = min(max(v, -1), 1)
            let d = v - 0.9 * previous
            sum += d * d
            previous = v
            i &+= 1
        }
        // × 32768² against 1e9 per sample
        return sum * 1_073_741_824 > 1e9 * Float(count)
    }

    /// Watches for what makes mdf.c reset itself and print a warning
    /// (`speex_warning` → fprintf on the real-time thread), so the caller
    /// resets the canceller first (quietly, counted). mdf.c resets after
    /// 50 frames in a row whose foreground error energy Sff exceeds the
    /// microphone's Sdd + N·10⁴ (N = 2 frames; both pre-emphasised, the
    /// microphone DC-notched), or at once on an energy beyond N·1e9. In
    /// the float build `SHR32(Sff, 2)` shifts nothing: the limit is 1 × the
    /// microphone, not the 4 × the fixed-point code reads as.
    ///
    /// Here Sdd is rebuilt exactly as mdf.c computes it (its DC notch at
    /// its rate's radius and its 0.9 pre-emphasis, in Float, on the same
    /// int16 frame), and Sff from the int16 output re-pre-emphasised (mdf.c
    /// de-emphasises the foreground error into it; rounding, saturation
    /// and foreground-update frames differ, see below). The test counts
    /// frames with Sff > Sdd + mdf.c's floor, ends a run only on two frames
    /// under in a row, and fires at 45, before mdf.c's 50; or at once when
    /// the output's pre-emphasised power nears saturation and exceeds twice
    /// the microphone's. A canceller doing nothing (no reference) has
    /// Sff = Sdd and never fires. Returns true when the caller should
    /// reset.
    ///
    /// Measured (docs/capture.md, "Keeping speexdsp quiet") against a
    /// speexdsp built to print its own counter, over 84 adversarial and 34
    /// evaluation recordings: our run was never more than 2 frames behind
    /// mdf.c's. Found by tracing that counter on adversarial input (an echo
    /// of noise, then a full-scale square at the microphone: Sff stayed at
    /// 1.6 × Sdd for 50 frames, which an earlier "2 × the microphone" test,
    /// read off the fixed-point code, never saw).
    @_noLocks
    func watch(mic m: UnsafePointer<Int16>, out o: UnsafePointer<Int16>) -> Bool {
        let n = frameSize
        let radius = watchState[5], den2 = watchState[6]
        var notch0 = watchState[0], notch1 = watchState[1], memD = watchState[2]
        var pm: Float = 0
        // The microphone: a recursive notch, one sample at a time.
        for i in 0..<n {
            // mdf.c's filter_dc_notch16 (float build), then pre-emphasis
            let vin = Float(m[i])
            let vout = notch0 + vin
            notch0 = notch1 + 2 * (-vin + radius * vout)
            notch1 = vin - den2 * vout
            let x = radius * vout  // SATURATE32 is no clamp in the float build
            let dm = x - 0.9 * memD
            memD = x
            pm += dm * dm
        }
        // The output: pre-emphasis and saturation, four samples at a time.
        var memO = watchState[3]
        var po4 = SIMD4<Float>(repeating: 0)
        var sat4 = SIMD4<Int32>(repeating: 0)
        let top = SIMD4<Float>(repeating: 32767), bottom = SIMD4<Float>(repeating: -32768)
        var i = 0
        while i &+ 4 <= n {
            let y = SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: UnsafeRawPointer(o + i).loadUnaligned(as: SIMD4<Int16>.self)))
            let previous = SIMD4<Float>(memO, y[0], y[1], y[2])
            let dout = y - 0.9 * previous
            po4 += dout * dout
            sat4 &+= SIMD4<Int32>(repeating: 0).replacing(with: 1, where: (y .>= top) .| (y .<= bottom))
            memO = y[3]
            i &+= 4
        }
        var po = po4.sum()
        var sat = Int(sat4.wrappedSum())
        while i < n {
            let y = Float(o[i])
            if y >= 32767 || y <= -32768 { sat += 1 }
            let dout = y - 0.9 * memO
            memO = y
            po += dout * dout
            i &+= 1
        }
        // Saturated output: a second of headroom (see `process`).
        if sat > 0 {
            watchState[7] = 100
        } else if watchState[7] > 0 {
            watchState[7] -= 1
        }
        watchState[0] = notch0
        watchState[1] = notch1
        watchState[2] = memD
        watchState[3] = memO
        pm /= Float(n)
        po /= Float(n)
        if po > 2.5e8 && po > 2 * pm {  // an eighth of mdf.c's 2e9 per sample, and not from the mic
            watchState[4] = 0
            return true
        }
        // mdf.c's floor, N·10⁴ per frame of n samples, is 2·10⁴ per sample.
        // A frame with a saturated output sample counts as over: its error
        // energy is unknown (only the first such frame goes at full scale,
        // the next second has headroom). One frame under does not end the
        // run, two in a row do: on a frame where mdf.c moves its background
        // filter into the foreground its output blends the two, and the
        // error read back from it can be up to ~10 % under the Sff it
        // tested (seen on drifting real speech), so a single dip is not
        // proof that mdf.c's count restarted.
        if po > pm + 2e4 || sat > 0 {
            watchState[4] += 1
            watchState[8] = 0
        } else {
            watchState[8] += 1
            if watchState[8] >= 2 { watchState[4] = 0 }
        }
        if watchState[4] >= 45 {
            watchState[4] = 0
            watchState[8] = 0
            return true
        }
        return false
    }

    /// Taps of the adaptive filter's impulse response (0 without a
    /// canceller): speexdsp's `SPEEX_ECHO_GET_IMPULSE_RESPONSE_SIZE`.
    var impulseResponseSize: Int {
        guard let e = echo else { return 0 }
        var size: Int32 = 0
        _ = speex_echo_ctl(e, SPEEX_ECHO_GET_IMPULSE_RESPONSE_SIZE, &size)
        return Int(size)
    }

    /// The adaptive filter's impulse response (the first loudspeaker's),
    /// `impulseResponseSize` taps, into `taps`. Real-time safe: speexdsp
    /// runs one inverse FFT per filter block into its own scratch (no
    /// allocation, no output).
    @_noLocks
    func impulseResponse(into taps: UnsafeMutablePointer<Int32>) {
        guard let e = echo else { return }
        _ = _unsafePerformance { speex_echo_ctl(e, SPEEX_ECHO_GET_IMPULSE_RESPONSE, taps) }
    }

    /// Pauses speexdsp's residual-echo suppression for the next `frames`
    /// frames (a pause under way runs for `frames` from now); nothing when
    /// it is off. It takes the residual echo as its filter's echo estimate
    /// times one leak estimate for all bands, and floors its gain 40 dB
    /// down where it finds no speech (15 dB with speech). While its filter
    /// re-learns a moved echo path, that leak is large, and it cut a
    /// talker's onsets by up to 34 dB for 60 ms, seconds after the move,
    /// before the residual-echo suppressor after it could see them
    /// (`CaptureProcessor.residualPauseSeconds`, docs/capture.md).
    /// Real-time safe: `speex_preprocess_ctl` only swaps a pointer for
    /// this request.
    @_noLocks
    func pauseResidualSuppression(frames: Int) {
        guard residualSuppression, let p = preprocess, frames > 0 else { return }
        if pauseLeft[0] == 0 {
            _ = _unsafePerformance { speex_preprocess_ctl(p, SPEEX_PREPROCESS_SET_ECHO_STATE, nil) }
        }
        pauseLeft[0] = frames
    }

    /// Forgets the adapted echo path (after divergence); the preprocessor's
    /// noise estimate is kept. Real-time safe (speex only clears arrays).
    @_noLocks
    func reset() {
        if let e = echo { _unsafePerformance { speex_echo_state_reset(e) } }
        // speex_echo_state_reset clears its notch and emphasis memories
        // and its counter: so does the mirror.
        for i in 0..<5 { watchState[i] = 0 }
        watchState[8] = 0
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
        var sums = SIMD4<Float>(0, 0, 0, 0)
        var i = 0
        while i &+ 4 <= count {
            let f = EchoCanceller.float4(x, i) * (1.0 / 32768)
            sums += f * f
            i &+= 4
        }
        var sum = sums.sum()
        while i < count {
            let f = Float(x[i]) * (1.0 / 32768)
            sum += f * f
            i &+= 1
        }
        return sum / Float(count)
    }

    /// Four int16 samples from `x + i` as floats, exactly: the bits
    /// 0x4B000000 + 32768 + v are the float 2^23 + 32768 + v.
    @_noLocks @inline(__always)
    static func float4(_ x: UnsafePointer<Int16>, _ i: Int) -> SIMD4<Float> {
        let v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD4<Int16>.self)
        let bits = SIMD4<Int32>(truncatingIfNeeded: v) &+ SIMD4<Int32>(repeating: 0x4B00_8000)
        return unsafeBitCast(bits, to: SIMD4<Float>.self) - SIMD4<Float>(repeating: 8_421_376)
    }

    /// The echo estimate y[i] = (mic[i] − output[i])·scale for `count` int16
    /// samples; returns the output's power and the mean of output ×
    /// (mic − output), both full scale 1 (one pass for the three).
    @_noLocks
    static func estimate(mic a: UnsafePointer<Int16>, output b: UnsafePointer<Int16>, scale: Float,
                         into y: UnsafeMutablePointer<Float>, count: Int) -> (power: Float, cross: Float) {
        // The output's power summed as `power` sums it (the same value).
        var powers = SIMD4<Float>(0, 0, 0, 0), crosses = SIMD4<Float>(0, 0, 0, 0)
        var i = 0
        while i &+ 4 <= count {
            let e = EchoCanceller.float4(b, i), echo = EchoCanceller.float4(a, i) - e
            (y + i).storeFloat4(echo * scale)
            let f = e * (1.0 / 32768)
            powers += f * f
            crosses += f * echo
            i &+= 4
        }
        var power = powers.sum(), cross = crosses.sum()
        while i < count {
            let e = Float(b[i]), echo = Float(a[i]) - e
            y[i] = echo * scale
            let f = e * (1.0 / 32768)
            power += f * f
            cross += f * echo
            i &+= 1
        }
        return (power / Float(count), cross / (Float(count) * 32768))
    }

    /// y[i] = a[i]·scale for `count` int16 samples.
    @_noLocks
    static func toFloat(_ a: UnsafePointer<Int16>, scale: Float, into y: UnsafeMutablePointer<Float>, count: Int) {
        var i = 0
        while i &+ 4 <= count {
            (y + i).storeFloat4(EchoCanceller.float4(a, i) * scale)
            i &+= 4
        }
        while i < count {
            y[i] = Float(a[i]) * scale
            i &+= 1
        }
    }
}

