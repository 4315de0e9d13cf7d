import CRTMixSupport

/// The capture path's last echo stage: a broadband residual-echo gate
/// (a "non-linear processor") after speexdsp's canceller and
/// preprocessor. It turns ~35 dB of cancellation into 40–75 dB while only
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
/// - The reference level the microphone is compared with is the larger of
///   this frame's and the previous frame's (then decayed): the reference
///   is fed to the canceller a few ms ahead of its echo, so on a falling
///   or rising edge the echo in this frame belongs to the previous one.
/// - Near-end talk is not cancelled: it lifts the residual 3 dB above
///   `leak` AND the microphone above `erl` (both needed: music onsets the
///   canceller has not learnt yet fool the first, a talker quieter than
///   the echo the second), or lifts the residual 15 dB above `leak` on
///   its own. A linear output at least as loud as the microphone (the
///   canceller added energy: misadapted after a broadband transient it had
///   not learnt, or adapting on a near-end talker) passes the first way
///   only, with the microphone test.
/// - The gate opens on such evidence in 2 frames in a row when one of
///   them also passed the microphone test, else in 3 (residual evidence
///   alone: a canceller missing a transient looks the same for a frame or
///   two), gain 1 within ~2 ms, and holds it open 400 ms after the
///   talker's last frame; otherwise it closes to `floorDb` (−40 dB) over
///   ~30 ms. A silent far end leaves it open.
/// Measured with scripts/aec-eval (pyroomacoustics room, espeak speech +
/// music) and on the PulseAudio loopback of `rtmix-cli live` (a pure
/// delay, 0 dB echo loss): docs/capture.md and docs/live.md. No
/// allocation, no transform: a few operations per sample.
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
    /// Consecutive frames that passed the near-end test, and whether one
    /// of them passed the microphone test too (onset confirmation).
    @usableFromInline var nearEndRun = 0
    @usableFromInline var nearEndRunLouder = false
    /// The previous frame's reference power (the echo may belong to it).
    @usableFromInline var previousReference: Float = 0

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
        reference = max(max(referencePower, previousReference), reference * decay)
        previousReference = referencePower
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
            // A linear output as loud as the microphone means the canceller
            // added energy: misadapted after a transient it had not learnt
            // (on the PulseAudio loop: 10 frames at +3…+10 dB while the mic
            // was quiet), or adapting on a near-end talker (speexdsp has no
            // double-talk detector). Only the second makes the mic louder
            // than the echo explains, so such frames need the mic test.
            let adding = ratio >= 1
            let residualTest = ratio > ResidualEchoGate.marginRatio * leak
            let micTest = echoRatio > erl
            let strong = !adding && ratio > ResidualEchoGate.strongRatio * leak
            let nearEnd = (residualTest && micTest) || strong
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
            // Onset confirmation. Each test alone passes a few percent of
            // pure-echo frames by chance, and a canceller missing a
            // broadband transient (a click, a drum hit, the live check's
            // noise markers) leaves a residual that passes the 15 dB test
            // for one to three frames while the microphone stays within
            // what the echo explains. Each such opening held the gate open
            // 400 ms: on the PulseAudio loopback (no room, 0 dB echo loss)
            // host-measured ERLE medians of 36–66 dB over 20 s runs, single
            // seconds at 15–21 dB. So: 2 frames in a row when one of them
            // had the microphone louder than the echo explains, else 3.
            if nearEnd {
                nearEndRun = min(nearEndRun + 1, 3)
                nearEndRunLouder = nearEndRunLouder || micTest
            } else {
                nearEndRun = 0
                nearEndRunLouder = false
            }
            let confirmed = nearEndRun >= 3 || (nearEndRun >= 2 && nearEndRunLouder)
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
            nearEndRun = 0
            nearEndRunLouder = false
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
