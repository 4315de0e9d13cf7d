import Synchronization

/// Up to two contiguous spans of a ring, in frames (the second is used when
/// the region wraps around the end of the storage).
struct RingRegions {
    var first: UnsafeMutablePointer<Float>
    var firstFrames: Int
    var second: UnsafeMutablePointer<Float>
    var secondFrames: Int
    var frames: Int { @_noLocks get { firstFrames + secondFrames } }

    @_noLocks
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
/// the wrap). The index pair, its cache-line layout and its memory order are
/// `SPSCIndices` (shared with `EventQueue`); the fields both sides only read
/// (storage, capacity, mask) sit in the ring itself.
///
/// Usage (miniaudio-style acquire/commit): `writableRegions` → fill →
/// `commitWrite`; `readableRegions` → read → `commitRead`. The ring never
/// allocates after `init`.
///
/// Drop-oldest rings (call sources) drop on the consumer side: the producer
/// writes free space only (`writableRegions`, like any producer), and the
/// consumer skips the oldest audio (`rawFill`/`skipToNewest`). Neither side
/// ever touches frames the other may be using: the SPSC rule holds.
struct SPSCRing: ~Copyable {
    let storage: UnsafeMutablePointer<Float>
    let capacityFrames: Int
    let channels: Int
    let mask: Int
    /// The index pair (two cache lines; shared design with `EventQueue`).
    let indices: SPSCIndices

    /// `capacityFrames` must be a power of two. `startIndex` (tests only)
    /// starts both counters elsewhere than 0, e.g. just below `Int.max` to
    /// exercise the wrap. nil when the storage cannot be allocated.
    init?(capacityFrames: Int, channels: Int, startIndex: Int = 0) {
        precondition(capacityFrames > 0 && capacityFrames & (capacityFrames - 1) == 0)
        let samples = capacityFrames.multipliedReportingOverflow(by: channels)
        guard !samples.overflow,
              let s = Allocation.allocate(repeating: Float(0), count: samples.partialValue) else { return nil }
        guard let i = SPSCIndices(start: startIndex) else {
            Allocation.free(s)
            return nil
        }
        storage = s
        indices = i
        self.capacityFrames = capacityFrames
        self.channels = channels
        self.mask = capacityFrames - 1
    }

    deinit { Allocation.free(storage) }

    /// Bytes a ring of this size allocates (for the engine's memory
    /// accounting), nil on overflow.
    static func memoryBytes(capacityFrames: Int, channels: Int) -> Int? {
        let samples = capacityFrames.multipliedReportingOverflow(by: channels)
        guard !samples.overflow, let data = Allocation.bytes(Float.self, count: samples.partialValue) else {
            return nil
        }
        return data + SPSCIndices.memoryBytes
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
        let (w, free) = indices.producerView(capacity: capacityFrames, wanted: maxFrames)
        return regions(start: w, frames: max(0, min(free, maxFrames)))
    }

    /// Publishes `frames` frames written into `writableRegions`.
    @_noLocks
    func commitWrite(_ frames: Int) { indices.commitWrite(frames) }

    /// Free frames, never negative (0 while lapped). Any thread.
    @_noLocks
    func writableFrames() -> Int { indices.free(capacity: capacityFrames) }

    /// The producer's write counter (any thread; acquire).
    @_noLocks
    func writeCount() -> Int { indices.writeCount() }

    // MARK: consumer

    /// Frames the consumer may read, at most `maxFrames`.
    @_noLocks
    func readableRegions(maxFrames: Int) -> RingRegions {
        let (r, available) = indices.consumerView(capacity: capacityFrames, wanted: maxFrames)
        return regions(start: r, frames: max(0, min(available, maxFrames)))
    }

    /// Releases `frames` frames read from `readableRegions` back to the producer.
    @_noLocks
    func commitRead(_ frames: Int) { indices.commitRead(frames) }

    /// Drops up to `frames` of the oldest buffered frames. Returns the
    /// frames dropped.
    @_noLocks
    func discard(_ frames: Int) -> Int {
        let (r, w) = indices.consumerRawFill()
        let n = max(0, min(frames, w &- r))
        if n > 0 { indices.consumerMove(to: r &+ n) }
        return n
    }

    /// `w - r` unclamped: above `capacityFrames` when an overwriting
    /// producer (`overwriteRegions`) has lapped the reader.
    @_noLocks
    func rawFill() -> Int {
        let (r, w) = indices.consumerRawFill()
        return w &- r
    }

    /// Skips to `keep` frames behind the writer (dropping the oldest audio,
    /// including any the producer overwrote). Returns the frames skipped.
    @_noLocks
    func skipToNewest(keep: Int) -> Int {
        let (r, w) = indices.consumerRawFill()
        let fill = w &- r
        let k = max(0, min(keep, capacityFrames))
        guard fill > k else { return 0 }
        indices.consumerMove(to: w &- k)
        return fill - k
    }

    /// The consumer's read counter (consumer thread).
    @_noLocks
    func readCount() -> Int { indices.readCount() }

    // MARK: any thread

    /// Frames currently buffered (approximate while both sides run).
    @_noLocks
    func bufferedFrames() -> Int { indices.buffered(capacity: capacityFrames) }
}
