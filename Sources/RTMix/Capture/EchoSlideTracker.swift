import CRTMixSupport

/// Capture stage 4b, after the canceller: drift followed from the signal
/// (issue 16 item 3). When the microphone's clock differs from the
/// loudspeaker's and the host's call timing does not show it (file
/// processing, one duplex callback driving two devices on different
/// clocks), the echo slides against the reference by `ppm × rate / 10⁶`
/// samples per second, and the linear filter, which learnt the echo at one
/// offset, loses it. This stage watches the slide where it is plainest: the
/// position of the adaptive filter's main tap. Every `interval` frames it
/// reads the filter's impulse response, finds its largest tap (sub-sample,
/// by a parabola through the peak and its neighbours), and fits a line to
/// the positions of the last `window` readings. A slope that stays outside
/// the noise becomes a correction of the reference resampler (the clock
/// follower adds it to its own and lets the alignment move with it), so
/// that the reference slides with its echo and the filter holds still.
/// Host timing, when the calls carry it, is followed by the clock follower
/// first; this stage then only sees (and removes) what is left.
///
/// Readings count only when the filter has a clear main tap (its peak at
/// least `peakRatio` × the taps' RMS) and the frame had echo to learn from;
/// a main tap that jumps (a new echo path, a reset) starts the fit anew.
/// `init` allocates; `frame` does not.
struct EchoSlideTracker: ~Copyable {
    let rate: Int
    let taps: Int
    /// The impulse response read (int32, speexdsp's scale).
    let response: UnsafeMutablePointer<Int32>
    /// The last readings: capture time (s) and main-tap position (samples).
    let times: UnsafeMutablePointer<Double>
    let positions: UnsafeMutablePointer<Double>
    private var count = 0
    private var framesSinceReading = 0
    private var clock: Double = 0
    private var frameSeconds: Double
    /// Frames of echo seen since the last reading.
    private var echoFrames = 0
    /// The correction this stage asks for (fraction; the clock follower's
    /// sign: > 0 means the reference must be consumed faster).
    private(set) var correction: Double = 0
    let allocatedBytes: Int

    static var interval: Int { @_noLocks get { 10 } }   // frames: 100 ms at 10 ms frames
    static var window: Int { @_noLocks get { 40 } }     // readings: 4 s
    static var peakRatio: Double { @_noLocks get { 8 } }
    /// Largest step between readings still taken as a slide: 0.5 ms. The
    /// main tap does not glide: as the echo slides, the filter re-learns
    /// it a tap or a few further and the largest tap moves in steps of 2–6
    /// samples at 16 kHz (seen at 200 ppm), which the fit averages.
    static var maxStepSeconds: Double { @_noLocks get { 0.0005 } }
    /// Slopes below this are noise, not drift (ppm), while no drift has
    /// been found: on one clock the stage must never act.
    static var deadBandPpm: Double { @_noLocks get { 4 } }
    /// Once a drift has been found (the correction is not 0), what is left
    /// of it is followed down to this (ppm). The first correction is off by
    /// a ppm or so (0.8 of a 4 s fit), and the rest, under the dead band,
    /// slid on unseen: 0.5–1.3 ppm measured at 48 kHz for 200 ppm, which cost
    /// up to 10 dB of ERLE for good (docs/capture.md). Still 4 standard errors
    /// out of 0, as every fit.
    static var refineDeadBandPpm: Double { @_noLocks get { 0.3 } }
    /// Share of a measured slope applied at once.
    static var gain: Double { @_noLocks get { 0.8 } }
    static var maxPpm: Double { @_noLocks get { 1000 } }

    /// nil when an allocation fails. Without a canceller it never acts.
    init?(canceller: borrowing EchoCanceller, sampleRate: Int, frameSize: Int) {
        let n = canceller.impulseResponseSize
        var batch = AllocationBatch()
        guard let r = batch.allocate(repeating: Int32(0), count: max(n, 1)),
              let t = batch.allocate(repeating: Double(0), count: EchoSlideTracker.window),
              let p = batch.allocate(repeating: Double(0), count: EchoSlideTracker.window) else { return nil }
        allocatedBytes = batch.commit()
        rate = sampleRate
        taps = n
        response = r
        times = t
        positions = p
        frameSeconds = Double(frameSize) / Double(sampleRate)
    }

    deinit {
        Allocation.free(response)
        Allocation.free(times)
        Allocation.free(positions)
    }

    /// The echo path moved, the canceller was reset, or the alignment was
    /// locked anew: the positions read so far belong to the old path.
    @_noLocks
    mutating func restart() {
        count = 0
        echoFrames = 0
    }

    /// After each canceller frame. `echo`: the frame carried echo to learn
    /// from (the far end active, the near end not talking). `hostTiming`:
    /// the clock follower is measuring or steering from the calls' timing
    /// (the host's clock information wins: this stage then stands aside
    /// and drops its own correction). Returns the new correction when it
    /// changed.
    @_noLocks
    mutating func frame(canceller: borrowing EchoCanceller, echo: Bool, hostTiming: Bool) -> Double? {
        clock += frameSeconds
        if hostTiming {
            count = 0
            echoFrames = 0
            framesSinceReading = 0
            guard correction != 0 else { return nil }
            correction = 0
            return 0
        }
        if echo { echoFrames += 1 }
        framesSinceReading += 1
        guard taps > 4, framesSinceReading >= EchoSlideTracker.interval else { return nil }
        framesSinceReading = 0
        // Only a filter that has just been learning says where the echo is.
        let learnt = echoFrames * 2 >= EchoSlideTracker.interval
        echoFrames = 0
        guard learnt else { return nil }
        canceller.impulseResponse(into: response)
        guard let p = EchoSlideTracker.mainTap(response, count: taps, peakRatio: EchoSlideTracker.peakRatio) else {
            return nil
        }
        if count > 0 && abs(p - positions[count - 1]) > EchoSlideTracker.maxStepSeconds * Double(rate) {
            count = 0  // a jump: a new path, not a slide
        }
        if count == EchoSlideTracker.window {
            for i in 1..<count {
                times[i - 1] = times[i]
                positions[i - 1] = positions[i]
            }
            count -= 1
        }
        times[count] = clock
        positions[count] = p
        count += 1
        guard count == EchoSlideTracker.window,
              let fit = EchoSlideTracker.slope(times, positions, count: count) else { return nil }
        guard let next = EchoSlideTracker.corrected(correction, slope: fit.slope,
                                                    standardError: fit.standardError, rate: rate) else { return nil }
        correction = next
        count = 0  // the next fit sees only the corrected slide
        return correction
    }

    /// The correction after a fit of the main tap's slope (samples per
    /// second), or nil to keep it. The echo moves `slope` samples per
    /// second later against the reference: the reference must be consumed
    /// that much slower. A slope within 4 standard errors of 0 (a filter
    /// still settling, a main tap that wavers) is not drift, nor one within
    /// the dead band: 4 ppm while no drift has been found, 0.3 ppm once
    /// one has (what the first corrections left).
    @_noLocks
    static func corrected(_ correction: Double, slope: Double, standardError: Double, rate: Int) -> Double? {
        let ppm = slope / Double(rate) * 1e6
        let band = correction == 0 ? deadBandPpm : refineDeadBandPpm
        guard abs(ppm) > band, abs(slope) > 4 * standardError else { return nil }
        let limit = maxPpm * 1e-6
        return max(-limit, min(limit, correction - gain * ppm * 1e-6))
    }

    /// The largest tap's position (sub-sample) when it stands out of the
    /// taps' RMS by `peakRatio` and is not at either end; else nil.
    @_noLocks
    static func mainTap(_ h: UnsafePointer<Int32>, count n: Int, peakRatio: Double) -> Double? {
        var best = 0, bestValue: Double = 0, sum: Double = 0
        for i in 0..<n {
            let v = Double(h[i])
            sum += v * v
            if abs(v) > bestValue { bestValue = abs(v); best = i }
        }
        guard best > 0, best < n - 1, bestValue > 0,
              bestValue * bestValue > peakRatio * peakRatio * sum / Double(n) else { return nil }
        let a = abs(Double(h[best - 1])), b = bestValue, c = abs(Double(h[best + 1]))
        let den = a - 2 * b + c
        let shift = den < 0 ? 0.5 * (a - c) / den : 0
        return Double(best) + max(-0.5, min(0.5, shift))
    }

    /// Least-squares slope of `y` over `t` and its standard error; nil
    /// when `t` does not vary or there are fewer than 3 points.
    @_noLocks
    static func slope(_ t: UnsafePointer<Double>, _ y: UnsafePointer<Double>,
                      count n: Int) -> (slope: Double, standardError: Double)? {
        guard n >= 3 else { return nil }
        var st: Double = 0, sy: Double = 0
        for i in 0..<n { st += t[i]; sy += y[i] }
        let mt = st / Double(n), my = sy / Double(n)
        var stt: Double = 0, sty: Double = 0
        for i in 0..<n {
            let dt = t[i] - mt
            stt += dt * dt
            sty += dt * (y[i] - my)
        }
        guard stt > 0 else { return nil }
        let b = sty / stt
        var residual: Double = 0
        for i in 0..<n {
            let r = y[i] - my - b * (t[i] - mt)
            residual += r * r
        }
        let variance = residual / Double(n - 2) / stt
        return (b, Double(_unsafePerformance { rtmix_support_sqrt(variance) }))
    }
}
