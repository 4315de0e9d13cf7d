import Foundation
import Synchronization
import XCTest
@testable import RTMix

/// Issue 17, item 5: once `removeSource` returns for a pull source, its
/// callback is never called again, so a host may free the callback's
/// `user_data` right away. Runs under AddressSanitizer too (scripts/asan-check):
/// there a call into the freed context is a use-after-free report.
/// Sources are removed in index order: every index below this was removed.
private let pullRemovedBelow = Atomic<Int>(0)
private let pullLateCalls = Atomic<Int>(0)
private let pullCalls = Atomic<Int>(0)

final class PullLifetimeTests: XCTestCase {
    func testCallbackIsNeverCalledAfterRemoveReturns() throws {
        let e = makeEngine { $0.channels = 1 }
        let cb: PullCallback = { ctx, out, frames, channels in
            // The context: a heap block holding this source's index.
            let index = ctx!.load(as: Int.self)
            if index < 0 || index < pullRemovedBelow.load(ordering: .sequentiallyConsistent) {
                pullLateCalls.wrappingAdd(1, ordering: .relaxed)
            }
            pullCalls.wrappingAdd(1, ordering: .relaxed)
            // Widen the window: a callback that takes a while (a decoder).
            let until = DispatchTime.now().uptimeNanoseconds + 200_000
            while DispatchTime.now().uptimeNanoseconds < until {}
            for i in 0..<Int(frames * channels) { out![i] = 0.1 }
            return frames
        }
        let stop = Atomic<Bool>(false)
        let renderer = Thread {
            var out = [Float](repeating: 0, count: 480)
            while !stop.load(ordering: .relaxed) {
                out.withUnsafeMutableBufferPointer { try? e.render(into: $0, frames: 480) }
            }
        }
        renderer.start()
        var rng = SystemRandomNumberGenerator()
        let rounds = 300
        for index in 0..<rounds {
            let context = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
            context.storeBytes(of: index, as: Int.self)
            let id = try e.addPullSource(SourceConfig(domain: .media, sampleRate: 48_000, channels: 1),
                                         callback: cb, context: context)
            usleep(UInt32.random(in: 0...3000, using: &rng))
            try e.removeSource(id)
            // The contract: from here on the callback is never called.
            pullRemovedBelow.store(index + 1, ordering: .sequentiallyConsistent)
            context.storeBytes(of: -1, as: Int.self)
            context.deallocate()
        }
        stop.store(true, ordering: .relaxed)
        while !renderer.isFinished { usleep(1000) }
        XCTAssertGreaterThan(pullCalls.load(ordering: .relaxed), rounds, "the callbacks were exercised")
        XCTAssertEqual(pullLateCalls.load(ordering: .relaxed), 0, "a callback ran after its source's remove returned")
    }
}
