import XCTest
@testable import RTMixSession

final class ValidityTableTests: XCTestCase {

    func testOptionRawValuesArePlatformValues() {
        XCTAssertEqual(SessionOptions.mixWithOthers.rawValue, 0x1)
        XCTAssertEqual(SessionOptions.duckOthers.rawValue, 0x2)
        XCTAssertEqual(SessionOptions.allowBluetooth.rawValue, 0x4)
        XCTAssertEqual(SessionOptions.defaultToSpeaker.rawValue, 0x8)
        XCTAssertEqual(SessionOptions.interruptSpokenAudioAndMixWithOthers.rawValue, 0x11)
        XCTAssertEqual(SessionOptions.allowBluetoothA2DP.rawValue, 0x20)
        XCTAssertEqual(SessionOptions.allowAirPlay.rawValue, 0x40)
    }

    func testOptionTable() {
        // (option, categories that accept it), as documented by the platform.
        let table: [(SessionOptions, [SessionCategory])] = [
            (.mixWithOthers, [.playback, .playAndRecord, .multiRoute]),
            // AVAudioSessionTypes.h: DuckOthers is also valid with Ambient (issue 8).
            (.duckOthers, [.ambient, .playback, .playAndRecord, .multiRoute]),
            (.interruptSpokenAudioAndMixWithOthers, [.playback, .playAndRecord, .multiRoute]),
            (.allowBluetooth, [.record, .playAndRecord]),
            (.defaultToSpeaker, [.playAndRecord]),
            (.allowBluetoothA2DP, [.playAndRecord]),
            (.allowAirPlay, [.playAndRecord]),
        ]
        let all: [SessionCategory] = [.ambient, .soloAmbient, .playback, .record, .playAndRecord, .multiRoute]
        for (option, allowed) in table {
            for c in all {
                let report = ValidityTable.check(SessionConfiguration(category: c, options: option))
                XCTAssertEqual(report.isValid, allowed.contains(c), "\(option.rawValue) with \(c)")
                if !report.isValid {
                    XCTAssertEqual(report.problems, .optionNotAllowed)
                    XCTAssertFalse(report.invalidOptions.isEmpty)
                }
            }
        }
    }

    func testModeTable() {
        XCTAssertTrue(ValidityTable.allows(mode: .voiceChat, with: .playAndRecord))
        XCTAssertFalse(ValidityTable.allows(mode: .voiceChat, with: .playback))
        XCTAssertFalse(ValidityTable.allows(mode: .moviePlayback, with: .playAndRecord))
        XCTAssertTrue(ValidityTable.allows(mode: .moviePlayback, with: .playback))
        XCTAssertTrue(ValidityTable.allows(mode: .videoRecording, with: .record))
        XCTAssertFalse(ValidityTable.allows(mode: .videoRecording, with: .ambient))
        XCTAssertTrue(ValidityTable.allows(mode: .measurement, with: .record))
        XCTAssertFalse(ValidityTable.allows(mode: .gameChat, with: .multiRoute))
        for raw in UInt32(0)..<6 {
            XCTAssertTrue(ValidityTable.allows(mode: .default, with: SessionCategory(rawValue: raw)!))
        }
    }

    func testRawCheckReportsUnknownValues() {
        let r = ValidityTable.check(category: 9, mode: 1, options: 0x100)
        XCTAssertEqual(r.problems, [.unknownCategory, .unknownOptions])
        XCTAssertEqual(r.invalidOptions.rawValue, 0x100)
        let r2 = ValidityTable.check(category: 2, mode: 42, options: 0x9)
        XCTAssertEqual(r2.problems, [.unknownMode, .optionNotAllowed])
        XCTAssertEqual(r2.invalidOptions.rawValue, 0x8)
        XCTAssertTrue(ValidityTable.check(category: 4, mode: 1, options: 0x2D).isValid)
    }

    func testMixingSemantics() {
        XCTAssertTrue(SessionConfiguration(category: .ambient).mixesWithOthers)
        XCTAssertFalse(SessionConfiguration(category: .soloAmbient).mixesWithOthers)
        XCTAssertFalse(SessionConfiguration(category: .playback).mixesWithOthers)
        XCTAssertTrue(SessionConfiguration(category: .playback, options: .duckOthers).mixesWithOthers)
        XCTAssertTrue(SessionConfiguration(category: .playAndRecord,
                                           options: .interruptSpokenAudioAndMixWithOthers).mixesWithOthers)
    }
}
