import Synchronization

/// The producer path: wait-free, real-time safe. One producer thread per
/// source at a time.
extension EngineCore {
    /// PCM sample formats accepted by `push`.
    @usableFromInline
    enum SampleFormat { case f32, s16 }

    /// Writes what fits of `frames` interleaved frames into the source's ring.
    /// `accepted` receives the frames written. Returns 0, or
    /// invalidArgument / notFound / bufferFull (the fitting part was written).
    @usableFromInline @_noLocks
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
        let regions = s.pointee.ring.writableRegions(maxFrames: frames)
        var nonfinite = 0
        switch format {
        case .f32:
            let input = samples.assumingMemoryBound(to: Float.self)
            nonfinite += Mixing.copySanitized(input, regions.first, count: regions.firstFrames * channels)
            nonfinite += Mixing.copySanitized(input + regions.firstFrames * channels, regions.second,
                                              count: regions.secondFrames * channels)
        case .s16:
            let input = samples.assumingMemoryBound(to: Int16.self)
            Mixing.convertFromS16(input, regions.first, count: regions.firstFrames * channels)
            Mixing.convertFromS16(input + regions.firstFrames * channels, regions.second,
                                  count: regions.secondFrames * channels)
        }
        s.pointee.ring.commitWrite(regions.frames)
        accepted = regions.frames
        s.pointee.framesPushed.add(regions.frames)
        if nonfinite > 0 { s.pointee.nonfinitePushed.add(nonfinite) }
        if regions.frames < frames {
            s.pointee.framesRejected.add(frames - regions.frames)
            return RTMixError.bufferFull.code
        }
        return 0
    }

    /// Pins the live source `id` against reclamation for a producer-side
    /// access and returns it, or nil (nothing pinned) when the id is not a
    /// live source. Pair every successful pin with `unpin`.
    ///
    /// The pin is announced before the slot is examined: a control thread
    /// frees a retired source only when it sees no pin (see SourceSlot).
    @usableFromInline @_noLocks
    static func pin(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32)
        -> (UnsafeMutablePointer<SourceSlot>, UnsafeMutablePointer<SourceState>)? {
        guard id != 0 else { return nil }
        let slot = e.pointee.slots + Int((id - 1) % UInt32(e.pointee.config.maxSources))
        slot.pointee.pushers.wrappingAdd(1, ordering: .sequentiallyConsistent)
        guard slot.pointee.state.load(ordering: .sequentiallyConsistent) == SlotState.active,
              slot.pointee.id.load(ordering: .acquiring) == id,
              let s = slot.pointee.source.load(ordering: .acquiring)
        else {
            unpin(slot)
            return nil
        }
        return (slot, s)
    }

    @usableFromInline @_noLocks
    static func unpin(_ slot: UnsafeMutablePointer<SourceSlot>) {
        slot.pointee.pushers.wrappingSubtract(1, ordering: .releasing)
    }

    /// Frames buffered in a live source's ring, or -1 for an unknown id.
    /// Lock-free; pinned against concurrent removal like `push`.
    @usableFromInline @_noLocks
    static func bufferedFrames(_ e: UnsafeMutablePointer<EngineCore>, id: UInt32) -> Int {
        guard let (slot, s) = pin(e, id: id) else { return -1 }
        defer { unpin(slot) }
        return s.pointee.ring.bufferedFrames()
    }
}
