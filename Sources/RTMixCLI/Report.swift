import Foundation

// Formatting and measuring helpers for the reports (not real-time code).

func fixed(_ value: Double, _ decimals: Int = 1) -> String {
    String(format: "%.\(decimals)f", value)
}

func decibels(_ linear: Double) -> String {
    linear > 0 ? fixed(20 * log10(linear)) + " dBFS" : "-inf dBFS"
}

func micros(_ ns: UInt64) -> String { fixed(Double(ns) / 1000) + " µs" }

func padded(_ label: String, _ width: Int = 18) -> String {
    label.count >= width ? label + " " : label + String(repeating: " ", count: width - label.count)
}

/// Peak and RMS of interleaved float audio.
struct LevelMeter {
    private(set) var peak: Float = 0
    private var sumSquares: Double = 0
    private(set) var samples = 0
    private(set) var nonFinite = 0

    mutating func add(_ p: UnsafePointer<Float>, count: Int) {
        var sum: Double = 0
        for i in 0..<count {
            let v = p[i]
            if !v.isFinite { nonFinite += 1; continue }
            peak = max(peak, abs(v))
            sum += Double(v) * Double(v)
        }
        sumSquares += sum
        samples += count
    }

    var rms: Double { samples > 0 ? (sumSquares / Double(samples)).squareRoot() : 0 }
}

/// A fixed-size histogram of microsecond values, filled without allocation
/// (one writer thread), read after that thread has been joined.
final class MicrosHistogram: @unchecked Sendable {
    let buckets: Int
    private let counts: UnsafeMutablePointer<UInt32>
    private(set) var maxNs: UInt64 = 0
    private(set) var total = 0

    init(maxMicros: Int) {
        buckets = maxMicros + 1
        counts = .allocate(capacity: buckets)
        counts.initialize(repeating: 0, count: buckets)
    }

    deinit { counts.deallocate() }

    @inline(__always)
    func record(ns: UInt64) {
        let us = Int(min(ns / 1000, UInt64(buckets - 1)))
        counts[us] &+= 1
        if ns > maxNs { maxNs = ns }
        total += 1
    }

    /// The smallest value (µs) at or below which `fraction` of the samples lie.
    func percentileMicros(_ fraction: Double) -> Int {
        guard total > 0 else { return 0 }
        let target = Int((Double(total) * fraction).rounded(.up))
        var seen = 0
        for i in 0..<buckets {
            seen += Int(counts[i])
            if seen >= max(1, target) { return i }
        }
        return buckets - 1
    }
}
