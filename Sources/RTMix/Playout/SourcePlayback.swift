/// A source's playback phase (C: `RTMIX_SOURCE_STATE_*`).
public enum PlaybackPhase: Int32, Sendable {
    /// Waiting until the source holds its start threshold (at the start, and
    /// after a flush or a resume from pause).
    case priming = 0
    /// Playing.
    case playing = 1
    /// Ran dry while playing (an underrun): silent, re-priming to the start
    /// threshold; every block counts as underrun.
    case starved = 2
    /// Paused by the host: silent, the ring untouched.
    case paused = 3
    /// Ended (`endSource`) and played out: silent for good (pushes refused).
    case drained = 4
}

/// The per-source playback state machine. Pure logic, one render block at
/// a time; the renderer does the audio (pull, fades, tail) as it says.
///
///     priming ──holds threshold──▶ playing ──ran dry──▶ starved
///        ▲                          │  ▲                  │
///        │ flush (any phase)        │  └─holds threshold──┘
///        │                          ├─pause──▶ paused ─resume─▶ playing/priming
///        │                          └─ended and empty──▶ drained
///
/// Underruns are counted only in `starved`: priming and pause are not
/// failures, and an ended source that runs out drains instead.
struct SourcePlayback {
    var phase: PlaybackPhase = .priming
    /// The host called `endSource`: play out everything, then drain.
    var ending = false
    /// Output frames missed in the current underrun episode.
    var episodeMissed = 0
    /// The source has played at least once (start-up alignment applies to
    /// the first start only).
    var hasPlayed = false

    init() {}

    var isDrained: Bool {
        @_noLocks get { if case .drained = phase { return true } else { return false } }
    }
    var isPlaying: Bool {
        @_noLocks get { if case .playing = phase { return true } else { return false } }
    }
    var isStarved: Bool {
        @_noLocks get { if case .starved = phase { return true } else { return false } }
    }
    /// `phase.rawValue`, for the statistics atomic.
    var phaseCode: Int32 {
        @_noLocks get {
            switch phase {
            case .priming: return 0
            case .playing: return 1
            case .starved: return 2
            case .paused: return 3
            case .drained: return 4
            }
        }
    }

    /// What the renderer does in this block.
    struct Plan {
        /// Pull audio from the ring.
        var pull = false
        /// The audio starts in this block: fade it in.
        var fadeIn = false
        /// Audio that played in the previous block stops before this one
        /// (pause): fade out from what was played last.
        var stopBefore = false
        /// The source (re)started from priming: report `sourceStarted`.
        var started = false
        /// An underrun episode ended: output frames it missed.
        var underrunEnded = 0
        /// Output frames of this block counted as underrun (silent blocks
        /// while starved).
        var underrunFrames = 0
        /// The source drained in this block without audio left.
        var drained = false
        init() {}
    }

    /// Decides the block. `buffered`: input frames available; `threshold`:
    /// frames needed to (re)start (at least 1); `paused`: the host's pause
    /// flag; `frames`: output frames of the block.
    @_noLocks
    mutating func plan(buffered: Int, threshold: Int, paused: Bool, frames: Int) -> Plan {
        var p = Plan()
        if phase == .drained { return p }
        if paused {
            if phase == .playing { p.stopBefore = true }
            if phase == .starved { episodeMissed = 0 }
            if phase != .paused { phase = .paused }
            return p
        }
        let ready = buffered >= max(1, threshold) || (ending && buffered > 0)
        switch phase {
        case .playing:
            p.pull = true
        case .paused:
            // Resume: straight back to playing when the audio is there.
            if ready {
                phase = .playing
                p.pull = true
                p.fadeIn = true
            } else {
                phase = .priming
            }
        case .priming, .starved:
            if ready {
                if phase == .starved {
                    p.underrunEnded = episodeMissed
                } else {
                    p.started = true
                }
                episodeMissed = 0
                phase = .playing
                p.pull = true
                p.fadeIn = true
            } else if ending {
                // Ended with nothing left.
                phase = .drained
                p.drained = true
                episodeMissed = 0
            } else if phase == .starved {
                p.underrunFrames = frames
                episodeMissed = addSaturating(episodeMissed, frames)
            }
        case .drained:
            break
        }
        return p
    }

    /// After pulling: `produced` of `frames` output frames came out, and
    /// `exhausted` tells whether the ring (and resampler tail) is empty.
    /// Returns the underrun frames of this block (0 when the source drained
    /// instead) and whether it began an underrun episode or drained.
    @_noLocks
    mutating func finish(produced: Int, frames: Int, exhausted: Bool, startOffset: Int)
        -> (underrunFrames: Int, underrunBegan: Bool, drained: Bool) {
        if produced > 0 { hasPlayed = true }
        let end = startOffset + produced
        guard end < frames else { return (0, false, false) }
        if ending && exhausted {
            phase = .drained
            return (0, false, true)
        }
        phase = .starved
        let missed = frames - end
        episodeMissed = addSaturating(episodeMissed, missed)
        return (missed, true, false)
    }

    /// Host flush: back to priming (the renderer drops the audio).
    @_noLocks
    mutating func flush() {
        let wasPaused = phase == .paused
        phase = wasPaused ? .paused : .priming
        ending = false
        episodeMissed = 0
    }

    @_noLocks
    func addSaturating(_ a: Int, _ b: Int) -> Int {
        let (s, o) = a.addingReportingOverflow(b)
        return o ? Int.max : s
    }
}
