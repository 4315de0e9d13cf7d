/// The benchmark cases, shared by the package-benchmark suite (`Render`) and
/// the callgrind driver (`RenderCount`).
///
/// Every case renders ONE 10 ms callback (480 frames, 48 kHz stereo) per
/// `render()`. Everything is built up front; `feed()` supplies the input the
/// next callback needs and is called OUTSIDE the measured part.
///
/// - `engine*`: the real `Engine` (default config: SINC_FASTEST, ramps,
///   limiter, stats), sources fed by `push` from preallocated PCM, exactly
///   one callback's worth per callback (a producer on the render clock).
///   `engine1`, `engine8` and `engine-bypass` use default source configs
///   (drift control on). Since issue 17, drift control applies no
///   correction to a producer on the render clock: the path is the
///   fixed-ratio one — bit-exact bypass at 48 kHz, speexdsp for the 16 kHz
///   voices, libsamplerate for the 44.1 kHz media — and the drift stage is
///   not in the path. `engine8-untimed` turns drift control off
///   (`SourceConfig.untimed()`): same path, no drift bookkeeping.
///   `engine8-drift`: default configs, but every producer runs +500 ppm
///   fast (pushes 1.0005 × what a callback consumes, carried fractionally),
///   with a 15 s warm-up so drift control has engaged (its warm-up is 10 s)
///   and the drift stage (`DriftStage`) resamples every source in the
///   measured callbacks; `problems()` fails the run if any source reports
///   no correction after any measured callback. Measured: the 16 kHz
///   voices (primed 100 ms, target 40 ms) do not stay engaged — they are
///   released about 10 s after engaging and re-engage about 10 s later —
///   so this case holds for about 400 callbacks after its warm-up; run it
///   with at most 300 (scripts/bench-callgrind does).
/// - `floor*`: the bare minimum for the same work: one `src_process` per
///   resampled source (SRC_SINC_FASTEST, same ratio and frame counts) from
///   preallocated input, summed into a stereo float buffer (mono duplicated).
///   No rings, gains, limiter or stats. This is the floor the issue
///   specifies ("the bare libsamplerate calls and summation").
/// - `floor8-backends`: the same floor for the 8-source case, but with the
///   backends the engine itself uses since the speexdsp backend: bare
///   speexdsp (quality 3, as `Resampler`) for the 16 kHz voices and bare
///   libsamplerate for the 44.1 kHz media, so that engine/floor still
///   measures the engine's own overhead rather than the backend choice.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Output format of every case: 48 kHz stereo, 10 ms callbacks.
public let outputRate = 48_000
public let outputChannels = 2
public let callbackFrames = 480

/// One input source of a case.
public struct SourceSpec: Sendable {
    public enum Kind: Sendable { case media, voice }
    public var kind: Kind
    public var rate: Int
    public var channels: Int

    /// Source frames per 10 ms callback (exact for the rates used here).
    public var framesPerCallback: Int { rate / 100 }
}

public enum CaseName: String, CaseIterable, Sendable {
    case engine1 = "engine1"
    case floor1 = "floor1"
    case engine8 = "engine8"
    case engine8Untimed = "engine8-untimed"
    case engine8Drift = "engine8-drift"
    case floor8 = "floor8"
    case floor8Backends = "floor8-backends"
    case engineBypass = "engine-bypass"
    case floorBypass = "floor-bypass"

    /// Benchmark name as reported by package-benchmark.
    public var title: String {
        switch self {
        case .engine1: return "Engine 1 source"
        case .floor1: return "Floor 1 source"
        case .engine8: return "Engine 8 sources"
        case .engine8Untimed: return "Engine 8 sources drift off"
        case .engine8Drift: return "Engine 8 sources drift +500 ppm"
        case .floor8: return "Floor 8 sources"
        case .floor8Backends: return "Floor 8 sources engine backends"
        case .engineBypass: return "Engine 1 source bypass"
        case .floorBypass: return "Floor 1 source bypass"
        }
    }

    public var isEngine: Bool {
        switch self {
        case .engine1, .engine8, .engine8Untimed, .engine8Drift, .engineBypass: return true
        default: return false
        }
    }

    /// Engine cases with drift compensation off.
    public var untimed: Bool { self == .engine8Untimed }

    /// Producer clock offset of the engine case, ppm (0: on the render clock).
    public var producerPpm: Double { self == .engine8Drift ? 500 : 0 }

    /// Warm-up callbacks before measuring: 50, or 1500 (15 s of output)
    /// where drift control must first measure the producers' rate.
    public var warmUpCallbacks: Int { self == .engine8Drift ? 1500 : 50 }

    public var sources: [SourceSpec] {
        switch self {
        case .engine1, .floor1:
            return [SourceSpec(kind: .media, rate: 44_100, channels: 2)]
        case .engine8, .engine8Untimed, .engine8Drift, .floor8, .floor8Backends:
            return [SourceSpec(kind: .media, rate: 44_100, channels: 2),
                    SourceSpec(kind: .media, rate: 44_100, channels: 2)]
                + Array(repeating: SourceSpec(kind: .voice, rate: 16_000, channels: 1), count: 6)
        case .engineBypass, .floorBypass:
            return [SourceSpec(kind: .media, rate: 48_000, channels: 2)]
        }
    }
}

/// A case ready to run: `feed()` (not measured) then `render()` (measured).
public protocol RenderCase: AnyObject {
    /// Makes the input of the next callback available (unmeasured part).
    func feed()
    /// Renders one 10 ms callback (the measured part).
    func render()
    /// The last rendered callback (interleaved stereo, 480 frames).
    var output: UnsafeMutableBufferPointer<Float> { get }
    /// Human-readable health check (underruns etc.); nil when all is well.
    func problems() -> String?
    /// Called once after the warm-up (engine drift case: from then on every
    /// callback is checked to have the drift stage engaged on every source).
    func startChecking()
}

extension RenderCase {
    public func startChecking() {}
}

public func makeCase(_ name: CaseName) throws -> any RenderCase {
    let c: any RenderCase = name.isEngine
        ? try EngineCase(name.sources, untimed: name.untimed, producerPpm: name.producerPpm)
        : FloorCase(name.sources, backends: name == .floor8Backends ? .engine : .libsamplerate)
    // Warm up: first-use costs (lazy globals, generic metadata, page faults,
    // resampler filter start-up) stay out of every measurement.
    for _ in 0..<name.warmUpCallbacks {
        c.feed()
        c.render()
    }
    c.startChecking()
    return c
}

/// Preallocated synthetic PCM for one source: a 1 s loop (integer-Hz sines,
/// so it loops seamlessly) plus `tail` frames repeated from its start, so a
/// window of up to `tail` frames is contiguous from any position.
final class SignalLoop {
    let spec: SourceSpec
    let loopFrames: Int
    let tail: Int
    let storage: UnsafeMutableBufferPointer<Float>
    var position = 0

    init(_ spec: SourceSpec, index: Int, tail: Int) {
        self.spec = spec
        loopFrames = spec.rate
        self.tail = tail
        storage = .allocate(capacity: (loopFrames + tail) * spec.channels)
        // Amplitude 0.1 per source: 8 sources stay under the limiter's
        // threshold, so the limiter runs its detection but never engages.
        let f0 = Float(220 + 110 * index)
        for i in 0..<(loopFrames + tail) {
            let t = Float(i % loopFrames) / Float(spec.rate)
            for c in 0..<spec.channels {
                let f = f0 * Float(c + 1)
                storage[i * spec.channels + c] = 0.1 * Float(sin(2 * Double.pi * Double(f) * Double(t)))
            }
        }
    }

    deinit { storage.deallocate() }

    /// `frames` frames from the current position (contiguous), advancing.
    func next(_ frames: Int) -> UnsafeBufferPointer<Float> {
        precondition(frames <= tail)
        let start = position
        position += frames
        if position >= loopFrames { position -= loopFrames }
        return UnsafeBufferPointer(rebasing: UnsafeBufferPointer(storage)[(start * spec.channels)..<((start + frames) * spec.channels)])
    }
}

