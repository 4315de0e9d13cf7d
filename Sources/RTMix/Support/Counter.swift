import Synchronization

/// A statistics counter with a single writer thread and any number of
/// readers. The writer uses a relaxed load + store (no read-modify-write is
/// needed with one writer); readers may see a slightly old value.
struct Counter: ~Copyable {
    let value = Atomic<UInt64>(0)
    init() {}

    @_noLocks
    func add(_ n: Int) {
        value.store(value.load(ordering: .relaxed) &+ UInt64(truncatingIfNeeded: n), ordering: .relaxed)
    }

    @_noLocks
    func set(_ n: UInt64) { value.store(n, ordering: .relaxed) }

    @_noLocks
    func read() -> UInt64 { value.load(ordering: .relaxed) }
}

/// A Float published from one thread to another through its bit pattern.
struct AtomicFloat: ~Copyable {
    let bits: Atomic<UInt32>
    init(_ v: Float) { bits = Atomic(v.bitPattern) }

    @_noLocks
    func load() -> Float { Float(bitPattern: bits.load(ordering: .relaxed)) }

    @_noLocks
    func store(_ v: Float) { bits.store(v.bitPattern, ordering: .relaxed) }
}
