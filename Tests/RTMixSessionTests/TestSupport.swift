import XCTest
@testable import RTMixSession

// Shorthands used by the scenario tests.
let mix = SessionOptions.mixWithOthers
let speaker = SessionOptions.defaultToSpeaker
let hfp = SessionOptions.allowBluetooth
let a2dp = SessionOptions.allowBluetoothA2DP

/// playAndRecord as an RTC call with the microphone on wants it.
let callConfig = SessionConfiguration(category: .playAndRecord, options: [mix, speaker, hfp])
/// playAndRecord as an RTC call with the microphone off wants it.
let listenConfig = SessionConfiguration(category: .playAndRecord, options: [mix, speaker, a2dp])

func makeEngine(base: SessionConfiguration = .platformDefault,
                mic: MicPermission = .granted,
                _ tweak: (inout SessionSettings) -> Void = { _ in }) -> SessionEngine {
    var s = SessionSettings()
    s.base = base
    s.micPermission = mic
    tweak(&s)
    return try! SessionEngine(settings: s)
}

extension SessionEngine {
    /// Drains the pending actions (without times).
    func takeActions() -> [SessionAction] { drainActions().map(\.action) }
    /// Drains the pending alarms.
    func takeAlarms() -> [SessionAlarm] { drainAlarms() }
    func registerOrFail(_ name: String) -> ModuleID { try! register(name: name) }
}

/// Asserts the exact actions (with times) and alarms pending, and drains them.
func expect(_ e: SessionEngine, actions: [IssuedAction], alarms: [SessionAlarm] = [],
            file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(e.drainActions(), actions, "actions", file: file, line: line)
    XCTAssertEqual(e.drainAlarms(), alarms, "alarms", file: file, line: line)
}

/// Asserts the exact actions (times ignored) and alarms pending, and drains them.
func expect(_ e: SessionEngine, _ actions: [SessionAction], alarms: [SessionAlarm] = [],
            file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(e.takeActions(), actions, "actions", file: file, line: line)
    XCTAssertEqual(e.drainAlarms(), alarms, "alarms", file: file, line: line)
}

func at(_ t: UInt64, _ a: SessionAction) -> IssuedAction { IssuedAction(a, timeMs: t) }

/// xorshift64* — a small deterministic PRNG for the property tests.
struct XorShift64 {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
