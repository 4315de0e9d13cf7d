/// Click-free stops. Whenever a source's audio stops (an underrun, even one
/// that starts exactly on a block boundary; a pause; a flush; a drop; the
/// end of a drain) the renderer continues it for `fade` frames (2 ms) with
/// a faded mirror image of the last audio played:
///
///     tail[j] = last[n − 1 − j] · (fade − j) / (fade + 1),  j = 0 ..< fade
///
/// The mirror starts at the value the audio stopped at, so the first step
/// is last·1/(fade+1), and each later step is at most the signal's own step
/// plus the fade's (the ramp's slope times the signal). This needs the last
/// `fade` frames played, which may lie in the previous block: `history`
/// keeps them. Storage is allocated by the source and never reallocated.
struct FadeTail: ~Copyable {
    /// The longest fade: 2 ms at 192 kHz.
    static var maxFrames: Int { @_noLocks get { 384 } }

    let channels: Int
    /// The last `historyFrames` frames played (oldest first), pre-gain.
    let history: UnsafeMutablePointer<Float>
    /// The pending tail, `tailFrames` frames, `tailPos` already emitted.
    let tail: UnsafeMutablePointer<Float>
    var historyFrames = 0
    var tailFrames = 0
    var tailPos = 0
    /// The last frame of the previous block was real audio (a stop at the
    /// block boundary needs a tail).
    var audible = false

    /// nil when an allocation fails.
    init?(channels: Int) {
        guard let h = Allocation.allocate(repeating: Float(0), count: FadeTail.maxFrames * channels) else { return nil }
        guard let t = Allocation.allocate(repeating: Float(0), count: FadeTail.maxFrames * channels) else {
            Allocation.free(h)
            return nil
        }
        self.channels = channels
        history = h
        tail = t
    }

    deinit {
        Allocation.free(history)
        Allocation.free(tail)
    }

    var pending: Bool { @_noLocks get { tailPos < tailFrames } }

    /// Appends `frames` played frames (source channels) to the history,
    /// keeping the newest `fade`.
    @_noLocks
    mutating func record(_ data: UnsafePointer<Float>, frames: Int, fade: Int) {
        guard frames > 0 else { return }
        let f = min(fade, FadeTail.maxFrames)
        let c = channels
        if frames >= f {
            let src = data + (frames - f) * c
            for i in 0..<(f * c) { history[i] = src[i] }
            historyFrames = f
            return
        }
        // Keep the newest (f - frames) of the old history, then the new frames.
        let keep = min(historyFrames, f - frames)
        if keep > 0 && historyFrames > keep {
            let from = history + (historyFrames - keep) * c
            for i in 0..<(keep * c) { history[i] = from[i] }  // forward copy, from > to
        }
        let dst = history + keep * c
        for i in 0..<(frames * c) { dst[i] = data[i] }
        historyFrames = keep + frames
    }

    /// Forgets the history (the next audio does not continue the last).
    @_noLocks
    mutating func forgetHistory() { historyFrames = 0 }

    /// Starts a tail from the history (the audio just stopped). A pending
    /// tail is replaced.
    @_noLocks
    mutating func start(fade: Int) {
        let n = min(historyFrames, min(fade, FadeTail.maxFrames))
        let c = channels
        let f = Float(max(1, min(fade, FadeTail.maxFrames)))
        for j in 0..<n {
            let g = (f - Float(j)) / (f + 1)
            let src = history + (historyFrames - 1 - j) * c
            for ch in 0..<c { tail[j * c + ch] = src[ch] * g }
        }
        tailFrames = n
        tailPos = 0
        audible = false
    }

    /// Adds the pending tail into `block` (source channels) from frame `at`
    /// up to `end`; the rest waits for the next block.
    @_noLocks
    mutating func emit(into block: UnsafeMutablePointer<Float>, at: Int, end: Int) {
        guard pending, at < end else { return }
        let n = min(tailFrames - tailPos, end - at)
        let c = channels
        let src = tail + tailPos * c
        let dst = block + at * c
        for i in 0..<(n * c) { dst[i] += src[i] }
        tailPos += n
    }

    /// Drops a pending tail.
    @_noLocks
    mutating func cancel() {
        tailFrames = 0
        tailPos = 0
    }
}
