import Synchronization

/// Up to two contiguous spans of a ring, in frames (the second is used when
/// the region wraps around the end of the storage).
@usableFromInline
struct RingRegions {
    @usableFromInline var first: UnsafeMutablePointer<Float>
    @usableFromInline var firstFrames: Int
    @usableFromInline var second: UnsafeMutablePointer<Float>
    @usableFromInline var secondFrames: Int
    var frames: Int { @_noLocks get { firstFrames + secondFrames } }

    
    init(first: UnsafeMutablePointer<Float>, firstFrames: Int, second: UnsafeMutablePointer<Float>, secondFrames: Int) {
        self.first = first
        self.firstFrames = firstFrames
        self.second = second
        self.secondFrames = secondFrames
    }
}

/// A fixed-capacity single-producer / single-consumer ring of interleaved
/// float frames.
///
/// Indices are free-running frame counters that wrap (`&+`): a 32-bit `Int`
/// wraps after 2^31 frames (12 h at 48 kHz). Only their difference `w &- r`
/// (0...capacity) is ever compared, which wrapping keeps exact; the slot is
/// `index & mask` (capacity is a power of two, so this is continuous across
/// the wrap). The index pair and its memory ordering are `SPSCIndices`
/// (shared with `EventQueue`).
///
/// Usage (miniaudio-style acquire/commit): `writableRegions` → fill →
/// `commitWrite`; `readableRegions` → read → `commitRead`. The ring never
/// allocates after `init`.
@usableFromInline
struct SPSCRing: ~Copyable {
    @usableFromInline let storage: UnsafeMutablePointer<Float>
    @usableFromInline let capacityFrames: Int
    @usableFromInline let channels: Int
    @usableFromInline let mask: Int
    /// The wrap-safe index pair (shared with `EventQueue`).
    @usableFromInline let indices: SPSCIndices

    /// `capacityFrames` must be a power of two. `startIndex` (tests only)
    /// starts both counters elsewhere than 0, e.g. just below `Int.max` to
    /// exercise the wrap.
    init(capacityFrames: Int, channels: Int, startIndex: Int = 0) {
        precondition(capacityFrames > 0 && capacityFrames & (capacityFrames - 1) == 0)
        indices = SPSCIndices(start: startIndex)
        self.capacityFrames = capacityFrames
        self.channels = channels
        self.mask = capacityFrames - 1
        storage = .allocate(capacity: capacityFrames * channels)
        storage.initialize(repeating: 0, count: capacityFrames * channels)
    }

    deinit { storage.deallocate() }

    @_noLocks
    func regions(start: Int, frames: Int) -> RingRegions {
        let slot = start & mask
        let first = min(frames, capacityFrames - slot)
        return RingRegions(first: storage + slot * channels, firstFrames: first,
                           second: storage, secondFrames: frames - first)
    }

    // MARK: producer

    /// Space the producer may fill, at most `maxFrames`.
    @_noLocks
    func writableRegions(maxFrames: Int) -> RingRegions {
        let (w, used) = indices.producerView()
        return regions(start: w, frames: min(capacityFrames - used, maxFrames))
    }

    /// Publishes `frames` frames written into `writableRegions`.
    @_noLocks
    func commitWrite(_ frames: Int) {
        indices.commitWrite(frames)
    }

    // MARK: consumer

    /// Frames the consumer may read, at most `maxFrames`.
    @_noLocks
    func readableRegions(maxFrames: Int) -> RingRegions {
        let (r, available) = indices.consumerView()
        return regions(start: r, frames: min(available, maxFrames))
    }

    /// Releases `frames` frames read from `readableRegions` back to the producer.
    @_noLocks
    func commitRead(_ frames: Int) {
        indices.commitRead(frames)
    }

    // MARK: any thread

    /// Frames currently buffered (approximate while both sides run).
    @_noLocks
    func bufferedFrames() -> Int {
        indices.buffered(capacity: capacityFrames)
    }
}
