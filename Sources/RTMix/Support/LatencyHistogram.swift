import Synchronization

/// A lock-free histogram of durations in nanoseconds, written by one thread
/// (the renderer) and read by any thread.
///
/// Buckets are logarithmic with 8 linear sub-buckets per power of two, so a
/// percentile is reported as its bucket's upper bound: at most 12.5 % above
/// the true value. The writer updates a bucket with a relaxed load + store
/// (it is the only writer); readers load relaxed, so a read may miss the
/// latest few samples but never sees a torn count.
struct LatencyHistogram: ~Copyable {
    static var subBits: Int { 3 }
    static var bucketCount: Int { 64 << subBits }
    let buckets: UnsafeMutablePointer<Atomic<UInt64>>

    /// nil when the buckets cannot be allocated.
    init?() {
        guard let b = Allocation.allocate(Atomic<UInt64>.self, count: LatencyHistogram.bucketCount) else {
            return nil
        }
        for i in 0..<LatencyHistogram.bucketCount {
            (b + i).initialize(to: Atomic<UInt64>(0))
        }
        buckets = b
    }

    /// Bytes of the buckets (engine memory accounting).
    static var allocatedBytes: Int { MemoryLayout<Atomic<UInt64>>.stride * bucketCount }

    deinit {
        Allocation.destroy(buckets, count: LatencyHistogram.bucketCount)
    }

    @_noLocks
    static func bucket(for value: UInt64) -> Int {
        if value < (1 << subBits) { return Int(value) }
        let log2 = 63 - value.leadingZeroBitCount
        let sub = Int((value >> UInt64(log2 - subBits)) & ((1 << subBits) - 1))
        return ((log2 - subBits + 1) << subBits) + sub
    }

    /// The largest value that falls into `bucket`.
    
    static func upperBound(of bucket: Int) -> UInt64 {
        if bucket < (1 << subBits) { return UInt64(bucket) }
        let group = bucket >> subBits  // log2 - subBits + 1
        let sub = UInt64(bucket & ((1 << subBits) - 1))
        let log2 = group + subBits - 1
        let base = UInt64(1) << UInt64(log2)
        let width = UInt64(1) << UInt64(log2 - subBits)
        return base + (sub + 1) * width - 1
    }

    /// Single writer only.
    @_noLocks
    func record(_ value: UInt64) {
        let b = LatencyHistogram.bucket(for: value)
        let c = buckets[b].load(ordering: .relaxed)
        buckets[b].store(c &+ 1, ordering: .relaxed)
    }

    /// The value below which `fraction` (0...1) of the samples fall, or 0
    /// when empty. Any thread.
    func percentile(_ fraction: Double) -> UInt64 {
        var total: UInt64 = 0
        for i in 0..<LatencyHistogram.bucketCount { total &+= buckets[i].load(ordering: .relaxed) }
        if total == 0 { return 0 }
        let rank = max(1, UInt64((Double(total) * fraction).rounded(.up)))
        var seen: UInt64 = 0
        for i in 0..<LatencyHistogram.bucketCount {
            seen &+= buckets[i].load(ordering: .relaxed)
            if seen >= rank { return LatencyHistogram.upperBound(of: i) }
        }
        return LatencyHistogram.upperBound(of: LatencyHistogram.bucketCount - 1)
    }
}
