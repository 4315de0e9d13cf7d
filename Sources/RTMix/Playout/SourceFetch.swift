/// The fetch and drift stages of one source in one render block:
///
///     ring ─▶ fetch: bypass (the ring's own memory) | fixed-ratio resampler
///          ─▶ drift stage (only while a correction is applied)
///
/// `driftControl` runs the source's `DriftController` for the block and
/// returns the correction; `fetch` produces the block's audio at the output
/// rate. Real-time safe (`@_noLocks`).
extension EngineCore {
    /// What `fetch` produced.
    struct Fetched {
        /// Output frames produced (≤ the block).
        var produced = 0
        /// Bypass: the audio is `regions` (the ring's memory, read but not
        /// yet committed); otherwise it is in the source's scratch buffer.
        var isBypass = true
        var regions: RingRegions
        /// The source ran out of audio in this block.
        var exhausted = false
        /// Output/input ratio used (for the position): nominal / (1 + correction).
        var ratioUsed: Double

        @_noLocks
        init(scratch: UnsafeMutablePointer<Float>, ratio: Double) {
            regions = RingRegions(first: scratch, firstFrames: 0, second: scratch, secondFrames: 0)
            ratioUsed = ratio
        }
    }

    /// The nominal output/input ratio of a source.
    @_noLocks
    static func nominalRatio(_ r: UnsafeMutablePointer<SourceRenderState>) -> Double {
        switch r.pointee.resampler {
        case .none: return 1
        case .some(let rs): return rs.ratio
        }
    }

    /// Runs drift control for a block the source plays (`buffered`: source
    /// frames in the ring before it). Returns the correction (0: none; see
    /// `DriftController` for when that is). Sources without drift control
    /// return 0.
    @_noLocks
    static func driftControl(_ s: UnsafeMutablePointer<SourceState>, _ r: UnsafeMutablePointer<SourceRenderState>,
                             buffered: Int, fade: Int, _ b: BlockContext, _ result: inout SourceResult) -> Double {
        guard s.pointee.driftTargetFrames > 0 else { return 0 }
        let windows = r.pointee.drift.windows
        let blockSeconds = Double(b.frames) / Double(b.outputRate)
        let rejected = s.pointee.framesRejected.read()
        let correction: Double
        if rejected != r.pointee.rejectedSeen {
            // Pushes were refused: the producer paces itself on the ring;
            // nothing to compensate.
            r.pointee.rejectedSeen = rejected
            correction = r.pointee.drift.holdOff(blockSeconds: blockSeconds)
            publishDrift(s, r)
        } else {
            correction = r.pointee.drift.update(level: Double(buffered),
                                                consumed: Double(s.pointee.framesConsumed.read()),
                                                blockSeconds: blockSeconds)
        }
        if r.pointee.drift.windows != windows {
            publishDrift(s, r)
            trimExcess(s, r, fade: fade, &result)
        }
        s.pointee.driftPpm.store(Float(correction * 1_000_000))
        return correction
    }

    /// A call source far above its target (a burst, a producer that caught
    /// up): the excess is dropped now, with a crossfade, instead of waiting
    /// for drift control.
    @_noLocks
    static func trimExcess(_ s: UnsafeMutablePointer<SourceState>, _ r: UnsafeMutablePointer<SourceRenderState>,
                           fade: Int, _ result: inout SourceResult) {
        // The effective target (DriftController, rule 5).
        let target = r.pointee.drift.targetFrames
        let excess = r.pointee.drift.lastLowWater - target
        let srcRate = Double(s.pointee.sampleRate)
        let slack = trimExcessSeconds * srcRate
        let limit = slack > target ? slack : target
        guard s.pointee.dropOldest, excess > limit else { return }
        let n = s.pointee.ring.discard(Int(excess))
        guard n > 0 else { return }
        result.dropped += n
        s.pointee.framesDropped.add(n)
        // The crossfade: the mirror tail of what played fades out while the
        // new audio fades in.
        r.pointee.tail.start(fade: fade)
        switch r.pointee.resampler {
        case .none: break
        case .some(let resampler): resampler.reset()
        }
        if let stage = s.pointee.stage { stage.pointee.reset() }
        r.pointee.fadeIn = 0
        r.pointee.drift.restartWindow()
    }

    /// Produces up to `b.frames` output frames of the source's audio at
    /// `correction` (see the extension's comment).
    @_noLocks
    static func fetch(_ s: UnsafeMutablePointer<SourceState>, _ r: UnsafeMutablePointer<SourceRenderState>,
                      correction: Double, _ b: BlockContext) -> Fetched {
        let frames = b.frames
        let nominal = nominalRatio(r)
        var f = Fetched(scratch: s.pointee.scratch, ratio: nominal / (1 + correction))
        let stage = s.pointee.stage
        var staged = false
        if let stage { staged = stage.pointee.active }
        if !staged && correction == 0 {
            // No correction: the fixed stage straight into the block.
            switch r.pointee.resampler {
            case .none:
                f.regions = s.pointee.ring.readableRegions(maxFrames: frames)
                f.produced = f.regions.frames
                f.exhausted = f.produced < frames
                if let stage {
                    stage.pointee.record(UnsafePointer(f.regions.first), frames: f.regions.firstFrames)
                    stage.pointee.record(UnsafePointer(f.regions.second), frames: f.regions.secondFrames)
                }
            case .some:
                f.isBypass = false
                f.produced = fetchFixed(s, r, into: s.pointee.scratch, frames: frames, exhausted: &f.exhausted)
                if let stage { stage.pointee.record(UnsafePointer(s.pointee.scratch), frames: f.produced) }
            }
            return f
        }
        // Through the drift stage (engaging, active or releasing).
        guard let stage else { return f }
        f.isBypass = false
        let out = s.pointee.scratch
        if !stage.pointee.active { stage.pointee.engage() }
        if correction == 0 && stage.pointee.canRelease {
            // Releasing: what the stage holds, then the fixed stage directly.
            var produced = stage.pointee.release(into: out, frames: frames)
            if !stage.pointee.active && produced < frames {
                let n = fetchCopy(s, r, into: out + produced * s.pointee.channels, frames: frames - produced,
                                  exhausted: &f.exhausted)
                stage.pointee.record(UnsafePointer(out + produced * s.pointee.channels), frames: n)
                produced += n
            }
            f.produced = produced
            f.exhausted = f.exhausted || produced < frames
            return f
        }
        let step = stage.pointee.step(correction: correction, frames: frames)
        let need = stage.pointee.inputNeeded(frames: frames, step: step)
        var ranOut = false
        if need > 0 {
            let got = fetchCopy(s, r, into: stage.pointee.staging, frames: need, exhausted: &ranOut)
            stage.pointee.appendStaged(frames: got)
        }
        var produced = stage.pointee.produce(into: out, frames: frames, step: step)
        if produced < frames && r.pointee.playback.ending && s.pointee.ring.bufferedFrames() == 0 {
            // End of stream: the stage's look-ahead goes out as it is.
            produced += stage.pointee.drainHeld(into: out + produced * s.pointee.channels, frames: frames - produced)
        }
        f.produced = produced
        f.exhausted = ranOut || produced < frames
        return f
    }

    /// The fixed stage into `dest` (a copy, also for a bypass source): up
    /// to `frames` output-rate frames. At the end of the stream the fixed
    /// resampler's look-ahead is drained too.
    @_noLocks
    static func fetchCopy(_ s: UnsafeMutablePointer<SourceState>, _ r: UnsafeMutablePointer<SourceRenderState>,
                          into dest: UnsafeMutablePointer<Float>, frames: Int, exhausted: inout Bool) -> Int {
        switch r.pointee.resampler {
        case .none:
            let regions = s.pointee.ring.readableRegions(maxFrames: frames)
            let c = s.pointee.channels
            for i in 0..<(regions.firstFrames * c) { dest[i] = regions.first[i] }
            let d2 = dest + regions.firstFrames * c
            for i in 0..<(regions.secondFrames * c) { d2[i] = regions.second[i] }
            let n = regions.frames
            if n > 0 {
                s.pointee.ring.commitRead(n)
                s.pointee.framesConsumed.add(n)
            }
            exhausted = n < frames
            return n
        case .some:
            return fetchFixed(s, r, into: dest, frames: frames, exhausted: &exhausted)
        }
    }

    /// The fixed-ratio resampler into `dest`; drains its look-ahead at the
    /// end of the stream.
    @_noLocks
    static func fetchFixed(_ s: UnsafeMutablePointer<SourceState>, _ r: UnsafeMutablePointer<SourceRenderState>,
                           into dest: UnsafeMutablePointer<Float>, frames: Int, exhausted: inout Bool) -> Int {
        switch r.pointee.resampler {
        case .none:
            return 0
        case .some(let resampler):
            let c = s.pointee.channels
            var produced = pullResampled(resampler, ratio: resampler.ratio, ring: s.pointee.ring, into: dest,
                                         channels: c, frames: frames, consumed: s.pointee.framesConsumed)
            if produced < frames && r.pointee.playback.ending && s.pointee.ring.bufferedFrames() == 0 {
                // End of stream: the filter's look-ahead still holds audio.
                if !r.pointee.resamplerDrained {
                    produced += resampler.drain(output: dest + produced * c, outputFrames: frames - produced,
                                                ratio: resampler.ratio, zeros: s.pointee.zeros)
                    r.pointee.resamplerDrained = true
                }
                exhausted = true
            }
            return produced
        }
    }
}
