import CRTMixSupport

/// Capture stage 0, the reference side: what the renderer handed over
/// (`ReferenceTap` → the link's ring, at the capture rate) goes through the
/// drift resampler, at the step the clock follower sets, into a history the
/// canceller's frames are read from. `appended` counts the history's
/// samples (the render clock as the capture side sees it, `h` in
/// CaptureProcessor's notes). Planar: `channels` reference channels (1, or
/// 2 for a two-loudspeaker canceller), then the media to publish.
///
/// The reference is mixed down to mono for the delay estimator on the way
/// in. `init` allocates; nothing else does.
struct ReferenceHistory: ~Copyable {
    /// Reference channels (the media plane follows them).
    let channels: Int
    /// Samples per plane, a power of two: the longest delay searched
    /// (~0.6 s) + two blocks + slack.
    let capacity: Int
    private let planes: UnsafeMutablePointer<Float>
    private(set) var appended: Int64 = 0
    /// Ring drain scratch: planar, the same channels, `2 × chunk` each,
    /// plus the mono sum of the reference for the delay estimator.
    private let chunk: Int
    private let drained: UnsafeMutablePointer<Float>
    private let drainedMono: UnsafeMutablePointer<Float>
    private var resampler: DriftResampler
    /// Ring frames read so far (the render side's stamp counts written).
    private var ringRead: UInt64 = 0
    /// The render side's overflow count last seen.
    private(set) var overflowSeen: UInt64 = 0
    /// One frame aligned to the microphone frame: `channels` interleaved
    /// reference channels, and the media.
    let frameReference: UnsafeMutablePointer<Float>
    let frameMedia: UnsafeMutablePointer<Float>
    /// Bytes allocated here and by the resampler.
    let allocatedBytes: Int

    /// Samples the history runs ahead of the ring: the resampler's first
    /// output is its input sample taps/2 − 1.
    static var lag: Int { @_noLocks get { DriftResampler.taps / 2 - 1 } }

    /// nil when an allocation fails.
    init?(sampleRate rate: Int, channels: Int, frameSize: Int, maxFrames: Int) {
        let chunk = 1024
        var capacity = 1
        while capacity < rate + 2 * maxFrames + 2 * chunk { capacity <<= 1 }
        let planeCount = channels + 1
        var batch = AllocationBatch()
        guard let planes = batch.allocate(repeating: Float(0), count: capacity * planeCount),
              let drained = batch.allocate(repeating: Float(0), count: chunk * 2 * planeCount),
              let drainedMono = batch.allocate(repeating: Float(0), count: chunk * 2),
              let frameReference = batch.allocate(repeating: Float(0), count: frameSize * channels),
              let frameMedia = batch.allocate(repeating: Float(0), count: frameSize),
              let resampler = DriftResampler(chunkFrames: chunk, channels: planeCount)
        else { return nil }
        allocatedBytes = batch.commit() + resampler.allocatedBytes
        self.channels = channels
        self.capacity = capacity
        self.planes = planes
        self.chunk = chunk
        self.drained = drained
        self.drainedMono = drainedMono
        self.frameReference = frameReference
        self.frameMedia = frameMedia
        self.resampler = consume resampler
    }

    deinit {
        Allocation.free(planes)
        Allocation.free(drained)
        Allocation.free(drainedMono)
        Allocation.free(frameReference)
        Allocation.free(frameMedia)
    }

    /// Render ran while capture did not (the ring overflowed: `overflow`,
    /// the render side's count, moved; or a backlog of more than
    /// `maxBacklog` frames built up): that audio is stale, and draining it
    /// would make this call long. Drops it and the resampler's input;
    /// returns true then (the clock follower must lock anew).
    @_noLocks
    mutating func discardIfStale(ring: borrowing SPSCRing, overflow: UInt64, maxBacklog: Int) -> Bool {
        guard overflow != overflowSeen || ring.bufferedFrames() > maxBacklog else { return false }
        overflowSeen = overflow
        let regions = ring.readableRegions(maxFrames: Int.max)
        ring.commitRead(regions.frames)
        ringRead &+= UInt64(regions.frames)
        resampler.reset()
        return true
    }

    /// Moves what the ring holds, up to `renderedFrames` (the render side's
    /// latest stamp: frames written in all; nil: no limit), through the
    /// resampler at `step` into the history, and the reference's mono mix
    /// into `estimator`. `media`: the media plane is resampled too (else
    /// zero). Returns the ring frames taken and whether that reached the
    /// stamp (the stamp's time then dates the newest of them).
    @_noLocks
    mutating func drain(ring: borrowing SPSCRing, renderedFrames: UInt64?, step: Double, media: Bool,
                        estimator: inout DelayEstimator) -> (taken: Int, reachedStamp: Bool) {
        var limit = Int.max
        if let f = renderedFrames { limit = Int(truncatingIfNeeded: f &- ringRead) }
        var taken = 0
        while taken < limit {
            let room = resampler.room
            if room == 0 { break }
            let regions = ring.readableRegions(maxFrames: min(room, limit - taken))
            if regions.frames == 0 { break }
            resampler.append(interleaved: regions.first, frames: regions.firstFrames)
            if regions.secondFrames > 0 { resampler.append(interleaved: regions.second, frames: regions.secondFrames) }
            ring.commitRead(regions.frames)
            taken += regions.frames
            let made = resampler.produce(drained, outStride: chunk * 2, maxFrames: chunk * 2, step: step,
                                         computed: media ? channels + 1 : channels)
            append(made, media: media, estimator: &estimator)
        }
        ringRead &+= UInt64(taken)
        return (taken, renderedFrames != nil && taken == limit)
    }

    @_noLocks
    private mutating func append(_ count: Int, media: Bool, estimator: inout DelayEstimator) {
        let mask = capacity - 1
        let plane = chunk * 2
        let h = appended
        // In runs that do not wrap (contiguous copies, as `gather` reads).
        var i = 0
        while i < count {
            let slot = Int(truncatingIfNeeded: h &+ Int64(i)) & mask
            let run = min(count &- i, capacity &- slot)
            for ch in 0...channels {  // the reference channels, then the media plane
                let src = drained + (ch &* plane &+ i), dst = planes + (ch &* capacity &+ slot)
                if ch < channels || media {
                    for j in 0..<run { dst[j] = src[j] }
                } else {
                    for j in 0..<run { dst[j] = 0 }
                }
            }
            i &+= run
        }
        if channels == 1 {
            estimator.appendReference(drained, count: count)
        } else {
            let r = drained + plane
            for i in 0..<count { drainedMono[i] = 0.5 * (drained[i] + r[i]) }
            estimator.appendReference(drainedMono, count: count)
        }
        appended += Int64(count)
    }

    /// Samples held past the frame aligned at history index `start`
    /// (`count` long): the reference that has already been played but
    /// whose echo, at the delay in use, is still to come.
    @_noLocks
    func heldAhead(of start: Int64, count: Int) -> Int {
        Int(max(0, appended - start - Int64(count)))
    }

    /// The reference channels' mean at history indices `start ..< start +
    /// count` into `into`; indices not held are zero. For the suppressor's
    /// look-ahead (`ResidualEchoSuppressor.foldAhead`).
    @_noLocks
    func mono(from start: Int64, count: Int, into dst: UnsafeMutablePointer<Float>) {
        let mask = capacity - 1
        let h = appended
        let lo = max(overflowSeen == 0 ? 0 : Int64.min / 2, h - Int64(capacity))
        let scale = 1 / Float(channels)
        for i in 0..<count {
            let index = start &+ Int64(i)
            guard index >= lo && index < h else {
                dst[i] = 0
                continue
            }
            let slot = Int(truncatingIfNeeded: index) & mask
            var sum: Float = 0
            for ch in 0..<channels { sum += planes[ch &* capacity &+ slot] }
            dst[i] = sum * scale
        }
    }

    /// Fills `frameReference` and `frameMedia` with `count` history samples
    /// from index `start` on. Returns how many were missing (not yet
    /// arrived, or already overwritten): those are silence. Before the first
    /// sample of a stream that never lost any (its start) is silence, not
    /// missing.
    @_noLocks
    func gather(from start: Int64, count: Int) -> Int {
        let mask = capacity - 1
        let refs = channels
        let media = planes + refs * capacity
        let h = appended
        // Indices before 0 (nothing rendered yet, no overflow seen) are
        // silence; [h − capacity, h) is held; everything else is missing.
        // The three ranges, as frame positions: [0, silent) ⊆ [0, a),
        // the held [a, b), the rest zero.
        let n = Int64(count)
        var lo = max(start, h - Int64(capacity))
        if overflowSeen == 0 { lo = max(lo, 0) }
        let a = Int(min(max(lo - start, 0), n))
        let b = Int(min(max(min(start + n, h) - start, Int64(a)), n))
        let silent = overflowSeen == 0 ? Int(min(max(-start, 0), n)) : 0
        for i in 0..<a &* refs { frameReference[i] = 0 }
        for i in 0..<a { frameMedia[i] = 0 }
        var i = a
        while i < b {
            let slot = Int(truncatingIfNeeded: start &+ Int64(i)) & mask
            let run = min(b &- i, capacity &- slot)
            if refs == 1 {
                let src = planes + slot, dst = frameReference + i
                for j in 0..<run { dst[j] = src[j] }
            } else {
                for ch in 0..<refs {
                    let src = planes + (ch &* capacity &+ slot), dst = frameReference + (i &* refs &+ ch)
                    for j in 0..<run { dst[j &* refs] = src[j] }
                }
            }
            let src = media + slot, dst = frameMedia + i
            for j in 0..<run { dst[j] = src[j] }
            i &+= run
        }
        for i in b &* refs..<count &* refs { frameReference[i] = 0 }
        for i in b..<count { frameMedia[i] = 0 }
        let missing = count - (b - a) - silent
        return missing
    }
}
