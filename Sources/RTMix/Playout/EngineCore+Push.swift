import Synchronization

/// The producer path and the lock-free source calls: wait-free, real-time
/// safe. One producer thread per source at a time (a second concurrent
/// pusher gets badState).
extension EngineCore {
    /// PCM sample formats accepted by `push`.
    enum SampleFormat { case f32, s16 }

    /// The slot an id maps to (any id; liveness is checked by pinning).
    @_noLocks
    static func slot(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32) -> UnsafeMutablePointer<SourceSlot> {
        e.pointee.slots + Int((id &- 1) % UInt32(truncatingIfNeeded: e.pointee.config.maxSources))
    }

    /// Pins the live source `id` (see SlotLifecycle) or returns nil.
    @_noLocks
    static func pin(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32)
        -> (UnsafeMutablePointer<SourceSlot>, UnsafeMutablePointer<SourceState>)? {
        guard id != 0 else { return nil }
        let slot = slot(e, id: id)
        guard let s = SlotLifecycle.pin(slot, id: id) else { return nil }
        return (slot, s)
    }

    @_noLocks
    static func unpin(_ slot: UnsafeMutablePointer<SourceSlot>) { SlotLifecycle.unpin(slot) }

    /// Writes `frames` interleaved frames into the source's ring. `accepted`
    /// receives the frames taken. Returns 0, or invalidArgument / notFound /
    /// badState (a pull source, an ended source, or another push in
    /// progress on the same source) / bufferFull (reject policy: the
    /// fitting part was written). A drop-oldest source takes every frame
    /// and the renderer drops the oldest audio instead.
    @_noLocks
    static func push(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32, samples: UnsafeRawPointer,
                     format: SampleFormat, frames: Int, callerChannels: Int = 0, accepted: inout Int) -> Int32 {
        accepted = 0
        guard frames > 0 else { return RTMixError.invalidArgument.code }
        guard let (slot, s) = pin(e, id: id) else { return RTMixError.notFound.code }
        defer { unpin(slot) }

        let channels = s.pointee.channels
        // A caller that states its channel count (the Swift API, whose buffer
        // holds frames × callerChannels samples) must match the source, or
        // the copy below would read past its buffer.
        if callerChannels != 0 && callerChannels != channels { return RTMixError.invalidArgument.code }
        if s.pointee.pull != nil || s.pointee.endRequested.load(ordering: .relaxed) {
            return RTMixError.badState.code
        }
        // One producer at a time: the ring is single-producer.
        guard !s.pointee.producerBusy.exchange(true, ordering: .acquiring) else { return RTMixError.badState.code }
        defer { s.pointee.producerBusy.store(false, ordering: .releasing) }

        let regions: RingRegions
        var skip = 0
        if s.pointee.dropOldest {
            // The producer never overwrites: it writes free space only (the
            // ring has a capacity's headroom; the renderer drops the oldest
            // audio). What does not fit even there (a renderer that stopped
            // while the producer went on) is the oldest part of this push:
            // it is skipped and counted as dropped; the newest is written.
            let free = s.pointee.ring.writableFrames()
            skip = max(0, frames - free)
            regions = s.pointee.ring.writableRegions(maxFrames: frames - skip)
        } else {
            regions = s.pointee.ring.writableRegions(maxFrames: frames)
        }
        var nonfinite = 0
        switch format {
        case .f32:
            // The skipped (dropped) oldest part is never copied, but its
            // NaN/Inf are counted like any pushed.
            let all = samples.assumingMemoryBound(to: Float.self)
            for i in 0..<(skip * channels) where !all[i].isFinite { nonfinite += 1 }
            let input = all + skip * channels
            nonfinite += Mixing.copySanitized(input, regions.first, count: regions.firstFrames * channels)
            nonfinite += Mixing.copySanitized(input + regions.firstFrames * channels, regions.second,
                                              count: regions.secondFrames * channels)
        case .s16:
            let input = samples.assumingMemoryBound(to: Int16.self) + skip * channels
            Mixing.convertFromS16(input, regions.first, count: regions.firstFrames * channels)
            Mixing.convertFromS16(input + regions.firstFrames * channels, regions.second,
                                  count: regions.secondFrames * channels)
        }
        s.pointee.ring.commitWrite(regions.frames)
        accepted = regions.frames + skip
        s.pointee.framesPushed.add(regions.frames + skip)
        s.pointee.lastPushFrames.set(UInt64(frames))
        if skip > 0 { s.pointee.framesSkippedAtPush.add(skip) }
        if nonfinite > 0 { s.pointee.nonfinitePushed.add(nonfinite) }
        if accepted < frames {
            s.pointee.framesRejected.add(frames - accepted)
            return RTMixError.bufferFull.code
        }
        return 0
    }

    /// Frames buffered in a live source's ring, or -1 for an unknown id.
    @_noLocks
    static func bufferedFrames(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32) -> Int {
        guard let (slot, s) = pin(e, id: id) else { return -1 }
        defer { unpin(slot) }
        return buffered(s)
    }

    /// Frames a push could add now without dropping or refusing audio, or
    /// -1 for an unknown id.
    @_noLocks
    static func writableFrames(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32) -> Int {
        guard let (slot, s) = pin(e, id: id) else { return -1 }
        defer { unpin(slot) }
        return writable(s)
    }

    /// Pause or resume a source (ring untouched; fades by the renderer).
    @_noLocks
    static func setPaused(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32, _ on: Bool) -> Int32 {
        guard let (slot, s) = pin(e, id: id) else { return RTMixError.notFound.code }
        defer { unpin(slot) }
        s.pointee.paused.store(on, ordering: .relaxed)
        return 0
    }

    /// Drops everything pushed so far (the renderer fades out). Must be
    /// ordered with the pushes (the producer thread, or none in flight):
    /// audio pushed after this call is kept. Clears an `end`.
    @_noLocks
    static func flush(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32) -> Int32 {
        guard let (slot, s) = pin(e, id: id) else { return RTMixError.notFound.code }
        defer { unpin(slot) }
        if s.pointee.pull != nil { return RTMixError.badState.code }
        s.pointee.endRequested.store(false, ordering: .relaxed)
        s.pointee.flushUpTo.store(s.pointee.ring.writeCount(), ordering: .relaxed)
        s.pointee.flushRequests.wrappingAdd(1, ordering: .releasing)
        return 0
    }

    /// End of stream: everything pushed plays out, then the source drains.
    @_noLocks
    static func end(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32) -> Int32 {
        guard let (slot, s) = pin(e, id: id) else { return RTMixError.notFound.code }
        defer { unpin(slot) }
        if s.pointee.pull != nil { return RTMixError.badState.code }
        s.pointee.endRequested.store(true, ordering: .releasing)
        return 0
    }

    /// The source's position after the last render (A/V sync).
    @_noLocks
    static func position(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32) -> (status: Int32, SourcePosition) {
        var p = SourcePosition()
        guard let (slot, s) = pin(e, id: id) else { return (RTMixError.notFound.code, p) }
        defer { unpin(slot) }
        guard let v = s.pointee.position.read() else { return (RTMixError.badState.code, p) }
        p.framesPlayed = v.framesPlayed
        p.renderTimeNs = v.renderTimeNs
        p.latencyNs = v.latencyNs
        p.outputLatencyNs = e.pointee.outputLatencyNs.load(ordering: .relaxed)
        p.sampleRate = s.pointee.sampleRate
        return (0, p)
    }

    /// Frames a push can add without a drop or a refusal: the free part of
    /// the configured capacity (a drop-oldest ring's headroom is not offered).
    @_noLocks
    static func writable(_ s: UnsafeMutablePointer<SourceState>) -> Int {
        max(0, min(s.pointee.ring.writableFrames(), s.pointee.capacityFrames - s.pointee.ring.bufferedFrames()))
    }

    /// Frames buffered as the host sees them: at most the configured
    /// capacity (a drop-oldest ring may briefly hold more in its headroom;
    /// the renderer drops that at its next block).
    @_noLocks
    static func buffered(_ s: UnsafeMutablePointer<SourceState>) -> Int {
        min(s.pointee.ring.bufferedFrames(), s.pointee.capacityFrames)
    }
}
