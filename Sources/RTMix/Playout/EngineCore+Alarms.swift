import CRTMixSupport
import Synchronization

/// The render path's alarms, called from `renderClaimed`: render gaps
/// (`renderResumed`), the "no RTC sound" monitor of call sources
/// (`callAudioMissing`) and heavy limiting (`limiterHeavy`). Real-time
/// safe. (The media duck is its own stage: EngineCore+Ducking.)
extension EngineCore {
    /// At the start of a render call: reports a return after an absence of
    /// the render callback (a stall or an interruption).
    @_noLocks
    /// Returns true when rendering resumes after an absence (a stall): the
    /// source path then drops stale call audio and retires removed sources.
    static func noteRenderStart(_ e: UnsafeMutablePointer<EngineCore>, now: UInt64, blockNs: UInt64,
                                frameTime: UInt64) -> Bool {
        guard let gap = e.pointee.stall.renderBegan(now: now, blockNs: blockNs) else { return false }
        e.pointee.events.post(.renderResumed, source: 0, frameTime: frameTime,
                              value: Int64(truncatingIfNeeded: min(gap, UInt64(Int64.max))))
        return true
    }

    /// Feeds the "no RTC sound" monitor of a call source after its block
    /// (`slot`: its slot index). Uses what the source path publishes: the
    /// pushed and rendered frame counters, its target gain, and
    /// `result.inputPeak` when measured. `callGain`: the call domain gain
    /// at the end of the block.
    @_noLocks
    static func monitorCallAudio(_ e: UnsafeMutablePointer<EngineCore>, slot: Int, _ s: UnsafeMutablePointer<SourceState>,
                                 id: UInt32, _ result: SourceResult, frames: Int, callGain: Float,
                                 frameTime: UInt64) {
        let m = e.pointee.callMonitors + slot
        let pushed = s.pointee.framesPushed.read()
        let rendered = s.pointee.framesRendered.read()
        let rate = e.pointee.renderState.pointee.sampleRate
        if m.pointee.id != id || m.pointee.rate != rate {
            // A new source in the slot, or a new output rate: start over.
            m.pointee.id = id
            m.pointee.rate = rate
            let ms = Int64(e.pointee.config.callAudioMissingMs)
            m.pointee.monitor.reset(alarmFrames: Int(truncatingIfNeeded: Int64(rate) * ms / 1000))
            m.pointee.lastPushed = 0
            m.pointee.lastRendered = 0
        }
        if s.pointee.render.pointee.playback.isDrained || e.pointee.interrupted.load(ordering: .relaxed) {
            // Expected silence, not "no RTC sound": the host ended the
            // stream (rtmix_source_end, played out; a flush reopens it) or
            // marked the output interrupted. Counting starts over after.
            m.pointee.monitor.reset(alarmFrames: m.pointee.monitor.alarmFrames)
            m.pointee.lastPushed = pushed
            m.pointee.lastRendered = rendered
            return
        }
        let produced = Int(truncatingIfNeeded: min(rendered &- m.pointee.lastRendered, UInt64(Int.max / 2)))
        let cause = m.pointee.monitor.update(frames: frames, fed: pushed != m.pointee.lastPushed,
                                             producedFrames: produced, inputPeak: result.inputPeak,
                                             gain: s.pointee.targetGain.load() * callGain)
        m.pointee.lastPushed = pushed
        m.pointee.lastRendered = rendered
        if cause != 0 {
            e.pointee.events.post(.callAudioMissing, source: id, frameTime: frameTime, value: cause,
                                  domain: 0)
        }
    }

    /// After the limiter: `limiterHeavy` once per episode of more than
    /// 6 dB of reduction; the episode ends when the gain is back above
    /// -3 dB at the end of a block.
    @_noLocks
    static func noteLimiter(_ e: UnsafeMutablePointer<EngineCore>, lowestGain: Float, endGain: Float,
                            frameTime: UInt64) {
        let heavy = e.pointee.limiterHeavyEpisode.load(ordering: .relaxed)
        if !heavy && lowestGain < 0.501_187_2 {  // -6 dB
            e.pointee.limiterHeavyEpisode.store(true, ordering: .relaxed)
            let millibels: Float = _unsafePerformance { rtmix_support_linear_to_db(lowestGain) * 100 }
            e.pointee.events.post(.limiterHeavy, source: 0, frameTime: frameTime, value: Int64(millibels))
        } else if heavy && endGain > 0.707_945_8 {  // -3 dB
            e.pointee.limiterHeavyEpisode.store(false, ordering: .relaxed)
        }
    }
}
