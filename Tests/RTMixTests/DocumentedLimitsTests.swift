import XCTest
@testable import RTMix

/// Limits the public header states in prose, against the constants the
/// code uses (issue 18: RTMIX_EVENT_DRIFT_SATURATED said ±1000 ppm while
/// the source drift controller's limit is ±2000 ppm).
final class DocumentedLimitsTests: XCTestCase {
    /// The comment of `#define NAME` in include/rtmix.h (up to its `*/`).
    func headerComment(of name: String) throws -> String {
        let header = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("include/rtmix.h")
        let text = try String(contentsOf: header, encoding: .utf8)
        guard let start = text.range(of: "#define \(name) "),
              let end = text.range(of: "*/", range: start.upperBound..<text.endIndex)
        else { throw XCTSkip("no #define \(name) in \(header.path)") }
        return text[start.lowerBound..<end.upperBound].split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    func testDriftSaturatedDocumentsTheSourceControllerLimit() throws {
        let ppm = Int((DriftController.limit * 1e6).rounded())
        XCTAssertEqual(ppm, 2000)
        let comment = try headerComment(of: "RTMIX_EVENT_DRIFT_SATURATED")
        XCTAssertTrue(comment.contains("+-\(ppm) ppm"), comment)
    }

    func testDriftOutOfRangeDocumentsTheCaptureFollowerLimit() throws {
        let ppm = Int(CaptureClockFollower.maxDriftPpm)
        let comment = try headerComment(of: "RTMIX_EVENT_DRIFT_OUT_OF_RANGE")
        XCTAssertTrue(comment.contains("+-\(ppm) ppm"), comment)
    }
}
