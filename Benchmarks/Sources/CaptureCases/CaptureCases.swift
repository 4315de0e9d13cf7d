/// The capture benchmark cases, shared by the package-benchmark suite
/// (`Capture`) and the callgrind driver (`CaptureCount`).
///
/// Every case processes ONE 10 ms capture block per `capture()` (the
/// measured part). `prepare()` (unmeasured) does what has to happen before
/// it in a duplex callback: for the engine, push one 10 ms block of the
/// far-end source and render it (which hands the echo reference to the
/// capture side); for the floor, nothing (its input is precomputed).
///
/// - `engine*`: the real `Engine` with `captureRate` set (default capture
///   settings: tail 200 ms, noise and echo suppression on, AGC off, mono
///   mic), one far-end source rendered per block, `processCapture` per
///   block. Both sides read a simulated clock advanced 10 ms per block, so
///   the drift follower sees an exact duplex device.
/// - `floor*`: the bare speexdsp calls for the same frames:
///   `speex_echo_cancellation` + `speex_preprocess_run` with the engine's
///   configuration (`EchoCanceller`: frame 10 ms, tail 200 ms,
///   SPEEX_ECHO_SET_SAMPLING_RATE, preprocessor with denoise on, AGC off,
///   SPEEX_PREPROCESS_SET_ECHO_STATE), fed the same microphone frames and
///   the far-end signal already aligned as the engine aligns it (leading
///   the echo by 8 ms), precomputed as int16.
///
/// Signals (see `CaptureSignals`): a 2 s loop of speech-band noise with a
/// 4 Hz syllable envelope (never silent, so the delay estimator does its
/// FFT work every hop) is the far end; the microphone is its echo: 0.3 ×
/// the far end 40 ms later + 0.1 × 45 ms later + noise at about −66 dBFS.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum CaptureCaseName: String, CaseIterable, Sendable {
    case engine16 = "engine16"
    case engine16From48 = "engine16-from48"
    case floor16 = "floor16"
    case engine48 = "engine48"
    case floor48 = "floor48"

    /// Benchmark name as reported by package-benchmark (target `Capture`).
    public var title: String {
        switch self {
        case .engine16: return "Engine 16k"
        case .engine16From48: return "Engine 16k from 48k stereo"
        case .floor16: return "Floor 16k"
        case .engine48: return "Engine 48k"
        case .floor48: return "Floor 48k"
        }
    }

    public var captureRate: Int {
        switch self {
        case .engine16, .engine16From48, .floor16: return 16_000
        case .engine48, .floor48: return 48_000
        }
    }

    /// Engine output format (the render side), nil for floors.
    public var output: (rate: Int, channels: Int)? {
        switch self {
        case .engine16: return (16_000, 1)
        case .engine16From48, .engine48: return (48_000, 2)
        case .floor16, .floor48: return nil
        }
    }
}

/// A case ready to run: `prepare()` (not measured) then `capture()`.
public protocol CaptureCase: AnyObject {
    /// Everything before the capture call of the next block (unmeasured).
    func prepare()
    /// One 10 ms capture call (the measured part).
    func capture()
    /// A checksum of the last block's output (keeps the work observable).
    func outputChecksum() -> Float
    /// Human-readable health check; nil when all is well.
    func problems() -> String?
    /// One-line summary of what the case did (for RESULTS / logs).
    func summary() -> String
    /// Restarts the microphone/output power accumulation (after warm-up).
    func resetPowers()
}

/// Capture blocks run before a case is handed out: 3 s, so the canceller
/// has converged, the delay is in use and the first-use costs are paid.
public let captureWarmupBlocks = 300

public func makeCaptureCase(_ name: CaptureCaseName) throws -> any CaptureCase {
    let signals = CaptureSignals.shared(captureRate: name.captureRate)
    let c: any CaptureCase
    if let out = name.output {
        c = try EngineCapture(signals: signals, outputRate: out.rate, outputChannels: out.channels)
    } else {
        c = FloorCapture(signals: signals)
    }
    for _ in 0..<captureWarmupBlocks {
        c.prepare()
        c.capture()
    }
    c.resetPowers()
    return c
}
