/// Capture stage 3, the delay tracker: which reference sample the
/// canceller gets for each microphone sample. The echo in mic sample `i`
/// comes from history sample `i + kEcho`; the physical playout-to-capture
/// delay in samples is `D = c̄ − kEcho` (c̄: the clock follower's locked
/// value of `c = h − n`). The canceller is fed history sample `i + kFeed`
/// with `kFeed = c̄ − D + lead`: the reference leads the echo by `lead`
/// (speexdsp cancels well when the reference leads a little and not at all
/// when it lags).
///
/// `D` comes from the host's hint (`setStreamDelay`) or from the
/// `DelayEstimator` (owned here, fed by the reference history and the
/// framer); an estimate that disagrees with `D` by more than 4 ms in two
/// consecutive hops replaces it (four after a hint: hosts often get the
/// hint wrong, and Bluetooth route changes move it). Moving `kFeed` keeps
/// the canceller's filter valid (the room did not change, only the bulk
/// delay did). A re-lock of the clock follower shifts `kFeed` with `c̄`.
/// A small shift, 2–4 ms from an estimated delay in three consecutive
/// hops that agree within 0.5 ms (PulseAudio's loopback moved 3.5 ms under
/// load), moves `kFeed` too and starts the canceller afresh: left alone,
/// speexdsp re-learnt such a shift in place for about 5 s; moved without a
/// restart, the filter's re-learning read as a slide of 18–24 ppm some
/// seconds later (docs/capture.md).
///
/// A moved echo path is also seen in single hops (`singleHopConfidence`):
/// two consecutive ones that agree adopt the new delay, about half a
/// second before the averaged estimate would.
///
/// What the other stages must do about a change (restart the canceller,
/// distrust its estimate) and what the statistics show are returned, not
/// done here.
struct DelayTracker: ~Copyable {
    let rate: Int
    var estimator: DelayEstimator
    /// The delay in use, samples.
    private(set) var delay: Double = 0
    /// Where it came from: CaptureStats.DelaySource raw value (0 none,
    /// 1 hint, 2 estimator).
    private(set) var source: Int32 = 0
    /// History index offset of the reference fed with mic sample 0.
    private(set) var kFeed = 0
    /// The locked c the feed is counted from (the clock follower's).
    private var anchor = 0
    private var appliedHintMs: Int32 = -1
    /// h and n when the estimator (re)started: its sample numbering.
    private var estimatorBaseH: Int64 = 0
    private var estimatorBaseN: Int64 = 0
    private var candidate: Double = 0
    private(set) var candidateHits = 0
    private var smallCandidate: Double = 0
    private var smallHits = 0
    private var movedCandidate: Double = 0
    private var movedHits = 0
    let leadSamples: Int
    /// Microphone and linear-stage output energy of the frames since the
    /// last hop with the far end active: how much the linear filter removed.
    private var hopMic: Float = 0
    private var hopLinear: Float = 0

    /// A moved echo path, seen in single hops: the estimator's correlation
    /// of one hop (no average) peaks at least this confidently and
    /// distinctly more than 20 ms from the delay in use (at most
    /// `singleHopMaxSeconds`), while the linear filter removed less than
    /// 3 dB (`littleRemoved`) since the last hop; the next hop, at the full
    /// rate and half a hop sooner (128 ms later; 256 before the sixteenth
    /// session: the move is adopted 0.13 s sooner, and scenario i's
    /// echo-only scenes left 93 windows under 20 dB instead of 107, h
    /// unchanged), says the same within 4 ms. Then the new delay is
    /// adopted as a path change (the reference moves, the filter is kept)
    /// and the suppressor told the echo moved, about half a second before
    /// the averaged estimate would. Why all that: in double talk on
    /// recorded speech single-hop peaks away from the delay reached 8.35
    /// (at 597 ms, the range's edge, in a 0.9 s room where the filter
    /// removes little) and 7.8 elsewhere; one hop acting alone cut a
    /// talker for 780 ms. The evaluation's jumps of −100 to +300 ms gave
    /// 9.5–11.4 (docs/capture.md).
    static var singleHopConfidence: Float { @_noLocks get { 8 } }
    static var littleRemoved: Float { @_noLocks get { 2 } }
    /// Single-hop peaks near the end of the lag range (600 ms) are the
    /// likeliest to be spurious: only delays up to 500 ms are taken from
    /// them (the average still finds longer ones).
    static var singleHopMaxSeconds: Double { @_noLocks get { 0.5 } }
    /// Input samples within which a move adopted from single hops happened:
    /// the first hop that saw it has a 384 ms microphone window ending 32 ms
    /// before its newest sample, the hop before it (256 ms earlier at the
    /// full rate, which a moved echo sets: it looks like talk) may have
    /// straddled the move without seeing it, and the confirming hop comes
    /// up to 256 ms after the first (128 since the sixteenth session; the
    /// span was kept as measured).
    var singleHopSpan: Int {
        @_noLocks get { (DelayEstimator.micWindow + 2 * DelayEstimator.hop + DelayEstimator.micLag) * estimator.factor }
    }

    /// Lead of the reference over the echo.
    static var leadMs: Int { @_noLocks get { 8 } }

    /// A new delay in use, and what it means for the other stages.
    struct Change {
        /// Samples, and the CaptureStats.DelaySource raw value.
        var samples: Double
        var source: Int32
        /// A delay known before moved: the echo path changed (counted and
        /// posted as an event).
        var pathChanged: Bool
        /// The delay was unknown or the hint was wrong: the canceller
        /// adapted to a misaligned reference, so moving the reference would
        /// not keep it valid (unlike a measured path change, where it
        /// does). Start it afresh.
        var restartCanceller: Bool
        /// Right after the reference moves, the canceller's estimate may
        /// be wrong: the suppressor must fall back until it converges.
        var distrust: Bool
    }

    /// One estimator hop's outcome.
    struct Hop {
        /// The estimate in samples and its confidence (for the statistics).
        var estimate: Double
        var confidence: Float
        /// The averaged estimate is one the tracker would adopt (clock
        /// locked, confident, distinct, at least 3 hops, in range): good
        /// enough to follow the echo's slide from (`EchoSlideTracker`).
        var trusted = false
        /// A trusted estimate that agrees with the delay in use (within
        /// 4 ms) or is adopted: the echo is heard where the reference is
        /// aligned (`EchoAbsence`).
        var confirms = false
        /// The hop alone saw the echo move (see `singleHopConfidence`).
        var moved = false
        /// The echo moved away from an estimated delay: until the reference
        /// is realigned and the canceller has recovered, its estimate is
        /// not to be trusted.
        var distrust: Bool
        var change: Change?
    }

    /// nil when an allocation fails.
    init?(sampleRate rate: Int) {
        guard let estimator = DelayEstimator(sampleRate: rate) else { return nil }
        self.rate = rate
        self.estimator = consume estimator
        leadSamples = rate * DelayTracker.leadMs / 1000
    }

    /// The clock follower locked at `cTarget`, the counts `h` and `n`
    /// then: the estimator's history belongs to the old timing.
    @_noLocks
    mutating func relock(cTarget: Int, h: Int64, n: Int64) {
        anchor = cTarget
        restartEstimator(h: h, n: n)
        updateFeed()
    }

    /// The host's hint (ms, −1 none) as read this call.
    @_noLocks
    mutating func applyHint(_ hint: Int32, h: Int64, n: Int64) -> Change? {
        guard hint != appliedHintMs else { return nil }
        let previous = appliedHintMs
        appliedHintMs = hint
        // Hosts repeat their estimate every call with a little jitter:
        // only a change of more than 4 ms (or a first hint) counts.
        guard hint >= 0, previous < 0 || abs(Int(hint) - Int(previous)) > 4 else { return nil }
        let change = setDelay(Double(Int(hint) * rate) / 1000, source: 1)
        // The host says the path changed (a route change): what the
        // estimator accumulated describes the old one.
        restartEstimator(h: h, n: n)
        return change
    }

    /// The linear filter removed less than `littleRemoved` since the last hop.
    private var linearRemovedLittle: Bool {
        @_noLocks get { hopLinear > 0 && hopMic < DelayTracker.littleRemoved * hopLinear }
    }

    /// Each frame's microphone and linear-stage output power, with the far end active.
    @_noLocks
    mutating func linearFrame(mic: Float, linear: Float) {
        hopMic += mic
        hopLinear += linear
    }

    /// The near end talks (or the echo path moved): estimate at the full
    /// rate again.
    @_noLocks
    mutating func talkerActive() { estimator.tracking = false }

    /// After each frame: runs the estimator's next step and, when a hop
    /// completed, adopts its delay when it is confident and, twice in a
    /// row, more than 4 ms away from the delay in use (or, from the hop
    /// alone, see `singleHopConfidence`). `locked`: the clock follower's
    /// state. `alignWindows`: see `DelayEstimator.alignWindows`.
    @_noLocks
    mutating func hop(locked: Bool, alignWindows: Bool = true) -> Hop? {
        // The hop alone is looked at only where it could tell a move: a
        // delay in use and the linear filter removing little (otherwise the
        // hop costs what it did before).
        estimator.singleHop = locked && source != 0 && linearRemovedLittle
        estimator.alignWindows = alignWindows
        estimator.step()
        guard let e = estimator.latest else { return nil }
        estimator.latest = nil
        // Echo in mic sample i is history sample i + kEcho.
        let kEcho = e.offset + Double(estimatorBaseH - estimatorBaseN)
        let estimate = Double(anchor) - kEcho + Double(ReferenceHistory.lag + 1)
        var hop = Hop(estimate: estimate, confidence: e.confidence, distrust: false, change: nil)
        // The hop alone (see `singleHopConfidence`).
        let single = Double(anchor) - (e.hopOffset + Double(estimatorBaseH - estimatorBaseN))
            + Double(ReferenceHistory.lag + 1)
        let keptLittle = linearRemovedLittle
        hopMic = 0
        hopLinear = 0
        if locked && source != 0 && keptLittle && e.hopDistinct && e.hopConfidence >= DelayTracker.singleHopConfidence
            && abs(single - delay) > Double(rate) * 0.02
            && single >= -Double(rate) * 0.03 && single <= Double(rate) * DelayTracker.singleHopMaxSeconds {
            // The next hop, at the full rate and half a hop sooner (128 ms),
            // must agree.
            estimator.tracking = false
            if movedHits > 0 && abs(single - movedCandidate) <= Double(rate) * 0.004 {
                movedHits += 1
            } else {
                movedCandidate = single
                movedHits = 1
                estimator.hopSooner()
            }
            if movedHits >= 2 {
                movedHits = 0
                candidateHits = 0
                hop.moved = true
                hop.distrust = true
                hop.change = setDelay(max(0, single), source: 2)
                return hop
            }
        } else {
            movedHits = 0
        }
        guard locked, e.confidence >= 6, e.distinct, e.hops >= 3,
              estimate >= -Double(rate) * 0.03, estimate <= Double(rate) * 0.6 else {
            candidateHits = 0
            return hop
        }
        hop.trusted = true
        let tolerance = Double(rate) * 0.004
        if abs(estimate - delay) <= tolerance && source != 0 {
            hop.confirms = true
            candidateHits = 0
            estimator.tracking = movedHits == 0  // settled: estimate half as often
            // A small shift (2–4 ms) that holds for three hops: the path
            // moved a little. Move the reference and restart the canceller
            // (see the type's comment).
            let small = source == 2 && abs(estimate - delay) > Double(rate) * 0.002
            if !small {
                smallHits = 0
            } else if smallHits > 0 && abs(estimate - smallCandidate) <= Double(rate) * 0.0005 {
                smallHits += 1
            } else {
                smallCandidate = estimate
                smallHits = 1
            }
            if smallHits >= 3 {
                smallHits = 0
                hop.change = setDelay(max(0, estimate), source: 2, restartCanceller: true)
            }
            return hop
        }
        smallHits = 0
        estimator.tracking = false
        if candidateHits > 0 && abs(estimate - candidate) <= tolerance {
            candidateHits += 1
        } else {
            candidate = estimate
            candidateHits = 1
        }
        hop.distrust = hop.distrust || source == 2
        // Two agreeing hops (~0.5 s) replace an estimate or nothing; a
        // host's hint needs four (~1 s of data gathered after it was set).
        if candidateHits >= (source == 1 ? 4 : 2) {
            hop.change = setDelay(max(0, estimate), source: 2)
            hop.confirms = true
            candidateHits = 0
        }
        return hop
    }

    @_noLocks
    private mutating func restartEstimator(h: Int64, n: Int64) {
        estimator.reset()
        estimatorBaseH = h
        estimatorBaseN = n
        candidateHits = 0
        movedHits = 0
        hopMic = 0
        hopLinear = 0
    }

    /// `restartCanceller`: restart it whatever the delay was (a small
    /// shift); otherwise only when the old delay was unknown or a hint.
    @_noLocks
    private mutating func setDelay(_ samples: Double, source new: Int32,
                                   restartCanceller forced: Bool = false) -> Change {
        let moved = abs(samples - delay) > Double(rate) / 1000
        let restart = forced || (new == 2 && source != 2 && (moved || source == 0))
        let change = Change(samples: samples, source: new, pathChanged: source != 0 && moved,
                            restartCanceller: restart, distrust: restart || moved)
        delay = samples
        source = new
        updateFeed()
        return change
    }

    /// kFeed from the delay in use; never past the newest reference.
    @_noLocks
    private mutating func updateFeed() {
        // The history runs `ReferenceHistory.lag` samples ahead of the ring,
        // and c is counted one sample after the newest: see `hop`.
        if source == 0 {
            // No delay known yet: the newest reference (what is available
            // when a duplex callback captures), so the canceller's tail
            // covers echoes from 0 to ~190 ms until the estimator speaks.
            kFeed = anchor
            return
        }
        kFeed = anchor - Int(delay + 0.5) + ReferenceHistory.lag + 1 + leadSamples
    }
}
