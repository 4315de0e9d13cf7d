/// Capture stage 4a, after the canceller: is the linear filter's echo
/// estimate still the echo? (issue 16 item 2, recovery after a path change.)
///
/// A linear filter that models the echo leaves an error orthogonal to its
/// own estimate: `e = mic − y` holds the talker, the noise and what it has
/// not learnt, none of them correlated with `y`, so the mean of `e·y` is
/// about 0 in echo alone and in double talk alike (a talker adds noise to
/// it, not bias). When the echo path moves (the delay jumps, the laptop is
/// moved) the filter goes on estimating the old echo: `y` is no longer in
/// the microphone, `e = mic − y` carries `−y`, and `e·y` falls to about
/// `−|y|²`. So the slope `Σe·y / Σy²` over the last three frames reads 0
/// for a filter that is right and −1 for one that is wrong, from the first
/// frames after the move, while the delay estimator needs half a second
/// to see the echo at its new delay. Before this, those frames passed the
/// echo at full level: the output stood over what the filter's (old)
/// estimate left, and the near-end detector read it as a talker (0.25 s
/// windows of ERLE at 0 dB for 0.5–1 s after the jumps of scenario c).
///
/// The filter is taken to be wrong (`suspect`) after two far-end frames
/// in a row whose last three frames show, together:
/// - a slope under −0.25 (`leaningSlope`), under −0.4 (`wrongSlope`) in
///   at least one of the two, and a correlation `Σe·y / √(Σe²·Σy²)` under
///   −0.3 (`wrongCorrelation`): evidence that stands out of the noise a
///   talker adds;
/// - an estimate carrying at least half the microphone's power
///   (`estimateShare`) and a microphone within 10 dB of its recent peak
///   (`levelShare`, the peak falling 20 dB a second): a filter predicting
///   an echo at the level it hears, not the quiet end of a word's
///   reverberation, where the estimate and the echo part for a few frames;
/// - a filter that had converged: it removed 20 dB in `convergedShare` of
///   the recent far-end frames (one-pole, ~1 s), or 10 dB in as many once
///   it has run `settledFrames` (5 s) since its last restart; a filter
///   still learning is no news. speexdsp's filter rarely removes 20 dB in
///   rooms that ring 0.6 s or more, and there the check never acted: the
///   moved echo passed whole for up to 0.75 s (scenario i, fifteenth
///   session). A filter re-learning after a restart removes 10 dB long
///   before it has settled, and judging it then cut a talker's onset in
///   scenario c's double talk (48 kHz with the hint: 1.3 → 3.7 % of its
///   frames, docs/capture.md);
/// - and the suppressor in its echo-only state at most one frame before
///   (`echoOnlyWithin`): in double talk speexdsp's filter shows the slope
///   now and then for a frame or two (it misadapts under a loud talker).
/// Each of these was measured on recorded speech (scenarios f, g and h:
/// without them, single frames at a talker's onset or in a word's tail
/// were acted on, and the suppression put on the filter's estimate cut up
/// to 21 % of a talker's frames; as built, f, g and h are unchanged to the
/// digit, and with the 10 dB rule all but one row of g; docs/capture.md).
/// It is right again (`right`) when the estimate carries a tenth of the
/// microphone's power, the slope is over −0.15 (`clearSlope`) and the
/// filter removes 6 dB (`clearRemoval`); a suspicion that is neither
/// confirmed nor cleared lapses after `lapseFrames` (2 s), and the
/// suppressor's own trust, earned again from frames in which the filter
/// removes echo, takes over.
///
/// The pipeline hands a suspicion to the suppressor (`suspectFilter`: its
/// per-bin trust and leak are put aside, the fallback from the reference
/// and the path gain carries the frame), hands it back when cleared
/// (`trustFilterAgain`: the filter did not need re-learning, as after a
/// false alarm), runs the delay estimator at its full rate meanwhile, and
/// folds the reference already played ahead of the aligned frame into the
/// suppressor's held reference (`CaptureProcessor.startLookingAhead`: a path that
/// got shorter brings the echo of reference not yet fed to the canceller).
/// After the delay tracker moves the reference under the kept filter
/// (`realigned`), the filter is judged afresh: if it models the echo at
/// the new alignment (`realignedRight`), the suppressor gets back what it
/// had earned, its leak taken at −15 dB at least (the filter may have
/// misadapted while the reference was wrong) and its echo-only state
/// still held on the reference for a second
/// (`CaptureProcessor.realignedHoldFrames`); otherwise its trust is
/// earned again. Before, every realignment distrusted the filter: its
/// leak taken as 0 dB and falling 0.1 dB a frame, a talker who had started
/// with the move lost 45–65 % of its frames 1–4 s after it (scenario i,
/// sixteenth session, docs/capture.md).
/// Plain stored values; no allocation.
struct EchoFilterCheck {
    /// The last three frames' mean powers of the linear stage's output
    /// (`e`), of its echo estimate (`y`), and the mean of `e·y`.
    private var error: (Float, Float, Float) = (0, 0, 0)
    private var estimate: (Float, Float, Float) = (0, 0, 0)
    private var cross: (Float, Float, Float) = (0, 0, 0)
    /// Share of recent far-end frames (one-pole, 0.02 a frame: ~1 s) in
    /// which the filter removed 20 dB.
    private(set) var converged: Float = 0
    /// Share of recent far-end frames in which the filter removed 10 dB.
    private(set) var removing: Float = 0
    /// Frames since the last `restart` (saturates).
    private(set) var age = 0
    /// Frames after a restart from which a filter removing 10 dB (not 20)
    /// is judged: 5 s.
    static var settledFrames: Int { @_noLocks get { 500 } }
    /// `converged` has been over `convergedShare` since the last
    /// `restart`: the filter learnt the echo path it models.
    private(set) var hasConverged = false
    /// The microphone's peak power in far-end frames, falling 20 dB a
    /// second.
    private var level: Float = 0
    /// Far-end frames since the suppressor was last in its echo-only state.
    private var sinceEchoOnly = 0
    /// The filter is suspected to model an echo path that has moved.
    private(set) var suspect = false
    /// Frames since the suspicion was last confirmed.
    private var sinceWrong = 0
    /// The reference was realigned under a kept filter (`realigned`): the
    /// filter is judged afresh, in double talk too.
    private(set) var verifying = false
    /// Far-end frames since the realignment, and in a row that showed the
    /// realigned filter right.
    private var sinceRealigned = 0
    private var rightRun = 0
    /// Far-end frames after a realignment before the filter is judged.
    private var settleFrames = 3
    /// Far-end frames in a row that showed the filter wrong (the slope
    /// under `leaningSlope`), and whether one of them was under `wrongSlope`.
    private var wrongRun = 0
    private var strongSeen = false

    static var leaningSlope: Float { @_noLocks get { 0.25 } }
    static var wrongSlope: Float { @_noLocks get { 0.4 } }
    static var wrongCorrelation: Float { @_noLocks get { 0.3 } }
    static var wrongFrames: Int { @_noLocks get { 2 } }
    static var estimateShare: Float { @_noLocks get { 0.5 } }
    /// Power shares: −10 dB under the peak, which falls 0.2 dB a frame.
    static var levelShare: Float { @_noLocks get { 0.1 } }
    static var levelDecay: Float { @_noLocks get { 0.955 } }
    static var convergedShare: Float { @_noLocks get { 0.3 } }
    static var echoOnlyWithin: Int { @_noLocks get { 1 } }
    static var clearSlope: Float { @_noLocks get { 0.15 } }
    static var clearRemoval: Float { @_noLocks get { 0.25 } }
    static var lapseFrames: Int { @_noLocks get { 200 } }
    /// A realigned filter: right after this many far-end frames in a row
    /// showing it right, given up after `verifyFrames`.
    static var rightFrames: Int { @_noLocks get { 3 } }
    static var verifyFrames: Int { @_noLocks get { 200 } }

    enum Verdict {
        /// Nothing new.
        case none
        /// The filter's estimate is not the echo (first seen or seen again).
        case wrong
        /// It is the echo again: the suspicion was a false alarm or the
        /// filter has re-learnt.
        case right
        /// Neither, for `lapseFrames`: the suspicion is dropped.
        case lapsed
        /// A realigned filter models the echo (`realigned`).
        case realignedRight
    }

    /// One frame through the canceller: `p` its powers (`errorEcho` filled),
    /// `echoOnly`: the suppressor's state before this frame.
    @_noLocks
    mutating func frame(_ p: EchoCanceller.FramePowers, echoOnly: Bool) -> Verdict {
        age = min(age + 1, Int.max / 2)
        let y = max(0, p.mic - p.linear - 2 * p.errorEcho)  // mic = e + y + 2·e·y
        error = (error.1, error.2, p.linear)
        estimate = (estimate.1, estimate.2, y)
        cross = (cross.1, cross.2, p.errorEcho)
        guard p.reference > 1e-6 && p.mic > 1e-7 else { return .none }
        converged += 0.02 * ((p.linear < 0.01 * p.mic ? 1 : 0) - converged)
        removing += 0.02 * ((p.linear < 0.1 * p.mic ? 1 : 0) - removing)
        if converged > EchoFilterCheck.convergedShare { hasConverged = true }
        level = max(p.mic, level * EchoFilterCheck.levelDecay)
        sinceEchoOnly = echoOnly ? 0 : min(sinceEchoOnly + 1, Int.max / 2)
        let see = error.0 + error.1 + error.2, syy = estimate.0 + estimate.1 + estimate.2
        let sey = cross.0 + cross.1 + cross.2
        let smm = see + syy + 2 * sey
        let leaning = syy > 1e-9 && syy > EchoFilterCheck.estimateShare * smm
            && smm > 3 * EchoFilterCheck.levelShare * level
            && sey < -EchoFilterCheck.leaningSlope * syy
            && sey * sey > EchoFilterCheck.wrongCorrelation * EchoFilterCheck.wrongCorrelation * see * syy
            && sinceEchoOnly <= EchoFilterCheck.echoOnlyWithin
        let strong = leaning && sey < -EchoFilterCheck.wrongSlope * syy
        wrongRun = leaning ? wrongRun + 1 : 0
        strongSeen = leaning && (strongSeen || strong)
        if verifying { return verify(see: see, syy: syy, sey: sey, smm: smm) }
        let learnt = converged > EchoFilterCheck.convergedShare
            || (removing > EchoFilterCheck.convergedShare && age >= EchoFilterCheck.settledFrames)
        if wrongRun >= EchoFilterCheck.wrongFrames && strongSeen && learnt {
            suspect = true
            sinceWrong = 0
            return .wrong
        }
        guard suspect else { return .none }
        if syy > 0.1 * smm && sey > -EchoFilterCheck.clearSlope * syy && see < EchoFilterCheck.clearRemoval * smm {
            suspect = false
            return .right
        }
        sinceWrong += 1
        if sinceWrong >= EchoFilterCheck.lapseFrames {
            suspect = false
            return .lapsed
        }
        return .none
    }

    /// The delay tracker moved the reference and kept the filter (the echo
    /// path's delay changed, not the room): the filter may model the echo
    /// again at once, or the room changed too, or it misadapted while the
    /// reference was wrong. Judged by the slope alone, which reads the
    /// same in double talk (a talker adds noise to `e·y`, not bias), not by
    /// how much the filter removes, which a talker hides: once the filter
    /// has been fed the realigned reference over its whole length
    /// (`tailFrames`: until then it convolves reference from both
    /// alignments and reads partly wrong; judged from the third frame,
    /// a third of the scenes of scenario i were read wrong at first),
    /// `realignedRight` after `rightFrames` far-end frames in a row with
    /// the estimate carrying a tenth of the microphone's power, the slope
    /// over −0.15 and the correlation under 0.3 in size; `lapsed` after
    /// `verifyFrames` (2 s) without it: the filter is then taken as
    /// restarted (the suppressor's trust is earned again).
    @_noLocks
    mutating func realigned(tailFrames: Int) {
        settleFrames = max(3, tailFrames)
        suspect = false
        verifying = true
        sinceRealigned = 0
        rightRun = 0
        wrongRun = 0
        strongSeen = false
    }

    @_noLocks
    private mutating func verify(see: Float, syy: Float, sey: Float, smm: Float) -> Verdict {
        sinceRealigned += 1
        guard sinceRealigned >= settleFrames else { return .none }
        let right = syy > 0.1 * smm && sey > -EchoFilterCheck.clearSlope * syy
            && sey * sey < EchoFilterCheck.wrongCorrelation * EchoFilterCheck.wrongCorrelation * see * syy
        rightRun = right ? rightRun + 1 : 0
        if rightRun >= EchoFilterCheck.rightFrames {
            verifying = false
            wrongRun = 0
            return .realignedRight
        }
        if sinceRealigned >= EchoFilterCheck.verifyFrames {
            restart()
            return .lapsed
        }
        return .none
    }

    /// The reference moved or the canceller restarted: what was seen says
    /// nothing about the filter now.
    @_noLocks
    mutating func restart() {
        verifying = false
        suspect = false
        converged = 0
        removing = 0
        age = 0
        hasConverged = false
    }
}
