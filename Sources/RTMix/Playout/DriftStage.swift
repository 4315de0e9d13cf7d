/// The playout drift stage: a fractional-ratio conversion after the fixed
/// one (bypass, speexdsp or libsamplerate at the nominal ratio), at the
/// output rate, driven by the source's `DriftController`. It shares the
/// capture path's `DriftResampler` (one implementation, one kernel table).
///
///     ring → fetch (bypass | fixed-ratio resampler) → [drift stage] → fades → gains
///
/// **Inactive** (correction exactly 0, the normal state of a producer on
/// the render clock): the block does not pass through the stage at all —
/// no copy, no filter, a bit-exact bypass stays bit-exact. The stage only
/// keeps the last `historyFrames` frames that went out, so that it can
/// take over without a seam.
///
/// **Engaging** (a correction appears): the resampler starts from that
/// history, positioned exactly on the next new frame, so the first outputs
/// continue the stream.
///
/// **Active**: each output frame is the input interpolated at a fractional
/// position advancing by `step` = 1 + correction input frames per output.
///
/// **Releasing** (the correction is back to 0): the stage steers its
/// position onto a whole frame within one block (at most 0.5 / block
/// frames off the unit step: ≤ 1000 ppm for one 10 ms block at 48 kHz),
/// then plays out the look-ahead it holds as a plain copy and goes
/// inactive: the stream is bit-exact again from there.
///
/// `init` allocates; every other method is real-time safe.
struct DriftStage: ~Copyable {
    /// Frames of history a take-over needs (the kernel's half before the
    /// output position).
    static var historyFrames: Int { @_noLocks get { DriftResampler.taps / 2 - 1 } }

    var resampler: DriftResampler
    let channels: Int
    /// Interleaved input fetched for the resampler, `chunkFrames × channels`.
    let staging: UnsafeMutablePointer<Float>
    /// Planar output of one block, `maxFrames × channels`.
    let planar: UnsafeMutablePointer<Float>
    let maxFrames: Int
    /// The last `historyCount` frames that went out (interleaved, oldest first).
    let history: UnsafeMutablePointer<Float>
    var historyCount = 0
    /// Audio passes through the resampler.
    var active = false
    /// Input frames the staging buffer holds.
    var chunkFrames: Int { resampler.chunkFrames }
    /// Bytes allocated (engine memory accounting).
    let allocatedBytes: Int

    /// nil when an allocation fails. `maxFrames`: the engine's largest block.
    init?(channels: Int, maxFrames: Int) {
        let chunk = maxFrames + maxFrames / 100 + 2 * DriftResampler.taps
        guard let r = DriftResampler(chunkFrames: chunk, channels: channels) else { return nil }
        var batch = AllocationBatch()
        guard let s = batch.allocate(repeating: Float(0), count: chunk * channels),
              let p = batch.allocate(repeating: Float(0), count: maxFrames * channels),
              let h = batch.allocate(repeating: Float(0), count: DriftStage.historyFrames * channels)
        else { return nil }
        allocatedBytes = batch.commit() + r.allocatedBytes
        resampler = r
        self.channels = channels
        self.maxFrames = maxFrames
        staging = s
        planar = p
        history = h
    }

    /// A stage in its own allocation (nil when an allocation fails).
    static func make(channels: Int, maxFrames: Int) -> UnsafeMutablePointer<DriftStage>? {
        guard let stage = DriftStage(channels: channels, maxFrames: maxFrames) else { return nil }
        return Allocation.make(stage)
    }

    deinit {
        Allocation.free(staging)
        Allocation.free(planar)
        Allocation.free(history)
    }

    /// Bytes a stage for these parameters allocates (the engine's memory cap).
    static func memoryBytes(channels: Int, maxFrames: Int) -> Int {
        let chunk = maxFrames + maxFrames / 100 + 2 * DriftResampler.taps
        let floats = (chunk + DriftResampler.taps) * channels + DriftResampler.taps
            + chunk * channels + maxFrames * channels + historyFrames * channels
        return floats * MemoryLayout<Float>.stride
    }

    /// Forgets everything (a flush, a drop, an underrun: the next audio
    /// does not continue the last). The stage goes inactive.
    @_noLocks
    mutating func reset() {
        resampler.reset()
        historyCount = 0
        active = false
    }

    /// Inactive blocks: remembers the newest frames that went out.
    @_noLocks
    mutating func record(_ data: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        let h = DriftStage.historyFrames, c = channels
        if frames >= h {
            let src = data + (frames - h) * c
            for i in 0..<(h * c) { history[i] = src[i] }
            historyCount = h
            return
        }
        let keep = min(historyCount, h - frames)
        if keep > 0 && historyCount > keep {
            let from = history + (historyCount - keep) * c
            for i in 0..<(keep * c) { history[i] = from[i] }  // forward copy, from > to
        }
        let dst = history + keep * c
        for i in 0..<(frames * c) { dst[i] = data[i] }
        historyCount = keep + frames
    }

    /// Takes over: the resampler holds the history (zeros where there is
    /// none) and its position is the next new frame.
    @_noLocks
    mutating func engage() {
        resampler.reset()
        let h = DriftStage.historyFrames, c = channels
        let missing = h - historyCount
        if missing > 0 { staging.update(repeating: 0, count: missing * c) }
        if historyCount > 0 {
            let dst = staging + missing * c
            for i in 0..<(historyCount * c) { dst[i] = history[i] }
        }
        resampler.append(interleaved: UnsafePointer(staging), frames: h)
        // reset() put the position at taps/2 - 1 == historyFrames: the next frame.
        active = true
    }

    /// New input frames the resampler needs to produce `frames` outputs at
    /// `step` (0 when it holds enough).
    @_noLocks
    func inputNeeded(frames: Int, step: Double) -> Int {
        let last = resampler.pos + Double(max(0, frames - 1)) * step
        let needCount = Int(last) + DriftResampler.taps / 2 + 1
        return max(0, min(resampler.room, needCount - resampler.count))
    }

    /// Appends input fetched into `staging` (`frames` interleaved frames).
    @_noLocks
    mutating func appendStaged(frames: Int) {
        resampler.append(interleaved: UnsafePointer(staging), frames: frames)
    }

    /// The step for this block: `1 + correction`, or — once the correction
    /// is back to 0 — the step that lands the position on a whole frame at
    /// the end of the block.
    @_noLocks
    func step(correction: Double, frames: Int) -> Double {
        if correction != 0 { return 1 + correction }
        let p = resampler.pos
        if p == Double(Int(p)) { return 1 }
        let end = Double(Int(p + Double(frames) + 0.5))
        return (end - p) / Double(frames)
    }

    /// Produces up to `frames` interleaved frames into `out` at `step`.
    /// Returns the frames produced.
    @_noLocks
    mutating func produce(into out: UnsafeMutablePointer<Float>, frames: Int, step: Double) -> Int {
        let c = channels
        let n = resampler.produce(planar, outStride: maxFrames, maxFrames: min(frames, maxFrames), step: step,
                                  computed: c)
        if c == 1 {
            for i in 0..<n { out[i] = planar[i] }
        } else {
            let l = planar, r = planar + maxFrames
            for i in 0..<n {
                out[2 * i] = l[i]
                out[2 * i + 1] = r[i]
            }
        }
        // Landing on a whole frame (see `step`): absorb rounding.
        let p = resampler.pos, q = Double(Int(p + 0.5))
        if p != q && abs(p - q) < 1e-6 { resampler.pos = q }
        return n
    }

    /// At unit step on a whole frame, every frame the resampler holds from
    /// its position on is exactly the next output.
    var canRelease: Bool {
        @_noLocks get { active && resampler.pos == Double(Int(resampler.pos)) }
    }

    /// Releases: copies the frames held from the position on (at most
    /// `frames`) into `out` and, once all are out, goes inactive with them
    /// as its history. Returns the frames written.
    @_noLocks
    mutating func release(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let c = channels
        let i0 = Int(resampler.pos)
        let held = max(0, resampler.count - i0)
        let n = min(held, frames)
        let stride = resampler.stride, inputs = resampler.inputs
        for i in 0..<n {
            for ch in 0..<c { out[i * c + ch] = inputs[ch * stride + i0 + i] }
        }
        resampler.pos += Double(n)
        if n == held {
            // Everything held went out: its newest frames are the history.
            let h = DriftStage.historyFrames
            let end = resampler.count
            let start = max(0, end - h)
            historyCount = end - start
            for i in 0..<historyCount {
                for ch in 0..<c { history[i * c + ch] = inputs[ch * stride + start + i] }
            }
            resampler.reset()
            active = false
        }
        return n
    }

    /// End of stream: the frames the resampler still holds beyond its
    /// position, copied out (at most `frames`), then inactive.
    @_noLocks
    mutating func drainHeld(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let n = release(into: out, frames: frames)
        if active { reset() }
        return n
    }
}
