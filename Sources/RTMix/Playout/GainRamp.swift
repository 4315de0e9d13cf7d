/// A linear gain ramp owned by the render thread.
///
/// When the target changes, the gain moves from its current value to the new
/// target in `rampFrames` equal steps, so no sample-to-sample gain step is
/// larger than |target - start| / rampFrames. Each value is computed from the
/// ramp's start (start + step · k), never by adding steps, so
/// rounding errors do not accumulate: the ramp never leaves
/// [min(start, target), max(start, target)] and its last step is an
/// ordinary step. Values and targets are never subnormal (flushed to 0).
struct GainRamp {
    var current: Float
    var target: Float
    var start: Float = 0
    /// (target − start) / rampFrames: value k is start + step · k, one
    /// rounding each, never an accumulated sum.
    var step: Float = 0
    var remaining: Int = 0
    let rampFrames: Int

    init(initial: Float, rampFrames: Int) {
        current = GainRamp.flushed(initial)
        target = current
        self.rampFrames = max(1, rampFrames)
    }

    var isSteady: Bool { @_noLocks get { remaining == 0 } }

    @_noLocks @inline(__always)
    static func flushed(_ x: Float) -> Float { x.magnitude < Float.leastNormalMagnitude ? 0 : x }

    /// Starts a new ramp from the current value if `newTarget` differs.
    @_noLocks
    mutating func setTarget(_ newTarget: Float) {
        let t = GainRamp.flushed(newTarget)
        guard t != target else { return }
        target = t
        start = current
        step = (t - current) / Float(rampFrames)
        remaining = rampFrames
    }

    /// Jumps to `value` with no ramp (used only while a source is inaudible).
    @_noLocks
    mutating func reset(to value: Float) {
        current = GainRamp.flushed(value)
        target = current
        remaining = 0
    }

    /// The ramp's value after `done` of its `rampFrames` steps, clamped to
    /// the ramp's range.
    @_noLocks
    func value(after done: Int) -> Float {
        let v = start + step * Float(done)
        let lo = min(start, target), hi = max(start, target)
        return GainRamp.flushed(min(max(v, lo), hi))
    }

    /// Advances one frame and returns the gain for that frame.
    @_noLocks
    mutating func next() -> Float {
        if remaining > 0 {
            remaining -= 1
            current = remaining == 0 ? target : value(after: rampFrames - remaining)
        }
        return current
    }

    /// Writes the gains of the next `frames` frames into `out` and advances.
    @_noLocks
    mutating func fill(_ out: UnsafeMutablePointer<Float>, frames: Int) {
        var i = 0
        while i < frames && remaining > 0 {
            out[i] = next()
            i += 1
        }
        let c = current
        while i < frames {
            out[i] = c
            i += 1
        }
    }

    /// Advances `frames` frames without producing gains.
    @_noLocks
    mutating func skip(_ frames: Int) {
        if frames >= remaining {
            if remaining > 0 { current = target }
            remaining = 0
        } else {
            remaining -= frames
            current = value(after: rampFrames - remaining)
        }
    }
}
