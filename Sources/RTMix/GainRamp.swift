/// A linear gain ramp owned by the render thread.
///
/// When the target changes, the gain moves from its current value to the new
/// target in `rampFrames` equal steps, so no sample-to-sample gain step is
/// larger than |target - start| / rampFrames.
@usableFromInline
struct GainRamp {
    @usableFromInline var current: Float
    @usableFromInline var target: Float
    @usableFromInline var step: Float = 0
    @usableFromInline var remaining: Int = 0
    @usableFromInline let rampFrames: Int

    init(initial: Float, rampFrames: Int) {
        current = initial
        target = initial
        self.rampFrames = max(1, rampFrames)
    }

    var isSteady: Bool { @_noLocks get { remaining == 0 } }

    /// Starts a new ramp from the current value if `newTarget` differs.
    @_noLocks
    mutating func setTarget(_ newTarget: Float) {
        guard newTarget != target else { return }
        target = newTarget
        remaining = rampFrames
        step = (newTarget - current) / Float(rampFrames)
    }

    /// Jumps to `value` with no ramp (used only while a source is inaudible).
    @_noLocks
    mutating func reset(to value: Float) {
        current = value
        target = value
        remaining = 0
    }

    /// Advances one frame and returns the gain for that frame.
    @_noLocks
    mutating func next() -> Float {
        if remaining > 0 {
            remaining -= 1
            current = remaining == 0 ? target : current + step
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
            current += step * Float(frames)
        }
    }
}
