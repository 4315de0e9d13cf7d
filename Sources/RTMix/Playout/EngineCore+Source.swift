import Synchronization

/// One source in one render block: host commands, stale-audio drops, the
/// playback state machine, drift control, pull, click-free starts and
/// stops, gains, mix, position. Real-time safe (`@_noLocks`).
extension EngineCore {
    /// Facts about the block every source shares.
    struct BlockContext {
        var frames: Int
        var outChannels: Int
        var outputRate: Int
        /// Underrun/start fade length in output frames (2 ms).
        var fadeFrames: Int
        /// First block after a stall or an interruption.
        var resumed: Bool
        /// First block after `setInterrupted(false)`: every source that
        /// was playing fades in (the device cut it), untimed ones too.
        var interruptionEnded: Bool
        /// `setInterrupted(true)`: silence from the first block on (no
        /// fade-out tail), nothing consumed.
        var interrupted: Bool
        var renderTimeNs: UInt64
        var blockNs: UInt64

        @_noLocks
        init(frames: Int, outChannels: Int, outputRate: Int, fadeFrames: Int, resumed: Bool,
             interruptionEnded: Bool, interrupted: Bool, renderTimeNs: UInt64, blockNs: UInt64) {
            self.frames = frames
            self.outChannels = outChannels
            self.outputRate = outputRate
            self.fadeFrames = fadeFrames
            self.resumed = resumed
            self.interruptionEnded = interruptionEnded
            self.interrupted = interrupted
            self.renderTimeNs = renderTimeNs
            self.blockNs = blockNs
        }
    }

    struct SourceResult {
        var underrunFrames = 0
        var fadedOut = false
        /// The source went from playing to starved in this block.
        var underrunBegan = false
        /// The source has data again after an underrun episode of this many
        /// output frames (0: no episode ended).
        var underrunEnded = 0
        /// > 0: the source started playing, holding this many frames.
        var started = 0
        var drained = false
        /// Frames of stale or lapped audio dropped in this block.
        var dropped = 0
        /// Peak |sample| of the source's audio in this block, before any
        /// gain (< 0: not measured; measured for call sources). Feeds the
        /// "no RTC sound" monitor (`monitorCallAudio`): silent input.
        var inputPeak: Float = -1
        init() {}
    }

    /// Call sources: after a stall, audio older than the target plus one
    /// push (at most this, 20 ms) is stale and dropped.
    static var staleSlackSeconds: Double { 0.020 }
    /// Call sources: a low-water mark this far above the target (or the
    /// target itself, if larger) is trimmed at once instead of by drift
    /// control (80 ms).
    static var trimExcessSeconds: Double { @_noLocks get { 0.080 } }

    /// Pulls up to `frames` output frames from one source and adds them to
    /// the mix (see the extension's comment).
    @_noLocks
    static func mixSource(_ s: UnsafeMutablePointer<SourceState>, removing: Bool,
                          into mix: UnsafeMutablePointer<Float>,
                          domainGain: Float?, domainCurve: UnsafePointer<Float>,
                          _ b: BlockContext) -> SourceResult {
        var result = SourceResult()
        let r = s.pointee.render
        let frames = b.frames
        let fade = b.fadeFrames
        let inChannels = s.pointee.channels
        let srcRate = Double(s.pointee.sampleRate)
        let targetGain = removing ? 0 : s.pointee.targetGain.load()
        if r.pointee.rendered {
            r.pointee.gainRamp.setTarget(targetGain)
        } else {
            // Nothing of this source was heard yet: no ramp needed.
            r.pointee.gainRamp.reset(to: targetGain)
            r.pointee.rendered = true
        }
        let nominalRatio = EngineCore.nominalRatio(r)
        let blockInput = inputFrames(forOutput: frames, ratio: nominalRatio)

        // 1. Host commands: flush (drop what was pushed before it), end.
        let flushes = s.pointee.flushRequests.load(ordering: .acquiring)
        if flushes != r.pointee.flushSeen {
            r.pointee.flushSeen = flushes
            let upTo = s.pointee.flushUpTo.load(ordering: .relaxed)
            let n = s.pointee.ring.discard(max(0, upTo &- s.pointee.ring.readCount()))
            s.pointee.framesFlushed.add(n)
            interruptAudio(s, fade: fade)
            r.pointee.playback.flush()
        }
        if s.pointee.endRequested.load(ordering: .acquiring) { r.pointee.playback.ending = true }

        // 2. Drop-oldest sources: the renderer does the dropping (the
        // producer only writes free space: SourceState.capacityFrames). It
        // skips the oldest audio once more than 3/4 of the capacity is
        // buffered and, after a stall, audio that has gone stale.
        if s.pointee.dropOldest && !r.pointee.playback.isDrained && !b.interrupted {
            let fill = s.pointee.ring.rawFill()
            let capacity = s.pointee.capacityFrames
            // Keep the target plus one push (at most the 20 ms slack): the
            // target is a low-water mark, reached just before a push lands.
            let slack = Int(staleSlackSeconds * srcRate)
            let onePush = min(Int(truncatingIfNeeded: s.pointee.lastPushFrames.read()), slack)
            // The target is the effective one (it covers the producer's
            // delivery jitter: DriftController, rule 5).
            let keep = max(max(Int(r.pointee.drift.targetFrames), s.pointee.startThresholdFrames), blockInput) + onePush
            let stale = b.resumed && fill > keep
            if fill > capacity - capacity / 4 || stale {
                let n = s.pointee.ring.skipToNewest(keep: keep)
                if n > 0 {
                    result.dropped += n
                    s.pointee.framesDropped.add(n)
                    interruptAudio(s, fade: fade)
                }
            }
        }

        // 3. Pull sources: the callback fills what this block needs. Never
        // for a removing source: once rtmix_source_remove has returned the
        // host may have freed the callback's user_data (it fades out on
        // what it holds; see waitForPullCallbacks).
        if let callback = s.pointee.pull, !removing, !b.interrupted, !s.pointee.paused.load(ordering: .relaxed),
           !r.pointee.playback.isDrained, !r.pointee.playback.ending {
            if fillFromPull(s, callback: callback, frames: blockInput + (r.pointee.resampler == nil ? 0 : 8)) < 0 {
                r.pointee.playback.ending = true
            }
        }

        // 4. The state machine decides the block.
        let buffered = s.pointee.ring.bufferedFrames()
        if buffered > 0 && r.pointee.drift.gapOpen && r.pointee.playback.isStarved {
            // Delivery resumed after an underrun: the gap raises the
            // effective target (DriftController, rule 5) before the
            // re-priming threshold is decided.
            r.pointee.drift.observeGap(missed: Double(r.pointee.playback.episodeMissed) * srcRate
                                           / Double(b.outputRate))
        }
        // After an underrun the start threshold is raised to cover the
        // delivery jitter seen (a jitter buffer re-primes deeper); a first
        // start, a flush or a resume keep the configured one.
        let raise = r.pointee.playback.isStarved ? Int(r.pointee.drift.reprimeRaise) : 0
        let threshold = s.pointee.startThresholdFrames > 0
            ? max(s.pointee.startThresholdFrames + raise, blockInput) : 1
        let wasPlaying = r.pointee.playback.isPlaying
        let plan = r.pointee.playback.plan(buffered: buffered, threshold: threshold,
                                           paused: s.pointee.paused.load(ordering: .relaxed) || b.interrupted,
                                           frames: frames)
        if plan.stopBefore { interruptAudio(s, fade: fade) }
        if b.interrupted {
            // rtmix.h: while interrupted, every render (the first one
            // included) is silence: no fade-out tail of what was playing
            // (the device is being taken away; it would be stale audio
            // after a gap, and echo reference that was never played). The
            // resume fades in from silence (plan.fadeIn, below).
            r.pointee.tail.cancel()
            r.pointee.tail.forgetHistory()
            r.pointee.tail.audible = false
        }
        if plan.started { result.started = max(1, buffered) }
        // Starts fade in, except those of a source without a start
        // threshold, which plays whatever it has whenever it has it: at its
        // first start (its first sample is the stream's beginning: bit-exact
        // from there) and on a resume after a stall (a continuation); but
        // after an interruption every source fades in (rtmix.h).
        if (plan.fadeIn && (r.pointee.playback.hasPlayed || s.pointee.startThresholdFrames > 0))
            || (b.resumed && wasPlaying && (s.pointee.startThresholdFrames > 0 || b.interruptionEnded)) {
            r.pointee.fadeIn = 0
        }
        result.underrunEnded = plan.underrunEnded
        if plan.drained { result.drained = true }
        if plan.underrunFrames > 0 {
            result.underrunFrames = plan.underrunFrames
            s.pointee.underrunFrames.add(plan.underrunFrames)
            if s.pointee.driftTargetFrames > 0 {
                r.pointee.drift.starvedBlock(blockSeconds: Double(frames) / Double(b.outputRate))
            }
        }

        // 5. Fetch (bypass | fixed-ratio resampler) and the drift stage,
        // at the correction drift control decides (SourceFetch).
        var correction = 0.0
        var fetched = Fetched(scratch: s.pointee.scratch, ratio: nominalRatio)
        if plan.pull {
            correction = driftControl(s, r, buffered: buffered, fade: fade, b, &result)
            fetched = fetch(s, r, correction: correction, b)
        }
        let produced = fetched.produced
        let regions = fetched.regions
        let isBypass = fetched.isBypass
        let ratioUsed = fetched.ratioUsed
        let exhausted = fetched.exhausted

        // Start-up alignment: the very first audio, short of a block (a
        // resampler still filling its filter), goes at the end of the block:
        // the stream starts a few frames later, with no gap after it.
        var offset = 0
        if plan.pull && !r.pointee.playback.hasPlayed && produced > 0 && produced < frames && !r.pointee.playback.ending {
            offset = frames - produced
        }
        let dataEnd = offset + produced
        if plan.pull {
            let fin = r.pointee.playback.finish(produced: produced, frames: frames,
                                                exhausted: exhausted || (isBypass && s.pointee.ring.bufferedFrames() == 0),
                                                startOffset: offset)
            if fin.underrunFrames > 0 {
                result.underrunFrames += fin.underrunFrames
                s.pointee.underrunFrames.add(fin.underrunFrames)
            }
            if fin.underrunBegan {
                result.underrunBegan = true
                s.pointee.underrunEvents.add(1)
                if s.pointee.driftTargetFrames > 0 { r.pointee.drift.underrunBegan() }
            }
            if fin.drained { result.drained = true }
            if produced == 0 && r.pointee.tail.audible {
                // The gap starts exactly at the block boundary.
                r.pointee.tail.start(fade: fade)
            }
        }

        if s.pointee.isCall {
            result.inputPeak = produced == 0 ? 0
                : (isBypass ? max(peak(regions.first, count: regions.firstFrames * inChannels),
                                  peak(regions.second, count: regions.secondFrames * inChannels))
                            : peak(s.pointee.scratch, count: produced * inChannels))
        }

        // 6. Compose and mix.
        let fast = produced == frames && r.pointee.fadeIn >= 1 && !r.pointee.tail.pending
        if fast {
            if isBypass {
                recordRegions(r, regions, fade: fade)
                mixGained(s, r, first: UnsafePointer(regions.first), firstFrames: regions.firstFrames,
                          second: UnsafePointer(regions.second), secondFrames: regions.secondFrames,
                          into: mix, domainGain: domainGain, domainCurve: domainCurve, b)
            } else {
                r.pointee.tail.record(UnsafePointer(s.pointee.scratch), frames: frames, fade: fade)
                mixGained(s, r, first: UnsafePointer(s.pointee.scratch), firstFrames: frames,
                          second: UnsafePointer(s.pointee.scratch), secondFrames: 0,
                          into: mix, domainGain: domainGain, domainCurve: domainCurve, b)
            }
            r.pointee.tail.audible = true
        } else if produced > 0 || r.pointee.tail.pending {
            let buf = s.pointee.scratch
            // a. The audio at [offset, dataEnd), silence around it.
            if isBypass {
                let d1 = buf + offset * inChannels
                for i in 0..<(regions.firstFrames * inChannels) { d1[i] = regions.first[i] }
                let d2 = d1 + regions.firstFrames * inChannels
                for i in 0..<(regions.secondFrames * inChannels) { d2[i] = regions.second[i] }
            } else if offset > 0 {
                var i = produced * inChannels - 1
                while i >= 0 { buf[offset * inChannels + i] = buf[i]; i -= 1 }  // backwards: overlapping
            }
            if offset > 0 { buf.update(repeating: 0, count: offset * inChannels) }
            if dataEnd < frames { (buf + dataEnd * inChannels).update(repeating: 0, count: (frames - dataEnd) * inChannels) }
            // b. Fade in after a (re)start.
            var p = r.pointee.fadeIn
            if p < 1 && produced > 0 {
                let step = 1 / Float(fade)
                var i = offset
                while i < dataEnd && p < 1 {
                    p = min(1, p + step)
                    for c in 0..<inChannels { buf[i * inChannels + c] *= p }
                    i += 1
                }
                r.pointee.fadeIn = p
            }
            // c. Remember what played; d. the pending tail (a stop before
            // this block, or the crossfade of a drop); e. a stop inside it.
            r.pointee.tail.record(UnsafePointer(buf + offset * inChannels), frames: produced, fade: fade)
            r.pointee.tail.emit(into: buf, at: 0, end: frames)
            if produced > 0 && dataEnd < frames {
                r.pointee.tail.start(fade: fade)
                r.pointee.tail.emit(into: buf, at: dataEnd, end: frames)
            }
            r.pointee.tail.audible = produced > 0 && dataEnd == frames
            mixGained(s, r, first: UnsafePointer(buf), firstFrames: frames, second: UnsafePointer(buf), secondFrames: 0,
                      into: mix, domainGain: domainGain, domainCurve: domainCurve, b)
        } else {
            r.pointee.gainRamp.skip(frames)
            r.pointee.tail.audible = false
        }
        if isBypass && plan.pull && produced > 0 {
            s.pointee.ring.commitRead(produced)
            s.pointee.framesConsumed.add(produced)
        }
        s.pointee.framesRendered.add(produced)

        // 7. Position (for A/V sync) and phase.
        if produced > 0 { r.pointee.inputPlayed += isBypass ? Double(produced) : Double(produced) / ratioUsed }
        let held = max(0, Double(s.pointee.framesConsumed.read()) - r.pointee.inputPlayed)
        let queued = Double(s.pointee.ring.bufferedFrames()) + (r.pointee.resamplerDrained ? 0 : held)
        let latency = Double(b.blockNs) + queued / srcRate / (1 + correction) * 1e9
        s.pointee.position.publish(framesPlayed: UInt64(max(0, r.pointee.inputPlayed)), renderTimeNs: b.renderTimeNs,
                                   latencyNs: UInt64(max(0, latency)))
        s.pointee.phase.store(r.pointee.playback.phaseCode, ordering: .relaxed)

        if removing && r.pointee.gainRamp.isSteady && r.pointee.gainRamp.current == 0 {
            result.fadedOut = true
        }
        return result
    }

    /// Largest |sample|.
    @_noLocks
    static func peak(_ x: UnsafePointer<Float>, count: Int) -> Float {
        var m: Float = 0
        for i in 0..<count { m = max(m, abs(x[i])) }
        return m
    }

    /// Input frames a block of `frames` output frames consumes (rounded up,
    /// plus 2 for the resampler's fractional position).
    @_noLocks
    static func inputFrames(forOutput frames: Int, ratio: Double) -> Int {
        ratio == 1 ? frames : Int(Double(frames) / ratio) + 3
    }

    /// The audio stops before this block (flush, drop, pause): a faded
    /// mirror tail if it was audible, the next audio fades in, and the
    /// resampler and drift window start over.
    @_noLocks
    static func interruptAudio(_ r: UnsafeMutablePointer<SourceRenderState>, fade: Int) {
        if r.pointee.tail.audible { r.pointee.tail.start(fade: fade) }
        r.pointee.fadeIn = 0
        switch r.pointee.resampler {
        case .none: break
        case .some(let resampler): resampler.reset()
        }
        r.pointee.resamplerDrained = false
        r.pointee.drift.restartWindow()
    }

    /// `interruptAudio` for a source (its drift stage starts over too).
    @_noLocks
    static func interruptAudio(_ s: UnsafeMutablePointer<SourceState>, fade: Int) {
        interruptAudio(s.pointee.render, fade: fade)
        if let stage = s.pointee.stage { stage.pointee.reset() }
    }

    /// Publishes the drift controller's figures after a window.
    @_noLocks
    static func publishDrift(_ s: UnsafeMutablePointer<SourceState>, _ r: UnsafeMutablePointer<SourceRenderState>) {
        s.pointee.driftEstimatePpm.store(Float(r.pointee.drift.estimatePpm))
        s.pointee.lowWaterMs.store(Float(r.pointee.drift.lastLowWater * 1000 / Double(s.pointee.sampleRate)))
        s.pointee.effectiveTargetMs.store(Float(r.pointee.drift.targetFrames * 1000 / Double(s.pointee.sampleRate)))
        s.pointee.driftSaturated.store(r.pointee.drift.saturated, ordering: .relaxed)
    }

    /// Keeps the last played frames of a bypass block for a later tail.
    @_noLocks
    static func recordRegions(_ r: UnsafeMutablePointer<SourceRenderState>, _ regions: RingRegions, fade: Int) {
        r.pointee.tail.record(UnsafePointer(regions.first), frames: regions.firstFrames, fade: fade)
        r.pointee.tail.record(UnsafePointer(regions.second), frames: regions.secondFrames, fade: fade)
    }

    /// Adds `first` then `second` (source channels) to the mix with the
    /// source's gain ramp and the domain gain (constant or per frame).
    @_noLocks
    static func mixGained(_ s: UnsafeMutablePointer<SourceState>, _ r: UnsafeMutablePointer<SourceRenderState>,
                          first: UnsafePointer<Float>, firstFrames: Int,
                          second: UnsafePointer<Float>, secondFrames: Int,
                          into mix: UnsafeMutablePointer<Float>, domainGain: Float?,
                          domainCurve: UnsafePointer<Float>, _ b: BlockContext) {
        let inChannels = s.pointee.channels
        let outChannels = b.outChannels
        let frames = firstFrames + secondFrames
        if r.pointee.gainRamp.isSteady, let d = domainGain {
            r.pointee.gainRamp.skip(b.frames)
            let g = r.pointee.gainRamp.current * d
            if g == 0 { return }
            Mixing.accumulate(first, inChannels: inChannels, into: mix, outChannels: outChannels,
                              frames: firstFrames, gain: g)
            if secondFrames > 0 {
                Mixing.accumulate(second, inChannels: inChannels, into: mix + firstFrames * outChannels,
                                  outChannels: outChannels, frames: secondFrames, gain: g)
            }
            return
        }
        let curve = s.pointee.gainCurve
        r.pointee.gainRamp.fill(curve, frames: b.frames)
        if let d = domainGain {
            if d != 1 { for i in 0..<frames { curve[i] *= d } }
        } else {
            for i in 0..<frames { curve[i] *= domainCurve[i] }
        }
        Mixing.accumulate(first, inChannels: inChannels, into: mix, outChannels: outChannels,
                          frames: firstFrames, gains: curve)
        if secondFrames > 0 {
            Mixing.accumulate(second, inChannels: inChannels, into: mix + firstFrames * outChannels,
                              outChannels: outChannels, frames: secondFrames, gains: curve + firstFrames)
        }
    }

    /// A pull source: asks the callback for audio so that the ring holds
    /// `frames` input frames. Returns the callback's negative status at the
    /// end of the stream, else the frames added.
    @_noLocks
    static func fillFromPull(_ s: UnsafeMutablePointer<SourceState>, callback: PullCallback, frames: Int) -> Int {
        let need = frames - s.pointee.ring.bufferedFrames()
        guard need > 0 else { return 0 }
        let regions = s.pointee.ring.writableRegions(maxFrames: need)
        let channels = s.pointee.channels
        var added = 0
        var part = 0
        while part < 2 {
            let base = part == 0 ? regions.first : regions.second
            let count = part == 0 ? regions.firstFrames : regions.secondFrames
            part += 1
            if count == 0 { continue }
            let got = _unsafePerformance { callback(s.pointee.pullContext, base, Int32(count), Int32(channels)) }
            if got < 0 {
                if added > 0 { s.pointee.ring.commitWrite(added) }
                return Int(got)
            }
            let n = min(Int(got), count)
            // NaN/Inf never reach the mix.
            let bad = Mixing.copySanitized(UnsafePointer(base), base, count: n * channels)
            if bad > 0 { s.pointee.nonfinitePushed.add(bad) }
            added += n
            if n < count { break }
        }
        if added > 0 {
            s.pointee.ring.commitWrite(added)
            s.pointee.framesPushed.add(added)
        }
        return added
    }

    /// Fills `scratch` with up to `frames` resampled frames from the ring.
    /// The resamplers keep their own short history (the filter length) and
    /// take only as much new input as the requested output needs.
    /// Returns the frames produced.
    @_noLocks
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
            // the ring (visible in stats) rather than inside the resampler.
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
