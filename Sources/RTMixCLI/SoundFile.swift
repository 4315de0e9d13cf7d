import CSndFile

/// A command-line failure with a message for the user (exit status 1).
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// Output sample formats the CLI writes.
enum SampleEncoding: String, CaseIterable {
    case s16, s24, f32

    var sndfileSubtype: Int32 {
        switch self {
        case .s16: return Int32(SF_FORMAT_PCM_16)
        case .s24: return Int32(SF_FORMAT_PCM_24)
        case .f32: return Int32(SF_FORMAT_FLOAT)
        }
    }

    var label: String {
        switch self {
        case .s16: return "16-bit PCM"
        case .s24: return "24-bit PCM"
        case .f32: return "32-bit float"
        }
    }
}

/// A thin libsndfile wrapper: float I/O, interleaved. Not real-time safe
/// (file I/O); never call it from a render thread. Use from one thread at a
/// time (the demo hands it to its writer thread).
final class SoundFile: @unchecked Sendable {
    private var handle: OpaquePointer?
    let path: String
    let sampleRate: Int
    let channels: Int
    /// Frames in the file when reading (0 when writing).
    let frames: Int
    let formatName: String

    /// Opens `path` for reading.
    init(reading path: String) throws(CLIError) {
        var info = SF_INFO()
        guard let h = sf_open(path, Int32(SFM_READ), &info) else {
            throw CLIError("cannot open '\(path)': \(String(cString: sf_strerror(nil)))")
        }
        handle = h
        self.path = path
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int(info.frames)
        formatName = SoundFile.describe(format: info.format)
    }

    /// Creates `path` for writing; the container comes from the extension
    /// (.wav or .flac).
    init(writing path: String, sampleRate: Int, channels: Int, encoding: SampleEncoding) throws(CLIError) {
        let ext = path.split(separator: "/").last.flatMap { name -> Substring? in
            guard let dot = name.lastIndex(of: ".") else { return nil }
            return name[name.index(after: dot)...]
        }?.lowercased() ?? ""
        let container: Int32
        switch ext {
        case "wav": container = Int32(SF_FORMAT_WAV)
        case "flac":
            container = Int32(SF_FORMAT_FLAC)
            if encoding == .f32 { throw CLIError("FLAC cannot store float samples; use --format s16 or s24") }
        default:
            throw CLIError("unsupported output file type '\(path)': use a .wav or .flac extension")
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = container | encoding.sndfileSubtype
        guard sf_format_check(&info) != 0 else {
            throw CLIError("libsndfile cannot write \(ext.uppercased()) at \(sampleRate) Hz, \(channels) channel(s), \(encoding.label)")
        }
        guard let h = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw CLIError("cannot create '\(path)': \(String(cString: sf_strerror(nil)))")
        }
        handle = h
        self.path = path
        self.sampleRate = sampleRate
        self.channels = channels
        frames = 0
        formatName = "\(ext.uppercased()) \(encoding.label)"
        // Float → integer conversion: clip instead of wrapping (belt and braces;
        // the engine's limiter already keeps the mix within ±1).
        sf_command(h, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        // No PEAK chunk in float files: libsndfile stamps it with the time of
        // writing, so two runs that wrote the same samples a second apart
        // differed byte for byte (cli-smoke's `cmp` of an f32 output failed
        // once in CI that way). Set before any sample is written.
        sf_command(h, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        if encoding != .f32 {
            // Scale ±1.0 to the full integer range.
            sf_command(h, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        }
    }

    deinit { close() }

    /// Reads up to `frames` interleaved frames; returns frames read (0 at end).
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard let handle else { return 0 }
        return Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
    }

    /// Writes `frames` interleaved frames; throws on a short write.
    func write(_ buffer: UnsafePointer<Float>, frames: Int) throws(CLIError) {
        guard let handle else { throw CLIError("'\(path)' is closed") }
        let n = Int(sf_writef_float(handle, buffer, sf_count_t(frames)))
        if n != frames {
            throw CLIError("write to '\(path)' failed: \(String(cString: sf_strerror(handle)))")
        }
    }

    func close() {
        if let h = handle { sf_close(h) }
        handle = nil
    }

    private static func describe(format: Int32) -> String {
        var info = SF_FORMAT_INFO()
        info.format = format & Int32(SF_FORMAT_TYPEMASK)
        var name = "unknown"
        if sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
           let n = info.name {
            name = String(cString: n)
        }
        return name
    }
}
