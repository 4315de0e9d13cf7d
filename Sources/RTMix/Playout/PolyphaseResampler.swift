import CRTMixSupport

/// Fixed-ratio sample-rate conversion by an exact-phase polyphase FIR: the
/// default backend for every rate pair whose reduced ratio is small enough
/// to tabulate (see `Resampler` for the rule).
///
/// For out:in = L:M (reduced by their gcd), output n sits at input position
/// n·M/L = i + p/L: an integer frame `i` and one of L phases `p`. Each phase
/// has its own precomputed kernel, so an output is one dot product of
/// `taps` coefficients with `taps` input frames — no interpolation between
/// phases (unlike speexdsp's interpolated table or libsamplerate), no
/// per-output division (the position advances through two small tables).
///
/// ## The filter
///
/// A Kaiser-windowed (β = 10, ≈ 100 dB stopband) sinc, `baseTaps` = 32
/// taps at the lower of the two rates (more at the input rate when
/// downsampling: 32·M/L, rounded up to a multiple of 16), cutoff 0.9 × the
/// lower Nyquist. Every phase is normalised to a DC gain of exactly 1.
/// At 44.1 → 48 kHz: flat to 15 kHz (< 0.001 dB), −0.14 dB at 17 kHz,
/// −0.8 dB at 18 kHz, −2.8 dB at 19 kHz, −6.8 dB at 20 kHz (libsamplerate
/// SRC_SINC_FASTEST: −2.8 dB at 17.6 kHz); a sine keeps THD+N (aliases,
/// images, Float rounding) at or below about −100 dB up to 18 kHz. Figures:
/// docs/performance.md and ResamplingQualityTests.
///
/// ## Cost
///
/// `taps` multiply-adds per output frame and channel, 4 lanes at a time
/// (SIMD4: one SSE or NEON register). The input stays interleaved, and for
/// stereo each coefficient is stored twice (h0 h0 h1 h1 …), so a frame is
/// one dot product over taps × channels floats whose lanes end up holding
/// L, R, L, R partial sums: no deinterleaving, and a two-add reduction
/// straight into the interleaved output. Tables: L × taps × channels
/// floats (44.1 → 48 kHz stereo: 160 × 32 × 2; 16 → 48 kHz mono: 3 × 32),
/// built in `init` on the control thread.
///
/// ## Stream behaviour (the same as the speexdsp backend with skip_zeros)
///
/// The first output is aligned with the first input frame (the history
/// before it is zeros, not output): the stream is not delayed. An output at
/// position i + p/L needs input up to frame i + taps/2 (the look-ahead), so
/// the first call produces fewer frames than asked when it gets exactly a
/// block of input; `process` consumes input only as far as the outputs it
/// writes need (the look-ahead then sits in this resampler's buffer, not in
/// the caller's ring). `drain` flushes the look-ahead at the end of a
/// stream by feeding zeros.
///
/// `init` allocates; nothing else does, locks or calls anything.
struct PolyphaseResampler: ~Copyable {
    /// Taps at the lower of the two rates.
    static var baseTaps: Int { @_noLocks get { 32 } }
    /// Kaiser window β.
    static var beta: Double { 10 }
    /// Cutoff as a fraction of the lower Nyquist frequency.
    static var cutoff: Double { 0.9 }
    /// Most phases (L) tabulated: beyond this, `Resampler` uses
    /// libsamplerate. Every pair of the common rates (8, 11.025, 12, 16,
    /// 22.05, 24, 32, 44.1, 48, 64, 88.2, 96, 176.4, 192 kHz) fits (the
    /// largest: 11.025 → 48 kHz, L = 640).
    static var maxPhases: Int { 1024 }
    /// Most kernel coefficients (L × taps, before the stereo doubling):
    /// 256 KiB of mono table.
    static var maxTableFloats: Int { 1 << 16 }
    /// Input frames the buffer takes per refill beyond the kept history.
    static var chunkFrames: Int { 1024 }

    /// Output and input terms of the reduced ratio (out:in = up:down).
    let up: Int
    let down: Int
    /// Kernel length in frames (a multiple of 16).
    let taps: Int
    let channels: Int
    /// `up` kernels of `taps × channels` floats: in kernel p, the
    /// coefficient of tap k (repeated for each channel) weights input frame
    /// i − (taps/2 − 1) + k for an output at position i + p/up.
    let table: UnsafeMutablePointer<Float>
    /// Mono integer upsampling (out:in = L:1) only, else nil: every
    /// coefficient of `table` repeated 4 times (SIMD4 broadcasts), for the
    /// vertical kernel in `produce`.
    let wide: UnsafeMutablePointer<Float>?
    /// Per phase p: whole input frames to the next output, and its phase.
    let advance: UnsafeMutablePointer<Int32>
    let nextPhase: UnsafeMutablePointer<Int32>
    /// Interleaved input: kept history, then new input; `capacity` frames.
    let buffer: UnsafeMutablePointer<Float>
    let capacity: Int
    /// Frames in the buffer.
    var count = 0
    /// The next output's integer position (a buffer frame) and phase.
    var index = 0
    var phase = 0
    /// After `drain`: the end of the real input (a buffer frame); no
    /// output is positioned at or beyond it. Int.max otherwise.
    var end = Int.max
    /// Bytes allocated (tables and buffer).
    let allocatedBytes: Int

    /// out:in reduced by the gcd.
    static func terms(inputRate: Int, outputRate: Int) -> (up: Int, down: Int) {
        var a = inputRate, b = outputRate
        while b != 0 { (a, b) = (b, a % b) }
        guard a > 0 else { return (0, 0) }
        return (outputRate / a, inputRate / a)
    }

    /// Kernel length for out:in = up:down.
    static func taps(up: Int, down: Int) -> Int {
        let n = up >= down ? baseTaps : (baseTaps * down + up - 1) / up
        return (n + 15) / 16 * 16
    }

    /// True when these rates get this backend (table within the limits).
    static func supports(inputRate: Int, outputRate: Int) -> Bool {
        guard inputRate > 0, outputRate > 0, inputRate != outputRate else { return false }
        let t = terms(inputRate: inputRate, outputRate: outputRate)
        guard t.up <= maxPhases, t.down <= maxPhases * 64 else { return false }
        return t.up * taps(up: t.up, down: t.down) <= maxTableFloats
    }

    /// nil when an allocation fails or the rates are not `supports`ed.
    init?(channels: Int, inputRate: Int, outputRate: Int) {
        guard PolyphaseResampler.supports(inputRate: inputRate, outputRate: outputRate),
              channels >= 1, channels <= 2 else { return nil }
        let (up, down) = PolyphaseResampler.terms(inputRate: inputRate, outputRate: outputRate)
        let taps = PolyphaseResampler.taps(up: up, down: down)
        let capacity = PolyphaseResampler.chunkFrames + 2 * taps
        var batch = AllocationBatch()
        guard let table = batch.allocate(repeating: Float(0), count: up * taps * channels,
                                         alignment: Allocation.cacheLineBytes),
              let advance = batch.allocate(repeating: Int32(0), count: up),
              let nextPhase = batch.allocate(repeating: Int32(0), count: up),
              let buffer = batch.allocate(repeating: Float(0), count: capacity * channels,
                                          alignment: Allocation.cacheLineBytes)
        else { return nil }
        var wide: UnsafeMutablePointer<Float>? = nil
        if down == 1 && channels == 1 {
            guard let w = batch.allocate(repeating: Float(0), count: up * taps * 4,
                                         alignment: Allocation.cacheLineBytes) else { return nil }
            wide = w
        }
        allocatedBytes = batch.commit()
        PolyphaseResampler.design(table: table, up: up, down: down, taps: taps, channels: channels)
        if let wide {
            for j in 0..<(up * taps) {
                for l in 0..<4 { wide[4 * j + l] = table[j] }
            }
        }
        self.wide = wide
        for p in 0..<up {
            let s = p + down
            advance[p] = Int32(s / up)
            nextPhase[p] = Int32(s % up)
        }
        self.up = up
        self.down = down
        self.taps = taps
        self.channels = channels
        self.table = table
        self.advance = advance
        self.nextPhase = nextPhase
        self.buffer = buffer
        self.capacity = capacity
        reset()
    }

    deinit {
        Allocation.free(table)
        Allocation.free(wide)
        Allocation.free(advance)
        Allocation.free(nextPhase)
        Allocation.free(buffer)
    }

    /// Fills `table` with the `up` phases of the Kaiser-windowed sinc (see
    /// the type's comment), each normalised to a DC gain of 1, every
    /// coefficient repeated `channels` times.
    static func design(table: UnsafeMutablePointer<Float>, up: Int, down: Int, taps: Int, channels: Int) {
        let pi = 3.14159265358979323846
        let scale = up >= down ? 1.0 : Double(up) / Double(down)
        let fc = cutoff * scale  // cutoff relative to the input Nyquist
        let half = Double(taps) / 2
        let back = taps / 2 - 1
        let norm = rtmix_support_bessel_i0(beta)
        // Tap k of phase p (the window is 0 outside |t| < taps / 2).
        func tap(_ p: Int, _ k: Int) -> Double {
            let t = Double(k - back) - Double(p) / Double(up)
            let x = t / half
            let w = x * x >= 1 ? 0.0 : rtmix_support_bessel_i0(beta * rtmix_support_sqrt(1 - x * x)) / norm
            let a = pi * fc * t
            return fc * (t == 0 ? 1.0 : rtmix_support_sin(a) / a) * w
        }
        // Each tap once (Bessel I0 and sin are most of a source's creation
        // cost): the phase's taps into scratch, then normalised.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: taps) { scratch in
            for p in 0..<up {
                var sum = 0.0
                for k in 0..<taps {
                    let v = tap(p, k)
                    scratch[k] = v
                    sum += v
                }
                for k in 0..<taps {
                    let v = Float(scratch[k] / sum)
                    for c in 0..<channels { table[(p * taps + k) * channels + c] = v }
                }
            }
        }
    }

    /// Input frames of look-ahead beyond an output's position.
    var inputLatencyFrames: Int { taps / 2 }

    /// Forgets all history: the next input starts a new stream, its first
    /// frame aligned with the next output.
    @_noLocks
    mutating func reset() {
        let back = taps / 2 - 1
        for i in 0..<(back * channels) { buffer[i] = 0 }
        count = back
        index = back
        phase = 0
        end = Int.max
    }

    /// Drops the buffered frames no later output needs.
    @_noLocks
    mutating func compact() {
        let drop = index - (taps / 2 - 1)
        guard drop > 0 else { return }
        let keep = (count - drop) * channels, from = drop * channels
        for i in 0..<keep { buffer[i] = buffer[i + from] }  // forward copy, dest first
        count -= drop
        index -= drop
        if end != Int.max { end -= drop }
    }

    /// Σ h[t]·x[t] over `n` floats (a multiple of 16), as 4 partial sums.
    /// SIMD4: one register on SSE and NEON. Lane j sums the floats at
    /// offsets ≡ j (mod 4): for stereo lanes 0 and 2 are left, 1 and 3 right.
    @_noLocks @inline(__always)
    static func dot(_ h: UnsafePointer<Float>, _ x: UnsafePointer<Float>, floats n: Int) -> SIMD4<Float> {
        let hr = UnsafeRawPointer(h), xr = UnsafeRawPointer(x)
        // Four accumulators, each updated once per step (with two updated
        // twice, LLVM shuffled lanes between them inside the loop).
        var a0 = SIMD4<Float>(), a1 = SIMD4<Float>(), a2 = SIMD4<Float>(), a3 = SIMD4<Float>()
        var o = 0
        let end = n &* 4
        while o < end {
            a0 += hr.load(fromByteOffset: o, as: SIMD4<Float>.self)
                * xr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            a1 += hr.load(fromByteOffset: o &+ 16, as: SIMD4<Float>.self)
                * xr.loadUnaligned(fromByteOffset: o &+ 16, as: SIMD4<Float>.self)
            a2 += hr.load(fromByteOffset: o &+ 32, as: SIMD4<Float>.self)
                * xr.loadUnaligned(fromByteOffset: o &+ 32, as: SIMD4<Float>.self)
            a3 += hr.load(fromByteOffset: o &+ 48, as: SIMD4<Float>.self)
                * xr.loadUnaligned(fromByteOffset: o &+ 48, as: SIMD4<Float>.self)
            o &+= 64
        }
        return (a0 + a1) + (a2 + a3)
    }

    /// Mono integer upsampling, vertically: the outputs of phase p at four
    /// consecutive input positions i…i+3 as one SIMD4, Σ over taps of a
    /// broadcast coefficient (`wide`) × the input vector at that tap. No
    /// lane sums per output (the horizontal form's main overhead for mono),
    /// and three phases at a time share each input load. Writes the
    /// 4 × up outputs of those positions, in order, to `out`.
    @_noLocks @inline(__always)
    static func vertical(_ w: UnsafePointer<Float>, _ x: UnsafePointer<Float>, up: Int, taps: Int,
                         into out: UnsafeMutablePointer<Float>) {
        let xr = UnsafeRawPointer(x)
        let end = taps &* 4
        @inline(__always) func store(_ a: SIMD4<Float>, _ p: Int) {
            out[p] = a[0]
            out[up &+ p] = a[1]
            out[2 &* up &+ p] = a[2]
            out[3 &* up &+ p] = a[3]
        }
        var p = 0
        while p &+ 3 <= up {
            let w0 = UnsafeRawPointer(w + p &* taps &* 4), w1 = w0 + taps &* 16, w2 = w1 + taps &* 16
            var a0 = SIMD4<Float>(), b0 = SIMD4<Float>(), c0 = SIMD4<Float>()
            var a1 = SIMD4<Float>(), b1 = SIMD4<Float>(), c1 = SIMD4<Float>()
            var t = 0
            while t < end {
                let x0 = xr.loadUnaligned(fromByteOffset: t, as: SIMD4<Float>.self)
                let x1 = xr.loadUnaligned(fromByteOffset: t &+ 4, as: SIMD4<Float>.self)
                a0 += w0.load(fromByteOffset: t &* 4, as: SIMD4<Float>.self) * x0
                b0 += w1.load(fromByteOffset: t &* 4, as: SIMD4<Float>.self) * x0
                c0 += w2.load(fromByteOffset: t &* 4, as: SIMD4<Float>.self) * x0
                a1 += w0.load(fromByteOffset: t &* 4 &+ 16, as: SIMD4<Float>.self) * x1
                b1 += w1.load(fromByteOffset: t &* 4 &+ 16, as: SIMD4<Float>.self) * x1
                c1 += w2.load(fromByteOffset: t &* 4 &+ 16, as: SIMD4<Float>.self) * x1
                t &+= 8
            }
            store(a0 + a1, p)
            store(b0 + b1, p &+ 1)
            store(c0 + c1, p &+ 2)
            p &+= 3
        }
        while p < up {
            let wr = UnsafeRawPointer(w + p &* taps &* 4)
            var a0 = SIMD4<Float>(), a1 = SIMD4<Float>(), a2 = SIMD4<Float>(), a3 = SIMD4<Float>()
            var t = 0
            while t < end {
                a0 += wr.load(fromByteOffset: t &* 4, as: SIMD4<Float>.self)
                    * xr.loadUnaligned(fromByteOffset: t, as: SIMD4<Float>.self)
                a1 += wr.load(fromByteOffset: t &* 4 &+ 16, as: SIMD4<Float>.self)
                    * xr.loadUnaligned(fromByteOffset: t &+ 4, as: SIMD4<Float>.self)
                a2 += wr.load(fromByteOffset: t &* 4 &+ 32, as: SIMD4<Float>.self)
                    * xr.loadUnaligned(fromByteOffset: t &+ 8, as: SIMD4<Float>.self)
                a3 += wr.load(fromByteOffset: t &* 4 &+ 48, as: SIMD4<Float>.self)
                    * xr.loadUnaligned(fromByteOffset: t &+ 12, as: SIMD4<Float>.self)
                t &+= 16
            }
            store((a0 + a1) + (a2 + a3), p)
            p &+= 1
        }
    }

    /// Writes outputs (interleaved) while their input is in the buffer and
    /// their position is before `end`, at most `maxFrames`. Returns them.
    @_noLocks
    mutating func produce(into out: UnsafeMutablePointer<Float>, maxFrames: Int, end: Int) -> Int {
        let c = channels
        let n = taps &* c  // floats per kernel and per input window
        let back = (taps / 2 - 1) &* c
        // The largest position that can be output.
        let last = min(count - taps / 2 - 1, end - 1)
        var i = index, p = phase, k = 0
        let table = UnsafePointer(self.table), x0 = UnsafePointer(buffer)
        let advance = self.advance, nextPhase = self.nextPhase
        if c == 1 {
            let up = self.up
            while k < maxFrames && i <= last {
                if let w = wide, p == 0, k &+ 4 &* up <= maxFrames, i &+ 3 <= last {
                    PolyphaseResampler.vertical(UnsafePointer(w), x0 + (i &- back), up: up, taps: taps, into: out + k)
                    i &+= 4
                    k &+= 4 &* up
                    continue
                }
                let a = PolyphaseResampler.dot(table + p &* n, x0 + (i &- back), floats: n)
                let h = a.lowHalf + a.highHalf
                out[k] = h[0] + h[1]
                i &+= Int(advance[p])
                p = Int(nextPhase[p])
                k &+= 1
            }
        } else {
            // Lanes L R L R: a frame is the sum of the two halves.
            let o = UnsafeMutableRawPointer(out)
            while k < maxFrames && i <= last {
                let a = PolyphaseResampler.dot(table + p &* n, x0 + (i &* 2 &- back), floats: n)
                o.storeBytes(of: a.lowHalf + a.highHalf, toByteOffset: k &* 8, as: SIMD2<Float>.self)
                i &+= Int(advance[p])
                p = Int(nextPhase[p])
                k &+= 1
            }
        }
        index = i
        phase = p
        return k
    }

    /// Converts interleaved `input` into interleaved `output`; consumes
    /// input only as far as the outputs written need (see the type's
    /// comment). Returns the input frames consumed and output frames written.
    @_noLocks
    mutating func process(input: UnsafePointer<Float>, inputFrames: Int,
                          output: UnsafeMutablePointer<Float>, outputFrames: Int) -> (used: Int, generated: Int) {
        let c = channels
        var used = 0, produced = 0
        while true {
            produced += produce(into: output + produced * c, maxFrames: outputFrames - produced, end: end)
            if produced >= outputFrames || used >= inputFrames || end != Int.max { break }
            compact()
            // Frames the remaining outputs need: up to the last one's look-ahead.
            let remaining = outputFrames - produced
            let lastIndex = index + (phase + (remaining - 1) * down) / up
            let needed = lastIndex + taps / 2 + 1 - count
            let n = min(min(inputFrames - used, needed), capacity - count)
            if n <= 0 { break }
            let dst = buffer + count * c, src = input + used * c
            for j in 0..<(n * c) { dst[j] = src[j] }
            count += n
            used += n
        }
        return (used, produced)
    }

    /// End of stream: the outputs still held back by the look-ahead (those
    /// positioned before the end of the input), computed against zeros, at
    /// most `outputFrames` per call (call again for the rest). Returns
    /// them; `reset` before new input.
    @_noLocks
    mutating func drain(output: UnsafeMutablePointer<Float>, outputFrames: Int) -> Int {
        if end == Int.max {
            compact()
            end = count
            let zeros = min(taps / 2 + 1, capacity - count)
            let dst = buffer + count * channels
            for j in 0..<(zeros * channels) { dst[j] = 0 }
            count += zeros
        }
        return produce(into: output, maxFrames: outputFrames, end: end)
    }
}
