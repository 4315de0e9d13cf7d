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
/// the wrap). The producer publishes
/// written frames with a release store of `writeIndex`, the consumer
/// acquires it before reading; symmetrically for `readIndex`. Each side's
/// own index is loaded `.relaxed` because only that side ever stores it.
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
    @usableFromInline let writeIndex: Atomic<Int>
    @usableFromInline let readIndex: Atomic<Int>

    /// `capacityFrames` must be a power of two. `startIndex` (tests only)
    /// starts both counters elsewhere than 0, e.g. just below `Int.max` to
    /// exercise the wrap. nil when the storage cannot be allocated.
    init?(capacityFrames: Int, channels: Int, startIndex: Int = 0) {
        precondition(capacityFrames > 0 && capacityFrames & (capacityFrames - 1) == 0)
        let samples = capacityFrames.multipliedReportingOverflow(by: channels)
        guard !samples.overflow,
              let s = Allocation.allocate(repeating: Float(0), count: samples.partialValue) else { return nil }
        storage = s
        writeIndex = Atomic(startIndex)
        readIndex = Atomic(startIndex)
        self.capacityFrames = capacityFrames
        self.channels = channels
        self.mask = capacityFrames - 1
    }

    deinit { Allocation.free(storage) }

    /// Bytes a ring of this size allocates (for the engine's memory
    /// accounting), nil on overflow.
    static func memoryBytes(capacityFrames: Int, channels: Int) -> Int? {
        let samples = capacityFrames.multipliedReportingOverflow(by: channels)
        return samples.overflow ? nil : Allocation.bytes(Float.self, count: samples.partialValue)
    }

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
        let w = writeIndex.load(ordering: .relaxed)  // own index
        let r = readIndex.load(ordering: .acquiring)  // consumer has finished reading up to r
        let free = capacityFrames - (w &- r)
        return regions(start: w, frames: min(free, maxFrames))
    }

    /// Publishes `frames` frames written into `writableRegions`.
    @_noLocks
    func commitWrite(_ frames: Int) {
        let w = writeIndex.load(ordering: .relaxed)
        writeIndex.store(w &+ frames, ordering: .releasing)
    }

    // MARK: consumer

    /// Frames the consumer may read, at most `maxFrames`.
    @_noLocks
    func readableRegions(maxFrames: Int) -> RingRegions {
        let r = readIndex.load(ordering: .relaxed)  // own index
        let w = writeIndex.load(ordering: .acquiring)  // producer's writes up to w are visible
        return regions(start: r, frames: min(w &- r, maxFrames))
    }

    /// Releases `frames` frames read from `readableRegions` back to the producer.
    @_noLocks
    func commitRead(_ frames: Int) {
        let r = readIndex.load(ordering: .relaxed)
        readIndex.store(r &+ frames, ordering: .releasing)
    }

    // MARK: any thread

    /// Frames currently buffered (approximate while both sides run).
    @_noLocks
    func bufferedFrames() -> Int {
        let r = readIndex.load(ordering: .acquiring)
        let w = writeIndex.load(ordering: .acquiring)
        return max(0, min(capacityFrames, w &- r))
    }
}
