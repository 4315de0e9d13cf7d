// Shared pieces of the RTMix fuzzers: a reader that turns the fuzzer's bytes
// into values (running out of input yields zeros), interesting floats, and
// the invariant check that aborts (libFuzzer then saves the input).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct FuzzReader {
    let base: UnsafePointer<UInt8>?
    let count: Int
    public private(set) var pos = 0

    public init(_ base: UnsafePointer<UInt8>?, _ count: Int) {
        self.base = base
        self.count = base == nil ? 0 : count
    }

    public var isEmpty: Bool { pos >= count }
    public var remaining: Int { max(0, count - pos) }

    public mutating func u8() -> UInt8 {
        guard pos < count, let base else { return 0 }
        defer { pos += 1 }
        return base[pos]
    }

    public mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
    public mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
    public mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }
    public mutating func bool() -> Bool { u8() & 1 == 1 }

    /// One of `table` (selector byte) or, for selectors past the table, a
    /// raw value from `raw`.
    public mutating func pick<T>(_ table: [T], raw: (inout FuzzReader) -> T) -> T {
        let s = Int(u8())
        return s < table.count * 4 ? table[s % table.count] : raw(&self)
    }

    /// Floats a validator must get right: range edges, NaN, infinities,
    /// subnormals, huge values; otherwise a raw bit pattern.
    public static let specialFloats: [Float] = [
        0, -0.0, 1, -1, 0.5, 0.1, 0.09, 0.001, 16, Float(16).nextUp, 15.99, -Float.leastNonzeroMagnitude,
        .nan, -.nan, .signalingNaN, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, .leastNormalMagnitude, 1e30, -1e30, 5, Float(5).nextDown, 30, 2000,
        Float(2000).nextUp, 1000, Float(1000).nextUp, -20, Float(-20).nextDown, -1, 32767, 65536, 0.25,
    ]

    public mutating func f32() -> Float {
        pick(FuzzReader.specialFloats) { Float(bitPattern: $0.u32()) }
    }

    /// A count: mostly small, sometimes the edges, sometimes up to `max`.
    public mutating func count(upTo max: Int) -> Int {
        let s = u8()
        switch s % 8 {
        case 0: return 0
        case 1, 2: return 1 + Int(u8() % 64)
        case 3, 4: return Int(u16()) % (max + 1)
        case 5: return Int(u8()) * 64 % (max + 1)
        case 6: return max
        default: return 1 + Int(u8())
        }
    }
}

/// Aborts with a message when an invariant does not hold (libFuzzer reports
/// the crash and saves the input).
@inline(never)
public func fuzzFail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = "FUZZ INVARIANT FAILED (\(file):\(line)): \(message)\n"
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

@inline(__always)
public func check(_ condition: Bool, _ message: @autoclosure () -> String,
                  file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fuzzFail(message(), file: file, line: line) }
}

/// Status codes documented in rtmix.h.
public let documentedStatuses: ClosedRange<Int32> = -8...0

public func checkStatus(_ s: Int32, _ allowed: Set<Int32>, _ what: @autoclosure () -> String,
                        file: StaticString = #fileID, line: UInt = #line) {
    if !documentedStatuses.contains(s) {
        fuzzFail("\(what()): undocumented status \(s)", file: file, line: line)
    }
    if !allowed.contains(s) {
        fuzzFail("\(what()): status \(s), expected one of \(allowed.sorted())", file: file, line: line)
    }
}

/// Reads a NUL-terminated static string and checks it is sane.
public func checkName(_ p: UnsafePointer<CChar>?, _ what: String) -> String {
    guard let p else { fuzzFail("\(what) returned NULL") }
    let n = strnlen(p, 256)
    check(n > 0 && n < 256, "\(what): length \(n)")
    return String(cString: p)
}

/// RTMIX_FUZZ_AVOID_KNOWN=1: keep away from the triggers of known, reported
/// library bugs (Fuzz/Crashes/) so a run can look for new ones meanwhile.
public let avoidKnownBugs: Bool = {
    guard let v = getenv("RTMIX_FUZZ_AVOID_KNOWN") else { return false }
    return String(cString: v) == "1"
}()

/// A struct of type T inside a zeroed buffer of `max(claimed size, sizeof)`
/// bytes, so a `size` field larger than the struct never lies about the
/// memory behind the pointer.
public final class SizedStruct<T> {
    public let raw: UnsafeMutableRawPointer
    public let bytes: Int
    public init(_ value: T, size: UInt32) {
        bytes = max(Int(size), MemoryLayout<T>.size)
        raw = .allocate(byteCount: bytes, alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        raw.storeBytes(of: value, as: T.self)
        raw.storeBytes(of: size, as: UInt32.self)
    }
    deinit { raw.deallocate() }
    public var pointer: UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }
    public var value: T { raw.load(as: T.self) }
    public var size: UInt32 { raw.load(as: UInt32.self) }
}

/// A struct `size`: mostly the real one, sometimes too small, sometimes a
/// newer (larger) caller's. Capped at 4096 (the buffer really has it).
public func fuzzSize(_ r: inout FuzzReader, real: Int, minimum: Int) -> UInt32 {
    switch r.u8() % 10 {
    case 0: return 0
    case 1: return UInt32(minimum - 1)
    case 2: return UInt32(minimum)
    case 3: return UInt32(real + 8)
    case 4: return UInt32(r.u16() % 4096)
    default: return UInt32(real)
    }
}
