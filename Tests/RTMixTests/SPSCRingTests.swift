import Foundation
import XCTest
@testable import RTMix

final class SPSCRingTests: XCTestCase {
    func testRegionsWrapAndCounts() {
        let ring = SPSCRing(capacityFrames: 8, channels: 2)!
        var w = ring.writableRegions(maxFrames: 100)
        XCTAssertEqual(w.frames, 8)
        for i in 0..<10 { w.first[i] = Float(i) }
        ring.commitWrite(5)
        XCTAssertEqual(ring.bufferedFrames(), 5)
        var r = ring.readableRegions(maxFrames: 3)
        XCTAssertEqual(r.frames, 3)
        XCTAssertEqual(r.first[0], 0)
        ring.commitRead(3)
        w = ring.writableRegions(maxFrames: 100)
        XCTAssertEqual(w.frames, 6)
        XCTAssertEqual(w.firstFrames, 3)  // slots 5, 6, 7 then wrap
        XCTAssertEqual(w.secondFrames, 3)
        XCTAssertEqual(w.second, ring.storage)
        ring.commitWrite(6)
        XCTAssertEqual(ring.bufferedFrames(), 8)
        XCTAssertEqual(ring.writableRegions(maxFrames: 1).frames, 0)
        r = ring.readableRegions(maxFrames: 100)
        XCTAssertEqual(r.firstFrames, 5)
        XCTAssertEqual(r.secondFrames, 3)
    }

    /// A producer and a consumer thread move 2M frames of a counter through a
    /// small ring; the consumer sees every value once, in order.
    func testTwoThreadStressPreservesOrder() {
        let ring = UnsafeMutablePointer<SPSCRing>.allocate(capacity: 1)
        ring.initialize(to: SPSCRing(capacityFrames: 256, channels: 1)!)
        defer { ring.deinitialize(count: 1); ring.deallocate() }
        let total = 2_000_000
        nonisolated(unsafe) let shared = ring
        let producer = Thread {
            var next = 0
            while next < total {
                let w = shared.pointee.writableRegions(maxFrames: min(97, total - next))
                for i in 0..<w.firstFrames { w.first[i] = Float(next % 1_000_000); next += 1 }
                for i in 0..<w.secondFrames { w.second[i] = Float(next % 1_000_000); next += 1 }
                shared.pointee.commitWrite(w.frames)
            }
        }
        producer.start()
        var expected = 0
        var errors = 0
        while expected < total {
            let r = ring.pointee.readableRegions(maxFrames: 61)
            for i in 0..<r.firstFrames {
                if r.first[i] != Float(expected % 1_000_000) { errors += 1 }
                expected += 1
            }
            for i in 0..<r.secondFrames {
                if r.second[i] != Float(expected % 1_000_000) { errors += 1 }
                expected += 1
            }
            ring.pointee.commitRead(r.frames)
        }
        XCTAssertEqual(errors, 0)
        XCTAssertEqual(ring.pointee.bufferedFrames(), 0)
    }

    /// Issue 11: the producer's fields (write index, cached read index) and
    /// the consumer's (read index, cached write index) lie on different
    /// 64-byte cache lines, each side's fields on one line.
    func testProducerAndConsumerFieldsAreOnSeparateCacheLines() {
        let ring = SPSCRing(capacityFrames: 64, channels: 2)!
        func line(_ p: UnsafeRawPointer) -> UInt { UInt(bitPattern: p) / 64 }
        let p = UnsafeRawPointer(ring.indices.producer), c = UnsafeRawPointer(ring.indices.consumer)
        let size = MemoryLayout<RingSide>.size
        XCTAssertNotEqual(line(p), line(c))
        XCTAssertEqual(line(p), line(p + size - 1))  // a side never straddles a line
        XCTAssertEqual(line(c), line(c + size - 1))
        XCTAssertEqual(UInt(bitPattern: p) % 64, 0)
        ring.commitWrite(5)
        ring.commitRead(3)
        XCTAssertEqual(ring.indices.producer.pointee.index.load(ordering: .relaxed), 5)
        XCTAssertEqual(ring.indices.consumer.pointee.index.load(ordering: .relaxed), 3)
    }

    /// The cached copy of the other side's index only saves loads: a side
    /// whose cached view is short of the request refreshes it, so what is
    /// offered equals a fresh computation at every step.
    func testCachedIndicesNeverHideSpaceOrData() {
        let ring = SPSCRing(capacityFrames: 8, channels: 1)!
        XCTAssertEqual(ring.readableRegions(maxFrames: 8).frames, 0)
        XCTAssertEqual(ring.writableRegions(maxFrames: 8).frames, 8)
        ring.commitWrite(5)
        XCTAssertEqual(ring.readableRegions(maxFrames: 8).frames, 5)  // refreshed
        XCTAssertEqual(ring.readableRegions(maxFrames: 2).frames, 2)  // from the cache
        ring.commitRead(2)
        XCTAssertEqual(ring.readableRegions(maxFrames: 3).frames, 3)  // cache still covers it
        ring.commitWrite(0)
        XCTAssertEqual(ring.writableRegions(maxFrames: 8).frames, 5)  // 8 - 5 + 2, refreshed
        ring.commitWrite(5)
        XCTAssertEqual(ring.writableRegions(maxFrames: 1).frames, 0)  // full
        ring.commitRead(3)
        XCTAssertEqual(ring.writableRegions(maxFrames: 8).frames, 3)
        XCTAssertEqual(ring.readableRegions(maxFrames: 8).frames, 5)
        XCTAssertEqual(ring.bufferedFrames(), 5)
    }
}
