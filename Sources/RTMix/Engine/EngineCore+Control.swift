import CRTMixSupport
import Synchronization

/// Control paths: add/remove sources, gains, statistics, reclamation.
/// Serialised by `controlLock`, which the render and producer paths never
/// take; nothing here waits for them either.
extension EngineCore {
    
    static func withControlLock<R>(_ e: UnsafeMutablePointer<EngineCore>, _ body: () -> R) -> R {
        rtmix_support_mutex_lock(e.pointee.controlLock)
        defer { rtmix_support_mutex_unlock(e.pointee.controlLock) }
        reclaim(e)
        return body()
    }

    /// Control-thread state. Mutations go through these pointer copies so that
    /// no access ever modifies `e.pointee` itself, which the renderer reads
    /// concurrently (Swift's exclusivity instrumentation would flag it).
    @inline(__always)
    static func control(_ e: UnsafeMutablePointer<EngineCore>) -> UnsafeMutablePointer<EngineControlState> {
        e.pointee.controlState
    }

    @inline(__always)
    static func slotControl(_ e: UnsafeMutablePointer<EngineCore>) -> UnsafeMutablePointer<SlotControl> {
        e.pointee.slotControl
    }

    /// The live source with this id (phase active), or nil. Control lock held.
    static func lookup(_ e: UnsafeMutablePointer<EngineCore>, _ id: UInt32) -> UnsafeMutablePointer<SourceState>? {
        guard id != 0 else { return nil }
        return SlotLifecycle.lookup(slot(e, id: id), id: id)
    }

    static func addSource(_ e: UnsafeMutablePointer<EngineCore>, _ config: SourceConfig,
                          pull: PullCallback? = nil, context: UnsafeMutableRawPointer? = nil) -> (status: Int32, id: UInt32) {
        if let error = config.validate() { return (error.code, 0) }
        return withControlLock(e) {
            // A config that can never work with this engine is invalid
            // whether or not a slot is free.
            if let error = config.validate(engineMaxFrames: e.pointee.config.maxFrames,
                                           outputRate: e.pointee.currentFormat().sampleRate) {
                return (error.code, 0)
            }
            let maxSources = e.pointee.config.maxSources
            var free = -1
            for i in 0..<maxSources where SlotLifecycle.phase(e.pointee.slots + i) == .empty {
                free = i
                break
            }
            guard free >= 0 else { return (RTMixError.limit.code, 0) }
            let generation = UInt64(control(e).pointee.nextGeneration)
            let id64 = generation * UInt64(maxSources) + UInt64(free) + 1
            guard id64 <= UInt64(UInt32.max) else { return (RTMixError.limit.code, 0) }
            let rate = e.pointee.currentFormat().sampleRate
            guard memoryAllows(e, config) else { return (RTMixError.limit.code, 0) }
            guard let state = SourceState(config: config, engine: e.pointee.config, outputRate: rate,
                                          rampFrames: e.pointee.config.rampFrames(at: rate),
                                          pull: pull, pullContext: context),
                  let pointer = Allocation.make(state) else {
                return (RTMixError.noMemory.code, 0)
            }
            control(e).pointee.nextGeneration += 1
            SlotLifecycle.publish(e.pointee.slots + free, slotControl(e) + free, source: pointer, id: UInt32(id64))
            control(e).pointee.activeSources += 1
            control(e).pointee.sourcesAdded += 1
            return (0, UInt32(id64))
        }
    }

    static func removeSource(_ e: UnsafeMutablePointer<EngineCore>, _ id: UInt32) -> Int32 {
        withControlLock(e) {
            guard let source = lookup(e, id) else { return RTMixError.notFound.code }
            SlotLifecycle.beginRemove(slot(e, id: id))
            control(e).pointee.activeSources -= 1
            control(e).pointee.sourcesRemoved += 1
            if source.pointee.pull != nil { waitForPullCallbacks(e) }
            // The renderer fades it out; if it has stopped, retire at once.
            reclaim(e)
            return 0
        }
    }

    /// A pull source was just marked removing (a sequentially consistent
    /// store): the renderer never calls the callback of a removing source,
    /// but a render pass that read the slot before that store may still be
    /// inside it. Waits until that pass has ended, so that once
    /// `rtmix_source_remove` returns the callback is never called again and
    /// the host may free its `user_data`. Dekker's pattern with the
    /// renderer's `enter()` (SC increment, then the SC phase load in
    /// `SlotLifecycle.visit`): if the pass saw the slot active, this load
    /// sees its odd count or a later one. Called from inside the callback
    /// itself (the render thread), there is nothing to wait for: that call
    /// is the last. Control thread; blocks only itself, for at most one
    /// render pass.
    static func waitForPullCallbacks(_ e: UnsafeMutablePointer<EngineCore>) {
        if rtmix_support_render_engine().unsafelyUnwrapped.pointee == UnsafeMutableRawPointer(e) { return }
        let seq = e.pointee.passes.seq.load(ordering: .sequentiallyConsistent)
        guard seq & 1 == 1 else { return }
        while e.pointee.passes.seq.load(ordering: .sequentiallyConsistent) == seq {
            rtmix_support_sleep_ns(50_000)
        }
    }

    /// Frees sources that neither the renderer nor a producer can touch any
    /// more (SlotLifecycle.reclaim). Control lock held; never waits.
    static func reclaim(_ e: UnsafeMutablePointer<EngineCore>) {
        let now = e.pointee.now()
        for i in 0..<e.pointee.config.maxSources {
            guard let source = SlotLifecycle.reclaim(e.pointee.slots + i, slotControl(e) + i,
                                                     passes: e.pointee.passes, nowNs: now)
            else { continue }
            control(e).pointee.retiredRejected &+= source.pointee.framesRejected.read()
            control(e).pointee.retiredNonfinite &+= source.pointee.nonfinitePushed.read()
            Allocation.destroy(source)
        }
    }

    /// Interruption (a phone call, the app losing the audio device): while
    /// on, render plays silence from the first block on (no fade-out tail)
    /// and consumes nothing; removed sources are retired at once. When it
    /// ends, the next render resumes: call sources drop stale audio down to
    /// their target, media continues where it stopped, all fading in.
    static func setInterrupted(_ e: UnsafeMutablePointer<EngineCore>, _ on: Bool) -> Int32 {
        withControlLock(e) {
            let was = e.pointee.interrupted.exchange(on, ordering: .acquiringAndReleasing)
            e.pointee.stall.setInterrupted(on)  // an expected absence: no render_stalled alarm
            if on {
                for i in 0..<e.pointee.config.maxSources { SlotLifecycle.retire(e.pointee.slots + i) }
                reclaim(e)
            } else if was {
                e.pointee.resumeRequests.wrappingAdd(1, ordering: .releasing)
            }
            return 0
        }
    }

    static func setSourceGain(_ e: UnsafeMutablePointer<EngineCore>, _ id: UInt32, gain: Float?, muted: Bool?) -> Int32 {
        if let g = gain, !(g.isFinite && g >= 0 && g <= maxGain) { return RTMixError.invalidArgument.code }
        return withControlLock(e) {
            guard let s = lookup(e, id) else { return RTMixError.notFound.code }
            if let g = gain { s.pointee.requestedGain.store(g) }
            if let m = muted { s.pointee.muted.store(m, ordering: .relaxed) }
            let effective = s.pointee.muted.load(ordering: .relaxed) ? 0 : s.pointee.requestedGain.load()
            s.pointee.targetGain.store(effective)
            return 0
        }
    }

    static func setDomainGain(_ e: UnsafeMutablePointer<EngineCore>, _ domain: Domain, _ gain: Float) -> Int32 {
        guard gain.isFinite, gain >= 0, gain <= maxGain else { return RTMixError.invalidArgument.code }
        return withControlLock(e) {
            switch domain {
            case .call: e.pointee.callGainTarget.store(max(gain, e.pointee.config.callGainFloor))
            case .media: e.pointee.mediaGainTarget.store(gain)
            }
            return 0
        }
    }

    @_noLocks
    static func domainGain(_ e: UnsafeMutablePointer<EngineCore>, _ domain: Domain) -> Float {
        switch domain {
        case .call: return e.pointee.callGainTarget.load()
        case .media: return e.pointee.mediaGainTarget.load()
        }
    }

    static func engineStats(_ e: UnsafeMutablePointer<EngineCore>) -> EngineStats {
        withControlLock(e) {
            var st = EngineStats()
            st.activeSources = control(e).pointee.activeSources
            st.renderCalls = e.pointee.renderCalls.read()
            st.framesRendered = e.pointee.framesRendered.read()
            st.underrunFrames = e.pointee.underrunFrames.read()
            var rejected = control(e).pointee.retiredRejected
            var nonfinite = control(e).pointee.retiredNonfinite &+ e.pointee.nonfiniteMixed.read()
            for i in 0..<e.pointee.config.maxSources {
                let slot = e.pointee.slots + i
                guard SlotLifecycle.phase(slot) != .empty,
                      let s = slot.pointee.source.load(ordering: .acquiring) else { continue }
                rejected &+= s.pointee.framesRejected.read()
                nonfinite &+= s.pointee.nonfinitePushed.read()
            }
            st.rejectedFrames = rejected
            st.nonfiniteSamples = nonfinite
            st.limiterActiveFrames = e.pointee.limiterActiveFrames.read()
            st.limiterGainDb = rtmix_support_linear_to_db(e.pointee.limiterGain.load())
            st.limiterMinGainDb = rtmix_support_linear_to_db(e.pointee.limiterMinGain.load())
            st.renderNsLast = e.pointee.renderNsLast.read()
            st.renderNsMax = e.pointee.renderNsMax.read()
            // Bucket upper bounds can exceed the true maximum: cap them.
            st.renderNsP50 = min(e.pointee.renderTimes.percentile(0.50), st.renderNsMax)
            st.renderNsP99 = min(e.pointee.renderTimes.percentile(0.99), st.renderNsMax)
            st.sourcesAdded = control(e).pointee.sourcesAdded
            st.sourcesRemoved = control(e).pointee.sourcesRemoved
            st.captureRate = e.pointee.config.captureRate
            st.memoryBytes = memoryInUse(e)
            st.capture = captureStats(e)
            st.duckGainDb = rtmix_support_linear_to_db(e.pointee.duckGain.load())
            st.duckedFrames = e.pointee.duckedFrames.read()
            st.eventsSuppressed = e.pointee.events.suppressedTotal.read()
                &+ (e.pointee.capture?.pointee.events.suppressedTotal.read() ?? 0)
            st.eventsDropped = e.pointee.events.droppedTotal.read()
                &+ (e.pointee.capture?.pointee.events.droppedTotal.read() ?? 0)
            return st
        }
    }

    /// Changes the output rate and channels. Holds the control lock and the
    /// render role for the change: a render call meanwhile fails with
    /// badState instead of waiting, and if a render is in progress this
    /// returns badState at once. Producers keep pushing (rings and source
    /// formats are untouched). All new resamplers are built before anything
    /// is swapped, so a failed allocation changes nothing.
    static func setOutputFormat(_ e: UnsafeMutablePointer<EngineCore>, sampleRate: Int, channels: Int) -> Int32 {
        guard supportedRates.contains(sampleRate), supportedChannels.contains(channels) else {
            return RTMixError.unsupportedFormat.code
        }
        return withControlLock(e) {
            guard e.pointee.renderRole.compareExchange(expected: false, desired: true,
                                                      ordering: .acquiring).exchanged
            else { return RTMixError.badState.code }
            defer { e.pointee.renderRole.store(false, ordering: .releasing) }
            let rs = e.pointee.renderState
            if rs.pointee.sampleRate == sampleRate && rs.pointee.channels == channels { return 0 }

            // 1. New resamplers for every source the renderer may still touch.
            let n = e.pointee.config.maxSources
            guard let fresh = Allocation.allocate(Resampler?.self, count: n) else {
                return RTMixError.noMemory.code
            }
            defer { Allocation.free(fresh) }
            var built = 0
            var failed = false
            for i in 0..<n {
                let phase = SlotLifecycle.phase(e.pointee.slots + i)
                let live = phase == .active || phase == .removing
                if live, let s = e.pointee.slots[i].source.load(ordering: .acquiring),
                   SourceState.needsResampler(sourceRate: s.pointee.sampleRate, outputRate: sampleRate) {
                    let r = Resampler(quality: s.pointee.resamplerQuality, channels: s.pointee.channels,
                                      inputRate: s.pointee.sampleRate, outputRate: sampleRate,
                                      driftCompensation: false)
                    switch r {
                    case .none: failed = true
                    case .some: break
                    }
                    (fresh + i).initialize(to: r)
                } else {
                    (fresh + i).initialize(to: nil)
                }
                built += 1
                if failed { break }
            }
            if failed {
                fresh.deinitialize(count: built)
                return RTMixError.noMemory.code
            }
            // The reference tap converts the new output rate to the capture
            // rate (the capture side re-locks on the gap).
            if let tap = e.pointee.capture?.pointee.tap,
               !tap.pointee.rebuild(outputRate: sampleRate, captureRate: e.pointee.config.captureRate) {
                fresh.deinitialize(count: built)
                return RTMixError.noMemory.code
            }

            // 2. Swap them in and restart each source's render state (a
            // device switch is a restart: history, fades and ramps begin anew).
            let rampFrames = e.pointee.config.rampFrames(at: sampleRate)
            for i in 0..<n {
                let phase = SlotLifecycle.phase(e.pointee.slots + i)
                if phase == .active || phase == .removing,
                   let s = e.pointee.slots[i].source.load(ordering: .acquiring) {
                    let r = s.pointee.render
                    r.pointee.resampler = (fresh + i).move()
                    r.pointee.gainRamp = GainRamp(initial: r.pointee.gainRamp.target, rampFrames: rampFrames)
                    // Back to priming (the end-of-stream flag survives),
                    // no tail from the old format, the drift estimate kept.
                    let ending = r.pointee.playback.ending
                    r.pointee.playback = SourcePlayback()
                    r.pointee.playback.ending = ending
                    r.pointee.tail.forgetHistory()
                    r.pointee.tail.cancel()
                    r.pointee.tail.audible = false
                    // The restart fades in unless the source has no start
                    // threshold (then it resumes bit-exact, as at its start).
                    r.pointee.fadeIn = 1
                    r.pointee.resamplerDrained = false
                    r.pointee.drift.restartWindow()
                    if let stage = s.pointee.stage { stage.pointee.reset() }
                } else {
                    (fresh + i).deinitialize(count: 1)
                }
            }
            rs.pointee = EngineRenderState(config: e.pointee.config, sampleRate: sampleRate, channels: channels,
                                           callGain: rs.pointee.callRamp.target, mediaGain: rs.pointee.mediaRamp.target)
            e.pointee.outputFormat.store(EngineCore.packFormat(sampleRate: sampleRate, channels: channels),
                                         ordering: .relaxed)
            return 0
        }
    }

    /// The oldest unread event, or nil.
    static func nextEvent(_ e: UnsafeMutablePointer<EngineCore>) -> RawEvent? {
        withControlLock(e) {
            var event = e.pointee.events.next() ?? e.pointee.capture?.pointee.events.next()
            if event == nil {
                // The render thread cannot report its own absence: a
                // stall is detected here, on the control side.
                let now = e.pointee.events.now()
                if let gap = e.pointee.stall.checkStalled(now: now, active: control(e).pointee.activeSources > 0) {
                    event = RawEvent(kind: 15, source: 0, frameTime: e.pointee.framesRendered.read(),
                                     value: Int64(truncatingIfNeeded: min(gap, UInt64(Int64.max))), timeNs: now)
                }
            }
            if var ev = event, ev.domain < 0, ev.source != 0, let s = lookup(e, ev.source) {
                ev.domain = s.pointee.domain.rawValue  // posted without one: the source's, while it exists
                event = ev
            }
            return event
        }
    }

    static func sourceStats(_ e: UnsafeMutablePointer<EngineCore>, _ id: UInt32) -> SourceStats? {
        withControlLock(e) {
            guard let s = lookup(e, id) else { return nil }
            var st = SourceStats()
            st.domain = s.pointee.domain
            st.sampleRate = s.pointee.sampleRate
            st.channels = s.pointee.channels
            st.framesPushed = s.pointee.framesPushed.read()
            st.framesRejected = s.pointee.framesRejected.read()
            st.framesConsumed = s.pointee.framesConsumed.read()
            st.framesRendered = s.pointee.framesRendered.read()
            st.underrunFrames = s.pointee.underrunFrames.read()
            st.underrunEvents = s.pointee.underrunEvents.read()
            st.nonfiniteSamples = s.pointee.nonfinitePushed.read()
            st.bufferedFrames = buffered(s)
            st.capacityFrames = s.pointee.capacityFrames
            st.bufferedMs = Float(st.bufferedFrames) * 1000 / Float(s.pointee.sampleRate)
            st.gain = s.pointee.requestedGain.load()
            st.muted = s.pointee.muted.load(ordering: .relaxed)
            st.driftPpm = s.pointee.driftPpm.load()
            st.driftEstimatePpm = s.pointee.driftEstimatePpm.load()
            st.lowWaterMs = s.pointee.lowWaterMs.load()
            st.targetMs = Float(s.pointee.driftTargetFrames * 1000 / Double(s.pointee.sampleRate))
            st.effectiveTargetMs = s.pointee.effectiveTargetMs.load()
            st.driftSaturated = s.pointee.driftSaturated.load(ordering: .relaxed)
            st.framesDropped = s.pointee.framesDropped.read() &+ s.pointee.framesSkippedAtPush.read()
            st.framesFlushed = s.pointee.framesFlushed.read()
            st.phase = PlaybackPhase(rawValue: s.pointee.phase.load(ordering: .relaxed)) ?? .priming
            st.paused = s.pointee.paused.load(ordering: .relaxed)
            st.ended = s.pointee.endRequested.load(ordering: .relaxed)
            st.pull = s.pointee.pull != nil
            st.writableFrames = writable(s)
            return st
        }
    }

    /// Bytes RTMix holds for the engine and every source not yet freed
    /// (removed ones included until reclaimed). Control lock held.
    static func memoryInUse(_ e: UnsafeMutablePointer<EngineCore>) -> Int {
        var total = e.pointee.baseBytes
        for i in 0..<e.pointee.config.maxSources {
            if let s = e.pointee.slots[i].source.load(ordering: .acquiring) {
                total += s.pointee.memoryBytes(engineMaxFrames: e.pointee.config.maxFrames)
            }
        }
        return total
    }

    /// Whether a source with `config` fits under `maxMemoryBytes` (0: no
    /// cap). Control lock held.
    static func memoryAllows(_ e: UnsafeMutablePointer<EngineCore>, _ config: SourceConfig) -> Bool {
        let cap = e.pointee.config.maxMemoryBytes
        guard cap != 0 else { return true }
        guard let needed = SourceState.memoryBytes(config: config, engine: e.pointee.config) else { return false }
        return memoryInUse(e) + needed <= cap
    }
}
