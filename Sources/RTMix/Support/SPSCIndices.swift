import Synchronization

/// The index pair of a single-producer / single-consumer ring, shared by
/// `SPSCRing` (audio frames) and `EventQueue` (events) so the wrap and
/// memory-ordering rules live in one place.
///
/// Indices are free-running counters that wrap (`&+`): only their
/// difference `w &- r` (0...capacity) is ever compared, which wrapping keeps
/// exact; a slot is `index & (capacity - 1)` for a power-of-two capacity.
/// The producer publishes with a release store of `write`, the consumer
/// acquires it before reading; symmetrically for `read`. Each side loads
/// its own index `.relaxed` because only that side ever stores it.
@usableFromInline
struct SPSCIndices: ~Copyable {
    @usableFromInline let write: Atomic<Int>
    @usableFromInline let read: Atomic<Int>

    /// `start` (tests only) starts both counters elsewhere than 0, e.g.
    /// just below `Int.max` to exercise the wrap.
    init(start: Int = 0) {
        write = Atomic(start)
        read = Atomic(start)
    }

    // MARK: producer

    /// The producer's index and the items the consumer has not released
    /// (`w &- r`, 0...capacity).
    @_noLocks
    func producerView() -> (index: Int, used: Int) {
        let w = write.load(ordering: .relaxed)  // own index
        let r = read.load(ordering: .acquiring)  // consumer has finished reading up to r
        return (w, w &- r)
    }

    /// Publishes `count` items written after the producer's index.
    @_noLocks
    func commitWrite(_ count: Int) {
        let w = write.load(ordering: .relaxed)
        write.store(w &+ count, ordering: .releasing)
    }

    // MARK: consumer

    /// The consumer's index and the items it may read (`w &- r`).
    @_noLocks
    func consumerView() -> (index: Int, available: Int) {
        let r = read.load(ordering: .relaxed)  // own index
        let w = write.load(ordering: .acquiring)  // producer's writes up to w are visible
        return (r, w &- r)
    }

    /// Releases `count` items read after the consumer's index.
    @_noLocks
    func commitRead(_ count: Int) {
        let r = read.load(ordering: .relaxed)
        read.store(r &+ count, ordering: .releasing)
    }

    // MARK: any thread

    /// Items buffered, 0...capacity (approximate while both sides run).
    @_noLocks
    func buffered(capacity: Int) -> Int {
        let r = read.load(ordering: .acquiring)
        let w = write.load(ordering: .acquiring)
        return max(0, min(capacity, w &- r))
    }
}
