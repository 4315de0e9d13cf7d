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

/// One side of a ring: its own free-running index (written by that side
/// only, read by the other) and its cached view of the other side's index
/// (touched by this side only). The two sides of a ring start 64 bytes
/// apart in one 64-byte-aligned allocation (`SPSCRing.init`), so the
/// producer's and the consumer's fields never share a cache line on any
/// target: a store by one side does not invalidate the line the other side
/// keeps loading (false sharing).
@usableFromInline
struct RingSide: ~Copyable {
    @usableFromInline let index: Atomic<Int>
    /// The other side's index as last loaded by this side (never ahead of
    /// it: indices only grow), so most calls need not touch the other
    /// side's line at all.
    @usableFromInline var cachedOther: Int

    init(start: Int) {
        index = Atomic(start)
        cachedOther = start
    }
}

/// A fixed-capacity single-producer / single-consumer ring of interleaved
/// float frames.
///
/// Indices are free-running frame counters that wrap (`&+`): a 32-bit `Int`
/// wraps after 2^31 frames (12 h at 48 kHz). Only their difference `w &- r`
/// (0...capacity) is ever compared, which wrapping keeps exact; the slot is
/// `index & mask` (capacity is a power of two, so this is continuous across
/// the wrap).
///
/// Layout: the write index and the producer's cached read index share one
/// cache line, the read index and the consumer's cached write index another
/// (`RingSide`, two 64-byte lines of one allocation); the fields both sides
/// only read (storage, capacity, mask) sit in the ring itself.
///
/// Memory order (the weakest that is enough; no read-modify-write at all):
/// - the producer publishes written frames with a release store of
///   `writeIndex`; the consumer's acquire load of it makes those frames
///   visible before it reads them. Symmetrically, the consumer's release
///   store of `readIndex` after reading, and the producer's acquire load of
///   it, keep the producer from overwriting frames still being read.
/// - each side loads its own index `.relaxed`: only that side stores it.
/// - a cached copy of the other index is only ever behind the real one,
///   so it underestimates the free space (producer) or the readable frames
///   (consumer): never unsafe. The side refreshes it (acquire) only when the
///   cached view is short of what the caller asks for, so the result is the
///   same as with a fresh load; frames it reads up to a cached write index
///   were made visible by the acquire that loaded that value earlier.
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
    /// Producer side: `writeIndex` and the cached read index (own line).
    @usableFromInline let producer: UnsafeMutablePointer<RingSide>
    /// Consumer side: `readIndex` and the cached write index (own line).
    @usableFromInline let consumer: UnsafeMutablePointer<RingSide>

    /// `capacityFrames` must be a power of two. `startIndex` (tests only)
    /// starts both counters elsewhere than 0, e.g. just below `Int.max` to
    /// exercise the wrap. nil when the storage cannot be allocated.
    init?(capacityFrames: Int, channels: Int, startIndex: Int = 0) {
        precondition(capacityFrames > 0 && capacityFrames & (capacityFrames - 1) == 0)
        let samples = capacityFrames.multipliedReportingOverflow(by: channels)
        guard !samples.overflow,
              let s = Allocation.allocate(repeating: Float(0), count: samples.partialValue) else { return nil }
        let line = Allocation.cacheLineBytes
        guard MemoryLayout<RingSide>.stride <= line,
              let lines = Allocation.allocate(UInt8.self, count: 2 * line, alignment: line) else {
            Allocation.free(s)
            return nil
        }
        let raw = UnsafeMutableRawPointer(lines)
        let p = raw.bindMemory(to: RingSide.self, capacity: 1)
        let c = (raw + line).bindMemory(to: RingSide.self, capacity: 1)
        p.initialize(to: RingSide(start: startIndex))
        c.initialize(to: RingSide(start: startIndex))
        storage = s
        producer = p
        consumer = c
        self.capacityFrames = capacityFrames
        self.channels = channels
        self.mask = capacityFrames - 1
    }

    deinit {
        Allocation.free(storage)
        consumer.deinitialize(count: 1)
        Allocation.destroy(producer)  // the start of the two lines' allocation
    }

    /// Bytes a ring of this size allocates (for the engine's memory
    /// accounting), nil on overflow.
    static func memoryBytes(capacityFrames: Int, channels: Int) -> Int? {
        let samples = capacityFrames.multipliedReportingOverflow(by: channels)
        guard !samples.overflow, let data = Allocation.bytes(Float.self, count: samples.partialValue) else {
            return nil
        }
        return data + 2 * Allocation.cacheLineBytes
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
        let p = producer
        let w = p.pointee.index.load(ordering: .relaxed)  // own index
        var free = capacityFrames - (w &- p.pointee.cachedOther)
        if free < maxFrames {
            // The consumer has finished reading up to r (acquire: its reads
            // happen before our writes to those slots).
            let r = consumer.pointee.index.load(ordering: .acquiring)
            p.pointee.cachedOther = r
            free = capacityFrames - (w &- r)
        }
        return regions(start: w, frames: min(free, maxFrames))
    }

    /// Publishes `frames` frames written into `writableRegions`.
    @_noLocks
    func commitWrite(_ frames: Int) {
        let p = producer
        let w = p.pointee.index.load(ordering: .relaxed)
        p.pointee.index.store(w &+ frames, ordering: .releasing)
    }

    // MARK: consumer

    /// Frames the consumer may read, at most `maxFrames`.
    @_noLocks
    func readableRegions(maxFrames: Int) -> RingRegions {
        let c = consumer
        let r = c.pointee.index.load(ordering: .relaxed)  // own index
        var available = c.pointee.cachedOther &- r
        if available < maxFrames {
            // The producer's writes up to w are visible after this acquire.
            let w = producer.pointee.index.load(ordering: .acquiring)
            c.pointee.cachedOther = w
            available = w &- r
        }
        return regions(start: r, frames: min(available, maxFrames))
    }

    /// Releases `frames` frames read from `readableRegions` back to the producer.
    @_noLocks
    func commitRead(_ frames: Int) {
        let c = consumer
        let r = c.pointee.index.load(ordering: .relaxed)
        c.pointee.index.store(r &+ frames, ordering: .releasing)
    }

    // MARK: any thread

    /// Frames currently buffered (approximate while both sides run).
    @_noLocks
    func bufferedFrames() -> Int {
        let r = consumer.pointee.index.load(ordering: .acquiring)
        let w = producer.pointee.index.load(ordering: .acquiring)
        return max(0, min(capacityFrames, w &- r))
    }
}
