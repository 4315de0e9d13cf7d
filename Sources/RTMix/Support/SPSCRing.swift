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
        // Clamped: a fill outside 0...capacity (a lapped drop-oldest ring,
        // or a contract violation) must never produce an out-of-range span.
        let free = capacityFrames - max(0, min(capacityFrames, used))
        return regions(start: w, frames: max(0, min(free, maxFrames)))
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
        return regions(start: r, frames: max(0, min(min(available, capacityFrames), maxFrames)))
    }

    /// Releases `frames` frames read from `readableRegions` back to the producer.
    @_noLocks
    func commitRead(_ frames: Int) {
        indices.commitRead(frames)
    }

    /// Drops up to `frames` of the oldest buffered frames (consumer).
    /// Returns the frames dropped.
    @_noLocks
    func discard(_ frames: Int) -> Int {
        let r = indices.read.load(ordering: .relaxed)
        let w = indices.write.load(ordering: .acquiring)
        let n = max(0, min(frames, w &- r))
        if n > 0 { indices.read.store(r &+ n, ordering: .releasing) }
        return n
    }

    /// Consumer: `w - r` unclamped. Above `capacityFrames` when an
    /// overwriting producer (`overwriteRegions`) has lapped the reader.
    @_noLocks
    func rawFill() -> Int {
        let r = indices.read.load(ordering: .relaxed)
        let w = indices.write.load(ordering: .acquiring)
        return w &- r
    }

    /// Consumer: makes the reader skip to `keep` frames behind the writer
    /// (dropping the oldest audio, including any the producer overwrote).
    /// Returns the frames skipped.
    @_noLocks
    func skipToNewest(keep: Int) -> Int {
        let r = indices.read.load(ordering: .relaxed)
        let w = indices.write.load(ordering: .acquiring)
        let fill = w &- r
        let k = max(0, min(keep, capacityFrames))
        guard fill > k else { return 0 }
        indices.read.store(w &- k, ordering: .releasing)
        return fill - k
    }

    /// Producer of a drop-oldest ring: where `frames` frames go even when
    /// the ring is full, overwriting the oldest audio (the consumer finds
    /// `rawFill() > capacityFrames` and skips ahead). At most
    /// `capacityFrames` (the caller writes only the newest of a larger
    /// push). The storage never moves, so this is memory safe whatever the
    /// consumer does; audio the consumer is reading at that moment may be
    /// replaced (an overload case the engine avoids by skipping early).
    @_noLocks
    func overwriteRegions(frames: Int) -> RingRegions {
        let w = indices.write.load(ordering: .relaxed)
        return regions(start: w, frames: max(0, min(frames, capacityFrames)))
    }

    /// Producer: free frames, never negative (0 while lapped).
    @_noLocks
    func writableFrames() -> Int {
        let w = indices.write.load(ordering: .relaxed)
        let r = indices.read.load(ordering: .acquiring)
        return max(0, capacityFrames - max(0, w &- r))
    }

    /// The consumer's read counter (consumer thread).
    @_noLocks
    func readCount() -> Int { indices.read.load(ordering: .relaxed) }

    /// The producer's write counter (any thread; acquire).
    @_noLocks
    func writeCount() -> Int { indices.write.load(ordering: .acquiring) }

    // MARK: any thread

    /// Frames currently buffered (approximate while both sides run).
    @_noLocks
    func bufferedFrames() -> Int {
        indices.buffered(capacity: capacityFrames)
    }
}
