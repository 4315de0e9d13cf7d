import Synchronization

/// One side of an SPSC index pair: its own free-running index (written by
/// that side only, read by the other) and its cached view of the other
/// side's index (touched by this side only).
struct RingSide: ~Copyable {
    let index: Atomic<Int>
    /// The other side's index as last loaded by this side (never ahead of
    /// it: indices only grow), so most calls need not touch the other
    /// side's cache line at all.
    var cachedOther: Int

    init(start: Int) {
        index = Atomic(start)
        cachedOther = start
    }
}

/// The index pair of a single-producer / single-consumer ring, shared by
/// `SPSCRing` (audio frames) and `EventQueue` (events) so the wrap, layout
/// and memory-ordering rules live in one place.
///
/// Indices are free-running counters that wrap (`&+`): only their
/// difference `w &- r` (0...capacity) is ever compared, which wrapping keeps
/// exact; a slot is `index & (capacity - 1)` for a power-of-two capacity.
///
/// Layout: the producer side (write index + cached read index) and the
/// consumer side (read index + cached write index) are two 64-byte lines of
/// one 64-byte-aligned allocation, so a store by one side never invalidates
/// the line the other keeps loading (no false sharing).
///
/// Memory order (the weakest that is enough; no read-modify-write): the
/// producer publishes with a release store of its index, the consumer
/// acquires it before reading the items; symmetrically for the consumer's
/// index. Each side loads its own index `.relaxed`. A cached copy of the
/// other index is only ever behind the real one, so it underestimates the
/// free space (producer) or the readable items (consumer): never unsafe.
/// A side refreshes it (acquire) only when the cached view is short of
/// what the caller wants, so the result equals a fresh load's.
struct SPSCIndices: ~Copyable {
    let producer: UnsafeMutablePointer<RingSide>
    let consumer: UnsafeMutablePointer<RingSide>
    /// Allocated through `Allocation` (failable, counted) or directly.
    let counted: Bool

    /// `start` (tests only) starts both counters elsewhere than 0, e.g.
    /// just below `Int.max` to exercise the wrap. nil when the two cache
    /// lines cannot be allocated.
    init?(start: Int = 0) {
        let line = Allocation.cacheLineBytes
        guard MemoryLayout<RingSide>.stride <= line,
              let lines = Allocation.allocate(UInt8.self, count: 2 * line, alignment: line) else { return nil }
        let raw = UnsafeMutableRawPointer(lines)
        producer = raw.bindMemory(to: RingSide.self, capacity: 1)
        consumer = (raw + line).bindMemory(to: RingSide.self, capacity: 1)
        producer.initialize(to: RingSide(start: start))
        consumer.initialize(to: RingSide(start: start))
        counted = true
    }

    /// The same layout from the system allocator (traps if 128 bytes
    /// cannot be had): for `EventQueue`, which is not failable yet.
    init(uncounted start: Int) {
        let line = Allocation.cacheLineBytes
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 2 * line, alignment: line)
        producer = raw.bindMemory(to: RingSide.self, capacity: 1)
        consumer = (raw + line).bindMemory(to: RingSide.self, capacity: 1)
        producer.initialize(to: RingSide(start: start))
        consumer.initialize(to: RingSide(start: start))
        counted = false
    }

    deinit {
        consumer.deinitialize(count: 1)
        if counted {
            Allocation.destroy(producer)  // the start of the two lines' allocation
        } else {
            producer.deinitialize(count: 1)
            UnsafeMutableRawPointer(producer).deallocate()
        }
    }

    /// Bytes the pair allocates.
    static var memoryBytes: Int { 2 * Allocation.cacheLineBytes }

    // MARK: producer

    /// The producer's index and the free space (0...capacity), refreshed
    /// from the consumer when fewer than `wanted` items are known free.
    @_noLocks
    func producerView(capacity: Int, wanted: Int) -> (index: Int, free: Int) {
        let p = producer
        let w = p.pointee.index.load(ordering: .relaxed)  // own index
        var used = w &- p.pointee.cachedOther
        if capacity - used < wanted {
            // The consumer has finished reading up to r (acquire: its reads
            // happen before our writes to those slots).
            let r = consumer.pointee.index.load(ordering: .acquiring)
            p.pointee.cachedOther = r
            used = w &- r
        }
        // Clamped: a lapped drop-oldest ring (used > capacity) or a
        // contract violation never yields an out-of-range span.
        return (w, capacity - max(0, min(capacity, used)))
    }

    /// Publishes `count` items written after the producer's index.
    @_noLocks
    func commitWrite(_ count: Int) {
        let w = producer.pointee.index.load(ordering: .relaxed)
        producer.pointee.index.store(w &+ count, ordering: .releasing)
    }

    // MARK: consumer

    /// The consumer's index and the readable items (0...capacity),
    /// refreshed from the producer when fewer than `wanted` are known.
    @_noLocks
    func consumerView(capacity: Int, wanted: Int) -> (index: Int, available: Int) {
        let c = consumer
        let r = c.pointee.index.load(ordering: .relaxed)  // own index
        var available = c.pointee.cachedOther &- r
        if available < wanted || available < 0 {
            // The producer's writes up to w are visible after this acquire.
            let w = producer.pointee.index.load(ordering: .acquiring)
            c.pointee.cachedOther = w
            available = w &- r
        }
        return (r, max(0, min(capacity, available)))
    }

    /// Releases `count` items read after the consumer's index.
    @_noLocks
    func commitRead(_ count: Int) {
        let r = consumer.pointee.index.load(ordering: .relaxed)
        consumer.pointee.index.store(r &+ count, ordering: .releasing)
    }

    // MARK: raw (drop-oldest rings, flush)

    /// Consumer: `w - r` unclamped (fresh load of `w`).
    @_noLocks
    func consumerRawFill() -> (read: Int, write: Int) {
        let r = consumer.pointee.index.load(ordering: .relaxed)
        let w = producer.pointee.index.load(ordering: .acquiring)
        consumer.pointee.cachedOther = w
        return (r, w)
    }

    /// Consumer: moves its index to `r` (a skip or a drop; never backwards).
    @_noLocks
    func consumerMove(to r: Int) {
        consumer.pointee.index.store(r, ordering: .releasing)
    }

    /// Producer: its own index.
    @_noLocks
    func producerIndex() -> Int { producer.pointee.index.load(ordering: .relaxed) }

    /// Any thread: the producer's index (acquire).
    @_noLocks
    func writeCount() -> Int { producer.pointee.index.load(ordering: .acquiring) }

    /// Consumer: its own index.
    @_noLocks
    func readCount() -> Int { consumer.pointee.index.load(ordering: .relaxed) }

    // MARK: any thread

    /// Free space, 0...capacity, from fresh loads of both indices (no cache:
    /// any thread may ask).
    @_noLocks
    func free(capacity: Int) -> Int {
        let r = consumer.pointee.index.load(ordering: .acquiring)
        let w = producer.pointee.index.load(ordering: .acquiring)
        return capacity - max(0, min(capacity, w &- r))
    }

    /// Items buffered, 0...capacity (approximate while both sides run).
    @_noLocks
    func buffered(capacity: Int) -> Int {
        let r = consumer.pointee.index.load(ordering: .acquiring)
        let w = producer.pointee.index.load(ordering: .acquiring)
        return max(0, min(capacity, w &- r))
    }
}
