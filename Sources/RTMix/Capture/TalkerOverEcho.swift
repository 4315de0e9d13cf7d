import CRTMixSupport

/// Capture stage 4e, how far the talker stands over the echo: the
/// microphone's level in the near-end detector's talk frames against its
/// level in the far end's echo-only frames, each followed slowly. With a
/// quiet loudspeaker (the echo 40–45 dB under the usual level, 32–43 dB
/// under the talker at the microphone) speexdsp's filter adapts on the
/// talker, and its residual-echo suppression, which takes that filter's
/// estimate times one leak for all bands as echo, cut the talker's words
/// by 5–12 dB in frames where the detector had found the talk (48 kHz
/// small room, echo 40 dB down, traced 2026-12-03): 1.7–3.4 % of the
/// talker's frames muted in the 48 kHz rows, 4 of them over 3 %. Where the
/// talker stands `ratioDb` (20 dB) over the echo, the capture path pauses
/// speexdsp's suppression in the talk frames of a near-end state
/// (`ResidualEchoSuppressor.talkerFarOverEcho`): an echo that far under
/// the talker is masked by it, and this project's own suppressor still
/// takes out, bin by bin, what the reference explains. At the usual
/// levels the two stand within −12 … +5 dB of each other (f and g, both
/// rates), so nothing changes there; paused in every talk frame, f's and
/// g's double-talk PESQ fell 0.07 (docs/capture.md).
///
/// Each level is an average of the frame's power over about
/// `averagedFrames` of its frames (1 s), each frame's power clamped within
/// 6 dB of the level first: the detector's state misses a talker's onset
/// now and then, and one such frame 40 dB over a quiet echo would lift a
/// plain average of the echo's frames by 15–20 dB (measured: the
/// talker 15–24 dB over the echo instead of 34–40). Holds only once the
/// echo's level has 1 s of frames and the talker's 0.1 s, and lets go
/// 3 dB under its ratio. Plain values: no allocation.
struct TalkerOverEcho {
    /// The ratio (power) over which it holds: 20 dB.
    let ratio: Float
    /// The ratio under which it lets go: 17 dB.
    let releaseRatio: Float
    /// Frames a level averages over (1 s): the first ones are a plain
    /// mean, then each frame weighs 1 / this.
    let averagedFrames: Int
    /// Echo-only frames before the echo's level counts (1 s).
    let echoMinimumFrames: Int
    /// Talk frames before the talker's level counts (0.1 s: a call's
    /// first word was cut while a second of them was awaited).
    let talkerMinimumFrames: Int
    /// The microphone's power in echo-only far-end frames (full scale 1).
    private(set) var echo: Float = 0
    /// The microphone's power in the detector's talk frames.
    private(set) var talker: Float = 0
    /// Frames counted into `echo` and `talker` (saturate at `minimumFrames`).
    private(set) var echoFrames = 0
    private(set) var talkerFrames = 0
    /// The talker stands `ratio` over the echo (after `minimumFrames` of each).
    private(set) var holds = false

    /// `framesPerSecond` capture frames a second.
    init(framesPerSecond: Int, ratioDb: Float = 20, releaseDb: Float = 3) {
        ratio = rtmix_support_db_to_linear(ratioDb) * rtmix_support_db_to_linear(ratioDb)
        let release = rtmix_support_db_to_linear(ratioDb - releaseDb)
        releaseRatio = release * release
        averagedFrames = max(1, framesPerSecond)
        echoMinimumFrames = max(1, framesPerSecond)
        talkerMinimumFrames = max(1, framesPerSecond / 10)
    }

    /// One capture frame: `mic` its microphone power (per sample, full
    /// scale 1); `echoOnly`, the far end active and the suppressor in its
    /// echo-only state; `talk`, the near-end detector found talk in it.
    @_noLocks
    mutating func frame(mic: Float, echoOnly: Bool, talk: Bool) {
        guard mic.isFinite && mic > 1e-10 else { return }  // digital silence says nothing
        if echoOnly {
            echo = TalkerOverEcho.follow(echo, mic, counted: echoFrames)
            if echoFrames < averagedFrames { echoFrames &+= 1 }
        } else if talk {
            talker = TalkerOverEcho.follow(talker, mic, counted: talkerFrames)
            if talkerFrames < averagedFrames { talkerFrames &+= 1 }
        }
        guard echoFrames >= echoMinimumFrames && talkerFrames >= talkerMinimumFrames else { return }
        holds = talker > (holds ? releaseRatio : ratio) * echo
    }

    /// A level moved toward `power`, clamped within 6 dB of it first, with
    /// weight 1 / (`counted` + 1) (the first frame sets it).
    @_noLocks
    static func follow(_ level: Float, _ power: Float, counted: Int) -> Float {
        if counted == 0 { return power }
        let p = min(max(power, 0.25 * level), 4 * level)
        return level + (p - level) / Float(counted &+ 1)
    }
}
