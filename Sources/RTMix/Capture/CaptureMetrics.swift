import CRTMixSupport

/// Capture stage 7, the statistics: the one writer of the capture link's
/// counters, gauges and events (capture thread). The other stages return
/// what happened and the pipeline hands it here. Per frame it keeps the
/// ERLE (mic over output power, 1 s windows of far-end-only frames), the
/// double-talk hang-over and the divergence detector, which decides when
/// the canceller must be reset. Plain values: no allocation.
struct CaptureMetrics {
    let rate: Int
    let frameSize: Int
    // ERLE window: frames seen and used (far end, no double talk), powers
    private var windowMic: Float = 0
    private var windowOut: Float = 0
    private var windowFrames = 0
    private var windowUsed = 0
    /// Frames in which the linear stage added energy (decays by one per
    /// frame that it does not).
    private(set) var divergentFrames = 0
    private var doubleTalkHangover = 0
    /// Calls without their whole reference since the last call with it.
    private var missingEpisode = false
    /// Capture frames before the current call (events' frame time).
    private(set) var eventTime: UInt64 = 0

    init(sampleRate rate: Int, frameSize: Int) {
        self.rate = rate
        self.frameSize = frameSize
    }

    /// A capture call starts; `captured`: microphone frames before it.
    @_noLocks
    mutating func beginCall(captured: Int64) { eventTime = UInt64(captured) }

    /// Non-finite microphone samples (replaced by 0).
    @_noLocks
    func nonfinite(_ count: Int, link: borrowing CaptureLink) {
        if count > 0 { link.nonfinite.add(count) }
    }

    /// The clock follower steered: `correction` in use; `alarm`: it just
    /// reached the largest drift corrected.
    @_noLocks
    func drift(correction: Double, alarm: Bool, link: borrowing CaptureLink) {
        link.driftPpm.store(Float(correction * 1e6))
        if alarm {
            link.events.post(.driftOutOfRange, source: 0, frameTime: eventTime, value: Int64(correction * 1e6))
        }
    }

    /// The delay tracker's estimator completed a hop.
    @_noLocks
    func estimate(_ hop: DelayTracker.Hop, link: borrowing CaptureLink) {
        link.estimatedDelayMs.store(Float(hop.estimate * 1000 / Double(rate)))
        link.estimateConfidence.store(hop.confidence)
    }

    /// The delay tracker put a new delay in use.
    @_noLocks
    func delay(_ change: DelayTracker.Change, link: borrowing CaptureLink) {
        link.delayMs.store(Float(change.samples * 1000 / Double(rate)))
        link.delaySource.set(UInt64(change.source))
        if change.pathChanged {
            link.delayChanges.add(1)
            link.events.post(.echoPathChanged, source: 0, frameTime: eventTime,
                             value: Int64(change.samples * 1_000_000 / Double(rate)))
        }
    }

    /// One frame through the canceller (`linearActive`: it has a linear
    /// stage) and suppressor (`doubleTalk`: it saw the near end talk).
    /// Returns true when the canceller must be reset: its linear stage
    /// added energy for half a second, or it reported trouble (speexdsp
    /// would reset itself soon and print from this thread, see
    /// EchoCanceller.watch: this does it first, quietly).
    @_noLocks
    mutating func frame(_ p: EchoCanceller.FramePowers, doubleTalk: Bool, linearActive: Bool,
                        link: borrowing CaptureLink) -> Bool {
        let farEnd = p.reference > 1e-6
        if doubleTalk { doubleTalkHangover = 10 }
        let talking = doubleTalkHangover > 0
        if talking {
            doubleTalkHangover -= 1
            link.doubleTalkFrames.add(frameSize)
        }
        link.doubleTalk.set(talking ? 1 : 0)
        windowFrames += 1
        if farEnd && !talking {
            windowMic += p.mic
            windowOut += p.output
            windowUsed += 1
        }
        if windowFrames >= 100 {
            if windowUsed >= 50 && windowMic > 1e-9 {
                let ratio = windowMic / max(windowOut, 1e-13)
                let erleDb = min(100, 10 * _unsafePerformance { rtmix_support_log10f(ratio) })
                link.erleDb.store(erleDb)
            }
            windowFrames = 0
            windowUsed = 0
            windowMic = 0
            windowOut = 0
        }
        // Divergence: the linear stage adds energy for half a second.
        if linearActive && p.mic > 1e-7 && p.linear > 2 * p.mic {
            divergentFrames += 1
        } else if divergentFrames > 0 {
            divergentFrames -= 1
        }
        link.diverged.set(divergentFrames > 10 ? 1 : 0)
        if divergentFrames >= 50 {
            divergentFrames = 0
            link.resets.add(1)
            link.events.post(.cancellerReset, source: 0, frameTime: eventTime, value: 1)
            return true
        } else if p.trouble {
            // Value 2: reset before speexdsp would.
            divergentFrames = 0
            link.resets.add(1)
            link.events.post(.cancellerReset, source: 0, frameTime: eventTime, value: 2)
            return true
        }
        return false
    }

    /// The call's frames are done; `missing` reference samples were not
    /// there for them (counted once per call, an event once per episode).
    @_noLocks
    mutating func endFrames(missing: Int, link: borrowing CaptureLink) {
        if missing > 0 {
            link.callsWithoutReference.add(1)
            if !missingEpisode {
                missingEpisode = true
                link.events.post(.referenceMissing, source: 0, frameTime: eventTime, value: Int64(missing))
            }
        } else {
            missingEpisode = false
        }
    }

    /// The capture path's latency in frames.
    @_noLocks
    func latency(_ frames: Int, link: borrowing CaptureLink) {
        link.latencyFrames.set(UInt64(frames))
    }

    /// After the call (EngineCore.endCapture): its frames and duration.
    @_noLocks
    static func endCall(frames: Int, elapsedNs: UInt64, link: borrowing CaptureLink) {
        if elapsedNs > link.captureNsMax.read() { link.captureNsMax.set(elapsedNs) }
        link.calls.add(1)
        link.frames.add(frames)
    }
}
