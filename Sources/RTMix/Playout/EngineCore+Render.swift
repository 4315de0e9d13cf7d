import CRTMixSupport
import Synchronization

/// The render path: pull every source, resample, map channels, apply
/// source × domain gain ramps, sum, limit. Real-time safe: no locks,
/// allocation, reference counting or waiting (`@_noLocks` checks it).
extension EngineCore {
    /// Mixes `frames` frames into `out` (interleaved, engine channels).
    /// Returns an RTMix status. On error `out` is zero-filled as far as it
    /// is provably safe (`failedRenderZeroCount`): a host that ignores the
    /// status plays silence, not stale memory.
    /// `capacity`: samples `out` holds, when the caller knows it (nil: the
    /// unchecked C entry points).
    @_noLocks
    static func render(_ e: UnsafeMutablePointer<EngineCore>, into out: UnsafeMutablePointer<Float>,
                       frames: Int, capacity: Int? = nil) -> Int32 {
        let status = beginRender(e, frames: frames, capacity: capacity ?? Int.max)
        if status != 0 {
            out.update(repeating: 0, count: failedRenderZeroCount(e, frames: frames, capacity: capacity))
            return status
        }
        renderClaimed(e, into: out, frames: frames)
        endRender(e)
        return 0
    }

    /// As `render`, converted to int16 with saturation (mixes in the
    /// mix bus's own buffer first).
    @_noLocks
    static func renderS16(_ e: UnsafeMutablePointer<EngineCore>, into out: UnsafeMutablePointer<Int16>,
                          frames: Int, capacity: Int? = nil) -> Int32 {
        let status = beginRender(e, frames: frames, capacity: capacity ?? Int.max)
        if status != 0 {
            out.update(repeating: 0, count: failedRenderZeroCount(e, frames: frames, capacity: capacity))
            return status
        }
        let mix = e.pointee.mixBus.pointee.own
        renderClaimed(e, into: mix, frames: frames)
        Mixing.convertToS16(mix, out, count: frames * e.pointee.renderState.pointee.channels)
        endRender(e)
        return 0
    }

    /// Validates the frame count and claims the render role. `capacity`
    /// (samples the output holds, when the caller knows it) is checked
    /// against the output format under the role, so a concurrent format
    /// change cannot make the render overrun the buffer.
    @_noLocks
    static func beginRender(_ e: UnsafeMutablePointer<EngineCore>, frames: Int, capacity: Int) -> Int32 {
        guard frames > 0 else { return RTMixError.invalidArgument.code }
        guard frames <= e.pointee.config.maxFrames else { return RTMixError.tooManyFrames.code }
        guard e.pointee.renderRole.compareExchange(expected: false, desired: true,
                                                  ordering: .acquiring).exchanged
        else { return RTMixError.badState.code }
        if capacity < frames * e.pointee.renderState.pointee.channels {
            endRender(e)
            return RTMixError.invalidArgument.code
        }
        return 0
    }

    /// Samples to zero in the output of a failed render. With a known
    /// capacity: min(capacity, frames × 2) (2: the most channels any format
    /// has). Without one (the unchecked C entries, whose caller promised
    /// frames × channels samples for some format with channels ≥ 1):
    /// min(frames, max_frames), the part every format's buffer holds
    /// whatever format the caller believed in.
    @_noLocks
    static func failedRenderZeroCount(_ e: UnsafeMutablePointer<EngineCore>, frames: Int, capacity: Int?) -> Int {
        guard let capacity else { return max(0, min(frames, e.pointee.config.maxFrames)) }
        return zeroCount(frames: frames, capacity: capacity)
    }

    /// min(capacity, frames × 2), without overflow, never negative.
    @_noLocks
    static func zeroCount(frames: Int, capacity: Int) -> Int {
        guard frames > 0, capacity > 0 else { return 0 }
        return frames > capacity / 2 ? capacity : frames * 2
    }

    @_noLocks
    static func endRender(_ e: UnsafeMutablePointer<EngineCore>) {
        e.pointee.renderRole.store(false, ordering: .releasing)
    }

    /// The mix itself; the caller holds the render role.
    @_noLocks
    static func renderClaimed(_ e: UnsafeMutablePointer<EngineCore>, into out: UnsafeMutablePointer<Float>,
                              frames: Int) {
        // Odd while rendering: control threads do not free what this pass may see.
        e.pointee.passes.enter()
        // This thread is inside a pass (a remove from a pull callback must
        // not wait for it: waitForPullCallbacks).
        let inPass = _unsafePerformance { rtmix_support_render_engine() }.unsafelyUnwrapped
        inPass.pointee = UnsafeMutableRawPointer(e)
        let start: UInt64 = _unsafePerformance { rtmix_support_monotonic_ns() }
        let now = e.pointee.now()

        let rs = e.pointee.renderState
        let channels = rs.pointee.channels
        let blockNs = UInt64(frames) &* 1_000_000_000 / UInt64(rs.pointee.sampleRate)

        // A stall (no render call for several block periods: the host
        // stopped the device, or the system was busy) or the end of an
        // interruption: call sources drop stale audio, removed sources are
        // not heard again.
        let frameTime = e.pointee.framesRendered.read()
        var resumed = noteRenderStart(e, now: now, blockNs: blockNs, frameTime: frameTime)
        let resumeRequests = e.pointee.resumeRequests.load(ordering: .acquiring)
        let interruptionEnded = resumeRequests != rs.pointee.resumeSeen
        if interruptionEnded {
            rs.pointee.resumeSeen = resumeRequests
            resumed = true
        }
        let interrupted = e.pointee.interrupted.load(ordering: .relaxed)

        let maxFrames = e.pointee.config.maxFrames
        let callCurve = e.pointee.domainCurves
        let mediaCurve = e.pointee.domainCurves + maxFrames
        let callGain = prepareDomain(&rs.pointee.callRamp, target: e.pointee.callGainTarget.load(),
                                     curve: callCurve, frames: frames)
        let mediaGain = prepareDomain(&rs.pointee.mediaRamp, target: e.pointee.mediaGainTarget.load(),
                                      curve: mediaCurve, frames: frames)

        // The mix bus: call sources into `out`; media too, or on the media
        // bus when the block needs the media sum on its own (capture path:
        // published; ducking: the call sum first). See MixBus.
        let bus = e.pointee.mixBus
        let ducker = e.pointee.ducker
        bus.pointee.begin(output: out, frames: frames, channels: channels,
                          duckerWaits: ducker.pointee.wantsCallSum)

        var underruns = 0
        let block = BlockContext(frames: frames, outChannels: channels, outputRate: rs.pointee.sampleRate,
                                 fadeFrames: rs.pointee.fadeFrames, resumed: resumed,
                                 interruptionEnded: interruptionEnded, interrupted: interrupted,
                                 renderTimeNs: now, blockNs: blockNs)
        for i in 0..<e.pointee.config.maxSources {
            let slot = e.pointee.slots + i
            guard let (source, removing) = SlotLifecycle.visit(slot) else { continue }
            if removing && (resumed || interrupted) {
                // Its fade-out already happened in the silence: never play
                // a removed source's stale audio again.
                SlotLifecycle.retire(slot)
                continue
            }
            let isCall = source.pointee.isCall
            let route = bus.pointee.route(isCall: isCall, domainGain: isCall ? callGain : mediaGain)
            let result = mixSource(source, removing: removing, into: route.into, domainGain: route.gain,
                                   domainCurve: isCall ? callCurve : mediaCurve, block)
            underruns += result.underrunFrames
            let id = slot.pointee.id.load(ordering: .relaxed)
            reportSourceEvents(e, source, id: id, result, frameTime: frameTime)
            if isCall {
                monitorCallAudio(e, slot: i, source, id: id, result, frames: frames,
                                 callGain: callGain ?? rs.pointee.callRamp.current, frameTime: frameTime)
            }
            if result.fadedOut {
                // Last touch of this source by the renderer.
                SlotLifecycle.retire(slot)
            }
        }

        if bus.pointee.mediaOnBus {
            // `out` holds the call sources only here (`callSum`).
            let localMedia = duckMedia(e, callSum: bus.pointee.callSum, frames: frames, channels: channels,
                                       mediaGain: mediaGain, mediaCurve: mediaCurve)
            bus.pointee.combine(gain: localMedia, curve: mediaCurve)
        }
        ducker.pointee.callSeen = bus.pointee.callMixed

        let wasLimiting = rs.pointee.limiter.reduction > 0
        let report = rs.pointee.limiter.process(out, frames: frames, channels: channels)
        if let link = e.pointee.capture, let media = bus.pointee.publishedMedia {
            // The echo reference: exactly what is played; and the media sum.
            let tap = link.pointee.tap  // a pointer copy: see processCapture
            let (written, lost) = tap.pointee.write(output: out, media: media, channels: channels, frames: frames,
                                                    ring: link.pointee.ring)
            if lost > 0 { link.pointee.referenceOverflow.add(lost) }
            tap.pointee.framesWritten &+= UInt64(written)
            link.pointee.publishStamp(framesWritten: tap.pointee.framesWritten, ns: link.pointee.now())
        }
        if !wasLimiting && report.lowestGain < 1 {
            // The overload's depth: the gain that brings the block's
            // loudest peak down to the threshold (rtmix.h), never above the
            // gain applied (the reduction only moves towards it). Not that
            // lowest applied gain: an overload that starts in the block's
            // last frames leaves it at -0.0x dB, which truncated to 0
            // (issue 18: the markers of `rtmix-cli live`).
            let needed = rs.pointee.limiter.threshold / max(report.peak, rs.pointee.limiter.threshold)
            let millibels: Float = _unsafePerformance { rtmix_support_linear_to_db(needed) * 100 }
            e.pointee.events.post(.limiterEngaged, source: 0, frameTime: frameTime,
                                  value: min(-1, Int64(millibels) - (millibels < Float(Int64(millibels)) ? 1 : 0)))
        }
        noteLimiter(e, lowestGain: report.lowestGain, endGain: rs.pointee.limiter.gain, frameTime: frameTime)

        e.pointee.renderCalls.add(1)
        e.pointee.framesRendered.add(frames)
        e.pointee.underrunFrames.add(underruns)
        e.pointee.limiterActiveFrames.add(report.changedFrames)
        e.pointee.nonfiniteMixed.add(report.nonfiniteSamples)
        e.pointee.limiterGain.store(rs.pointee.limiter.gain)
        e.pointee.limiterMinGain.store(rs.pointee.limiter.minGain)
        let end: UInt64 = _unsafePerformance { rtmix_support_monotonic_ns() }
        let elapsed = end &- start
        e.pointee.renderNsLast.set(elapsed)
        if elapsed > e.pointee.renderNsMax.read() { e.pointee.renderNsMax.set(elapsed) }
        e.pointee.renderTimes.record(elapsed)
        if elapsed > UInt64(frames) * 500_000_000 / UInt64(rs.pointee.sampleRate) {
            e.pointee.events.post(.renderSlow, source: 0, frameTime: frameTime,
                                  value: Int64(truncatingIfNeeded: min(elapsed, UInt64(Int64.max))))
        }

        inPass.pointee = nil
        e.pointee.passes.leave(nowNs: e.pointee.now(), blockNs: blockNs)
    }

    /// Posts the events one source's block produced, and the producer-side
    /// problems (ring full, NaN/Inf) it has seen since the last report.
    @_noLocks
    static func reportSourceEvents(_ e: UnsafeMutablePointer<EngineCore>, _ s: UnsafeMutablePointer<SourceState>,
                                   id: UInt32, _ result: SourceResult, frameTime: UInt64) {
        let r = s.pointee.render
        let domain: Int32 = s.pointee.isCall ? 0 : 1
        if result.started > 0 {
            e.pointee.events.post(.sourceStarted, source: id, frameTime: frameTime, value: Int64(result.started), domain: domain)
        }
        if result.underrunEnded > 0 {
            e.pointee.events.post(.underrunEnded, source: id, frameTime: frameTime,
                                  value: Int64(result.underrunEnded), domain: domain)
        }
        if result.underrunBegan {
            e.pointee.events.post(.underrunBegan, source: id, frameTime: frameTime,
                                  value: Int64(result.underrunFrames), domain: domain)
        }
        if result.drained {
            e.pointee.events.post(.sourceDrained, source: id, frameTime: frameTime,
                                  value: Int64(r.pointee.inputPlayed + 0.5))
        }
        // Drops: what the renderer skipped in this block (stale audio, the
        // oldest of a full drop-oldest ring) plus what pushes could not
        // place even in the ring's headroom (the producer's count, read
        // here: one event carries both, as the stats add them).
        let skippedAtPush = s.pointee.framesSkippedAtPush.read()
        let pushDrops = skippedAtPush &- r.pointee.reportedSkippedAtPush
        r.pointee.reportedSkippedAtPush = skippedAtPush
        let dropped = UInt64(result.dropped) &+ pushDrops
        if dropped > 0 {
            e.pointee.events.post(.audioDropped, source: id, frameTime: frameTime,
                                  value: Int64(truncatingIfNeeded: dropped))
        }
        let saturated = s.pointee.driftSaturated.load(ordering: .relaxed)
        if saturated && !r.pointee.reportedSaturated {
            e.pointee.events.post(.driftSaturated, source: id, frameTime: frameTime,
                                  value: Int64(s.pointee.driftPpm.load()))
        }
        r.pointee.reportedSaturated = saturated
        let rejected = s.pointee.framesRejected.read()
        if rejected != r.pointee.reportedRejected {
            e.pointee.events.post(.bufferOverflow, source: id, frameTime: frameTime,
                                  value: Int64(rejected &- r.pointee.reportedRejected), domain: domain)
            r.pointee.reportedRejected = rejected
        }
        let nonfinite = s.pointee.nonfinitePushed.read()
        if nonfinite != r.pointee.reportedNonfinite {
            e.pointee.events.post(.nonfiniteInput, source: id, frameTime: frameTime,
                                  value: Int64(nonfinite &- r.pointee.reportedNonfinite), domain: domain)
            r.pointee.reportedNonfinite = nonfinite
        }
    }

    /// Advances a domain ramp over the block. Returns its gain when it is
    /// constant for the whole block, or nil after writing per-frame gains
    /// into `curve`.
    @_noLocks
    static func prepareDomain(_ ramp: inout GainRamp, target: Float, curve: UnsafeMutablePointer<Float>,
                              frames: Int) -> Float? {
        ramp.setTarget(target)
        if ramp.isSteady { return ramp.current }
        ramp.fill(curve, frames: frames)
        return nil
    }
}
