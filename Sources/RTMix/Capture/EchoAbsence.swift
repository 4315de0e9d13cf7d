/// Capture stage 4c, no echo to suppress: the far end plays but the
/// microphone does not hear it (a headset, a muted or distant loudspeaker,
/// a device that cancels its own echo). The linear filter then never
/// removes anything, so the residual-echo suppressor never earns trust in
/// it and keeps falling back on the echo the reference would explain
/// (path gain × held reference). That gain, learnt as a low quantile of
/// microphone over reference power, is then a quantile of the *talker's*
/// power over the reference: the fallback, 10 dB over it, cut a talker
/// with no echo at all by 4–5 % of its double-talk frames at 16 kHz and
/// 14–17 % at 48 kHz (runs up to 300 ms), and speexdsp's own residual
/// suppression took a talker's PESQ from 4.1 to 3.3 (docs/capture.md,
/// "No echo at all").
///
/// After `frames` far-end frames (5 s) in which the filter never removed
/// echo, the echo is taken as absent: the suppressor drops the
/// reference-explained estimates and speexdsp's suppression pauses
/// (WebRTC AEC3 has the same idea: its transparent mode for headsets).
/// "Removed" is the linear stage taking 6 dB out of a microphone above
/// −60 dBFS in two far-end frames running: on the recorded-speech rooms
/// with echo that happens in 60–70 % of far-end frames, at most 2.1 s
/// apart (the first after the delay is found); without echo, never (with
/// no level the filter took 6 dB out of the −66 dBFS room noise for three
/// frames in four of twelve scenes). It ends the absence at once, so an
/// echo that appears (the headset taken off) is suppressed as at the
/// start: the fallback until the filter earns trust. Plain values: no
/// allocation.
struct EchoAbsence {
    /// Far-end frames without removal before the echo is taken as absent.
    let frames: Int
    /// Far-end frames since the filter last removed echo (saturates at
    /// `frames`).
    private(set) var quiet = 0
    /// Far-end frames running in which the filter removed 6 dB.
    private(set) var removing = 0

    init(frames: Int) { self.frames = max(1, frames) }

    /// No echo has been seen for `frames` far-end frames.
    var absent: Bool { @_noLocks get { quiet >= frames } }

    /// One frame: the far end active (`farEnd`), the microphone's and the
    /// linear output's mean square (full scale 1).
    @_noLocks
    mutating func frame(farEnd: Bool, mic: Float, linear: Float) {
        guard farEnd else { return }
        removing = mic > 1e-6 && mic > 4 * linear ? min(removing + 1, 2) : 0
        quiet = removing >= 2 ? 0 : min(quiet + 1, frames)
    }
}
