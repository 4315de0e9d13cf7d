import XCTest
@testable import RTMix

/// Capture stage 0 on its own: the ring through the drift resampler into
/// the history, and frames read back from it.
final class ReferenceHistoryTests: XCTestCase {
    /// Writes `frames` frames of [reference, media] = [k, -k] (k counting
    /// from `start`) into the ring.
    func write(_ ring: borrowing SPSCRing, from start: Int, frames: Int) {
        var done = 0
        while done < frames {
            let r = ring.writableRegions(maxFrames: frames - done)
            XCTAssertGreaterThan(r.frames, 0)
            for i in 0..<r.firstFrames {
                r.first[2 * i] = Float(start + done + i)
                r.first[2 * i + 1] = -Float(start + done + i)
            }
            for i in 0..<r.secondFrames {
                r.second[2 * i] = Float(start + done + r.firstFrames + i)
                r.second[2 * i + 1] = -Float(start + done + r.firstFrames + i)
            }
            ring.commitWrite(r.frames)
            done += r.frames
        }
    }

    /// At step 1 the history is the ring, bit-exact, `lag` samples ahead;
    /// the drain stops at the render side's stamp; frames read before the
    /// stream's start are silence, past its end missing.
    func testDrainsUpToTheStampBitExactAndGathersFrames() {
        let ring = SPSCRing(capacityFrames: 8192, channels: 2)!
        var history = ReferenceHistory(sampleRate: 16_000, channels: 1, frameSize: 160, maxFrames: 512)!
        var estimator = DelayEstimator(sampleRate: 16_000)!
        write(ring, from: 0, frames: 3000)
        let first = history.drain(ring: ring, renderedFrames: 2000, step: 1, media: true, estimator: &estimator)
        XCTAssertEqual(first.taken, 2000)
        XCTAssertTrue(first.reachedStamp)
        let rest = history.drain(ring: ring, renderedFrames: nil, step: 1, media: false, estimator: &estimator)
        XCTAssertEqual(rest.taken, 1000)
        XCTAssertFalse(rest.reachedStamp)
        let lag = ReferenceHistory.lag
        // The resampler keeps its kernel's length of input back.
        XCTAssertLessThanOrEqual(history.appended, Int64(3000 - lag))
        XCTAssertGreaterThanOrEqual(history.appended, Int64(3000 - DriftResampler.taps))
        // History sample j is ring frame j + lag.
        XCTAssertEqual(history.gather(from: 100, count: 160), 0)
        for i in 0..<160 {
            XCTAssertEqual(history.frameReference[i], Float(100 + i + lag))
            XCTAssertEqual(history.frameMedia[i], -Float(100 + i + lag))  // drained with media
        }
        // The second drain left the media out (publish gain 0): silence.
        let late = history.appended - 160
        XCTAssertEqual(history.gather(from: late, count: 160), 0)
        XCTAssertEqual(history.frameReference[0], Float(Int(late) + lag))
        XCTAssertEqual(history.frameMedia[0], 0)
        // Before the start: silence, not missing; past the newest: missing.
        XCTAssertEqual(history.gather(from: -100, count: 160), 0)
        XCTAssertEqual(history.frameReference[99], 0)
        XCTAssertEqual(history.frameReference[100], Float(lag))
        XCTAssertEqual(history.gather(from: history.appended - 60, count: 160), 100)
    }

    /// The suppressor's look-ahead reads the reference already held past
    /// the aligned frame: how much there is, and the channels' mean read
    /// back, zero where nothing is held (before the start, past the newest).
    func testTheReferenceAheadOfAFrameIsCountedAndReadBack() {
        let ring = SPSCRing(capacityFrames: 8192, channels: 2)!
        var history = ReferenceHistory(sampleRate: 16_000, channels: 1, frameSize: 160, maxFrames: 512)!
        var estimator = DelayEstimator(sampleRate: 16_000)!
        write(ring, from: 0, frames: 3000)
        _ = history.drain(ring: ring, renderedFrames: nil, step: 1, media: false, estimator: &estimator)
        let h = history.appended, lag = ReferenceHistory.lag
        XCTAssertEqual(history.heldAhead(of: h - 500, count: 160), 340)
        XCTAssertEqual(history.heldAhead(of: h - 160, count: 160), 0)
        XCTAssertEqual(history.heldAhead(of: h, count: 160), 0)
        var out = [Float](repeating: 7, count: 200)
        out.withUnsafeMutableBufferPointer { history.mono(from: h - 100, count: 200, into: $0.baseAddress!) }
        for i in 0..<100 { XCTAssertEqual(out[i], Float(Int(h) - 100 + i + lag)) }
        for i in 100..<200 { XCTAssertEqual(out[i], 0) }
        out.withUnsafeMutableBufferPointer { history.mono(from: -50, count: 200, into: $0.baseAddress!) }
        for i in 0..<50 { XCTAssertEqual(out[i], 0) }
        for i in 50..<200 { XCTAssertEqual(out[i], Float(i - 50 + lag)) }
    }

    func testAnOverflowOrABacklogDiscardsWhatTheRingHolds() {
        let ring = SPSCRing(capacityFrames: 8192, channels: 2)!
        var history = ReferenceHistory(sampleRate: 16_000, channels: 1, frameSize: 160, maxFrames: 512)!
        write(ring, from: 0, frames: 1000)
        XCTAssertFalse(history.discardIfStale(ring: ring, overflow: 0, maxBacklog: 4000))
        XCTAssertTrue(history.discardIfStale(ring: ring, overflow: 0, maxBacklog: 999))
        XCTAssertEqual(ring.bufferedFrames(), 0)
        write(ring, from: 0, frames: 10)
        XCTAssertTrue(history.discardIfStale(ring: ring, overflow: 3, maxBacklog: 4000))
        XCTAssertEqual(history.overflowSeen, 3)
        XCTAssertFalse(history.discardIfStale(ring: ring, overflow: 3, maxBacklog: 4000))
        // Nothing drained yet: a frame from the newest sample on is missing.
        XCTAssertEqual(history.gather(from: history.appended, count: 160), 160)
    }
}
