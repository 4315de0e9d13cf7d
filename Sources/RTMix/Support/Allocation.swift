import CRTMixSupport
import Synchronization

/// Failable allocation for everything engine creation, source add, capture
/// path creation and format change allocate.
///
/// `UnsafeMutablePointer.allocate` traps when memory runs out; these return
/// nil instead (malloc/posix_memalign through `CRTMixSupport`), so the
/// caller can free what it already has and report `RTMixError.noMemory`.
/// Memory from here is freed with `Allocation.free` / `Allocation.destroy`.
/// Never called on the render, push or capture paths.
///
/// Test hook: `failNth(_:)` makes the Nth failable allocation from now fail
/// (process-wide, deterministic), so tests can drive every failure point of
/// a control call in turn.
enum Allocation {
    /// A cache line on the targets RTMix supports (x86_64, arm64, armv7).
    static var cacheLineBytes: Int { @_noLocks get { 64 } }

    /// Bytes of `count` values of `T` (stride × count), nil on overflow or a
    /// negative count.
    static func bytes<T: ~Copyable>(_: T.Type, count: Int) -> Int? {
        guard count >= 0 else { return nil }
        let r = MemoryLayout<T>.stride.multipliedReportingOverflow(by: count)
        return r.overflow ? nil : r.partialValue
    }

    /// Uninitialized memory for `count` values of `T`, aligned to at least
    /// `alignment` bytes (and `T`'s alignment); nil when out of memory, on
    /// overflow, or when the injected failure hits.
    static func allocate<T: ~Copyable>(_: T.Type, count: Int, alignment: Int = 0) -> UnsafeMutablePointer<T>? {
        guard let n = bytes(T.self, count: count), !injectedFailure() else { return nil }
        let align = max(alignment, MemoryLayout<T>.alignment)
        guard let raw = rtmix_support_alloc(n, align) else { return nil }
        liveAllocations.wrappingAdd(1, ordering: .relaxed)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    /// `count` copies of `value` (e.g. zeroed sample buffers), or nil.
    ///
    /// Zeroed buffers are written here, on the control thread: that also
    /// maps their pages in (the rings' included), so the real-time threads
    /// that use them later take no page faults. Fuzz builds only
    /// (`-Xswiftc -DRTMIX_FUZZ_LAZY_ZERO`, scripts/fuzz-check): zeroed
    /// buffers come from calloc instead, the same zeros without the writes;
    /// AddressSanitizer maps every large block fresh, and writing an engine's
    /// rings (1.5 MiB for a capture path) was a quarter of a fuzz run.
    static func allocate<T>(repeating value: T, count: Int, alignment: Int = 0) -> UnsafeMutablePointer<T>? {
        let zero = _isPOD(T.self) && withUnsafeBytes(of: value, { bytes in bytes.allSatisfy { $0 == 0 } })
        #if RTMIX_FUZZ_LAZY_ZERO
        if zero {
            guard let n = bytes(T.self, count: count), !injectedFailure(),
                  let raw = rtmix_support_alloc_zeroed(n, max(alignment, MemoryLayout<T>.alignment)) else { return nil }
            liveAllocations.wrappingAdd(1, ordering: .relaxed)
            return raw.bindMemory(to: T.self, capacity: count)
        }
        #endif
        guard let p = allocate(T.self, count: count, alignment: alignment) else { return nil }
        // Zeroed plain data (most buffers): one memset, not a store per
        // element (which coverage-instrumented fuzz builds make slow).
        if zero {
            rtmix_support_zero(UnsafeMutableRawPointer(p), MemoryLayout<T>.stride * count)
        } else {
            p.initialize(repeating: value, count: count)
        }
        return p
    }

    /// Moves `value` into its own allocation, or nil (then `value` is
    /// destroyed here, which frees what it owns).
    static func make<T: ~Copyable>(_ value: consuming T, alignment: Int = 0) -> UnsafeMutablePointer<T>? {
        guard let p = allocate(T.self, count: 1, alignment: alignment) else { return nil }
        p.initialize(to: value)
        return p
    }

    /// Frees memory from `allocate` without deinitializing it (trivial
    /// types, or values already moved out). nil does nothing.
    static func free<T: ~Copyable>(_ p: UnsafeMutablePointer<T>?) {
        guard let p else { return }
        liveAllocations.wrappingSubtract(1, ordering: .relaxed)
        rtmix_support_free(UnsafeMutableRawPointer(p))
    }

    /// Deinitializes `count` values and frees the memory.
    static func destroy<T: ~Copyable>(_ p: UnsafeMutablePointer<T>?, count: Int = 1) {
        guard let p else { return }
        p.deinitialize(count: count)
        free(p)
    }

    // MARK: failure injection (tests)

    /// Makes the `n`th failable allocation from now fail (0: none), and
    /// returns how many failable allocations were made since the previous
    /// call. Process-wide: allocations by other threads count too.
    @discardableResult
    static func failNth(_ n: Int) -> Int {
        allocationFailAt.store(0, ordering: .relaxed)
        let made = allocationCount.exchange(0, ordering: .relaxed)
        allocationFailAt.store(max(0, n), ordering: .relaxed)
        return made
    }

    /// Allocations from here not yet freed, process-wide (tests compare it
    /// before and after a failed call: equal means nothing leaked).
    static var live: Int { liveAllocations.load(ordering: .relaxed) }

    static func injectedFailure() -> Bool {
        let n = allocationCount.wrappingAdd(1, ordering: .relaxed).newValue
        let failAt = allocationFailAt.load(ordering: .relaxed)
        return failAt != 0 && n == failAt
    }
}

/// Failure injection state (relaxed: a test arms it on the thread that
/// then allocates).
private let allocationCount = Atomic<Int>(0)
private let allocationFailAt = Atomic<Int>(0)
private let liveAllocations = Atomic<Int>(0)

/// Several failable allocations that succeed or fail together: each
/// `allocate` is remembered, and unless `commit()` is called, leaving scope
/// (e.g. `return nil` after a failed `guard let`) frees them all. `bytes`
/// is what the batch holds (for the engine's memory accounting).
struct AllocationBatch: ~Copyable {
    private var pointers: [UnsafeMutableRawPointer] = []
    private var committed = false
    private(set) var bytes = 0

    init() {}

    mutating func allocate<T>(repeating value: T, count: Int, alignment: Int = 0) -> UnsafeMutablePointer<T>? {
        if pointers.isEmpty { pointers.reserveCapacity(16) }
        guard let n = Allocation.bytes(T.self, count: count),
              let p = Allocation.allocate(repeating: value, count: count, alignment: alignment) else { return nil }
        pointers.append(UnsafeMutableRawPointer(p))
        bytes += n
        return p
    }

    /// Keeps everything allocated; returns the bytes held.
    mutating func commit() -> Int {
        committed = true
        pointers = []
        return bytes
    }

    deinit {
        if !committed { for p in pointers { Allocation.free(p.assumingMemoryBound(to: UInt8.self)) } }
    }
}
