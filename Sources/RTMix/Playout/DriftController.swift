import CRTMixSupport

/// Clock-drift control for one source: decides whether the source needs a
/// correction at all, and how much. Its output feeds the drift stage
/// (`DriftStage`); a correction of exactly 0 leaves the audio untouched.
///
/// ## Rules (also stated at `target_buffer_ms` in rtmix.h)
///
/// 1. **Nothing is corrected until drift is shown.** A producer that runs
///    on the render clock — lockstep, pacing on `writable_frames`, pushing
///    until refused, refilling at a threshold of its own, primed deeper
///    than the target — pushes, over time, exactly what is consumed: its
///    measured rate is the nominal rate and its buffer level stays inside
///    its own burst-and-jitter band. Such a producer gets a correction of
///    exactly 0 for ever: a bit-exact bypass at equal rates, exact pitch,
///    no drift-stage cost. The level it keeps is its business (a lockstep
///    host holds one block, below any target): the target is not imposed
///    on a producer that has shown no drift.
/// 2. **Drift is shown by the producer's rate or by its level.** The rate:
///    exponentially weighted linear regressions (time constant
///    `regressionSeconds`) of the frames pushed against render time,
///    sampled at each window's low-water mark and at its mean; after
///    `warmupSeconds` the more significant slope over the nominal rate,
///    minus 1, is the drift estimate, and |estimate| ≥ `engagePpm` at
///    `significance` standard errors engages control, if the last 20 s
///    show a ramp rather than a step (`DeliveryHistory`). The level:
///    the low-water mark (least audio buffered in each `windowSeconds`
///    window, smoothed over `smoothingWindows` windows) leaving its anchor
///    (the level the producer settled at) by more than the dead band
///    engages control too (a drift smaller than `engagePpm` shows there,
///    slowly). The dead band is `minBandSeconds` or twice the producer's
///    own swing (the level's peak-to-peak within a window: its bursts and
///    jitter), whichever is larger.
/// 3. **Once engaged,** the correction is the estimate (feed-forward) plus
///    a slow level trim towards the target (PI, Kp = 2ω, Ki = ω²,
///    ω = 0.05 rad/s, critically damped), the trim bounded to ±`trimLimit`
///    and the sum to ±`limit` (2000 ppm), with anti-windup. The applied
///    value moves linearly to each new one across a window, so the ratio
///    never steps.
/// 4. **A level that does not respond is the producer's.** While engaged,
///    the level change the trim should have caused is compared with the
///    change seen every `checkWindows` windows: when less than a quarter of
///    a meaningful expected change shows, the producer sets the level
///    itself; control disengages, the correction returns to 0 and the new
///    level becomes the anchor. Nothing winds up or saturates on such a
///    producer. A refused push (the producer paces on a full ring) does the
///    same at once (`holdOff`).
/// 5. **The target follows the producer's delivery jitter** (a jitter
///    buffer's delay manager, as WebRTC NetEQ's): `targetFrames` is the
///    configured target, raised to cover the deepest dip of the level
///    seen (plus one block and `jitterMarginSeconds`), at most
///    `maxTargetFrames`. A dip is a window whose low-water mark falls
///    below the smoothed one (network holds, late packets), or an
///    underrun: then the level before the gap plus the frames missed,
///    measured when delivery resumes (`observeGap`), and the source
///    re-primes to the raised target. The depth is held `jitterHoldSeconds`
///    after the last comparable dip, then decays (time constant
///    `jitterDecaySeconds`) back towards the configured target. The trim
///    (rule 3) holds the low-water mark at this effective target. It never
///    engages control by itself: a producer on the render clock stays at
///    exactly 0 (rule 1). Windows with a dip are left out of the rate
///    regression (rule 2): a network hold is a late delivery, not a rate;
///    and the regression's clock runs on through an underrun
///    (`starvedBlock`): what arrives meanwhile is not a rate either.
struct DriftController {
    static var omega: Double { 0.05 }
    static var windowSeconds: Double { 0.5 }
    static var smoothingWindows: Double { 16 }
    static var regressionSeconds: Double { 30 }
    /// Seconds of regression data before the estimate is used.
    static var warmupSeconds: Double { 10 }
    /// Seconds after a (re)start before pushes enter the regression.
    static var settleSeconds: Double { 2 }
    /// Largest correction (fraction): 2000 ppm.
    static var limit: Double { 0.002 }
    /// Largest level trim on top of the estimate (fraction): 1000 ppm
    /// (1.7 cents; a 25 ms offset is gone in about 30 s).
    static var trimLimit: Double { 0.001 }
    /// |estimate| that shows drift by itself (fraction): 50 ppm. Measured:
    /// producers on the render clock (lockstep, writable-frames pacing,
    /// 20 ms packets with ±10 ms jitter, 4096-frame decoder bursts) stay
    /// within a few ppm (DriftDefaultsTests).
    static var engagePpm: Double { 50e-6 }
    /// How many standard errors the estimate must be from 0 to show drift
    /// by itself. Measured: at 3, a decoder refilling at a threshold that
    /// moves between 100 and 200 ms every second engaged on noise (−6919 ppm
    /// after 10 s, 3.1 σ).
    static var significance: Double { 5 }
    /// Largest feed-forward (fraction): 1000 ppm, beyond any crystal's
    /// error; the trim adds up to `trimLimit` on top.
    static var feedForwardLimit: Double { 0.001 }
    /// Smallest dead band around the anchor, seconds (10 ms).
    static var minBandSeconds: Double { 0.010 }
    /// Windows between two response checks (8 s).
    static var checkWindows: Int { 16 }
    /// Windows averaged for the anchor and the level mean (4 s).
    static var anchorWindows: Int { 8 }

    /// Margin kept below the deepest dip, on top of one block (15 ms):
    /// what the level may lose to drift before control engages, and the
    /// block-by-block quantisation of the level.
    static var jitterMarginSeconds: Double { 0.015 }
    /// A dip this deep (or deeper) below the smoothed low-water mark is
    /// delivery jitter: it raises the target and is left out of the rate
    /// regression (10 ms; uniform ±10 ms jitter moves window minima by a
    /// few ms).
    static var dipSeconds: Double { 0.010 }
    /// Seconds the jitter depth is held after the last dip of at least
    /// half of it (periodic holds keep it).
    static var jitterHoldSeconds: Double { 60 }
    /// Time constant of the depth's decay after the hold, seconds.
    static var jitterDecaySeconds: Double { 60 }

    /// The configured target low-water mark, in source frames (the least
    /// the effective target can be).
    let configuredTargetFrames: Double
    /// The effective target low-water mark, in source frames (rule 5): the
    /// configured one, raised to cover the producer's delivery jitter.
    var targetFrames: Double
    /// The most the effective target may be, frames.
    let maxTargetFrames: Double
    let sampleRate: Double
    // delivery jitter (rule 5)
    /// Deepest dip of the level below its smoothed low-water mark (frames).
    var jitterDepth: Double = 0
    /// Output seconds since the last dip of at least half `jitterDepth`.
    var sinceDip: Double = 0
    /// Input frames one block consumes (the level must hold one block).
    var blockFrames: Double = 0
    /// Widest swing of the level (peak-to-peak in a window, or the level
    /// before an underrun plus the frames missed), held and decaying as
    /// `jitterDepth` (frames): what a re-primed source must hold so that
    /// the next gap leaves it a margin.
    var jitterSpan: Double = 0
    var sinceSpan: Double = 0
    /// The last complete window's highest level (frames; -1: none).
    var lastWindowMax: Double = -1
    /// An underrun is in progress and its gap not yet measured.
    var gapOpen = false
    /// The smoothed low-water mark when the underrun began (frames; -1:
    /// not known yet).
    var levelBeforeGap: Double = -1
    /// The highest level in the window before the underrun (frames).
    var peakBeforeGap: Double = 0

    // level
    var windowMin: Double = .infinity
    var windowMax: Double = -.infinity
    var windowElapsed: Double = 0
    /// Smoothed low-water mark (frames; -1 before the first window).
    var lastLowWater: Double = -1
    /// Smoothed peak-to-peak of the level within a window (frames).
    var swing: Double = 0
    var windows = 0
    /// The low-water mark the producer settled at while not engaged
    /// (frames; -1: not yet known), and how it is measured (rule 2).
    var anchor: Double = -1
    var anchorSum: Double = 0
    var anchorCount = 0
    /// Moving mean of window minima after the anchor (frames).
    var levelMean: Double = -1
    /// The last window's minimum (frames).
    var lastWindowMin: Double = 0
    /// Window minima smoothed over 4 windows (2 s; -1 before the first):
    /// what the response check (rule 4) compares, with less lag than
    /// `lastLowWater`'s 8 s.
    var levelFast: Double = -1
    /// Output time and frames delivered at this window's low-water mark.
    var windowMinTime: Double = 0
    var windowMinArrived: Double = 0
    // drift regressions (x: output seconds, y: frames delivered)
    var time: Double = 0
    /// Sampled at each window's low-water mark (bursty producers).
    var atLowWater = ArrivalRegression()
    /// Sampled at each window's mean (jittery packet streams).
    var atMean = ArrivalRegression()
    /// The last 20 s of both samplings, for the step-versus-ramp test.
    var lowWaterHistory = DeliveryHistory()
    var meanHistory = DeliveryHistory()
    /// Sums over the current window's blocks: output time and frames
    /// delivered.
    var windowTimeSum: Double = 0
    var windowArrivedSum: Double = 0
    var windowBlocks: Double = 0
    var regressionAge: Double = 0
    /// Output time since the last restart (the regression waits `settleSeconds`).
    var sinceRestart: Double = 0
    /// The drift estimate (fraction; > 0: the producer runs fast), valid
    /// once a regression has run `warmupSeconds`; then kept across restarts.
    var estimate: Double = 0
    var estimateValid = false
    /// The estimate's standard error (fraction), from the regression's
    /// residuals: the producer's own jitter, seen at its low-water marks.
    var estimateSigma: Double = 0
    // control
    /// Control is on (rule 2); false: the correction is (heading to) 0.
    var engaged = false
    /// The drift estimate when control engaged, held while engaged: the
    /// estimate of a producer that paces on the level would follow the
    /// correction itself, so it is not fed back; the integral absorbs its
    /// error (and any later change of the drift) within ±`trimLimit`.
    var feedForward: Double = 0
    /// The estimate when control engaged, unclamped (rules 3–4).
    var engagedEstimate: Double = 0
    var integral: Double = 0
    var current: Double = 0
    var from: Double = 0
    var to: Double = 0
    var secondsAtLimit: Double = 0
    // response check (rule 4)
    var checkCount = 0
    var checkStartLevel: Double = -1
    /// Level change (frames) the trim should have caused since the check began.
    var expectedChange: Double = 0
    /// Times control was released because the level did not respond.
    var releases = 0

    /// `maxTargetFrames`: the cap of the effective target (at least the
    /// configured one).
    init(targetFrames: Double, sampleRate: Int, maxTargetFrames: Double = .infinity) {
        self.configuredTargetFrames = targetFrames
        self.targetFrames = targetFrames
        self.maxTargetFrames = max(targetFrames, maxTargetFrames)
        self.sampleRate = Double(sampleRate)
    }

    /// What the re-priming threshold after an underrun adds to the
    /// configured one (frames, ≥ 0): once delivery jitter was seen, the
    /// source re-primes to the effective target, or to one block, the
    /// margin and the widest swing of the level if that is more (priming
    /// ends on a delivery, at the top of the swing: the low-water mark
    /// lands a swing below it).
    var reprimeRaise: Double {
        @_noLocks get {
            guard jitterDepth > 0 || jitterSpan > 0 else { return 0 }
            let margin = blockFrames + DriftController.jitterMarginSeconds * sampleRate
            let spanLevel = jitterSpan > 0 ? min(maxTargetFrames, jitterSpan + margin) : 0
            return max(0, max(targetFrames, spanLevel) - configuredTargetFrames)
        }
    }

    /// Rule 5: the level swung `span` frames (peak to trough), seen now.
    @_noLocks
    mutating func observeSpan(_ span: Double) {
        guard span > 0 else { return }
        if span >= jitterSpan / 2 { sinceSpan = 0 }
        if span > jitterSpan { jitterSpan = span }
    }

    /// Rule 5: a dip of `depth` frames below the smoothed low-water mark,
    /// seen now. Raises the jitter depth (and the effective target).
    @_noLocks
    mutating func observeDip(_ depth: Double) {
        guard depth > 0 else { return }
        if depth >= jitterDepth / 2 { sinceDip = 0 }
        if depth > jitterDepth { jitterDepth = depth }
        updateTarget()
    }

    /// Rule 5: the depth held, then decaying, over `elapsed` seconds.
    @_noLocks
    mutating func ageJitter(_ elapsed: Double) {
        sinceDip += elapsed
        sinceSpan += elapsed
        let decay = min(1, elapsed / DriftController.jitterDecaySeconds)
        if sinceDip > DriftController.jitterHoldSeconds && jitterDepth > 0 {
            jitterDepth -= jitterDepth * decay
            updateTarget()
        }
        if sinceSpan > DriftController.jitterHoldSeconds { jitterSpan -= jitterSpan * decay }
    }

    @_noLocks
    mutating func updateTarget() {
        let margin = blockFrames + DriftController.jitterMarginSeconds * sampleRate
        let wanted = jitterDepth > 0 ? jitterDepth + margin : 0
        targetFrames = min(maxTargetFrames, max(configuredTargetFrames, wanted))
    }

    /// A silent block while the source is starved (an underrun, re-priming):
    /// the producer's clock runs on, so the regression's time axis does
    /// too. Without this the frames delivered during the gap looked like a
    /// burst of rate (measured: +878 ppm read for a −500 ppm voice after a
    /// re-prime, engaging control the wrong way).
    @_noLocks
    mutating func starvedBlock(blockSeconds: Double) {
        time += blockSeconds
    }

    /// The source ran dry while playing (an underrun began).
    @_noLocks
    mutating func underrunBegan() {
        gapOpen = true
        levelBeforeGap = lastLowWater
        peakBeforeGap = max(0, max(windowMax, lastWindowMax))
    }

    /// Rule 5: delivery resumed after an underrun that missed `missed`
    /// input frames (called once per underrun, before the re-priming
    /// threshold is decided). The gap the level had to cover was the
    /// level before it plus what was missed.
    @_noLocks
    mutating func observeGap(missed: Double) {
        guard gapOpen else { return }
        gapOpen = false
        observeSpan(peakBeforeGap + missed)
        // The depth below the smoothed low-water mark, when there is one
        // (a source that ran dry in its first window has none yet).
        if levelBeforeGap >= 0 { observeDip(levelBeforeGap + missed) }
    }

    /// The producer's drift estimate in ppm, when it is significant (rule
    /// 2: at least `significance` standard errors from 0); 0 otherwise: no
    /// drift shown (a noisy producer's raw slope is not reported as drift).
    var estimatePpm: Double {
        @_noLocks get { significant || (engaged && estimateValid) ? estimate * 1_000_000 : 0 }
    }
    /// The estimate is valid and significantly different from 0: at least
    /// `engagePpm` and `significance` standard errors (a producer whose
    /// level never moves has a perfectly straight line, a standard error
    /// of 0, and a slope that differs from 1 by rounding only).
    var significant: Bool {
        @_noLocks get {
            estimateValid && rampShown && abs(estimate) >= DriftController.engagePpm
                && abs(estimate) >= DriftController.significance * estimateSigma
        }
    }
    /// The last 20 s of delivery show a ramp in the estimate's direction,
    /// not a step (`DeliveryHistory.showsRamp`): a rate counts only then. A
    /// one-time change of the delivery delay tilts the 30 s lines for a
    /// minute or more (measured: a render-clock voice whose delay grew by
    /// 10 ms read −372 ppm and was corrected by up to 970 ppm for 137 s;
    /// jitter-free packet streams whose packets came one block later for
    /// good, up to 1374 ppm for 241 s).
    var rampShown = false
    var saturated: Bool { @_noLocks get { secondsAtLimit >= 1 } }
    /// The dead band around the anchor, frames (rule 2).
    var band: Double {
        @_noLocks get { max(DriftController.minBandSeconds * sampleRate, 2 * swing) }
    }

    /// One render block of `blockSeconds` (output time) while the source is
    /// playing, with `level` source frames buffered before the block and
    /// `consumed` frames taken from the ring in total (so `consumed + level`
    /// is everything the producer delivered, less drops and flushes).
    /// Returns the correction to apply (fraction: > 0 consumes faster).
    @_noLocks
    mutating func update(level: Double, consumed: Double, blockSeconds: Double) -> Double {
        blockFrames = blockSeconds * sampleRate
        if level < windowMin {
            windowMin = level
            windowMinTime = time + windowElapsed
            windowMinArrived = consumed + level
        }
        windowMax = max(windowMax, level)
        windowTimeSum += time + windowElapsed
        windowArrivedSum += consumed + level
        windowBlocks += 1
        windowElapsed += blockSeconds
        let w = DriftController.windowSeconds
        current = from + (to - from) * min(1, windowElapsed / w)
        if windowElapsed >= w { endWindow() }
        return current
    }

    /// The end of a level window: rules 2–4.
    @_noLocks
    mutating func endWindow() {
        let elapsed = windowElapsed
        // Rule 5: a window whose low-water mark fell well below the smoothed
        // one is delivery jitter (a hold, a late packet): it sets the
        // target and stays out of the rate regression.
        // Judged against the 2 s mean of window minima (the 8 s one lags a
        // drifting level by several ms: at -1000 ppm before control engaged,
        // plain drift read as dips and slowed engagement); the depth is
        // measured against the smoothed low-water mark the trim holds.
        let dip = lastLowWater >= 0 ? lastLowWater - windowMin : 0
        let isDip = levelFast >= 0 && levelFast - windowMin >= DriftController.dipSeconds * sampleRate
        ageJitter(elapsed)
        if isDip { observeDip(dip) }
        observeSpan(windowMax - windowMin)
        lastWindowMax = windowMax
        observeArrivals(windowMinArrived, at: windowMinTime,
                        mean: windowBlocks > 0 ? (windowArrivedSum / windowBlocks, windowTimeSum / windowBlocks) : nil,
                        elapsed: elapsed, skip: isDip)
        windowTimeSum = 0
        windowArrivedSum = 0
        windowBlocks = 0
        let p2p = windowMax - windowMin
        if lastLowWater < 0 {
            lastLowWater = windowMin
            swing = p2p
        } else {
            lastLowWater += (windowMin - lastLowWater) / DriftController.smoothingWindows
            swing = max(p2p, swing + (p2p - swing) / DriftController.smoothingWindows)
        }
        windows += 1
        lastWindowMin = windowMin
        levelFast = levelFast < 0 ? windowMin : levelFast + (windowMin - levelFast) / 4
        windowElapsed = 0
        windowMin = .infinity
        windowMax = -.infinity
        from = current

        if engaged && checkStartLevel < 0 { startCheck() }
        if !engaged {
            to = 0
            secondsAtLimit = 0
            if !engagementShown() { return }
            engaged = true
            integral = 0
            let ff = DriftController.feedForwardLimit
            engagedEstimate = estimateValid ? estimate : 0
            feedForward = max(-ff, min(ff, engagedEstimate))
            startCheck()
        }

        let e = (lastLowWater - targetFrames) / sampleRate
        let omega = DriftController.omega
        let limit = DriftController.limit, trimLimit = DriftController.trimLimit
        // Anti-windup: the integral does not grow further into a clamped trim.
        let p = 2 * omega * e
        let grown = max(-trimLimit, min(trimLimit, integral + omega * omega * e * elapsed))
        if abs(p + grown) <= trimLimit || abs(grown) < abs(integral) { integral = grown }
        let trim = max(-trimLimit, min(trimLimit, p + integral))
        let out = max(-limit, min(limit, feedForward + trim))
        // Saturated: what the producer needs (its drift as estimated when
        // control engaged, plus the trim) is beyond what is applied.
        if abs(engagedEstimate + trim) > limit { secondsAtLimit += elapsed } else { secondsAtLimit = 0 }
        to = out

        // Rule 4: a producer drifting as estimated when control engaged
        // fills the ring at 1 + engagedEstimate while `out` consumes at
        // 1 + out, so the level should move by (engagedEstimate − out) ×
        // rate × elapsed. Once that adds up to the band (and at least
        // `checkWindows` windows, the level's smoothing), compare with what
        // the level did.
        expectedChange += (engagedEstimate - out) * sampleRate * elapsed
        checkCount += 1
        if checkCount >= DriftController.checkWindows && abs(expectedChange) >= band {
            let observed = levelFast - checkStartLevel
            if observed * (expectedChange > 0 ? 1 : -1) < abs(expectedChange) / 4 {
                release()
            } else {
                startCheck()
            }
        }
    }

    /// Rule 2, at the end of a window while not engaged: has the producer
    /// shown drift? The anchor is measured once the regression's warm-up
    /// has passed since the last restart (the start-up fill is over): the
    /// mean of `anchorWindows` window minima. The level then is a moving
    /// mean of window minima over as many windows.
    @_noLocks
    mutating func engagementShown() -> Bool {
        guard regressionAge >= DriftController.warmupSeconds else { return false }
        let n = Double(DriftController.anchorWindows)
        if anchorCount < DriftController.anchorWindows {
            anchorSum += lastWindowMin
            anchorCount += 1
            if anchorCount == DriftController.anchorWindows {
                anchor = anchorSum / n
                levelMean = anchor
            }
        } else {
            levelMean += (lastWindowMin - levelMean) / n
        }
        if significant { return true }
        // A producer slower than the render clock whose level is already
        // below the target heads for an underrun: 3 standard errors suffice.
        if rampShown && estimate <= -DriftController.engagePpm && -estimate >= 3 * estimateSigma
            && lastLowWater < targetFrames {
            return true
        }
        // The level left the band around the anchor, in the direction the
        // estimate says the producer drifts (a producer that moves its own
        // level shows no rate to agree with).
        guard anchor >= 0 else { return false }
        let moved = levelMean - anchor
        return abs(moved) > band && estimateValid && moved * estimate > 0
    }

    @_noLocks
    mutating func startCheck() {
        checkCount = 0
        checkStartLevel = levelFast
        expectedChange = 0
    }

    /// Rule 4: the level is the producer's; back to no correction. The
    /// regression starts over too: a producer that paces on the level
    /// pushes as fast as it is consumed, so what it showed while corrected
    /// was the correction itself; it is measured afresh at ratio 1.
    @_noLocks
    mutating func release() {
        engaged = false
        integral = 0
        to = 0
        secondsAtLimit = 0
        releases += 1
        estimateValid = false
        estimate = 0
        rampShown = false
        resetRegression()
        resetAnchor()
        startCheck()
    }

    @_noLocks
    mutating func resetRegression() {
        atLowWater.reset()
        atMean.reset()
        lowWaterHistory.reset()
        meanHistory.reset()
        regressionAge = 0
        sinceRestart = 0
    }

    @_noLocks
    mutating func resetAnchor() {
        anchor = -1
        anchorSum = 0
        anchorCount = 0
        levelMean = -1
    }

    /// Adds one window's samples to the regressions: the frames the
    /// producer had delivered (`arrived`) at the moment of the window's
    /// low-water mark (`at`, output seconds), and the window's mean of the
    /// frames delivered against its mean time (`mean`). Sampling at the
    /// low-water mark takes a bursty producer's sawtooth out of the line (a
    /// 4096-frame decoder refilling at its threshold sits at the same point
    /// of it every time: sampling every block instead left ±60 ppm of noise
    /// after 10 s); the window's mean averages a jittery packet stream's
    /// level over its 50 blocks (its minimum moves by whole packets and
    /// stays put between steps, so its line reads exactly the nominal rate
    /// until a step: a −500 ppm voice with ±10 ms jitter showed its drift
    /// only after ~21 s, by when it had run dry; with the mean it shows it
    /// at ~12 s). The estimate is the slope that lies more standard errors
    /// from the nominal rate. The first `settleSeconds` after a (re)start
    /// are left out: a producer filling the ring at the start would tilt
    /// the line.
    @_noLocks
    mutating func observeArrivals(_ arrived: Double, at t: Double, mean: (arrived: Double, at: Double)? = nil,
                                  elapsed: Double, skip: Bool = false) {
        time += elapsed
        if sinceRestart < DriftController.settleSeconds {
            sinceRestart += elapsed
            return
        }
        regressionAge += elapsed
        if skip { return }
        let lambda = 1 - elapsed / DriftController.regressionSeconds
        atLowWater.add(x: t, y: arrived, lambda: lambda)
        lowWaterHistory.add(t: t, r: arrived - t * sampleRate)
        if let m = mean {
            atMean.add(x: m.at, y: m.arrived, lambda: lambda)
            meanHistory.add(t: m.at, r: m.arrived - m.at * sampleRate)
        }
        guard regressionAge >= DriftController.warmupSeconds,
              var best = atLowWater.fit(sampleRate: sampleRate) else { return }
        if let other = atMean.fit(sampleRate: sampleRate),
           abs(other.slope - 1) * best.sigma > abs(best.slope - 1) * other.sigma { best = other }
        estimateValid = true
        estimate = max(-0.01, min(0.01, best.slope - 1))
        estimateSigma = best.sigma
        rampShown = meanHistory.showsRamp(sign: estimate) || lowWaterHistory.showsRamp(sign: estimate)
    }

    /// The producer is pacing itself on the ring (its pushes were refused:
    /// it pushes as fast as the ring takes). It has no clock of its own to
    /// follow, and the level it keeps says nothing about drift: the
    /// correction returns smoothly to 0 and everything learnt is dropped.
    @_noLocks
    mutating func holdOff(blockSeconds: Double) -> Double {
        let step = DriftController.limit * blockSeconds / DriftController.windowSeconds
        current = current > 0 ? max(0, current - step) : min(0, current + step)
        restartWindow()
        engaged = false
        resetAnchor()
        // Nor is there delivery jitter to cover: the target is the configured one.
        jitterDepth = 0
        jitterSpan = 0
        gapOpen = false
        updateTarget()
        integral = 0
        estimateValid = false
        estimate = 0
        rampShown = false
        secondsAtLimit = 0
        return current
    }

    /// Forgets the current window, the regression and the anchor (after a
    /// jump in the level or a pause in the producer: a flush, a drop, an
    /// underrun); keeps the estimate, the integral and the applied correction.
    @_noLocks
    mutating func restartWindow() {
        windowMin = .infinity
        windowMax = -.infinity
        windowElapsed = 0
        windowTimeSum = 0
        windowArrivedSum = 0
        windowBlocks = 0
        from = current
        to = engaged ? current : 0
        resetRegression()
        lastLowWater = -1
        levelFast = -1
        windows = 0
        resetAnchor()
        startCheck()
        checkStartLevel = -1
    }
}

/// An exponentially weighted linear regression of the frames a producer
/// delivered (y) against output time (x, seconds), centred, with the
/// slope's standard error from the residuals about the line.
struct ArrivalRegression {
    var weight: Double = 0
    var meanX: Double = 0
    var meanY: Double = 0
    var cxx: Double = 0
    var cxy: Double = 0
    var cyy: Double = 0

    /// Adds a point; older points weigh `lambda` times less.
    @_noLocks
    mutating func add(x: Double, y: Double, lambda: Double) {
        weight = weight * lambda + 1
        let dx = x - meanX
        meanX += dx / weight
        let dy = y - meanY
        meanY += dy / weight
        cxx = lambda * cxx + dx * (x - meanX)
        cxy = lambda * cxy + dx * (y - meanY)
        cyy = lambda * cyy + dy * (y - meanY)
    }

    /// The slope over `sampleRate` (1: the nominal rate) and its standard
    /// error, once the line has enough points; nil before.
    @_noLocks
    func fit(sampleRate: Double) -> (slope: Double, sigma: Double)? {
        guard cxx > 0 && weight > 4 else { return nil }
        let residual = max(0, cyy - cxy * cxy / cxx) / (weight - 2)
        let sigma: Double = _unsafePerformance { rtmix_support_sqrt(residual / cxx) }
        return (cxy / cxx / sampleRate, sigma / sampleRate)
    }

    @_noLocks
    mutating func reset() { self = ArrivalRegression() }
}

/// The last `capacity` samples (output seconds, frames delivered minus the
/// nominal rate × time) of one sampling of a producer's delivery, oldest
/// first from `head`: what rule 2's step-versus-ramp test reads.
struct DeliveryHistory {
    static var capacity: Int { 40 }
    /// Fewest samples the test needs (4 s).
    static var minimumCount: Int { 8 }
    /// Standard errors the recent line's slope must lie from 0.
    static var significance: Double { 3 }
    var t: InlineArray<40, Double> = .init(repeating: 0)
    var r: InlineArray<40, Double> = .init(repeating: 0)
    var count = 0
    var head = 0

    @_noLocks
    mutating func add(t time: Double, r value: Double) {
        let i = (head + count) % DeliveryHistory.capacity
        t[i] = time
        r[i] = value
        if count < DeliveryHistory.capacity { count += 1 } else { head = (head + 1) % DeliveryHistory.capacity }
    }

    @_noLocks
    mutating func reset() {
        count = 0
        head = 0
    }

    /// Whether the samples show a drift of `sign`'s direction: their line's
    /// slope has that sign, lies `significance` standard errors from 0, and
    /// the line fits them better than the best single step (two constant
    /// levels, each over at least two samples) does. A step of the delivery
    /// delay, or a jitter-free packet stream's single packet step, fits a
    /// step exactly; a drift, or two packet steps, fits the line.
    @_noLocks
    func showsRamp(sign: Double) -> Bool {
        let n = count
        guard n >= DeliveryHistory.minimumCount else { return false }
        let cap = DeliveryHistory.capacity
        var st = 0.0, sr = 0.0
        for k in 0..<n {
            let i = (head + k) % cap
            st += t[i]
            sr += r[i]
        }
        let nn = Double(n), mt = st / nn, mr = sr / nn
        var stt = 0.0, str = 0.0, srr = 0.0
        for k in 0..<n {
            let i = (head + k) % cap
            let dt = t[i] - mt, dr = r[i] - mr
            stt += dt * dt
            str += dt * dr
            srr += dr * dr
        }
        guard stt > 0 else { return false }
        let slope = str / stt
        guard slope * sign > 0 else { return false }
        let rssLine = max(0, srr - str * str / stt)
        let se: Double = _unsafePerformance { rtmix_support_sqrt(rssLine / (nn - 2) / stt) }
        guard abs(slope) >= DeliveryHistory.significance * se else { return false }
        // The best single step: prefix sums over the samples in order.
        var rssStep = Double.infinity
        var leftSum = 0.0, leftSq = 0.0
        let totalSq = srr  // Σ (r − mean)², summed above
        let totalSum = sr - nn * mr  // 0 up to rounding: centred values
        for k in 0..<(n - 2) {
            let v = r[(head + k) % cap] - mr
            leftSum += v
            leftSq += v * v
            let left = Double(k + 1)
            guard k >= 1 else { continue }
            let right = nn - left
            let rightSum = totalSum - leftSum, rightSq = totalSq - leftSq
            let rss = (leftSq - leftSum * leftSum / left) + (rightSq - rightSum * rightSum / right)
            if rss < rssStep { rssStep = rss }
        }
        return rssLine < rssStep
    }
}
