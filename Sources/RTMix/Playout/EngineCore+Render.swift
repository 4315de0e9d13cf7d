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
    @usableFromInline @_noLocks
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
    /// engine's own bus first).
    @usableFromInline @_noLocks
    static func renderS16(_ e: UnsafeMutablePointer<EngineCore>, into out: UnsafeMutablePointer<Int16>,
                          frames: Int, capacity: Int? = nil) -> Int32 {
        let status = beginRender(e, frames: frames, capacity: capacity ?? Int.max)
        if status != 0 {
            out.update(repeating: 0, count: failedRenderZeroCount(e, frames: frames, capacity: capacity))
            return status
        }
        renderClaimed(e, into: e.pointee.mix, frames: frames)
        Mixing.convertToS16(e.pointee.mix, out, count: frames * e.pointee.renderState.pointee.channels)
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
        guard e.pointee.rendering.compareExchange(expected: false, desired: true,
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
    @usableFromInline @_noLocks
    static func zeroCount(frames: Int, capacity: Int) -> Int {
        guard frames > 0, capacity > 0 else { return 0 }
        return frames > capacity / 2 ? capacity : frames * 2
    }

    @_noLocks
    static func endRender(_ e: UnsafeMutablePointer<EngineCore>) {
        e.pointee.rendering.store(false, ordering: .releasing)
    }

    /// The mix itself; the caller holds the render role.
    @usableFromInline @_noLocks
    static func renderClaimed(_ e: UnsafeMutablePointer<EngineCore>, into out: UnsafeMutablePointer<Float>,
                              frames: Int) {
        // Odd while rendering: control threads do not free what this pass may see.
        e.pointee.renderSeq.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let start: UInt64 = _unsafePerformance { rtmix_support_monotonic_ns() }

        let rs = e.pointee.renderState
        let channels = rs.pointee.channels
        out.update(repeating: 0, count: frames * channels)

        let maxFrames = e.pointee.config.maxFrames
        let callCurve = e.pointee.domainCurves
        let mediaCurve = e.pointee.domainCurves + maxFrames
        let callGain = prepareDomain(&rs.pointee.callRamp, target: e.pointee.callGainTarget.load(),
                                     curve: callCurve, frames: frames)
        let mediaGain = prepareDomain(&rs.pointee.mediaRamp, target: e.pointee.mediaGainTarget.load(),
                                      curve: mediaCurve, frames: frames)

        // With the capture path on, media sources are summed on their own
        // bus first (source gains only): that sum is what may be published,
        // and the local media volume is applied to it below.
        // With ducking on, media waits on a bus too, so the call sum is
        // known before the media is scaled (see Ducker).
        let mediaBus: UnsafeMutablePointer<Float>? = e.pointee.capture?.pointee.tap.pointee.mediaBus
            ?? e.pointee.ducker.pointee.busForBlock
        if let bus = mediaBus { bus.update(repeating: 0, count: frames * channels) }

        var underruns = 0
        let frameTime = e.pointee.framesRendered.read()
        noteRenderStart(e, frames: frames, frameTime: frameTime)
        var callMixed = false
        for i in 0..<e.pointee.config.maxSources {
            let slot = e.pointee.slots + i
            let state = slot.pointee.state.load(ordering: .sequentiallyConsistent)
            guard state == SlotState.active || state == SlotState.removing,
                  let source = slot.pointee.source.load(ordering: .acquiring)
            else { continue }
            let isCall = source.pointee.isCall
            let onBus = !isCall && mediaBus != nil
            let result = mixSource(source, removing: state == SlotState.removing,
                                   into: onBus ? mediaBus.unsafelyUnwrapped : out, outChannels: channels,
                                   frames: frames,
                                   domainGain: onBus ? 1 : (isCall ? callGain : mediaGain),
                                   domainCurve: isCall ? callCurve : mediaCurve,
                                   fadeFrames: rs.pointee.fadeFrames)
            underruns += result.underrunFrames
            let id = slot.pointee.id.load(ordering: .relaxed)
            reportSourceEvents(e, source, id: id, result, frameTime: frameTime)
            if isCall {
                callMixed = true
                monitorCallAudio(e, slot: i, source, id: id, result, frames: frames,
                                 callGain: callGain ?? rs.pointee.callRamp.current, frameTime: frameTime)
            }
            if result.fadedOut {
                // Last touch of this source by the renderer.
                _ = slot.pointee.state.compareExchange(expected: SlotState.removing, desired: SlotState.retired,
                                                      ordering: .sequentiallyConsistent)
            }
        }

        if let bus = mediaBus {
            // `out` holds the call sources only here.
            let localMedia = duckMedia(e, callSum: callMixed ? out : nil, frames: frames, channels: channels,
                                       mediaGain: mediaGain, mediaCurve: mediaCurve)
            addMediaBus(bus, into: out, frames: frames, channels: channels, gain: localMedia, curve: mediaCurve)
        }
        e.pointee.ducker.pointee.callSeen = callMixed

        let wasLimiting = rs.pointee.limiter.reduction > 0
        let report = rs.pointee.limiter.process(out, frames: frames, channels: channels)
        if let link = e.pointee.capture {
            // The echo reference: exactly what is played.
            let tap = link.pointee.tap  // a pointer copy: see processCapture
            let (written, lost) = tap.pointee.write(output: out, channels: channels, frames: frames,
                                                    ring: link.pointee.ring)
            if lost > 0 { link.pointee.referenceOverflow.add(lost) }
            tap.pointee.framesWritten &+= UInt64(written)
            link.pointee.publishStamp(framesWritten: tap.pointee.framesWritten, ns: link.pointee.now())
        }
        if !wasLimiting && report.lowestGain < 1 {
            let millibels: Float = _unsafePerformance { rtmix_support_linear_to_db(report.lowestGain) * 100 }
            e.pointee.events.post(.limiterEngaged, source: 0, frameTime: frameTime,
                                  value: Int64(millibels))
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

        e.pointee.renderSeq.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// Adds the media bus to the mix at the media domain gain (constant, or
    /// per frame from `curve`).
    @usableFromInline @_noLocks
    static func addMediaBus(_ bus: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, frames: Int,
                            channels: Int, gain: Float?, curve: UnsafePointer<Float>) {
        if let g = gain {
            if g == 0 { return }
            for i in 0..<(frames * channels) { out[i] += bus[i] * g }
        } else if channels == 2 {
            for f in 0..<frames {
                out[2 * f] += bus[2 * f] * curve[f]
                out[2 * f + 1] += bus[2 * f + 1] * curve[f]
            }
        } else {
            for f in 0..<frames { out[f] += bus[f] * curve[f] }
        }
    }

    /// Posts the events one source's block produced, and the producer-side
    /// problems (ring full, NaN/Inf) it has seen since the last report.
    @usableFromInline @_noLocks
    static func reportSourceEvents(_ e: UnsafeMutablePointer<EngineCore>, _ s: UnsafeMutablePointer<SourceState>,
                                   id: UInt32, _ result: SourceResult, frameTime: UInt64) {
        let r = s.pointee.render
        let domain: Int32 = s.pointee.isCall ? 0 : 1
        if result.underrunEnded > 0 {
            e.pointee.events.post(.underrunEnded, source: id, frameTime: frameTime,
                                  value: Int64(result.underrunEnded), domain: domain)
        }
        if result.underrunBegan {
            e.pointee.events.post(.underrunBegan, source: id, frameTime: frameTime,
                                  value: Int64(result.underrunFrames), domain: domain)
        }
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

    @usableFromInline
    struct SourceResult {
        @usableFromInline var underrunFrames = 0
        @usableFromInline var fadedOut = false
        /// The source went from playing to starved in this block.
        @usableFromInline var underrunBegan = false
        /// The source had data again after an underrun episode of this many
        /// output frames (0: no episode ended).
        @usableFromInline var underrunEnded = 0
        /// Peak |sample| of the source's audio in this block, before any
        /// gain (< 0: not measured). Feeds the "no RTC sound" monitor
        /// (`monitorCallAudio`): measured, it tells silent input apart.
        @usableFromInline var inputPeak: Float = -1
        init() {}
    }

    /// Pulls up to `frames` output frames from one source and adds them to
    /// the mix. A shortfall after the source has started is an underrun: the frames before the gap fade
    /// out over `fadeFrames`, the gap stays silent, and the next data fades
    /// in.
    @usableFromInline @_noLocks
    static func mixSource(_ s: UnsafeMutablePointer<SourceState>, removing: Bool,
                          into mix: UnsafeMutablePointer<Float>, outChannels: Int, frames: Int,
                          domainGain: Float?, domainCurve: UnsafePointer<Float>,
                          fadeFrames: Int) -> SourceResult {
        var result = SourceResult()
        let r = s.pointee.render
        let targetGain = removing ? 0 : s.pointee.targetGain.load()
        if r.pointee.rendered {
            r.pointee.gainRamp.setTarget(targetGain)
        } else {
            // Nothing of this source was heard yet: no ramp needed.
            r.pointee.gainRamp.reset(to: targetGain)
            r.pointee.rendered = true
        }
        let inChannels = s.pointee.channels

        // 1. Pull: straight from the ring (same rate) or through the resampler.
        var first: UnsafePointer<Float> = UnsafePointer(s.pointee.scratch)
        var firstFrames = 0
        var second: UnsafePointer<Float> = UnsafePointer(s.pointee.scratch)
        var secondFrames = 0
        var bypassRead = 0
        let isBypass: Bool
        switch r.pointee.resampler {
        case .none:
            isBypass = true
            let regions = s.pointee.ring.readableRegions(maxFrames: frames)
            first = UnsafePointer(regions.first)
            firstFrames = regions.firstFrames
            second = UnsafePointer(regions.second)
            secondFrames = regions.secondFrames
            bypassRead = regions.frames
        case .some(let resampler):
            isBypass = false
            var ratio = resampler.ratio
            if s.pointee.driftTargetFrames > 0 {
                ratio /= 1 + updateDriftCorrection(r, level: s.pointee.ring.bufferedFrames(),
                                                   target: s.pointee.driftTargetFrames,
                                                   blockSeconds: Double(frames) / (Double(s.pointee.sampleRate) * resampler.ratio),
                                                   sampleRate: s.pointee.sampleRate)
                s.pointee.driftPpm.store(Float(r.pointee.driftCorrection * 1_000_000))
            }
            firstFrames = pullResampled(resampler, ratio: ratio, ring: s.pointee.ring, into: s.pointee.scratch,
                                        channels: inChannels, frames: frames, consumed: s.pointee.framesConsumed)
        }
        let produced = firstFrames + secondFrames

        // 2. Start-up alignment: the first audio of a source (or the first
        // output of a resampler still filling its filter) that arrives short
        // of a full block is placed at the end of the block. The stream then
        // simply starts a few frames later, with no gap after it; this is
        // not an underrun.
        var offset = 0
        if !r.pointee.started && produced > 0 {
            offset = frames - produced
            r.pointee.started = true
        }
        let dataEnd = offset + produced  // data occupies frames [offset, dataEnd)

        // 3. Underrun bookkeeping.
        if produced > 0 && r.pointee.episodeMissed > 0 {
            // Data again: the episode is over (a new one may start below).
            result.underrunEnded = r.pointee.episodeMissed
            r.pointee.episodeMissed = 0
            r.pointee.starving = false
        }
        if dataEnd < frames {
            if r.pointee.started {
                result.underrunFrames = frames - dataEnd
                s.pointee.underrunFrames.add(frames - dataEnd)
                // Saturating: a 32-bit Int would overflow after ~12 h of
                // starving at 48 kHz.
                let (missed, overflow) = r.pointee.episodeMissed.addingReportingOverflow(frames - dataEnd)
                r.pointee.episodeMissed = overflow ? Int.max : missed
                if !r.pointee.starving {
                    s.pointee.underrunEvents.add(1)
                    result.underrunBegan = true
                }
            }
            r.pointee.starving = true
        } else {
            r.pointee.starving = false
        }

        // 4. Gains: constant for the block, or a per-frame curve.
        let presence = r.pointee.presence
        let steady = r.pointee.gainRamp.isSteady && domainGain != nil && presence == 1 && dataEnd == frames
        let target = mix + offset * outChannels
        if produced == 0 {
            r.pointee.gainRamp.skip(frames)
            if r.pointee.started { r.pointee.presence = 0 }
        } else if steady, let d = domainGain {
            let g = r.pointee.gainRamp.current * d
            if g != 0 {
                Mixing.accumulate(first, inChannels: inChannels, into: target, outChannels: outChannels,
                                  frames: firstFrames, gain: g)
                if secondFrames > 0 {
                    Mixing.accumulate(second, inChannels: inChannels, into: target + firstFrames * outChannels,
                                      outChannels: outChannels, frames: secondFrames, gain: g)
                }
            }
        } else {
            let curve = s.pointee.gainCurve
            r.pointee.gainRamp.fill(curve, frames: frames)
            if let d = domainGain {
                if d != 1 { for i in offset..<dataEnd { curve[i] *= d } }
            } else {
                for i in offset..<dataEnd { curve[i] *= domainCurve[i] }
            }
            var p = presence
            if p < 1 {
                // Resume after an underrun: fade in.
                let step = 1 / Float(fadeFrames)
                var i = offset
                while i < dataEnd && p < 1 {
                    p = min(1, p + step)
                    curve[i] *= p
                    i += 1
                }
            }
            if dataEnd < frames {
                // Underrun: fade out the frames just before the gap.
                let k = min(produced, fadeFrames)
                for j in 0..<k { curve[dataEnd - k + j] *= Float(k - j) / Float(k + 1) }
                p = 0
            }
            r.pointee.presence = p
            Mixing.accumulate(first, inChannels: inChannels, into: target, outChannels: outChannels,
                              frames: firstFrames, gains: curve + offset)
            if secondFrames > 0 {
                Mixing.accumulate(second, inChannels: inChannels, into: target + firstFrames * outChannels,
                                  outChannels: outChannels, frames: secondFrames, gains: curve + offset + firstFrames)
            }
        }
        if isBypass && bypassRead > 0 {
            s.pointee.ring.commitRead(bypassRead)
            s.pointee.framesConsumed.add(bypassRead)
        }
        s.pointee.framesRendered.add(produced)

        if removing && r.pointee.gainRamp.isSteady && r.pointee.gainRamp.current == 0 {
            result.fadedOut = true
        }
        return result
    }

    /// Drift compensation: a proportional controller on the smoothed buffer
    /// level. 10 ms above target → consume 1000 ppm faster (inaudible: under
    /// 2 cents), clamped to ±`SourceConfig.maxDriftCorrectionPpm`. The level
    /// is smoothed over ~2 s so bursty producers do not modulate the pitch.
    /// Returns the correction (fraction).
    @usableFromInline @_noLocks
    static func updateDriftCorrection(_ r: UnsafeMutablePointer<SourceRenderState>, level: Int, target: Double,
                                      blockSeconds: Double, sampleRate: Int) -> Double {
        guard r.pointee.started, !r.pointee.starving else { return r.pointee.driftCorrection }
        let l = Double(level)
        if r.pointee.smoothedLevel < 0 {
            r.pointee.smoothedLevel = l
        } else {
            r.pointee.smoothedLevel += (l - r.pointee.smoothedLevel) * min(1, blockSeconds / 2.0)
        }
        let errorSeconds = (r.pointee.smoothedLevel - target) / Double(sampleRate)
        let limit = Double(SourceConfig.maxDriftCorrectionPpm) / 1_000_000
        r.pointee.driftCorrection = max(-limit, min(limit, errorSeconds * 0.1))
        return r.pointee.driftCorrection
    }

    /// Fills `scratch` with up to `frames` resampled frames from the ring.
    /// libsamplerate keeps its own short history (the filter length) and
    /// takes only as much new input as the requested output needs.
    /// Returns the frames produced.
    @usableFromInline @_noLocks
    static func pullResampled(_ resampler: borrowing Resampler, ratio: Double, ring: borrowing SPSCRing,
                              into scratch: UnsafeMutablePointer<Float>, channels: Int, frames: Int,
                              consumed: borrowing Counter) -> Int {
        let regions = ring.readableRegions(maxFrames: Int.max)
        var input = UnsafePointer(regions.first)
        var inputLeft = regions.firstFrames
        var onSecond = false
        var produced = 0
        var used = 0
        while produced < frames {
            // Offer about what the remaining output needs, so input waits in
            // the ring (visible in stats) rather than inside libsamplerate.
            let need = Int(Double(frames - produced) / ratio) + 8
            let r = resampler.process(input: input, inputFrames: min(inputLeft, need),
                                      output: scratch + produced * channels, outputFrames: frames - produced,
                                      ratio: ratio)
            produced += r.generated
            used += r.used
            input += r.used * channels
            inputLeft -= r.used
            if inputLeft == 0 && !onSecond && regions.secondFrames > 0 {
                onSecond = true
                input = UnsafePointer(regions.second)
                inputLeft = regions.secondFrames
                continue
            }
            if r.generated == 0 && r.used == 0 { break }
        }
        if used > 0 {
            ring.commitRead(used)
            consumed.add(used)
        }
        return produced
    }
}
