import CRTMixSupport

/// Capture stage 2, the clock follower. Two sample clocks meet in the
/// capture path: `h` counts reference samples appended to the history
/// (render clock, converted to the capture rate and steered by the drift
/// resampler) and `n` counts microphone samples (capture clock). `c = h − n`
/// after each call's appends is steady while both clocks run at the same
/// speed. The follower locks onto c (corrected for the render/capture
/// callback phase, which it measures from the render side's timing stamp
/// and the engine clock), then a PI controller keeps its smoothed value at
/// the locked one by steering the resampler's step (render/capture clock
/// ratio); the controller's integral is the drift estimate. The locked
/// value is the mean over the first 4 s after the lock, not one call's. A
/// dead band sized from the measured timing jitter keeps it at 0 on one
/// clock. A jump
/// of c beyond the jitter bound (render or capture stalled, ring overflow)
/// re-locks. Plain values: no allocation.
struct CaptureClockFollower {
    let rate: Int
    private(set) var locked = false
    /// The locked value of c.
    private(set) var cTarget = 0
    /// The locked value of c corrected for the callback phase.
    private var cTargetExact: Double = 0
    /// Clock time of the previous capture call and its frames; the ratio
    /// of clock time to audio time between calls (smoothed).
    private var lastCallNs: UInt64 = 0
    private var lastCallFrames = 0
    private var realTimeRatio: Double = 0
    /// This call's callback phase in capture samples (nil: unknown).
    private(set) var phaseSamples: Double? = nil
    private var cSmoothed: Double = 0
    private var integral: Double = 0
    /// Variance of the measured `c` around its smoothed value (samples²):
    /// how much the host's callback timing jitters. Starts at (1 ms)².
    private var jitterVariance: Double
    /// The drift correction in use (fraction; > 0: the playout clock runs
    /// faster).
    private(set) var correction: Double = 0
    private var largestArrival = 0
    private var driftAlarm = false
    /// After a lock: frames still to acquire, and the running sum and count
    /// of the phase-corrected c meanwhile (see `acquireSeconds`).
    /// The correction asked for by the echo's slide (`EchoSlideTracker`),
    /// added to the follower's own; `slide` accumulates what it moves the
    /// alignment by, so that the follower does not steer against it.
    private(set) var signalCorrection: Double = 0
    private var slide: Double = 0
    private var acquireLeft = 0
    private var acquireSum: Double = 0
    private var acquireCount = 0
    /// Over the acquisition, sums for a least-squares line of the
    /// phase-corrected c against time: t, y = c − its value at the lock,
    /// t², t·y, y² (`acquireSum`/`acquireCount` hold Σc and the count).
    private var fitT: Double = 0
    private var fitY: Double = 0
    private var fitTT: Double = 0
    private var fitTY: Double = 0
    private var fitYY: Double = 0
    private var fitClock: Double = 0

    /// Time constant of the proportional path, seconds.
    static var followerSeconds: Double { @_noLocks get { 2 } }
    /// Integral time, seconds.
    static var integralSeconds: Double { @_noLocks get { 8 } }
    /// The follower does not steer while the smoothed alignment error is
    /// within this many standard deviations of its own noise (the measured
    /// timing jitter after smoothing; at least `minDeadBandSamples`): on
    /// one clock it must say 0 and leave the alignment still (issue 16).
    /// 6: over 160 simulated one-clock runs (callbacks 0–1, 3, 6 and 10 ms
    /// late, 20 seeds, locks on the earliest and latest phase), 0 ppm in
    /// every one; 4 σ with the same 4 s acquisition: 32 runs above 2 ppm
    /// (worst 87). The price: a real drift is held at the band's edge,
    /// mean error 7 ppm at ±200 / 50 ppm with 3 ms of jitter (4.7 at 4 σ).
    static var deadBandSigmas: Double { @_noLocks get { 6 } }
    static var minDeadBandSamples: Double { @_noLocks get { 1.5 } }
    /// After a lock the follower only measures for this long, then holds
    /// the mean of the phase-corrected c over it (not the first call's
    /// value: one call's timing jitter, up to the whole jitter range away
    /// from its mean, would otherwise be steered to on one clock and read
    /// as tens to hundreds of ppm of drift: with the first call's value all
    /// 160 runs above went over 2 ppm, up to the 1000 ppm limit).
    static var acquireSeconds: Double { @_noLocks get { 4 } }
    /// A drift the acquisition's own line shows this many standard errors
    /// out of 0 is taken at once (the integral starts at it and the
    /// alignment is held where the line ends) instead of being found by the
    /// PI loop, which, starting 4 s of slide behind, overshot 200 ppm to
    /// 300 and took some 15 s to settle (docs/capture.md). Timing jitter
    /// widens the line's standard error, so with jittery callbacks this
    /// rarely applies and the loop works as before; on one clock none of
    /// the 160 simulated jitter runs (`CaptureClockFollowerTests`) nor the
    /// PulseAudio loopback showed a slope 8 standard errors out.
    static var feedForwardSigmas: Double { @_noLocks get { 8 } }
    /// Largest drift corrected (and beyond which it alarms).
    static var maxDriftPpm: Double { @_noLocks get { 1000 } }

    init(sampleRate rate: Int) {
        self.rate = rate
        jitterVariance = Double(rate / 1000) * Double(rate / 1000)
    }

    /// What a call did to the clocks.
    enum Update {
        case none
        /// Locked (again) at `cTarget`: the alignment starts anew.
        case locked
        /// Steered: the correction in use; `alarm` when it has just
        /// reached the largest drift corrected.
        case steered(correction: Double, alarm: Bool)
    }

    /// The follower is measuring after a lock or steering from the calls'
    /// timing: the host's clock information is in use.
    var timingInUse: Bool { @_noLocks get { !locked || acquireLeft > 0 || correction != 0 } }

    /// The resampler's step for this call (input per output sample).
    var step: Double { @_noLocks get { 1 / (1 - correction - signalCorrection) } }

    /// The echo's slide asks for this correction on top of the follower's
    /// own (see `EchoSlideTracker`).
    @_noLocks
    mutating func setSignalCorrection(_ value: Double) { signalCorrection = value }

    /// The reference was discarded: lock anew on the next arrival.
    @_noLocks
    mutating func unlock() { locked = false }

    /// No timing for this call (no stamp, or the drain stopped short of
    /// it).
    @_noLocks
    mutating func untimed() { phaseSamples = nil }

    /// Times this call: `now` on the engine clock, the newest reference
    /// drained was rendered at `renderedNs`. `hostClock`: the host's own
    /// clock, trusted even when calls come faster than real time.
    @_noLocks
    mutating func timeCall(now: UInt64, renderedNs: UInt64, hostClock: Bool) {
        phaseSamples = nil
        // Calls much faster than real time (a file processed offline with
        // the default clock): the clock says nothing about the audio's
        // timing, and the counts alone are exact.
        let elapsed = lastCallNs == 0 || now < lastCallNs ? 0 : Double(now - lastCallNs) * 1e-9
        lastCallNs = now
        let audio = Double(lastCallFrames) / Double(rate)
        if audio > 0 { realTimeRatio += 0.05 * (elapsed / audio - realTimeRatio) }
        if hostClock || realTimeRatio > 0.5 {
            let ago = now >= renderedNs ? Double(now - renderedNs) * 1e-9 : 0
            phaseSamples = ago * Double(rate)
        } else {
            phaseSamples = 0
        }
    }

    /// After the call's appends: `c = h − n`, `arrived` ring frames drained
    /// this call, `frames` microphone frames. Locks onto c (corrected for
    /// the callback phase), then steers to hold it.
    @_noLocks
    mutating func follow(c: Int, arrived: Int, frames: Int) -> Update {
        lastCallFrames = frames
        if arrived > largestArrival { largestArrival = arrived }
        if frames > largestArrival { largestArrival = frames }
        guard arrived > 0 || locked else { return .none }
        // c is measured at the capture call; the reference it counts was
        // rendered `phase` samples earlier: add that time back so that
        // callback timing does not look like drift.
        guard let phase = phaseSamples else { return .none }
        // The signal correction moves c by −frames × it per call (the
        // history grows by arrived × (1 − correction)): add that back.
        slide += signalCorrection * Double(frames)
        let corrected = Double(c) + phase + slide
        let bound = Double(2 * largestArrival + rate / 50)
        if !locked || abs(corrected - cTargetExact) > bound {
            if locked && arrived == 0 { return .none }  // render stalled: wait for it
            locked = true
            cTarget = c
            cTargetExact = corrected
            cSmoothed = corrected
            acquireLeft = Int(CaptureClockFollower.acquireSeconds * Double(rate))
            acquireSum = corrected
            acquireCount = 1
            fitT = 0; fitY = 0; fitTT = 0; fitTY = 0; fitYY = 0; fitClock = 0
            return .locked
        }
        let a = min(1, Double(frames) / Double(rate))
        cSmoothed += a * (corrected - cSmoothed)
        let deviation = corrected - cSmoothed
        jitterVariance += 0.25 * a * (deviation * deviation - jitterVariance)
        if acquireLeft > 0 {
            // Acquiring: measure, keep the correction in use.
            acquireSum += corrected
            acquireCount += 1
            acquireLeft -= frames
            fitClock += Double(frames) / Double(rate)
            let y = corrected - cTargetExact  // against the value at the lock
            fitT += fitClock; fitY += y; fitTT += fitClock * fitClock; fitTY += fitClock * y; fitYY += y * y
            if acquireLeft <= 0 {
                let line = acquiredLine()
                cTargetExact = acquireSum / Double(acquireCount)
                cSmoothed = cTargetExact
                if let line {
                    // The drift shows plainly: start from it, and hold the
                    // alignment where the line ends (where the echo is now).
                    let limit = CaptureClockFollower.maxDriftPpm * 1e-6
                    integral = max(-limit, min(limit, correction + line.slope / Double(rate)))
                    correction = integral
                    cTargetExact = line.end
                    cSmoothed = line.end
                }
            }
            return .steered(correction: correction + signalCorrection, alarm: false)
        }
        // Dead band: an error inside it is timing noise, not drift. The
        // smoothed value keeps a(2 − a) of the raw jitter's variance.
        let variance = Float(jitterVariance * a / (2 - a))
        let sd = Double(_unsafePerformance { rtmix_support_sqrtf(variance) })
        let band = max(CaptureClockFollower.minDeadBandSamples, CaptureClockFollower.deadBandSigmas * sd)
        let raw = cSmoothed - cTargetExact
        let outside = raw > band ? raw - band : (raw < -band ? raw + band : 0)
        let error = outside / Double(rate)
        let dt = Double(frames) / Double(rate)
        let limit = CaptureClockFollower.maxDriftPpm * 1e-6
        integral += error / (CaptureClockFollower.followerSeconds * CaptureClockFollower.integralSeconds) * dt
        integral = max(-limit, min(limit, integral))
        correction = max(-limit, min(limit, error / CaptureClockFollower.followerSeconds + integral))
        let saturated = abs(integral) >= limit * 0.999
        let alarm = saturated && !driftAlarm
        driftAlarm = saturated
        return .steered(correction: correction + signalCorrection, alarm: alarm)
    }

    /// The acquisition's line (slope in samples per second, value at its
    /// last call) when its slope stands `feedForwardSigmas` standard
    /// errors out of 0; else nil.
    @_noLocks
    private func acquiredLine() -> (slope: Double, end: Double)? {
        let n = Double(acquireCount - 1)  // the lock's own call is not in the sums
        guard n >= 10 else { return nil }
        let stt = fitTT - fitT * fitT / n
        guard stt > 0 else { return nil }
        let b = (fitTY - fitT * fitY / n) / stt
        let a = (fitY - b * fitT) / n
        let residual = max(0, fitYY - fitY * fitY / n - b * b * stt)
        let se = Double(_unsafePerformance { rtmix_support_sqrt(residual / (n - 2) / stt) })
        guard abs(b) > CaptureClockFollower.feedForwardSigmas * se else { return nil }
        return (b, cTargetExact + a + b * fitClock)
    }
}
