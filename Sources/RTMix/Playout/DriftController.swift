/// Clock-drift compensation for one source: a PI controller that drives the
/// source's buffered audio to its target by resampling slightly faster or
/// slower.
///
/// **Level measure.** The buffer level is sampled before each render block;
/// the controller works on its minimum over a window of `windowSeconds`
/// (the low-water mark). Bursty producers (a decoder pushing 4096 frames
/// at a time, a jittery network) make the level a sawtooth; its minimum is
/// steady and is the margin that actually protects against underruns, so
/// the target is a promise about the margin: "at least this much audio is
/// buffered, at the worst moment of each window".
///
/// **Control.** Once per window: e = (low-water mark − target) in seconds;
/// the correction c = Kp·e + Ki·∫e dt (consume c faster: the resampling
/// ratio is divided by 1 + c). With the level obeying de/dt = drift − c,
/// this is a critically damped second-order loop (Kp = 2ω, Ki = ω²,
/// ω = 0.15 rad/s): no standing offset, a drift step settles in about
/// 40 s, and the integral ∫ is the estimate of the producer's drift. The
/// applied correction moves linearly from the previous window's value to
/// the new one across the next window, so the ratio never steps (the pitch
/// change of even the full ±2000 ppm is 3.5 cents).
///
/// **Limits.** |c| ≤ `limit` and |∫| ≤ `limit` (bounded windup), and
/// `saturated` turns true after a full second at the limit.
@usableFromInline
struct DriftController {
    @usableFromInline static var omega: Double { 0.15 }
    @usableFromInline static var windowSeconds: Double { 0.5 }
    /// Largest correction (fraction): 2000 ppm.
    @usableFromInline static var limit: Double { 0.002 }

    /// Target low-water mark, in source frames.
    @usableFromInline let targetFrames: Double
    @usableFromInline let sampleRate: Double

    @usableFromInline var windowMin: Double = .infinity
    @usableFromInline var windowElapsed: Double = 0
    /// The integral term (fraction): the drift estimate.
    @usableFromInline var integral: Double = 0
    /// Applied correction and where it is heading this window.
    @usableFromInline var current: Double = 0
    @usableFromInline var from: Double = 0
    @usableFromInline var to: Double = 0
    /// Last window's low-water mark (frames; -1 before the first window).
    @usableFromInline var lastLowWater: Double = -1
    @usableFromInline var secondsAtLimit: Double = 0
    @usableFromInline var windows = 0

    init(targetFrames: Double, sampleRate: Int) {
        self.targetFrames = targetFrames
        self.sampleRate = Double(sampleRate)
    }

    /// The producer's drift estimate in ppm (> 0: it produces faster than
    /// its nominal rate relative to the output clock).
    @usableFromInline var estimatePpm: Double { @_noLocks get { integral * 1_000_000 } }
    @usableFromInline var saturated: Bool { @_noLocks get { secondsAtLimit >= 1 } }

    /// One render block of `blockSeconds` (output time) while the source is
    /// playing, with `level` source frames buffered before the block.
    /// Returns the correction to apply to this block.
    @usableFromInline @_noLocks
    mutating func update(level: Double, blockSeconds: Double) -> Double {
        windowMin = min(windowMin, level)
        windowElapsed += blockSeconds
        let w = DriftController.windowSeconds
        // Interpolate the applied correction across the window.
        current = from + (to - from) * min(1, windowElapsed / w)
        if windowElapsed >= w {
            let elapsed = windowElapsed
            let e = (windowMin - targetFrames) / sampleRate
            lastLowWater = windowMin
            windows += 1
            let omega = DriftController.omega
            let limit = DriftController.limit
            // The integral is clamped to the limit itself (bounded windup:
            // it recovers in seconds), so at saturation it still reports
            // the direction and the limit of the drift.
            integral = max(-limit, min(limit, integral + omega * omega * e * elapsed))
            let unclamped = 2 * omega * e + integral
            let out = max(-limit, min(limit, unclamped))
            if out != unclamped { secondsAtLimit += elapsed } else { secondsAtLimit = 0 }
            from = current
            to = out
            windowElapsed = 0
            windowMin = .infinity
        }
        return current
    }

    /// Forgets the current window (after a jump in the level: a flush, a
    /// drop, an underrun); keeps the estimate and the applied correction.
    @usableFromInline @_noLocks
    mutating func restartWindow() {
        windowMin = .infinity
        windowElapsed = 0
        from = current
        to = current
    }
}
