/// An RTMix failure. `code` is the C ABI status value (`RTMIX_ERR_*`); values
/// are never renumbered or reused.
public struct RTMixError: Error, Hashable, Sendable {
    public let code: Int32

    @_noLocks public init(code: Int32) { self.code = code }

    /// A pointer was nil, a value out of range, NaN/Inf, or a frame count zero.
    public static var invalidArgument: RTMixError { @_noLocks get { RTMixError(code: -1) } }
    /// Sample rate or channel count not supported.
    public static var unsupportedFormat: RTMixError { @_noLocks get { RTMixError(code: -2) } }
    /// Unknown or removed source id.
    public static var notFound: RTMixError { @_noLocks get { RTMixError(code: -3) } }
    /// A push did not fit completely (C ABI only; the Swift API returns the
    /// accepted frame count instead).
    public static var bufferFull: RTMixError { @_noLocks get { RTMixError(code: -4) } }
    /// A render call asked for more than `maxFrames`.
    public static var tooManyFrames: RTMixError { @_noLocks get { RTMixError(code: -5) } }
    /// `maxSources` or the id space is exhausted.
    public static var limit: RTMixError { @_noLocks get { RTMixError(code: -6) } }
    /// Allocation failed.
    public static var noMemory: RTMixError { @_noLocks get { RTMixError(code: -7) } }
    /// Not allowed in the current state (e.g. concurrent render calls).
    public static var badState: RTMixError { @_noLocks get { RTMixError(code: -8) } }

    /// A static English description of a status code (0 is "ok").
    @_noLocks
    public static func message(for code: Int32) -> StaticString {
        switch code {
        case 0: return "ok"
        case -1: return "invalid argument"
        case -2: return "unsupported format (output and source rates 8000..192000 Hz, capture 8000..48000 Hz; 1 or 2 channels)"
        case -3: return "source not found"
        case -4: return "buffer full: not every frame was accepted"
        case -5: return "too many frames for one call (render or capture: more than max_frames)"
        case -6: return "limit reached (max_sources or id space)"
        case -7: return "out of memory"
        case -8: return "bad state (e.g. concurrent render calls)"
        default: return "unknown status"
        }
    }
}
