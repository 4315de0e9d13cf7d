import CRTMixSupport

/// The capture path's residual-echo suppressor, per frequency bin. It
/// replaced the broadband gate, which removed whole words of a near-end
/// talker in double talk (issue 16). It runs after speexdsp's canceller and
/// preprocessor (whose own residual-echo suppression stays on: chained, the
/// two measured better than either alone; docs/capture.md).
///
/// Per 10 ms frame (`hop` samples), on a 2·hop sqrt-Hann window zero-padded
/// to a power-of-two transform (weighted overlap-add, hop/2·hop: the
/// output is one frame later than the input):
/// - `E` is the input signal (the preprocessor's output), `Ŷ = mic − E`
///   the linear filter's echo estimate (the caller passes mic = E + Ŷ),
///   `X` the reference fed to the canceller.
/// - Residual echo per bin `R = overdrive · leak · Ŷs`, where `Ŷs` is the
///   echo estimate's power held with a room-like decay (60 dB in 150 ms),
///   and `leak` a low quantile (≈ 17th percentile, +0.02/−0.1 dB per
///   frame) of |E|²/|Ŷ|² over frames with echo: how much of the estimated
///   echo is left. A low quantile rises only slowly while a talker fills
///   the output, so double talk does not teach it that the echo got louder.
/// - Fallback while the linear filter is not trusted in a bin (start,
///   reset, moved reference, divergence, or a bin it has never been shown:
///   a click or noise burst in bands speech and music leave empty):
///   `Rf = pathGain · Xs`, the reference's held power times a learnt
///   echo-path gain (a low quantile of |mic|²/Xs over the frames where the
///   reference stands within 3 dB of Xs), weighted by `1 − trust`;
///   `Xs` is held with a slow room's decay (60 dB in 800 ms), so it
///   covers the echo's reverberation past the linear filter's tail;
///   `trust` grows to 1 over ~1 s of far-end frames in which the filter
///   removes more than 3 dB (broadband), and a bin loses it when its
///   reference jumps 20 dB over its ~2 s average (something new there).
///   After a suspected path change the pipeline also folds the reference
///   already played ahead of the aligned frame into `Xs` (`foldAhead`): an
///   echo path that got shorter brings the echo of reference the
///   canceller has not been fed yet; while it does (`lookingAhead`), the
///   echo-only state takes the echo the reference explains at the
///   fallback's full weight.
///   In a near-end state that began before the filter lost its trust
///   (the talker was there first: a path change or a reset in double
///   talk), the fallback is taken at the path gain's low quantile itself
///   (`talkerFallback`, 0 dB) rather than 10 dB over it, so that the
///   talker's weaker bins pass while the filter earns its trust back; and
///   the new filter's leak is taken as −15 dB rather than 1, so that the
///   talker's next onset in the echo-only state need not stand 25 dB over
///   the new filter's estimate.
/// - Two states. Near end present (talk found by `NearEndDetector` in two
///   consecutive frames, held `nearEndHold` frames): the overdrive above
///   (3 dB), so a talker's bins pass. Echo only (otherwise, far end
///   active): the residual is taken `echoOnlyOverdrive` (25 dB) louder,
///   because the filter's leak varies from frame to frame far above its low
///   quantile while it converges or the path moves, and nothing needs to
///   pass; and at least the echo the reference explains (path gain × held
///   reference), which does not lag a moving path as the linear filter
///   does. AEC3 switches its suppressor tuning the same way (its dominant
///   near-end detector); the per-bin gain still lets a talker's strong
///   bins through in the frames before the switch. The double talk
///   reported (`doubleTalk`) is the rule that decided the state before the
///   detector: the output keeps 6 dB over the near-end residual, within
///   10 dB of the linear echo estimate, and the microphone is 6 dB over
///   what the reference explains (in at least half the power kept). When the delay
///   tracker sees the echo at a new delay (`echoMoved`), a near-end state
///   that began since the move is ended at once: the moved echo held it.
/// - No echo heard (`echoAbsent`, set by the capture path from
///   `EchoAbsence`: seconds of far end in which the linear filter removed
///   nothing, a headset): no fallback and no echo-only state, only the
///   linear filter's residual at the near-end overdrive; the path gain
///   learnt meanwhile is a quantile of the talker's power, not the echo's.
///   When the echo is heard again, `echoReturned` starts over as after a
///   reset, from the path gain kept while it was last heard (`echoHeard`).
/// - A diverged estimate under a loud talker (a quiet loudspeaker:
///   speexdsp's filter adapts on the talker and its estimate stands far
///   over the echo; `estimateDiverged`, acted on in the regime
///   `divergedScore` starts): the capture path pauses speexdsp's
///   residual-echo suppression in the near-end state, and in the bins
///   where the estimate cannot be echo the microphone takes the filter's
///   output's place, against the most echo the reference explains.
/// - A word's tail (`inWordTail`, the 20 ms after the near-end detector
///   last found talk), or an estimate 15 dB over the echo the reference
///   explains in a near-end frame (`estimateImplausible`): the capture
///   path pauses speexdsp's residual-echo suppression, which cut the
///   fading ends of words whole, and a quiet loudspeaker's talker.
/// - The near-end gain's residual is capped at 20 dB over the echo the
///   reference explains where the microphone stands over that
///   (`residualCap`).
/// - The room's reverberation in the echo-only state (`tailSum`,
///   `tailGain`): the reference's power per bin *summed* with the room's
///   decay (60 dB in `referenceDecayMs`), times the median of the
///   microphone over that sum, learnt in the echo-only state's frames. A
///   reverberant tail carries the energy of everything played in the
///   last RT60, which neither the linear filter's 200 ms nor the held
///   (peak) reference explains: after each far-end word it passed 20–30
///   dB over the echo-only state's floor in the classrooms and labs.
///   Only where the reference has fallen 6 dB under its held power (the
///   word is over), not in a bin that rises over its recent level (5.4 dB
///   and more over its ~60 ms average: a talker's onset; a tail only
///   decays), and under 2 kHz (`tailTop`: where the reverberation that
///   passed lay; the bins above it cost what the 1.2× capture budget did
///   not have).
/// - Gain: decision-directed Wiener gain from |E|²/R, smoothed over
///   neighbouring bins, falling at most 10 dB and rising at most 20 dB per
///   frame, floor −45 dB (−70 in the echo-only state, a gain under −45
///   rising as if from it): bins where the talker is above the residual
///   echo pass, bins the echo explains are suppressed.
/// - Comfort noise: a minimum-tracking estimate of the background per bin
///   (on |E|² smoothed over ~60 ms, started from the first frames that are
///   not digital silence) fills suppressed bins (random phase, at the level
///   it was measured at), so the output keeps the room's background where
///   the echo was taken out and nothing sounds gated.
/// No allocation after `init`; per frame one complex FFT (E and Ŷ, two
/// real signals in one transform) and two half-size real ones (`RealFFT`:
/// the reference forward, the output inverse). The per-bin passes run four
/// bins at a time (SIMD4).
struct ResidualEchoSuppressor: ~Copyable {
    let hop: Int
    let size: Int
    let bins: Int
    /// Per-bin arrays' length: `bins` rounded up to a multiple of 4.
    let lanes: Int
    let fft: FFT
    let rfft: RealFFT
    let window: UnsafeMutablePointer<Float>
    let micHistory: UnsafeMutablePointer<Float>
    let linHistory: UnsafeMutablePointer<Float>
    let refHistory: UnsafeMutablePointer<Float>
    /// The complex transform's input (windowed e + i·ŷ, zero-padded: the
    /// tail past 2·hop is never written) and output.
    let zInRe: UnsafeMutablePointer<Float>
    let zInIm: UnsafeMutablePointer<Float>
    let re: UnsafeMutablePointer<Float>
    let im: UnsafeMutablePointer<Float>
    /// The windowed reference, packed for the real transform (zero tail
    /// past hop never written).
    let xInRe: UnsafeMutablePointer<Float>
    let xInIm: UnsafeMutablePointer<Float>
    /// The reference's spectrum.
    let xr: UnsafeMutablePointer<Float>
    let xi: UnsafeMutablePointer<Float>
    /// The output's spectrum, then the output (packed).
    let outRe: UnsafeMutablePointer<Float>
    let outIm: UnsafeMutablePointer<Float>
    /// Per bin, this frame: E (the input's spectrum), |E|², the amplitude
    /// gain and the comfort noise's amplitude.
    let eRe: UnsafeMutablePointer<Float>
    let eIm: UnsafeMutablePointer<Float>
    let powerE: UnsafeMutablePointer<Float>
    let amplitude: UnsafeMutablePointer<Float>
    let comfort: UnsafeMutablePointer<Float>
    let overlap: UnsafeMutablePointer<Float>
    // per bin
    let leak: UnsafeMutablePointer<Float>
    let echoHeld: UnsafeMutablePointer<Float>
    let refHeld: UnsafeMutablePointer<Float>
    let pathGain: UnsafeMutablePointer<Float>
    /// Per bin, the path gain as it was while the echo was last heard
    /// (`echoHeard`; 1 until then): what `echoReturned` goes back to.
    let pathGainHeard: UnsafeMutablePointer<Float>
    /// Per bin, the reference's power summed with the room's decay
    /// (`referenceDecay`): the energy its reverberant tail carries.
    let tailSum: UnsafeMutablePointer<Float>
    /// Per bin, the median of |mic|² over `tailSum`, learnt in the
    /// echo-only state's frames with far end (`tailLearning`); starts at
    /// −30 dB and moves 0.05 dB a frame.
    let tailGain: UnsafeMutablePointer<Float>
    /// Per bin, this frame's tail for the echo-only state (0 where it does
    /// not apply); written only while `tailLearning`.
    let tailEcho: UnsafeMutablePointer<Float>
    let noise: UnsafeMutablePointer<Float>
    /// Per bin, |E|² smoothed over ~60 ms: what `noise` tracks the minimum
    /// of (the raw periodogram's frame-to-frame spread put it 10–24 dB
    /// under the background).
    let smoothE: UnsafeMutablePointer<Float>
    let gain: UnsafeMutablePointer<Float>
    let target: UnsafeMutablePointer<Float>
    let cleanPrevious: UnsafeMutablePointer<Float>
    let phases: UnsafeMutablePointer<Float>  // 256 unit phasors (cos, sin)
    var seed: UInt32 = 0x1234_5678
    /// Per bin, 0 … 1: how far the linear filter's estimate is trusted in
    /// that bin (fallback weight 1 − trust). Per bin because a filter that
    /// has learnt the bands speech and music excite has not learnt those a
    /// rare broadband transient excites (a click, a noise burst): a bin
    /// whose reference jumps 20 dB over its average loses its trust.
    let trust: UnsafeMutablePointer<Float>
    /// What the last frame added to every bin's trust (0 or
    /// 1/`trustFrames`), applied in this frame's bin pass.
    var trustStep: Float = 0
    /// Per bin, the reference's power averaged over ~2 s: a bin whose
    /// reference jumps 20 dB above it carries something new (a click, a
    /// noise burst, a new instrument) that the filter has not learnt.
    let refSlow: UnsafeMutablePointer<Float>
    /// Per bin, this frame's weight of the fallback estimate.
    let fallbackWeight: UnsafeMutablePointer<Float>
    /// Per bin, `trust` and `leak` as they were when the linear filter was
    /// last suspected (`suspectFilter`), while `suspended`.
    let trustAside: UnsafeMutablePointer<Float>
    let leakAside: UnsafeMutablePointer<Float>
    /// `trustAside` and `leakAside` hold what a suspicion put aside.
    private(set) var suspended = false
    /// Per bin, the power of the reference ahead of the frame aligned at
    /// the delay in use (`foldAhead`), held with `aheadDecay`; merged into
    /// the held reference while `lookingAhead`.
    let aheadHeld: UnsafeMutablePointer<Float>
    private(set) var lookingAhead = false
    /// Frames left in which the echo-only state takes the echo the
    /// reference explains at the fallback's full weight after the filter
    /// was found right at a new alignment (`trustFilterAgain(leakAtLeast:
    /// holdFrames:)`): it may have misadapted while the reference was
    /// wrong and re-learns meanwhile.
    private(set) var realignedHold = 0
    /// Per frame, the factor by which `aheadHeld` falls: 60 dB in 4 s, so
    /// that a frame folded up to 300 ms before its echo arrives still
    /// stands within 5 dB of it.
    let aheadDecay: Float
    var frames = 0
    /// Frames since the first one whose microphone was not digital
    /// silence (−1 before it).
    var liveFrames = -1
    /// Last frame: far end active and the output kept clearly more than the
    /// residual echo explains (near-end talk over the echo).
    var doubleTalk = false
    /// Last frame: the reference (held) was active.
    var farEnd = false
    /// Frames with far end so far, up to the detector's `settleFrames`.
    var farFrames = 0
    /// Set by the capture path before each frame: speexdsp's preprocessor
    /// ran without its residual-echo suppression (`EchoCanceller.
    /// pauseResidualSuppression`), so `mic` (its output plus the linear
    /// estimate) is the microphone but for noise suppression. Only then
    /// are a diverged estimate's bins given the microphone (see
    /// `estimateDiverged`); otherwise speexdsp's suppression, which takes
    /// the same estimate as echo, has already cut them, and `mic` holds the
    /// estimate itself. Only this stage's own pause counts (`exchanging`:
    /// within `divergedHold` of a diverged frame): with the 5 s pause after
    /// a moved path with a talker there (`CaptureProcessor.filterLost`)
    /// also counting, a live suspend recording's output changed (one
    /// second 0.1 dB) where nothing had diverged.
    var preprocessorPaused = false
    /// This frame: paused for this stage's own reason, so the bins are
    /// exchanged (`swapDiverged`).
    private var exchanging = false
    /// Last frame: the linear filter's estimate diverged under a talker far
    /// over the echo (a quiet loudspeaker, docs/capture.md "An echo far
    /// under the talker"). Over the detector's bands (0–8 kHz) the estimate
    /// stands `divergedRatio` (20 dB) over the most echo the reference can
    /// explain (`fallbackOverdrive` × path gain × held reference, the
    /// fallback's bound), and the microphone stands `divergedRatio` over
    /// that bound too. speexdsp's filter adapts on the talker in double
    /// talk; with the echo 40 dB down its estimate stood a median 36 dB
    /// over the true echo, 5 dB under the talker, and both suppressors
    /// took it as echo: 2.4–32.8 % of the talker's frames muted. The path
    /// gain is a low quantile, so at the usual levels a frame now and then
    /// passes this test too: only a call that keeps passing it acts on it
    /// (`divergedScore`).
    private(set) var estimateDiverged = false
    /// Frames left in which a near-end state asks for speexdsp's
    /// suppression to pause (`divergedHold` from the last diverged frame
    /// in the regime `divergedScore` starts).
    private(set) var divergedLeft = 0
    /// Last frame: over the detector's bands the estimate stands
    /// `implausibleRatio` (15 dB) over the echo the reference explains
    /// (path gain × held reference), and the microphone too: short of
    /// `estimateDiverged` (30 dB) and of its regime, but no echo either.
    /// With a quiet loudspeaker speexdsp's filter adapts on the talker
    /// from a word's first frames, and speexdsp's residual-echo
    /// suppression, which takes that estimate as echo, took 6–9 dB off a
    /// call's first word while the echo stood 45 dB under it (g 48 kHz
    /// office, echo 45 dB down, traced stage by stage, 2026-11-29). In a
    /// near-end state such a frame asks for the pause
    /// (`wantsPreprocessorPaused`); the bins are not exchanged (that is
    /// the regime's). Quiet rows over 3 % muted 4 / 6 → 1 / 3 of 12; at
    /// the usual levels double-talk PESQ moved by 0.01 a row at most (at
    /// 10 dB by up to 0.07: the estimate passes that test there too;
    /// docs/capture.md, "An estimate 15 dB over the path's echo").
    private(set) var estimateImplausible = false
    /// `estimateImplausible`'s ratio (power): 15 dB.
    let implausibleRatio: Float
    /// The capture path pauses speexdsp's residual-echo suppression while
    /// this holds: a near-end state within `divergedHold` frames of a
    /// diverged estimate (so that the next frames' `mic` is the
    /// microphone), with an implausible estimate (`estimateImplausible`),
    /// in a word's tail (`inWordTail`), or in a talk frame while the
    /// talker stands far over the echo (`talkerFarOverEcho`).
    var wantsPreprocessorPaused: Bool {
        @_noLocks get {
            nearEndFrames > 0 && (divergedLeft > 0 || estimateImplausible || inWordTail || (talkerFarOverEcho && doubleTalk))
        }
    }
    /// Set by the capture path: the talker stands 20 dB over the echo at
    /// the microphone (`TalkerOverEcho`, a quiet loudspeaker).
    var talkerFarOverEcho = false
    /// The `wordTailFrames` frames after the near-end detector last found
    /// talk. A word fades under the echo speexdsp takes to be left before
    /// the detector's hold ends; speexdsp's residual-echo suppression,
    /// which takes its filter's estimate times one leak for all bands as
    /// echo, cut those tails whole: in two of h's worst recorded-speech
    /// runs 22 of the 28 and of the 34 muted frames were its alone, the
    /// detector in its hold or its echo-only state (traced stage by stage,
    /// 2026-11-29). Paused there, fewer of the talker's runs stay over 3 %
    /// muted (h at 0, −10 and −20 dB microphone gain: 30 → 14 of 144 with
    /// 20 ms, 10 with 50 ms), but the echo the pause lets through at the
    /// ends of words lowers AECMOS's double-talk echo score (f's and g's
    /// mean 4.456 → 4.400 with 20 ms, 4.362 with 50 ms; rows under
    /// WebRTC AEC3's 2 → 4, 9 of 12): 20 ms. Not in the talk frames
    /// themselves (there speexdsp takes the residual under a loud talker,
    /// which double-talk PESQ counts: paused there too, f's and g's mean
    /// fell 0.07), nor through the whole 300 ms hold (the echo-only
    /// seconds after a talker lost up to 6.6 dB of their 10th-percentile
    /// ERLE).
    var inWordTail: Bool { @_noLocks get { sinceNearEnd > 0 && sinceNearEnd <= wordTailFrames } }
    /// `inWordTail`'s length: 20 ms (0: never).
    let wordTailFrames: Int

    /// The most residual echo the near-end gain assumes in a bin where
    /// the microphone itself stands over it, as a multiple of the echo the
    /// reference explains there (path gain × held reference; power; 20 dB
    /// by default). With a quiet loudspeaker (echo 40–45 dB under the
    /// reference) speexdsp's filter adapts on the talker, and its estimate
    /// times the learnt leak stood far over any echo the reference could
    /// carry while the talker spoke: this suppressor cut the talker, the
    /// preprocessor hardly (traced stage by stage, 2026-11-29). Only where
    /// the microphone too stands over the cap: in a talker's pauses (the
    /// near-end hold) the microphone holds no more than the echo, and the
    /// estimate's error in the filter's output is still taken out whole
    /// (`CaptureStageTests.testAnEstimateFarOverThePathsEchoDoesNotCutTheTalker`).
    /// Only the gain sees the cap: the near-end detector's sums and the
    /// echo-only state keep the estimate whole (docs/capture.md, "The
    /// near-end residual capped").
    let residualCap: Float
    /// Per frame, the factor by which the held echo estimate falls
    /// (power): 60 dB in 150 ms.
    let decay: Float
    /// Per frame, the factor by which the held reference falls: 60 dB in
    /// `referenceDecayMs`.
    let referenceDecay: Float
    /// The echo-only state's residual is at least `tailWeight` ×
    /// `tailGain` × `tailSum` (0: not at all), except in bins whose output
    /// stands `tailOnset` over its ~60 ms average.
    let tailWeight: Float
    let tailOnset: Float
    /// The tail is estimated in the bins under this one (2 kHz, a
    /// multiple of 4): where the speech's reverberation that passed lies.
    let tailTop: Int
    /// This frame's bins learn `tailGain`: the frame before ended in the
    /// echo-only state.
    var tailLearning = false
    let ddWeight: Float
    let leakUp: Float
    let leakDown: Float
    let floorGain: Float
    /// The floor in the echo-only state (power gain), under `floorGain`:
    /// with the far end alone nothing needs to pass, and at −45 dB the
    /// residual echo stood at the floor, 6 dB over the noise-suppressed
    /// background (AECMOS far-end single-talk echo under AEC3's in 5 of
    /// 12 recorded-speech rows; docs/capture.md). A gain under `floorGain`
    /// rises as if from it, so a talker's onset takes no longer to pass.
    let echoOnlyFloorGain: Float
    let overdrive: Float
    /// Overdrive while no near-end talk has been seen for `nearEndHold`
    /// frames (echo-only state): the linear filter's leak varies from frame
    /// to frame far above its low quantile while it converges, so with the
    /// far end alone the residual is taken as that much louder.
    let echoOnlyOverdrive: Float
    /// In the echo-only state the residual is also at least this times
    /// the echo the reference explains (path gain × held reference): an
    /// estimate that does not depend on the linear filter, which lags
    /// while the path moves. 0.5 (1 until the path gain was learnt only
    /// from the reference's fresh frames, which made it larger: at 1,
    /// CaptureTests' double-talk talkers lost 5–6 of 105 frames).
    let echoOnlyPathWeight: Float
    /// Near-end talk needs the microphone this much (power ratio) above
    /// the echo the reference explains, in the bins that carry it.
    let talkMicMargin: Float
    let nearEndHold: Int
    /// Frames since near-end talk was last detected (saturates).
    var sinceNearEnd = Int.max / 2
    /// Frames the near-end state has held so far (0 in the echo-only state).
    var nearEndFrames = 0
    /// A bin's reference this much (power ratio) over its ~2 s average
    /// makes the bin untrusted (0: never).
    let novelty: Float
    /// The fallback's gain is a low quantile of the echo path's: 10 dB
    /// over it (used only while the linear filter is not trusted).
    let fallbackOverdrive: Float
    /// `estimateDiverged`'s two ratios (power, 20 dB), and in a frame with
    /// the preprocessor paused, a bin's: the estimate this far over the
    /// fallback's bound is no echo.
    let divergedRatio: Float = 100
    /// In a frame with the preprocessor paused, a bin's estimate this far
    /// over the microphone (power, 6 dB) is no echo either. At the
    /// microphone's own level (0 dB) it took up to 0.24 PESQ off talkers
    /// at the usual level in the calls that reach the regime below.
    let divergedOverMicrophone: Float = 4
    /// Diverged frames, each adding 1, the score falling 3 % a frame
    /// otherwise; `divergedRegimeScore` (25) or more starts the regime in
    /// which a diverged frame acts. Over the 204 recorded-speech scenes
    /// at the usual echo, at −10 and −20 dB microphone gain (h, f, g) the
    /// score peaked at 0–38 (25 or more in 15 of 180); with the echo 40
    /// and 45 dB down at 52–90 (traced with every diverged frame acting).
    /// Acting on every diverged frame took 0.19 off f's and g's mean
    /// double-talk PESQ at the usual level (1.86 → 1.67); a regime at 35
    /// or 45 kept less of the quiet loudspeaker's talker (worst rows 10.0
    /// / 20.3 % muted against 8.1 %).
    private(set) var divergedScore: Float = 0
    let divergedRegimeScore: Float = 25
    /// Frames the regime lasts after the score was last at
    /// `divergedRegimeScore` (10 s).
    private var regimeLeft = 0
    let regimeFrames: Int
    /// Frames a diverged estimate keeps a near-end state asking for the
    /// pause (1 s): the filter stays diverged past the frames that show
    /// it. Measured on f and g (docs/capture.md): 2 s and 3 s kept the
    /// quiet loudspeaker's talker a little better but took 1.7 dB off an
    /// ERLE median at the usual level; 0.1 s and 0.3 s (with a looser
    /// rule) left 7–8 of the 12 quiet-loudspeaker rows over 3 % muted
    /// (both measured before the regime).
    let divergedHold: Int
    /// The fallback's overdrive in a near-end state that began at least
    /// `talkerLead` frames (0.5 s) before the filter was last distrusted (a
    /// talker who was there before the filter lost its trust: a moved echo
    /// path in double talk, a reset): 0 dB over the path gain's low
    /// quantile. A state that began since may be the moved echo itself,
    /// read as talk before the filter check or the delay tracker saw the
    /// move, and a short one before it may be the echo misread as talk
    /// (CaptureStageTests' bursts opened one 16 frames before their echo
    /// moved: with a 100 ms lead, 28 dB of it removed instead of 41): both
    /// keep `fallbackOverdrive`.
    let talkerFallback: Float
    static var talkerLead: Int { @_noLocks get { 50 } }
    /// The leak assumed after a `distrust` that falls in a talker's
    /// near-end state (power; −15 dB by default).
    let leakAfterDistrust: Float
    /// Frames since the filter was last distrusted or suspected.
    var sinceDistrust = Int.max / 2
    /// The near-end state began at least `talkerLead` frames before the
    /// filter was last distrusted or suspected.
    var talkerThereFirst: Bool {
        @_noLocks get { nearEndFrames >= sinceDistrust + ResidualEchoSuppressor.talkerLead }
    }
    /// This frame's fallback overdrive in the bin pass.
    var binFallback: Float = 10
    let fallLimit: Float
    let riseLimit: Float
    let activity: Float
    /// Frames for `trust` to go from 0 to 1 once the filter removes echo.
    let trustFrames: Float
    /// Noise synthesised with random phases spreads over the whole
    /// transform (`size` samples) while the analysis saw `hop` samples'
    /// worth of window energy: its power must be scaled by size/hop to
    /// come out at the level it was measured at (it came out 3–5 dB low).
    let comfortScale: Float

    let allocatedBytes: Int
    /// Per frame, the near-end detector's 16 bands: output, held echo
    /// estimate, echo the reference explains, each band's four partial
    /// sums (lanes) not yet added (192 values).
    let bandSums: UnsafeMutablePointer<Float>
    /// Decides near-end talk over the echo (the state).
    var detector: NearEndDetector
    /// No echo heard for seconds of far end (`EchoAbsence`: a headset):
    /// the estimates from the reference are dropped. Set by the caller
    /// before `process`.
    var echoAbsent = false

    init?(frameSize: Int, sampleRate: Int, floorDb: Float = -45, echoOnlyFloorDb: Float = -70, overdriveDb: Float = 3,
          echoOnlyOverdriveDb: Float = 25, nearEndHoldMs: Int = 300,
          noveltyDb: Float = 20, echoOnlyPathWeight: Float = 0.5, talkMicMargin: Float = 4,
          referenceDecayMs: Int = 800, talkerFallbackDb: Float = 0, leakAfterDistrustDb: Float = -15,
          wordTailMs: Int = 20, residualCapDb: Float = 20, implausibleDb: Float = 15,
          reverbTail: Bool = true) {
        var p = 8
        while p < 2 * frameSize { p <<= 1 }
        let bins = p / 2 + 1
        // Per-bin arrays run to a multiple of 4 (SIMD4); the lanes past
        // `bins` see zero spectra and stay inert.
        let lanes = p / 2 + 4
        var batch = AllocationBatch()
        guard let fft = FFT(size: p),
              let rfft = RealFFT(size: p),
              let w = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let mh = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let lh = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let rh = batch.allocate(repeating: Float(0), count: 2 * frameSize),
              let zir = batch.allocate(repeating: Float(0), count: p),
              let zii = batch.allocate(repeating: Float(0), count: p),
              let xir = batch.allocate(repeating: Float(0), count: p / 2),
              let xii = batch.allocate(repeating: Float(0), count: p / 2),
              let re = batch.allocate(repeating: Float(0), count: p + 16),
              let im = batch.allocate(repeating: Float(0), count: p + 16),
              let xr = batch.allocate(repeating: Float(0), count: lanes),
              let xi = batch.allocate(repeating: Float(0), count: lanes),
              let yr = batch.allocate(repeating: Float(0), count: lanes),
              let yi = batch.allocate(repeating: Float(0), count: lanes),
              let er = batch.allocate(repeating: Float(0), count: lanes),
              let ei = batch.allocate(repeating: Float(0), count: lanes),
              let pe = batch.allocate(repeating: Float(0), count: lanes),
              let am = batch.allocate(repeating: Float(0), count: lanes),
              let cn = batch.allocate(repeating: Float(0), count: lanes),
              let ov = batch.allocate(repeating: Float(0), count: frameSize),
              let leak = batch.allocate(repeating: Float(1), count: lanes),
              let eh = batch.allocate(repeating: Float(0), count: lanes),
              let xh = batch.allocate(repeating: Float(0), count: lanes),
              let pg = batch.allocate(repeating: Float(1), count: lanes),
              let nz = batch.allocate(repeating: Float(0), count: lanes),
              let se = batch.allocate(repeating: Float(0), count: lanes),
              let g = batch.allocate(repeating: Float(1), count: lanes),
              let t = batch.allocate(repeating: Float(1), count: lanes + 2),
              let cp = batch.allocate(repeating: Float(0), count: lanes),
              let ph = batch.allocate(repeating: Float(0), count: 512),
              let tr = batch.allocate(repeating: Float(0), count: lanes),
              let rs = batch.allocate(repeating: Float(0), count: lanes),
              let fw = batch.allocate(repeating: Float(1), count: lanes),
              let ta = batch.allocate(repeating: Float(0), count: lanes),
              let la = batch.allocate(repeating: Float(1), count: lanes),
              let bs = batch.allocate(repeating: Float(0), count: 192),
              let ah = batch.allocate(repeating: Float(0), count: lanes),
              let ph2 = batch.allocate(repeating: Float(1), count: lanes),
              let ts = batch.allocate(repeating: Float(0), count: lanes),
              let tgn = batch.allocate(repeating: Float(1e-3), count: lanes),
              let te = batch.allocate(repeating: Float(0), count: lanes)
        else { return nil }
        hop = frameSize
        size = p
        detector = NearEndDetector(bins: p / 2, binHz: Float(sampleRate) / Float(p))
        self.bins = bins
        self.lanes = lanes
        allocatedBytes = batch.commit() + fft.allocatedBytes + rfft.allocatedBytes
        self.fft = consume fft
        self.rfft = consume rfft
        window = w
        micHistory = mh
        linHistory = lh
        refHistory = rh
        zInRe = zir
        zInIm = zii
        xInRe = xir
        xInIm = xii
        self.re = re
        self.im = im
        self.xr = xr
        self.xi = xi
        outRe = yr
        outIm = yi
        eRe = er
        eIm = ei
        powerE = pe
        amplitude = am
        comfort = cn
        overlap = ov
        self.leak = leak
        echoHeld = eh
        refHeld = xh
        pathGain = pg
        noise = nz
        smoothE = se
        gain = g
        target = t
        cleanPrevious = cp
        phases = ph
        trust = tr
        refSlow = rs
        fallbackWeight = fw
        trustAside = ta
        leakAside = la
        bandSums = bs
        aheadHeld = ah
        pathGainHeard = ph2
        tailSum = ts
        tailGain = tgn
        tailEcho = te
        let n2 = 2 * frameSize
        for i in 0..<n2 {
            // periodic sqrt-Hann: w²(i) + w²(i + hop) = 1
            let c = rtmix_support_cos(2 * Double.pi * Double(i) / Double(n2))
            w[i] = Float((0.5 - 0.5 * c).squareRoot())
        }
        for i in 0..<256 {
            let a = 2 * Double.pi * (Double(i) + 0.5) / 256
            ph[2 * i] = Float(rtmix_support_cos(a))
            ph[2 * i + 1] = Float(rtmix_support_sin(a))
        }
        // Echo held with a room's decay (60 dB in 150 ms).
        decay = rtmix_support_exp_f(-6 * 2.302585 * Float(frameSize) / (0.15 * Float(sampleRate)))
        // The reference held far longer: 60 dB in 800 ms (150 ms, as the
        // echo, until 2026-11-26). Its echo goes on for the room's
        // reverberation time after a far-end word (RT60 0.3-0.9 s in
        // classrooms and halls), past the linear filter's 200 ms. With a
        // short hold the microphone's reverberant tail stood 6 dB above the
        // echo the reference explained (path gain × held reference), read
        // as near-end talk and opened the near-end state for 300 ms of echo;
        // the path gain, learnt against a reference that fell faster than
        // its echo, was also lower than the echo after each word. Measured
        // on recorded speech (docs/capture.md): holding the echo estimate
        // that long too removed still more echo, but cut a talker on
        // held-out rooms (up to 3.1 % of its frames); the reference alone
        // did not (at most 2.6 %, as before).
        referenceDecay = rtmix_support_exp_f(-6 * 2.302585 * Float(frameSize) * 1000
                                             / (Float(max(referenceDecayMs, 1)) * Float(sampleRate)))
        tailWeight = reverbTail ? 1 : 0
        tailTop = min(lanes, (Int(2000 * Float(p) / Float(sampleRate)) + 3) & ~3)
        // A smoothed output (0.3 of the frame) 2× its previous value: the
        // frame stands 5.4 dB or more over that.
        tailOnset = 2
        floorGain = rtmix_support_db_to_linear(floorDb) * rtmix_support_db_to_linear(floorDb)
        echoOnlyFloorGain = rtmix_support_db_to_linear(echoOnlyFloorDb) * rtmix_support_db_to_linear(echoOnlyFloorDb)
        overdrive = rtmix_support_db_to_linear(overdriveDb) * rtmix_support_db_to_linear(overdriveDb)
        echoOnlyOverdrive = rtmix_support_db_to_linear(echoOnlyOverdriveDb) * rtmix_support_db_to_linear(echoOnlyOverdriveDb)
        self.echoOnlyPathWeight = echoOnlyPathWeight
        self.talkMicMargin = talkMicMargin
        novelty = noveltyDb > 0 ? rtmix_support_db_to_linear(noveltyDb) * rtmix_support_db_to_linear(noveltyDb) : Float.infinity
        nearEndHold = max(1, nearEndHoldMs * sampleRate / (1000 * frameSize))
        wordTailFrames = wordTailMs > 0 ? max(1, wordTailMs * sampleRate / (1000 * frameSize)) : 0
        residualCap = rtmix_support_db_to_linear(residualCapDb) * rtmix_support_db_to_linear(residualCapDb)
        implausibleRatio = rtmix_support_db_to_linear(implausibleDb) * rtmix_support_db_to_linear(implausibleDb)
        ddWeight = 0.9
        fallbackOverdrive = 10
        divergedHold = max(1, sampleRate / frameSize)
        regimeFrames = 10 * divergedHold
        talkerFallback = rtmix_support_db_to_linear(talkerFallbackDb) * rtmix_support_db_to_linear(talkerFallbackDb)
        leakAfterDistrust = rtmix_support_db_to_linear(leakAfterDistrustDb) * rtmix_support_db_to_linear(leakAfterDistrustDb)
        leakUp = 1.0046     // +0.02 dB
        leakDown = 0.9772   // −0.1 dB
        fallLimit = 0.1   // −10 dB per frame (power)
        riseLimit = 100   // +20 dB per frame
        // A bin's echo estimate counts when above −90 dBFS-equivalent white
        // noise (E|X[k]|² = σ²·Σw² = σ²·hop).
        activity = Float(frameSize) * 1e-9
        trustFrames = 100
        aheadDecay = rtmix_support_exp_f(-6 * 2.302585 * Float(frameSize) / (4 * Float(sampleRate)))
        comfortScale = Float(p) / Float(frameSize)
    }

    deinit {
        Allocation.free(window)
        Allocation.free(micHistory)
        Allocation.free(linHistory)
        Allocation.free(refHistory)
        Allocation.free(zInRe)
        Allocation.free(zInIm)
        Allocation.free(xInRe)
        Allocation.free(xInIm)
        Allocation.free(re)
        Allocation.free(im)
        Allocation.free(xr)
        Allocation.free(xi)
        Allocation.free(outRe)
        Allocation.free(outIm)
        Allocation.free(eRe)
        Allocation.free(eIm)
        Allocation.free(powerE)
        Allocation.free(amplitude)
        Allocation.free(comfort)
        Allocation.free(overlap)
        Allocation.free(leak)
        Allocation.free(echoHeld)
        Allocation.free(refHeld)
        Allocation.free(tailSum)
        Allocation.free(tailGain)
        Allocation.free(tailEcho)
        Allocation.free(pathGain)
        Allocation.free(pathGainHeard)
        Allocation.free(noise)
        Allocation.free(smoothE)
        Allocation.free(gain)
        Allocation.free(target)
        Allocation.free(cleanPrevious)
        Allocation.free(phases)
        Allocation.free(trust)
        Allocation.free(refSlow)
        Allocation.free(fallbackWeight)
        Allocation.free(trustAside)
        Allocation.free(leakAside)
        Allocation.free(bandSums)
        Allocation.free(aheadHeld)
    }

    /// The linear filter was reset or its reference moved: rely on the
    /// fallback estimate until it has converged again.
    @_noLocks
    mutating func distrust() {
        sinceDistrust = 0
        for k in 0..<lanes { trust[k] = 0 }
        trustStep = 0
        // What the filter used to leave says nothing about the new one:
        // assume it leaves all of its estimate until learnt again; with a
        // talker there (a near-end state of `talkerLead` frames), a good
        // share of it (`leakAfterDistrust`, −15 dB). The echo-only state
        // takes the residual 25 dB over the leak's estimate: at a leak of
        // 1 the talker's next onset, in the seconds after a path change
        // in double talk, had to stand 25 dB over the new filter's
        // estimate to pass (cut by 28–40 dB for 80 ms). After any distrust
        // (−15 dB everywhere) the echo of re-converging filters leaked: on
        // the recorded rooms far-end single-talk AECMOS fell by up to 1.2
        // in the big rooms and live-loopback replays by up to 10 dB
        // (docs/capture.md).
        let assumed: Float = talkerThereFirst ? leakAfterDistrust : 1
        for k in 0..<lanes { leak[k] = assumed }
        suspended = false
    }

    /// The echo was absent (`EchoAbsence`) and is heard again (a headset
    /// taken off, a loudspeaker unmuted): the path gain learnt without it
    /// (a low quantile of the talker's and the room noise's power over the
    /// reference) goes back to what it was while the echo was last heard
    /// (`echoHeard`; 0 dB if never), and the filter is distrusted as after
    /// a reset, so that the fallback takes the echo until the filter earns
    /// trust again. The path gain falls 10 dB a second but rises 2: kept,
    /// it held `CaptureTests`' echo that appears after 8 s at 22 dB ERLE
    /// where the same echo from the start is taken 68 dB down (63 dB with
    /// this), and an echo back after 6 s of silence at 15–42 dB (50–69).
    /// Taken back to 0 dB instead of the gain heard, a quiet
    /// loudspeaker's echo (45 dB down, 3 dB over the room's noise, taken
    /// as absent for 0.6–0.8 s in double talk) cut the talker it returned
    /// under by up to 11 points more of its frames: in double talk the
    /// path gain learns the talker's power, not the echo's.
    @_noLocks
    mutating func echoReturned() {
        for k in 0..<lanes { pathGain[k] = pathGainHeard[k] }
        distrust()
    }

    /// The echo was heard until a moment ago (`EchoAbsence`: the first
    /// frames of a stretch without it): keep the path gain as it is, for
    /// `echoReturned`.
    @_noLocks
    func echoHeard() {
        for k in 0..<lanes { pathGainHeard[k] = pathGain[k] }
    }

    /// The linear filter's estimate looks like an echo path that has moved
    /// (`EchoFilterCheck`): rely on the fallback as after `distrust`, its
    /// estimate taken as left whole, but keep the trust and leak learnt so
    /// far aside, for `trustFilterAgain`.
    @_noLocks
    mutating func suspectFilter() {
        sinceDistrust = 0
        if !suspended {
            for k in 0..<lanes {
                trustAside[k] = trust[k]
                leakAside[k] = leak[k]
            }
            suspended = true
        }
        for k in 0..<lanes {
            trust[k] = 0
            leak[k] = max(leak[k], 1)
        }
        trustStep = 0
    }

    /// The suspicion was wrong or the filter has re-learnt the echo where
    /// it was: back to what it had earned (or better, if earned since),
    /// the leak taken at `floor` at least (power; 0: as it was).
    @_noLocks
    mutating func trustFilterAgain(leakAtLeast floor: Float = 0, holdFrames: Int = 0) {
        guard suspended else { return }
        realignedHold = holdFrames
        for k in 0..<lanes {
            trust[k] = max(trust[k], trustAside[k])
            leak[k] = min(leak[k], max(leakAside[k], floor))
        }
        suspended = false
    }

    /// The echo may now come from reference not yet aligned (an echo path
    /// that got shorter: the echo arrives before the reference the
    /// canceller is fed): fold the power of one window of it (`2·hop`
    /// samples, the reference channels' mean) into `aheadHeld`, which the
    /// fallback's held reference takes in from the next `process` on.
    /// One real transform; call before `process`.
    @_noLocks
    mutating func foldAhead(_ samples: UnsafePointer<Float>) {
        windowReference(samples)
        rfft.forward(from: xInRe, xInIm, to: xr, xi)
        var k = 0
        while k < lanes {
            let r = (xr + k).loadFloat4(), i = (xi + k).loadFloat4()
            (aheadHeld + k).storeFloat4(ResidualEchoSuppressor.vmax((aheadHeld + k).loadFloat4(), r * r + i * i))
            k &+= 4
        }
        lookingAhead = true
    }

    /// `2·hop` reference samples windowed and packed (even, odd) for the
    /// half-size real transform, into `xInRe` / `xInIm`.
    @_noLocks @inline(__always)
    func windowReference(_ samples: UnsafePointer<Float>) {
        typealias V = SIMD4<Float>
        let n = hop
        var m = 0
        while m &+ 4 <= n {
            let j = 2 &* m, j4 = j &+ 4
            let a: V = (window + j).loadFloat4() * (samples + j).loadFloat4()
            let b: V = (window + j4).loadFloat4() * (samples + j4).loadFloat4()
            (xInRe + m).storeFloat4(V(a[0], a[2], b[0], b[2]))
            (xInIm + m).storeFloat4(V(a[1], a[3], b[1], b[3]))
            m &+= 4
        }
        while m < n {
            xInRe[m] = window[2 &* m] * samples[2 &* m]
            xInIm[m] = window[2 &* m &+ 1] * samples[2 &* m &+ 1]
            m &+= 1
        }
    }

    /// The delay tracker moved the reference (it is aligned with the echo
    /// again) or the look-ahead ran its course: the held reference no
    /// longer takes in what lies ahead.
    @_noLocks
    mutating func stopLookingAhead() {
        guard lookingAhead else { return }
        for k in 0..<lanes { aheadHeld[k] = 0 }
        lookingAhead = false
    }

    /// A suspicion lapsed: what was put aside is no longer the filter's.
    @_noLocks
    mutating func forgetSuspicion() { suspended = false }

    /// The echo path moved: the delay tracker saw the echo at a new delay
    /// in a stretch of `frames` frames while the linear filter removed
    /// almost nothing. Suspect the filter (what it had earned put aside:
    /// the reference is about to move under it, and the filter check
    /// judges it then); and if the near-end state began
    /// within that stretch, what holds it is the moved echo (it stands over
    /// what the misaligned reference explains), not a talker: take the
    /// echo-only state at once instead of after the hold. A near-end state
    /// that began before is left alone (a talker was there before the path
    /// moved).
    @_noLocks
    mutating func echoMoved(within frames: Int) {
        suspectFilter()
        guard nearEndFrames <= frames else { return }
        detector.run = 0
        sinceNearEnd = max(sinceNearEnd, nearEndHold)
        nearEndFrames = 0
    }

    /// Sums over the bins of one frame, four lanes at a time.
    struct BinSums {
        var e: SIMD4<Float>, y: SIMD4<Float>, r: SIMD4<Float>, kept: SIMD4<Float>, talk: SIMD4<Float>
        /// The held reference's largest power per lane.
        var xMax: SIMD4<Float>
        /// The held reference's power summed (`xBands`: up to the last
        /// detector band's end).
        var x: SIMD4<Float>, xBands: SIMD4<Float>
        /// The current band's output, held echo estimate and echo the
        /// reference explains (the near-end detector's bands).
        var bandE: SIMD4<Float>, bandH: SIMD4<Float>, bandP: SIMD4<Float>
        /// The microphone's power summed.
        var mic: SIMD4<Float>
        @_noLocks @inline(__always)
        init() {
            let zero = SIMD4<Float>(0, 0, 0, 0)
            e = zero; y = zero; r = zero; kept = zero; talk = zero; xMax = zero; x = zero; xBands = zero
            bandE = zero; bandH = zero; bandP = zero; mic = zero
        }
    }

    /// `tailGain`'s steps: ±0.05 dB (power), the same up and down (a median).
    static var tailUp: Float { @_noLocks get { 1.011579 } }
    static var tailDown: Float { @_noLocks get { 0.988553 } }

    /// x > y ? x : y per lane (Swift's max for the values seen here).
    @_noLocks @inline(__always)
    static func vmax(_ x: SIMD4<Float>, _ y: SIMD4<Float>) -> SIMD4<Float> { y.replacing(with: x, where: x .> y) }

    /// x < y ? x : y per lane.
    @_noLocks @inline(__always)
    static func vmin(_ x: SIMD4<Float>, _ y: SIMD4<Float>) -> SIMD4<Float> { y.replacing(with: x, where: x .< y) }

    /// Lanes 3, 2, 1, 0 of the four floats from `p`.
    @_noLocks @inline(__always)
    static func reversed(_ p: UnsafeMutablePointer<Float>) -> SIMD4<Float> {
        let v = p.loadFloat4()
        return SIMD4(v[3], v[2], v[1], v[0])
    }

    /// One frame: `mic` (hop samples, what the canceller got), `linear`
    /// (the canceller's output, replaced by the suppressed output of the
    /// previous frame's window: one frame of latency), `reference`
    /// (`stride` interleaved channels, averaged).
    @_noLocks
    mutating func process(mic: UnsafePointer<Float>, linear: UnsafeMutablePointer<Float>,
                          reference: UnsafePointer<Float>, stride: Int) {
        typealias V = SIMD4<Float>
        let n = hop, n2 = 2 * hop, p = size, half = p / 2
        // The last two frames of each signal.
        var i = 0
        while i &+ 4 <= n {
            (micHistory + i).storeFloat4((micHistory + n + i).loadFloat4())
            (linHistory + i).storeFloat4((linHistory + n + i).loadFloat4())
            (refHistory + i).storeFloat4((refHistory + n + i).loadFloat4())
            (micHistory + n + i).storeFloat4((mic + i).loadFloat4())
            (linHistory + n + i).storeFloat4((linear + i).loadFloat4())
            i &+= 4
        }
        while i < n {
            micHistory[i] = micHistory[i &+ n]
            linHistory[i] = linHistory[i &+ n]
            refHistory[i] = refHistory[i &+ n]
            micHistory[i &+ n] = mic[i]
            linHistory[i &+ n] = linear[i]
            i &+= 1
        }
        if liveFrames < 0 {
            var any = false
            for j in 0..<n where mic[j] != 0 { any = true }
            if any { liveFrames = 0 }
        }
        let newRef = refHistory + n
        if stride == 1 {
            for i in 0..<n { newRef[i] = reference[i] }
        } else if stride == 2 {
            for i in 0..<n { newRef[i] = (reference[2 &* i] + reference[2 &* i &+ 1]) * 0.5 }
        } else {
            for i in 0..<n {
                var r: Float = 0
                for c in 0..<stride { r += reference[i * stride + c] }
                newRef[i] = r / Float(stride)
            }
        }
        // One complex transform for two real signals: z = e + i·ŷ; the
        // reference, real, packed for the half-size real transform.
        i = 0
        while i &+ 4 <= n2 {
            let w = (window + i).loadFloat4(), e = (linHistory + i).loadFloat4()
            (zInRe + i).storeFloat4(w * e)
            (zInIm + i).storeFloat4(w * ((micHistory + i).loadFloat4() - e))
            i &+= 4
        }
        while i < n2 {
            let w = window[i], e = linHistory[i]
            zInRe[i] = w * e
            zInIm[i] = w * (micHistory[i] - e)
            i &+= 1
        }
        windowReference(refHistory)
        fft.transformForward(from: zInRe, zInIm, to: re, im)
        sinceDistrust = min(sinceDistrust + 1, Int.max / 2)
        if realignedHold > 0 { realignedHold -= 1 }
        binFallback = echoAbsent ? 0 : talkerThereFirst ? talkerFallback : fallbackOverdrive
        rfft.forward(from: xInRe, xInIm, to: xr, xi)
        if lookingAhead {
            var k = 0
            let d = V(repeating: aheadDecay)
            while k < lanes {
                let a = (aheadHeld + k).loadFloat4()
                (refHeld + k).storeFloat4(ResidualEchoSuppressor.vmax((refHeld + k).loadFloat4(), a))
                (aheadHeld + k).storeFloat4(a * d)
                k &+= 4
            }
        }
        // Bin k pairs with p − k (bin 0 with itself).
        re[p] = re[0]
        im[p] = im[0]

        exchanging = preprocessorPaused && divergedLeft > 0
        var sums = BinSums()
        // The echo estimate's, the microphone's and the echo the reference
        // explains up to the last detector band's end (`estimateDiverged`).
        var yBands = V(0, 0, 0, 0), micBands = V(0, 0, 0, 0), pathBands = V(0, 0, 0, 0)
        var k = 0
        // Band by band (the near-end detector's 16 bands, then the rest).
        var band = 0
        while k < half {
            let stop = band < 16 ? detector.stop(band) : half
            while k < stop {
                learnBins(k, (re + k).loadFloat4(), (im + k).loadFloat4(),
                          ResidualEchoSuppressor.reversed(re + (p &- k &- 3)),
                          ResidualEchoSuppressor.reversed(im + (p &- k &- 3)), &sums)
                k &+= 4
            }
            if band < 16 {
                (bandSums + (4 &* band)).storeFloat4(sums.bandE)
                (bandSums + (64 &+ 4 &* band)).storeFloat4(sums.bandH)
                (bandSums + (128 &+ 4 &* band)).storeFloat4(sums.bandP)
                pathBands += sums.bandP
                sums.bandE = V(0, 0, 0, 0); sums.bandH = sums.bandE; sums.bandP = sums.bandE
                sums.xBands = sums.x
                yBands = sums.y
                micBands = sums.mic
                band &+= 1
            }
        }
        // The last bin (p/2) alone: the other lanes see zero spectra.
        let only = V(1, 0, 0, 0)
        learnBins(half, only * (re + half).loadFloat4(), only * (im + half).loadFloat4(),
                  only * ResidualEchoSuppressor.reversed(re + (half &- 3)),
                  only * ResidualEchoSuppressor.reversed(im + (half &- 3)), &sums)
        let xm = sums.xMax
        let anyFar = max(max(xm[0], xm[1]), max(xm[2], xm[3])) > activity
        let sumE = sums.e.sum(), sumY = sums.y.sum(), sumR = sums.r.sum()
        let sumKept = sums.kept.sum(), sumTalk = sums.talk.sum()
        let boundLow = divergedRatio * fallbackOverdrive * pathBands.sum()
        estimateDiverged = yBands.sum() > boundLow && micBands.sum() > boundLow
        let boundImplausible = implausibleRatio * pathBands.sum()
        estimateImplausible = yBands.sum() > boundImplausible && micBands.sum() > boundImplausible
        divergedScore = estimateDiverged ? divergedScore + 1 : divergedScore * 0.97
        if divergedScore >= divergedRegimeScore {
            regimeLeft = regimeFrames
        } else if regimeLeft > 0 {
            regimeLeft -= 1
        }
        farEnd = anyFar
        if anyFar && farFrames < detector.settleFrames { farFrames &+= 1 }
        // Trust the linear filter once it removes echo: its broadband echo
        // estimate above its residual (more than 3 dB removed). Per bin
        // only the distrust (a novel bin); trust itself is earned
        // broadband, since a bin where near-end sound (a talker, a fan,
        // music the reference lacks) dominates never shows the filter
        // removing anything, and must not be suppressed for it.
        // The step is taken in the next frame's bin pass (`learnBins`),
        // before the trust is used: the same values as a pass of its own
        // here, without one (~260 instructions a call at 16 kHz).
        trustStep = anyFar && sumY > sumE ? 1 / trustFrames : 0
        // Double talk as reported (stats, CaptureMetrics): the output keeps
        // clearly more than the residual echo explains, and within 10 dB of
        // the linear echo estimate (after the canceller and preprocessor
        // the echo alone is left far below it).
        let live = anyFar && sumE > activity * Float(bins)
        doubleTalk = live && sumKept > 0.1 * sumY && sumKept > 4 * sumR
            && (talkMicMargin <= 0 || sumTalk > 0.5 * sumKept)
        // The state: the near-end detector, which also finds a talker 10–25
        // dB under the echo (the rule above cut it: docs/capture.md), where
        // the output keeps at least `audibleFloor` of the echo estimate.
        let scored = detector.update(detector.features(e: sumE, y: sumY, r: sumR, kept: sumKept, talk: sumTalk,
                                                       x: sums.xBands.sum(), bands: bandSums),
                                     settled: farFrames >= detector.settleFrames)
        let talk = live && scored && sumKept > detector.audibleFloor * sumY
        sinceNearEnd = talk ? 0 : min(sinceNearEnd + 1, Int.max / 2)
        nearEndFrames = sinceNearEnd < nearEndHold ? min(nearEndFrames + 1, Int.max / 2) : 0
        if estimateDiverged && regimeLeft > 0 && nearEndFrames > 0 {
            divergedLeft = divergedHold
        } else if divergedLeft > 0 {
            divergedLeft -= 1
        }
        let tg = target + 1  // bin k's target at tg[k]; tg[−1], tg[bins]: the ends repeated
        // Echo-only state: no near-end talk for the hold time. The same
        // Wiener gain against a residual taken `echoOnlyOverdrive` louder.
        if anyFar && sinceNearEnd >= nearEndHold && echoOnlyOverdrive > overdrive && !echoAbsent {
            let od = echoOnlyOverdrive
            // While looking ahead the echo may come from reference the
            // filter has not been fed: the echo the reference explains is
            // taken at the fallback's full weight.
            let pathWeight = lookingAhead || realignedHold > 0 ? fallbackOverdrive : echoOnlyPathWeight
            let tiny = V(repeating: 1e-20), floorV = V(repeating: echoOnlyFloorGain)
            let tailW = V(repeating: tailLearning ? tailWeight : 0)
            k = 0
            while k < lanes {
                let pE = (powerE + k).loadFloat4()
                let pg = (pathGain + k).loadFloat4(), xHeld = (refHeld + k).loadFloat4()
                let linearR = od * (leak + k).loadFloat4() * (echoHeld + k).loadFloat4()
                let fallbackR = fallbackOverdrive * pg * xHeld
                let pathR = pg * xHeld
                // The room's tail (`learnBins`, in a frame after an
                // echo-only one).
                let tailR = tailW * (tailEcho + k).loadFloat4()
                let rr = ResidualEchoSuppressor.vmax(
                    ResidualEchoSuppressor.vmax(linearR, (fallbackWeight + k).loadFloat4() * fallbackR),
                    ResidualEchoSuppressor.vmax(ResidualEchoSuppressor.vmax(pathWeight * pathR, tailR), tiny))
                let xi = ddWeight * (cleanPrevious + k).loadFloat4() / rr
                    + (1 - ddWeight) * ResidualEchoSuppressor.vmax(pE / rr - 1, V(0, 0, 0, 0))
                let amp = xi / (1 + xi)
                (tg + k).storeFloat4(ResidualEchoSuppressor.vmax(floorV, amp * amp))
                k &+= 4
            }
        }
        // Smooth over neighbouring bins, limit the slew, apply, add comfort noise.
        tg[-1] = tg[0]
        tg[bins] = tg[bins - 1]
        let riseFrom = V(repeating: floorGain)
        k = 0
        while k < lanes {
            let smoothed = 0.25 * (tg + (k &- 1)).loadFloat4() + 0.5 * (tg + k).loadFloat4()
                + 0.25 * (tg + (k &+ 1)).loadFloat4()
            let g = (gain + k).loadFloat4()
            // Clamped between falling 10 dB and rising 20 dB (from at least
            // the near-end floor): a clamp, since fallLimit < 1 < riseLimit,
            // is the choice between the two limits by smoothed < g.
            let gNew = ResidualEchoSuppressor.vmin(ResidualEchoSuppressor.vmax(smoothed, g * fallLimit),
                                                   ResidualEchoSuppressor.vmax(g, riseFrom) * riseLimit)
            (gain + k).storeFloat4(gNew)
            (amplitude + k).storeFloat4(_unsafePerformance { rtmix_support_sqrtf4(gNew) })
            (cleanPrevious + k).storeFloat4(gNew * (powerE + k).loadFloat4())
            // Targets are at most 1 (a Wiener gain squared, or a floor), so
            // is the gain: 1 − gNew ≥ 0.
            let cnPower = comfortScale * (noise + k).loadFloat4() * (1 - gNew)
            (comfort + k).storeFloat4(_unsafePerformance { rtmix_support_sqrtf4(cnPower) })
            k &+= 4
        }
        // The comfort noise's phases: the generator's next four states at
        // once (s·a^j + c·(1 + a + … + a^(j−1)), j = 1…4).
        let a1: UInt32 = 1_664_525, c1: UInt32 = 1_013_904_223
        let a2 = a1 &* a1, a3 = a2 &* a1, a4 = a3 &* a1
        let multipliers = SIMD4<UInt32>(a1, a2, a3, a4)
        let increments = SIMD4<UInt32>(c1, c1 &* (1 &+ a1), c1 &* (1 &+ a1 &+ a2), c1 &* (1 &+ a1 &+ a2 &+ a3))
        k = 0
        while k &+ 4 <= bins {
            let s = SIMD4<UInt32>(seed, seed, seed, seed) &* multipliers &+ increments
            seed = s[3]
            let i0 = Int(s[0] >> 24) &* 2, i1 = Int(s[1] >> 24) &* 2
            let i2 = Int(s[2] >> 24) &* 2, i3 = Int(s[3] >> 24) &* 2
            let cosines = V(phases[i0], phases[i1], phases[i2], phases[i3])
            let sines = V(phases[i0 &+ 1], phases[i1 &+ 1], phases[i2 &+ 1], phases[i3 &+ 1])
            let a = (amplitude + k).loadFloat4(), cn = (comfort + k).loadFloat4()
            (outRe + k).storeFloat4(a * (eRe + k).loadFloat4() + cn * cosines)
            (outIm + k).storeFloat4(a * (eIm + k).loadFloat4() + cn * sines)
            k &+= 4
        }
        while k < bins {
            seed = seed &* a1 &+ c1
            let idx = Int(seed >> 24) &* 2
            let a = amplitude[k], cn = comfort[k]
            outRe[k] = a * eRe[k] + cn * phases[idx]
            outIm[k] = a * eIm[k] + cn * phases[idx &+ 1]
            k &+= 1
        }
        rfft.inverse(outRe, outIm)  // bins 0 and p/2 taken as real
        // Unpack (even samples in outRe, odd in outIm) and overlap-add.
        var m = 0
        while m < n {
            let a = (outRe + m).loadFloat4(), b = (outIm + m).loadFloat4()
            let j = 2 &* m, j4 = j &+ 4
            (re + j).storeFloat4(V(a[0], b[0], a[1], b[1]))
            (re + j4).storeFloat4(V(a[2], b[2], a[3], b[3]))
            m &+= 4
        }
        i = 0
        while i &+ 4 <= n {
            (linear + i).storeFloat4((overlap + i).loadFloat4() + (re + i).loadFloat4() * (window + i).loadFloat4())
            (overlap + i).storeFloat4((re + n + i).loadFloat4() * (window + n + i).loadFloat4())
            i &+= 4
        }
        while i < n {
            linear[i] = overlap[i] + re[i] * window[i]
            overlap[i] = re[i &+ n] * window[i &+ n]
            i &+= 1
        }
        tailLearning = anyFar && sinceNearEnd >= nearEndHold && !echoAbsent && tailWeight > 0
        frames += 1
        if liveFrames >= 0 && liveFrames < 4 { liveFrames += 1 }
    }

    /// `learnBins`' exchange in a frame with the preprocessor paused (out
    /// of line: the frames without it pay only the branch).
    @_noLocks @inline(never)
    func swapDiverged(_ er: inout SIMD4<Float>, _ ei: inout SIMD4<Float>, _ pOut: inout SIMD4<Float>,
                      _ linearR: inout SIMD4<Float>, micR: SIMD4<Float>, micI: SIMD4<Float>, pMic: SIMD4<Float>,
                      pY: SIMD4<Float>, pathEcho: SIMD4<Float>) {
        let bound = fallbackOverdrive * pathEcho
        let swap = (pY .> divergedRatio * bound) .| (pY .> divergedOverMicrophone * pMic)
        er = er.replacing(with: micR, where: swap)
        ei = ei.replacing(with: micI, where: swap)
        pOut = pOut.replacing(with: pMic, where: swap)
        linearR = linearR.replacing(with: overdrive * bound, where: swap)
    }

    /// The per-bin learning and the near-end gain of bins k…k+3, from the
    /// transform z = e + i·ŷ at those bins (`zr`, `zi`) and at p − k…
    /// (`cr`, `ci`).
    @_noLocks @inline(__always)
    func learnBins(_ k: Int, _ zr: SIMD4<Float>, _ zi: SIMD4<Float>, _ cr: SIMD4<Float>, _ ci: SIMD4<Float>,
                   _ sums: inout BinSums) {
        typealias V = SIMD4<Float>
        // E[k] = (Z[k] + conj Z[p−k]) / 2, Ŷ[k] = (Z[k] − conj Z[p−k]) / 2i
        var er = 0.5 * (zr + cr), ei = 0.5 * (zi - ci)
        let yr = 0.5 * (zi + ci), yi = -0.5 * (zr - cr)
        let pE = er * er + ei * ei
        let pY = yr * yr + yi * yi
        let xrk = (xr + k).loadFloat4(), xik = (xi + k).loadFloat4()
        let pX = xrk * xrk + xik * xik
        let micR = er + yr, micI = ei + yi
        let pMic = micR * micR + micI * micI
        let held = ResidualEchoSuppressor.vmax(pY, (echoHeld + k).loadFloat4() * decay)
        (echoHeld + k).storeFloat4(held)
        let xHeld = ResidualEchoSuppressor.vmax(pX, (refHeld + k).loadFloat4() * referenceDecay)
        (refHeld + k).storeFloat4(xHeld)
        let act = V(repeating: activity)
        let down = V(repeating: leakDown)  // −0.1 dB
        // up − down, exact (Sterbenz: down ≤ up ≤ 2·down), so down + it is
        // up to the bit: a step chosen by a mask with one `and` and one add.
        let upMinusDown = V(repeating: leakUp - leakDown)
        let zero = V(repeating: 0)
        // Learn how much of the estimated echo the filter leaves.
        let lk = (leak + k).loadFloat4()
        let leakStep = lk * (down + zero.replacing(with: upMinusDown, where: pE / pY .> lk))
        let l = ResidualEchoSuppressor.vmax(V(repeating: 1e-5), ResidualEchoSuppressor.vmin(V(repeating: 4), leakStep))
        let leakNew = lk.replacing(with: l, where: pY .> act)
        (leak + k).storeFloat4(leakNew)
        // Learn the echo path's gain (mic over held reference), only in
        // frames where the reference stands within 3 dB of its held power:
        // in its decay the held power overstates what the microphone can
        // hear, and a dry path (no room to carry the echo past the
        // reference's own decay: a close loudspeaker, a loopback) then
        // taught the low quantile a gain far too small (−54 dB for −5 dB in
        // CaptureStageTests' bursts), and the near-end detector read the
        // echo standing over it as a talker (docs/capture.md, "The path
        // gain and the live loopback").
        let far = xHeld .> act
        sums.xMax = ResidualEchoSuppressor.vmax(sums.xMax, xHeld)
        sums.x += xHeld
        let pg = (pathGain + k).loadFloat4()
        let gainStep = pg * (down + zero.replacing(with: upMinusDown, where: pMic / xHeld .> pg))
        let g = ResidualEchoSuppressor.vmax(V(repeating: 1e-6), ResidualEchoSuppressor.vmin(V(repeating: 1e3), gainStep))
        let pgNew = pg.replacing(with: g, where: far .& (pX + pX .> xHeld))
        (pathGain + k).storeFloat4(pgNew)
        // The reference's reverberant energy, and the median of the
        // microphone over it while nothing but the echo is there.
        let inTail = k < tailTop
        let tSum = inTail ? (tailSum + k).loadFloat4() * referenceDecay + pX : zero
        if inTail { (tailSum + k).storeFloat4(tSum) }
        var linearR = overdrive * leakNew * held
        let fallbackR = binFallback * pgNew * xHeld
        let pathEcho = pgNew * xHeld
        // A diverged estimate (`estimateDiverged`), with the preprocessor's
        // suppression paused: where the estimate is no echo (20 dB over the
        // most the reference explains, or 6 dB louder than the microphone), the
        // bin takes the microphone instead of the filter's output (which
        // carries the estimate's error), against the most echo the
        // reference explains. The talker passes; what the microphone has of
        // the echo is suppressed as far as the path says. The near-end
        // detector's sums keep the filter's output, as it was fitted on.
        var pOut = pE
        if exchanging {
            swapDiverged(&er, &ei, &pOut, &linearR, micR: micR, micI: micI, pMic: pMic, pY: pY, pathEcho: pathEcho)
        }
        // New in this bin: the filter has not shown it removes echo at
        // this level here; trust it again once it has.
        let slow = (refSlow + k).loadFloat4()
        (refSlow + k).storeFloat4(slow + 0.005 * (pX - slow))
        let fresh = pX .> novelty * slow + act
        let tr = ResidualEchoSuppressor.vmin(V(repeating: 1), (trust + k).loadFloat4() + trustStep)
        let weight = ResidualEchoSuppressor.vmax(1 - tr, zero.replacing(with: V(repeating: 1), where: fresh))  // 1 where fresh
        (trust + k).storeFloat4(tr.replacing(with: 0, where: fresh))
        (fallbackWeight + k).storeFloat4(weight)
        // Background: the minimum of |E|² smoothed over ~60 ms, started
        // at the first 4 frames that are not digital silence (devices often
        // deliver zeros at first; a capture starts before the echo of what
        // is then played arrives), falling fast; rising 5 dB/s without
        // echo in the bin, 0.2 dB/s with (the residual echo is no
        // background; 1 dB/s cut one more of a talker's frames in
        // CaptureTests' reverberant room). Started at 0 it rose too slowly ever to reach the
        // background while the far end played, and on the raw periodogram
        // its spread put it 10–24 dB under: the output went silent where
        // the suppressor took the echo out (docs/capture.md).
        let nz = (noise + k).loadFloat4()
        let se = (smoothE + k).loadFloat4()
        let sm = liveFrames == 0 ? pE : se + 0.3 * (pE - se)
        (smoothE + k).storeFloat4(sm)
        if tailLearning && inTail {
            // The median's step, and the echo-only state's tail for this
            // frame: where the reference has fallen 6 dB under its held
            // power (the far end's word is over: what goes on is its
            // reverberation), not in a bin that rises (an onset: a tail
            // only decays). Computed here, where every operand is at hand,
            // only while the state is echo-only (the frame before was).
            let tg = (tailGain + k).loadFloat4()
            let step = tg * V(repeating: ResidualEchoSuppressor.tailDown)
                .replacing(with: V(repeating: ResidualEchoSuppressor.tailUp), where: pMic .> tg * tSum)
            let tgNew = tg.replacing(with: ResidualEchoSuppressor.vmax(V(repeating: 1e-6), step), where: far)
            (tailGain + k).storeFloat4(tgNew)
            let ended = zero.replacing(with: tgNew * tSum, where: 4 * pX .< xHeld)
            (tailEcho + k).storeFloat4(ended.replacing(with: zero, where: pOut .> V(repeating: tailOnset) * sm))
        }
        let rise = V(repeating: 1.0116) + zero.replacing(with: V(repeating: Float(1.00046) - Float(1.0116)), where: far)
        var tracked = (nz * rise).replacing(with: nz + 0.2 * (sm - nz), where: sm .< nz)
        if liveFrames >= 0 && liveFrames < 4 { tracked = sm }
        (noise + k).storeFloat4(ResidualEchoSuppressor.vmax(V(repeating: activity * 1e-3), tracked))
        let r = ResidualEchoSuppressor.vmax(linearR, weight * fallbackR)
        // Decision-directed signal-to-residual ratio (last frame's kept
        // power, this frame's excess), Wiener amplitude gain ξ/(1+ξ).
        // The gain's residual at most `residualCap` × the echo the
        // reference explains where the microphone stands over that (0
        // where the reference has been silent for long: no echo is left).
        let capV = residualCap * pathEcho
        let rr = ResidualEchoSuppressor.vmax(r.replacing(with: ResidualEchoSuppressor.vmin(r, capV), where: pMic .> capV),
                                             V(repeating: 1e-20))
        let xi = ddWeight * (cleanPrevious + k).loadFloat4() / rr
            + (1 - ddWeight) * ResidualEchoSuppressor.vmax(pOut / rr - 1, V(0, 0, 0, 0))
        let amp = xi / (1 + xi)
        let t = ResidualEchoSuppressor.vmax(V(repeating: floorGain), amp * amp)
        (target + 1 + k).storeFloat4(t)
        (eRe + k).storeFloat4(er)
        (eIm + k).storeFloat4(ei)
        (powerE + k).storeFloat4(pOut)
        let kept = t * pE
        sums.e += pE
        sums.y += pY
        sums.mic += pMic
        sums.r += ResidualEchoSuppressor.vmin(r, pE)
        sums.kept += kept
        sums.talk += V(0, 0, 0, 0).replacing(with: kept, where: pMic .> talkMicMargin * pathEcho)
        sums.bandE += pE
        sums.bandH += held
        sums.bandP += pathEcho
    }
}
