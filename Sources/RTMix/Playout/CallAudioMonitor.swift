/// Why a call source is silent at the output: the value of the
/// `callAudioMissing` event. Raw values are rtmix.h's `RTMIX_CALL_MISSING_*`.
public enum CallAudioMissingCause: Int64, Sendable {
    /// The host stopped pushing audio (or never started): nothing was
    /// pushed during the whole interval.
    case notFed = 1
    /// Audio is pushed but it is silent (every sample below -60 dBFS):
    /// the far end sends silence, or the decoder outputs zeros.
    case silentInput = 2
    /// Audio is pushed and audible, but the source is muted or its gain
    /// (source × call domain) makes it inaudible.
    case muted = 3
    /// Audio is pushed but never reaches the output: the source is
    /// starving (too little data to play) or has not started.
    case starved = 4
}

/// The "no RTC sound" alarm for one call source. Fed once per render block
/// with facts the source path already knows; after `alarmFrames` of
/// output frames without audible output it returns a cause, once, and
/// re-arms when audible audio returns.
///
/// Audible: the block produced frames, its input peak (pre-gain) times the
/// applied gain reaches -60 dBFS. When the input peak is not measured
/// (`inputPeak < 0`), a block that produced frames at a non-zero gain
/// counts as audible (silent input cannot be told then).
///
/// Render thread only; real-time safe (plain arithmetic).
struct CallAudioMonitor {
    /// -60 dBFS.
    static var audibleLevel: Float { @_noLocks get { 0.001 } }

    /// Output frames of silence before the alarm (0: alarm off).
    var alarmFrames: Int
    /// Output frames since the source was last audible.
    var silentFrames = 0
    /// Output frames since audio was last pushed.
    var unfedFrames = 0
    /// The alarm fired for the current silence.
    var fired = false
    /// Most recent reason a fed block was silent (0: none yet).
    var lastReason: Int64 = 0

    @_noLocks
    init(alarmFrames: Int) { self.alarmFrames = alarmFrames }

    /// One block of `frames` output frames. `fed`: audio was pushed since
    /// the previous block. `producedFrames`: frames the source contributed
    /// to the block. `inputPeak`: peak |sample| of what it contributed,
    /// before gains (< 0: not measured). `gain`: the largest gain applied
    /// (source gain × call domain gain; 0 when muted). Returns a cause
    /// (`CallAudioMissingCause` raw value) when the alarm fires, else 0.
    @_noLocks
    mutating func update(frames: Int, fed: Bool, producedFrames: Int, inputPeak: Float, gain: Float) -> Int64 {
        unfedFrames = fed ? 0 : min(unfedFrames &+ frames, Int.max / 2)
        let audible: Bool
        if producedFrames <= 0 {
            audible = false
            lastReason = CallAudioMissingCause.starved.rawValue
        } else if inputPeak >= 0 && inputPeak < CallAudioMonitor.audibleLevel {
            audible = false
            lastReason = CallAudioMissingCause.silentInput.rawValue
        } else if gain <= 0 || (inputPeak >= 0 && inputPeak * gain < CallAudioMonitor.audibleLevel) {
            audible = false
            lastReason = CallAudioMissingCause.muted.rawValue
        } else {
            audible = true
        }
        if audible {
            silentFrames = 0
            fired = false
            lastReason = 0
            return 0
        }
        silentFrames = min(silentFrames &+ frames, Int.max / 2)
        guard alarmFrames > 0, !fired, silentFrames >= alarmFrames else { return 0 }
        fired = true
        // Nothing pushed during the whole alarm interval: the host stopped
        // feeding (whatever else is also wrong).
        if unfedFrames >= alarmFrames || lastReason == 0 { return CallAudioMissingCause.notFed.rawValue }
        return lastReason
    }

    /// Starts over (a new source in the slot, or a format change).
    @_noLocks
    mutating func reset(alarmFrames: Int) { self = CallAudioMonitor(alarmFrames: alarmFrames) }
}

/// A render slot's monitor and what it last saw of the source in it
/// (render thread only).
struct CallMonitorSlot {
    /// The source id monitored (0: none yet); a new id starts over.
    var id: UInt32 = 0
    /// The output rate `monitor` was set up for.
    var rate = 0
    var monitor = CallAudioMonitor(alarmFrames: 0)
    var lastPushed: UInt64 = 0
    var lastRendered: UInt64 = 0
    init() {}
}
