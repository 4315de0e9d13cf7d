import CRTMixSupport

/// The capture path's last echo stage: a broadband residual-echo gate
/// (a "non-linear processor") after speexdsp's canceller and
/// preprocessor. It turns ~35 dB of cancellation into 41–69 dB while only
/// the far end plays, and stays open while the near end talks.
///
/// Per 10 ms frame, with the far end active (its reference, decayed like
/// a room's tail, 60 dB in 250 ms, above −70 dBFS):
/// - `leak` predicts the canceller's residual as a ratio to the
///   microphone power; `erl` predicts the microphone power from the
///   reference (the echo path loss). Both are quantile trackers in dB
///   (leak +0.1/−0.05 dB per frame: 67th percentile; erl +0.1/−0.01 dB:
///   91st), fed only frames not judged near-end. (Faster descents were
///   tried: they made near-end detection trigger on the echo itself and
///   cost 20 dB of ERLE in aec-eval.)
/// - Near-end talk is not cancelled: it lifts the residual 3 dB above
///   `leak` AND the microphone above `erl` (both needed: music onsets the
///   canceller has not learnt yet fool the first, a talker quieter than
///   the echo the second), or lifts the residual 15 dB above `leak` on
///   its own. (A 3 dB margin on the microphone test too gave more ERLE
///   but double-talk PESQ 2.18 instead of 2.40 in aec-eval.)
/// - Near-end talk on two frames in a row (or one 15 dB frame) opens the
///   gate (gain 1 within ~2 ms) and holds it open 400 ms after the
///   talker's last frame; otherwise it closes to
///   `floorDb` (−40 dB) over ~30 ms. A silent far end leaves it open.
/// Measured with scripts/aec-eval (pyroomacoustics room, espeak speech +
/// music): 16 kHz median ERLE from ~35 dB (speexdsp alone) to 41–69 dB
/// across its scenarios, double-talk PESQ 2.39 → 2.40; 48 kHz 43–61 dB,
/// PESQ 2.33 (see docs/capture.md). No allocation, no transform: a few
/// operations per sample.
@usableFromInline
struct ResidualEchoGate {
    @usableFromInline var leak: Float = 1
    /// Echo return loss: microphone power over the (decayed) reference's
    /// while only the far end plays.
    @usableFromInline var erl: Float = 1
    @usableFromInline var reference: Float = 0
    @usableFromInline var gain: Float = 1
    @usableFromInline var hold = 0
    /// Per-frame reference decay (60 dB in 250 ms at 10 ms frames).
    @usableFromInline let decay: Float
    @usableFromInline let floorGain: Float
    @usableFromInline let openStep: Float
    @usableFromInline let closeStep: Float
    /// The last frame was judged near-end talk over an active far end.
    @usableFromInline var doubleTalk = false
    /// The previous frame passed the near-end test (onset confirmation).
    @usableFromInline var nearEndBefore = false

    static var farEndFloor: Float { @_noLocks get { 1e-7 } }  // -70 dBFS
    static var marginRatio: Float { @_noLocks get { 2 } }  // 3 dB
    /// A residual this far above `leak` is near-end talk whatever the
    /// microphone level says (a talker quieter than the echo).
    static var strongRatio: Float { @_noLocks get { 32 } }  // 15 dB
    /// Held open 400 ms after the last near-end frame: the gaps between
    /// a talker's words stay open (closing there chops word onsets and
    /// costs PESQ; measured with scripts/aec-eval).
    static var holdFrames: Int { @_noLocks get { 40 } }

    init(sampleRate: Int, frameSize: Int, floorDb: Float = -40) {
        decay = Float(rtmix_support_exp_f(-6 * 2.302585 * Float(frameSize) / (0.25 * Float(sampleRate))))
        floorGain = rtmix_support_db_to_linear(floorDb)
        // One-pole smoothing towards the target, per sample.
        openStep = 1 - rtmix_support_exp_f(-1 / (0.002 * Float(sampleRate)))
        closeStep = 1 - rtmix_support_exp_f(-1 / (0.030 * Float(sampleRate)))
    }

    /// Updates the model from one frame's powers (reference as fed to the
    /// canceller; output after the preprocessor) and applies the gate to
    /// `frame` in place.
    @_noLocks
    mutating func process(_ frame: UnsafeMutablePointer<Float>, count: Int, referencePower: Float,
                          micPower: Float, outputPower: Float) {
        reference = max(referencePower, reference * decay)
        let farEnd = reference > ResidualEchoGate.farEndFloor
        var open = true
        doubleTalk = false
        if farEnd {
            let ratio = max(outputPower, 1e-12) / max(micPower, 1e-12)
            let echoRatio = max(micPower, 1e-12) / reference
            // Near-end talk is left in the canceller's output (its ratio to
            // the microphone rises above the residual's) AND makes the
            // microphone louder than the echo path alone can (a Geigel-style
            // test against the echo return loss `erl`). Either alone is
            // fooled: the first by music onsets the canceller has not
            // learnt yet, the second by a near-end quieter than the echo.
            let residualTest = ratio > ResidualEchoGate.marginRatio * leak
            let micTest = echoRatio > erl
            let nearEnd = (residualTest && micTest) || ratio > ResidualEchoGate.strongRatio * leak
            // Quantile trackers in dB over frames not judged near-end:
            // leak +0.1/−0.05 dB (67th percentile), erl +0.1/−0.01 dB (91st).
            if !nearEnd || !micTest {
                // leak also when only the 15 dB residual test said "near
                // end" (the mic no louder than the echo), at half the rise:
                // a residual that stays that high is learnt in seconds.
                leak *= ratio > leak ? (nearEnd ? 1.0116 : 1.0233) : 0.98855
                leak = max(1e-8, min(1, leak))
            }
            if !nearEnd {
                erl *= echoRatio > erl ? 1.0233 : 0.99770
                erl = max(1e-6, min(1e3, erl))
            }
            // The gate opens on two near-end frames in a row (or one strong
            // one): each test alone passes a few percent of pure-echo frames
            // by chance, and single-frame coincidences held the gate open
            // for 400 ms each — on a loop with no room (found by the
            // PulseAudio loopback test of rtmix-cli live: host ERLE below
            // 40 dB in 2 of 10 runs) and in rooms alike. In aec-eval:
            // mixed-stream ERLE 40.6 → 74.4 dB (16 kHz), 43.0 → 75.3 dB
            // (48 kHz); double-talk PESQ 2.40 → 2.13 (16 kHz), 2.33 → 2.33
            // (48 kHz): the old gate's chance openings also kept it open
            // during quiet parts of near-end speech. Onset variants (a
            // half-open first frame, a longer hold) did not recover it.
            let confirmed = nearEnd && (nearEndBefore || ratio > ResidualEchoGate.strongRatio * leak)
            nearEndBefore = nearEnd
            if confirmed {
                hold = ResidualEchoGate.holdFrames
                doubleTalk = true
            } else if hold > 0 {
                hold -= 1
            } else {
                open = false
            }
        } else {
            hold = 0
            nearEndBefore = false
        }
        let target: Float = open ? 1 : floorGain
        var g = gain
        let step = target > g ? openStep : closeStep
        for i in 0..<count {
            g += step * (target - g)
            frame[i] *= g
        }
        gain = g
    }
}
