import CRTMixSupport

/// Capture stage 4c, no echo to suppress: the far end plays but the
/// microphone does not hear it (a headset, a muted or distant loudspeaker,
/// a device that cancels its own echo). The linear filter then never
/// removes anything, so the residual-echo suppressor never earns trust in
/// it and keeps falling back on the echo the reference would explain
/// (path gain × held reference). That gain, learnt as a low quantile of
/// microphone over reference power, is then a quantile of the *talker's*
/// power over the reference: the fallback, 10 dB over it, cut a talker
/// with no echo at all by 4–5 % of its double-talk frames at 16 kHz and
/// 14–17 % at 48 kHz (runs up to 300 ms); and a linear filter with
/// nothing to model subtracts what it makes of the reference, which took a
/// talker's PESQ from 3.8–4.1 to 2.5–3.3 on its own (docs/capture.md, "No
/// echo at the microphone").
///
/// After `frames` far-end frames (5 s) in which the filter never removed
/// echo and the delay estimator never found it where the reference is
/// aligned (`echoFound`: without it a quiet loudspeaker's echo, a few dB
/// over the room's noise, was taken as absent and passed), the echo is
/// taken as absent: the microphone itself goes on to
/// the preprocessor (the linear stage still runs and is measured,
/// `EchoCanceller.process(passMicrophone:)`), the suppressor drops the
/// reference-explained estimates and speexdsp's residual-echo suppression
/// pauses (WebRTC AEC3 has the same idea: its transparent mode for
/// headsets).
/// "Removed" is the linear stage taking 6 dB out of a microphone 10 dB
/// over the floor under it (the linear output's power at its lowest,
/// rising 1 dB a second: the room's noise once the echo is out; the
/// microphone's own minimum was the echo itself for a steady tone, and a
/// tone's echo was taken as absent) in two far-end frames running: on the recorded-speech rooms with echo that
/// happens in 60–70 % of far-end frames, at most 2.1 s apart (the first
/// after the delay is found); without echo, never (with no floor the
/// filter took 6 dB out of the −66 dBFS room noise for three frames in
/// four of twelve scenes). A floor relative to the microphone, not a
/// level, holds for any microphone gain: replayed on those scenes' frame
/// traces 50 dB quieter, a −60 dBFS level would take every echo as absent,
/// the floor none. It ends the absence at once, and the suppressor starts
/// over as after a reset, from the path gain it had 0.2 s into the last
/// stretch without the echo (`justLost`): an echo that appears (the
/// headset taken off) passes until the delay is found and the filter takes
/// its first 6 dB out (`CaptureTests`: 9.5 dB ERLE in its first second),
/// then is suppressed as at the start. Plain values: no allocation.
struct EchoAbsence {
    /// Far-end frames without removal before the echo is taken as absent.
    let frames: Int
    /// Far-end frames in 0.2 s (`justLost`).
    let heardFrames: Int
    /// Per frame, the factor by which the floor rises (1 dB a second).
    let rise: Float
    /// Far-end frames since the filter last removed echo (saturates at
    /// `frames`).
    private(set) var quiet = 0
    /// Far-end frames running in which the filter removed 6 dB.
    private(set) var removing = 0
    /// The floor under the microphone: the linear output's power at its
    /// lowest (full scale 1; frames of digital silence left out).
    private(set) var floor: Float = 1

    /// `framesPerSecond` capture frames a second; the echo is taken as
    /// absent after `seconds` of far end.
    init(framesPerSecond: Int, seconds: Int) {
        let fps = max(1, framesPerSecond)
        frames = max(1, seconds * fps)
        heardFrames = max(1, min(frames - 1, fps / 5))
        let amplitude = rtmix_support_db_to_linear(1 / Float(fps))
        rise = amplitude * amplitude
    }

    /// This frame, a far-end one, is the `heardFrames`-th (0.2 s, past a
    /// reverberant room's tail) since the echo was last heard: the
    /// suppressor keeps its path gain now (`ResidualEchoSuppressor.echoHeard`).
    private(set) var justLost = false

    /// No echo has been seen for `frames` far-end frames.
    var absent: Bool { @_noLocks get { quiet >= frames } }

    /// The delay estimator finds the echo where the reference is aligned
    /// (`DelayTracker.Hop.confirms`): an echo too weak for the filter to
    /// take 6 dB out of over the microphone's floor is there all the same.
    @_noLocks
    mutating func echoFound() {
        quiet = 0
        justLost = false
    }

    /// One frame: the far end active (`farEnd`), the microphone's and the
    /// linear output's mean square (full scale 1).
    @_noLocks
    mutating func frame(farEnd: Bool, mic: Float, linear: Float) {
        // Digital silence (devices deliver zeros at first) says nothing
        // of the floor.
        if linear > 1e-10 { floor = linear <= floor ? linear : floor * rise }
        justLost = false
        guard farEnd else { return }
        removing = mic > 10 * floor && mic > 4 * linear ? min(removing + 1, 2) : 0
        quiet = removing >= 2 ? 0 : min(quiet + 1, frames)
        justLost = quiet == heardFrames
    }
}
