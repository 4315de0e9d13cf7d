import CRTMixSupport

/// A fractional resampler for ratios within a few thousand ppm of 1: the
/// capture path's reference clock follower. Up to three planar channels
/// (the echo reference, one or two, and the media to publish) share one
/// read position.
///
/// Each output sample is the input interpolated at a fractional position
/// `pos` with a 48-tap Kaiser-windowed sinc whose coefficients are
/// interpolated linearly between 256 precomputed phases; `pos` advances by
/// `step` (= input rate / output rate) per output. At `step == 1` with an
/// integer position the kernel is a unit impulse, so the stream passes
/// through bit-exact. Unlike libsamplerate or speexdsp, a new step every
/// call costs nothing and allocates nothing.
///
/// Latency: an output at position p needs input up to p + 24; the first
/// output is input sample 23 (so the stream is 23 samples shorter, not
/// delayed). `init` allocates; `append`/`produce` never do.
struct DriftResampler: ~Copyable {
    static var taps: Int { @_noLocks get { Int(RTMIX_DRIFT_TAPS) } }
    static var phases: Int { @_noLocks get { Int(RTMIX_DRIFT_PHASES) } }
    /// Input frames the staging buffer holds beyond the kept history.
    let chunkFrames: Int
    /// (phases + 1) × taps coefficients (shared, never freed).
    let table: UnsafePointer<Float>
    let channels: Int
    /// `channels` planar input buffers, `stride` floats apart.
    let inputs: UnsafeMutablePointer<Float>
    let stride: Int
    /// The current output's interpolated kernel (`taps` floats).
    let kernel: UnsafeMutablePointer<Float>
    var count = 0
    /// Position of the next output, in input frames from input[0].
    var pos: Double

    /// Bytes this resampler allocated (engine memory accounting).
    let allocatedBytes: Int

    /// nil when an allocation fails. The kernel table is shared by every
    /// instance and computed once per process
    /// (`rtmix_support_drift_table`): creating one costs no table work.
    init?(chunkFrames: Int, channels: Int) {
        let taps = DriftResampler.taps
        var batch = AllocationBatch()
        guard let k = batch.allocate(repeating: Float(0), count: taps),
              let i = batch.allocate(repeating: Float(0), count: (chunkFrames + taps) * channels)
        else { return nil }
        table = rtmix_support_drift_table()
        kernel = k
        inputs = i
        allocatedBytes = batch.commit()
        self.chunkFrames = chunkFrames
        self.channels = channels
        stride = chunkFrames + taps
        pos = Double(taps / 2 - 1)
    }

    deinit {
        Allocation.free(kernel)
        Allocation.free(inputs)
    }

    /// Room for input frames before `produce` must drain some.
    var room: Int { @_noLocks get { chunkFrames + DriftResampler.taps - count } }

    /// Starts over with no history (e.g. after the reference stream broke).
    @_noLocks
    mutating func reset() {
        count = 0
        pos = Double(DriftResampler.taps / 2 - 1)
    }

    /// Appends `frames` interleaved frames of `channels` channels as the
    /// planar channels; at most `room`.
    @_noLocks
    mutating func append(interleaved src: UnsafePointer<Float>, frames: Int) {
        let n = min(frames, room)
        let c = channels
        if c == 1 {
            let dst = inputs + count
            var i = 0
            while i &+ 4 <= n {
                (dst + i).storeFloat4((src + i).loadFloat4())
                i &+= 4
            }
            while i < n {
                dst[i] = src[i]
                i &+= 1
            }
        } else if c == 2 {
            let d0 = inputs + count, d1 = inputs + stride + count
            for i in 0..<n {
                d0[i] = src[2 &* i]
                d1[i] = src[2 &* i &+ 1]
            }
        } else {
            for ch in 0..<c {
                let dst = inputs + ch * stride + count
                for i in 0..<n { dst[i] = src[i * c + ch] }
            }
        }
        count += n
    }

    /// Writes up to `maxFrames` outputs of the first `computed` channels to
    /// `out` (planar, channel c at `out + c * outStride`; the others are
    /// left untouched), advancing by `step` input frames per output, then
    /// drops the input no later output needs. Returns the outputs written.
    @_noLocks
    mutating func produce(_ out: UnsafeMutablePointer<Float>, outStride: Int, maxFrames: Int, step: Double,
                          computed: Int) -> Int {
        let taps = DriftResampler.taps
        let halfBack = taps / 2 - 1
        let phases = Double(DriftResampler.phases)
        let channelCount = min(computed, channels)
        var produced = 0
        var p = pos
        if step == 1 && p == Double(Int(p)) {
            // Unit step at an integer position (no drift correction): a
            // plain copy, bit-exact.
            let i0 = Int(p)
            let n = max(0, min(maxFrames, count - taps / 2 - i0))
            for ch in 0..<channelCount {
                let src = inputs + ch * stride + i0, dst = out + ch * outStride
                for i in 0..<n { dst[i] = src[i] }
            }
            produced = n
            p += Double(n)
        }
        while produced < maxFrames {
            let i0 = Int(p)
            if i0 + taps / 2 >= count { break }
            let f = (p - Double(i0)) * phases
            let ph = Int(f)
            let w = Float(f - Double(ph))
            if ph == 0 && w == 0 {
                // Integer position: the kernel is a unit impulse.
                for ch in 0..<channelCount { out[ch * outStride + produced] = inputs[ch * stride + i0] }
            } else {
                // This position's kernel, interpolated between two phases.
                let c0 = table + ph * taps
                let c1 = c0 + taps
                var k = 0
                while k < taps {
                    let a = UnsafeRawPointer(c0 + k).loadUnaligned(as: SIMD8<Float>.self)
                    let b = UnsafeRawPointer(c1 + k).loadUnaligned(as: SIMD8<Float>.self)
                    UnsafeMutableRawPointer(kernel + k).storeBytes(of: a + (b - a) * w, as: SIMD8<Float>.self)
                    k += 8
                }
                for ch in 0..<channelCount {
                    let x = inputs + ch * stride + (i0 - halfBack)
                    var acc = SIMD8<Float>()
                    k = 0
                    while k < taps {
                        acc += UnsafeRawPointer(kernel + k).loadUnaligned(as: SIMD8<Float>.self)
                            * UnsafeRawPointer(x + k).loadUnaligned(as: SIMD8<Float>.self)
                        k += 8
                    }
                    out[ch * outStride + produced] = acc.sum()
                }
            }
            produced += 1
            p += step
        }
        // Keep what the next output still needs: input from i0 - halfBack.
        let drop = max(0, min(count, Int(p) - halfBack))
        if drop > 0 {
            let keep = count - drop
            for ch in 0..<channels {
                let x = inputs + ch * stride
                // Forward copy, the regions overlapping with the destination
                // first: four at a time, each load before its store (the
                // lanes a store overwrites were loaded already, and later
                // loads start past it).
                var i = 0
                while i &+ 4 <= keep {
                    (x + i).storeFloat4((x + (i &+ drop)).loadFloat4())
                    i &+= 4
                }
                while i < keep {
                    x[i] = x[i &+ drop]
                    i &+= 1
                }
            }
            count = keep
            p -= Double(drop)
        }
        pos = p
        return produced
    }
}
