/// Clock-drift compensation for one source: it estimates how fast the
/// producer really runs against the output clock, and drives the source's
/// buffered audio to its target by resampling slightly faster or slower.
///
/// **Drift estimate (feed-forward).** An exponentially weighted linear
/// regression (time constant `regressionSeconds`) of the frames the
/// producer has pushed against output time, sampled every render block:
/// its slope over the nominal rate, minus 1, is the producer's drift.
/// Jitter and bursts are noise around that line, and averaging over tens of
/// seconds of them leaves a few ppm (measured: DriftSimulationTests).
///
/// **Level measure.** The buffer level is sampled before each render block;
/// the controller works on its minimum over each `windowSeconds` window
/// (the low-water mark), smoothed over `smoothingWindows` windows. Bursty
/// producers (a decoder pushing 4096 frames at a time, a jittery network)
/// make the level a sawtooth; its minimum is the margin that actually
/// protects against underruns, so the target is a promise about the
/// margin: "this much audio is left at the worst moment of each window".
///
/// **Control.** c = drift estimate + Kp·e + Ki·∫e dt, with e = smoothed
/// low-water − target in seconds (consume c faster: the resampling ratio
/// is divided by 1 + c). The feed-forward cancels the drift; the slow PI
/// loop (Kp = 2ω, Ki = ω², ω = 0.05 rad/s, critically damped) moves the
/// level to the target and removes any standing offset the estimate
/// leaves. The applied correction moves linearly to each new value across
/// the next window, so the ratio never steps (even the full ±2000 ppm is a
/// 3.5-cent pitch change).
///
/// **Limits.** |c| ≤ `limit`; the integral does not grow while the output
/// is clamped in its direction (anti-windup); `saturated` turns true after
/// a full second at the limit.
@usableFromInline
struct DriftController {
    @usableFromInline static var omega: Double { 0.05 }
    @usableFromInline static var windowSeconds: Double { 0.5 }
    @usableFromInline static var smoothingWindows: Double { 16 }
    @usableFromInline static var regressionSeconds: Double { 30 }
    /// Seconds of regression data before the estimate is used.
    @usableFromInline static var warmupSeconds: Double { 10 }
    /// Largest correction (fraction): 2000 ppm.
    @usableFromInline static var limit: Double { 0.002 }

    /// Target low-water mark, in source frames.
    @usableFromInline let targetFrames: Double
    @usableFromInline let sampleRate: Double

    // level
    @usableFromInline var windowMin: Double = .infinity
    @usableFromInline var windowElapsed: Double = 0
    /// Smoothed low-water mark (frames; -1 before the first window).
    @usableFromInline var lastLowWater: Double = -1
    @usableFromInline var windows = 0
    // drift regression (x: output seconds, y: frames pushed), centred
    @usableFromInline var time: Double = 0
    @usableFromInline var weight: Double = 0
    @usableFromInline var meanX: Double = 0
    @usableFromInline var meanY: Double = 0
    @usableFromInline var cxx: Double = 0
    @usableFromInline var cxy: Double = 0
    @usableFromInline var regressionAge: Double = 0
    /// The drift estimate (fraction; > 0: the producer runs fast), valid
    /// once a regression has run `warmupSeconds`; then kept across restarts.
    @usableFromInline var estimate: Double = 0
    @usableFromInline var estimateValid = false
    // control
    @usableFromInline var integral: Double = 0
    @usableFromInline var current: Double = 0
    @usableFromInline var from: Double = 0
    @usableFromInline var to: Double = 0
    @usableFromInline var secondsAtLimit: Double = 0

    init(targetFrames: Double, sampleRate: Int) {
        self.targetFrames = targetFrames
        self.sampleRate = Double(sampleRate)
    }

    /// The producer's drift estimate in ppm.
    @usableFromInline var estimatePpm: Double { @_noLocks get { estimate * 1_000_000 } }
    @usableFromInline var saturated: Bool { @_noLocks get { secondsAtLimit >= 1 } }

    /// One render block of `blockSeconds` (output time) while the source is
    /// playing, with `level` source frames buffered before the block and
    /// `pushed` frames pushed in total. Returns the correction to apply.
    @usableFromInline @_noLocks
    mutating func update(level: Double, pushed: Double, blockSeconds: Double) -> Double {
        observePushes(pushed, blockSeconds: blockSeconds)
        windowMin = min(windowMin, level)
        windowElapsed += blockSeconds
        let w = DriftController.windowSeconds
        current = from + (to - from) * min(1, windowElapsed / w)
        if windowElapsed >= w {
            let elapsed = windowElapsed
            if lastLowWater < 0 {
                lastLowWater = windowMin
            } else {
                lastLowWater += (windowMin - lastLowWater) / DriftController.smoothingWindows
            }
            windows += 1
            let e = (lastLowWater - targetFrames) / sampleRate
            let omega = DriftController.omega
            let limit = DriftController.limit
            let feedForward = estimateValid ? estimate : 0
            var unclamped = feedForward + 2 * omega * e + integral
            // Anti-windup: the integral does not grow further into a
            // clamped output (a large initial offset saturates the P term).
            // It starts with the feed-forward: it only has to absorb what
            // the estimate leaves (until then, P alone moves the level).
            if estimateValid && (abs(unclamped) < limit || (unclamped > 0) != (e > 0)) {
                integral = max(-limit, min(limit, integral + omega * omega * e * elapsed))
                unclamped = feedForward + 2 * omega * e + integral
            }
            let out = max(-limit, min(limit, unclamped))
            if out != unclamped { secondsAtLimit += elapsed } else { secondsAtLimit = 0 }
            from = current
            to = out
            windowElapsed = 0
            windowMin = .infinity
        }
        return current
    }

    /// Adds one sample (output time, frames pushed) to the regression.
    @usableFromInline @_noLocks
    mutating func observePushes(_ pushed: Double, blockSeconds: Double) {
        time += blockSeconds
        regressionAge += blockSeconds
        let lambda = 1 - blockSeconds / DriftController.regressionSeconds
        weight = weight * lambda + 1
        let dx = time - meanX
        meanX += dx / weight
        let dy = pushed - meanY
        meanY += dy / weight
        cxx = lambda * cxx + dx * (time - meanX)
        cxy = lambda * cxy + dx * (pushed - meanY)
        if regressionAge >= DriftController.warmupSeconds && cxx > 0 {
            let next = max(-0.01, min(0.01, cxy / cxx / sampleRate - 1))
            estimateValid = true
            estimate = next
        }
    }

    /// The producer is pacing itself on the ring (its pushes were refused:
    /// it pushes as fast as the ring takes). It has no clock of its own to
    /// follow, and the level it keeps says nothing about drift: the
    /// correction returns smoothly to 0 and everything learnt is dropped.
    @usableFromInline @_noLocks
    mutating func holdOff(blockSeconds: Double) -> Double {
        let step = DriftController.limit * blockSeconds / DriftController.windowSeconds
        current = current > 0 ? max(0, current - step) : min(0, current + step)
        restartWindow()
        integral = 0
        estimateValid = false
        estimate = 0
        secondsAtLimit = 0
        return current
    }

    /// Forgets the current window and the regression (after a jump in the
    /// level or a pause in the producer: a flush, a drop, an underrun);
    /// keeps the estimate, the integral and the applied correction.
    @usableFromInline @_noLocks
    mutating func restartWindow() {
        windowMin = .infinity
        windowElapsed = 0
        from = current
        to = current
        weight = 0
        meanX = 0
        meanY = 0
        cxx = 0
        cxy = 0
        regressionAge = 0
        lastLowWater = -1
    }
}
