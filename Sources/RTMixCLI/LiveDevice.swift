import CPortAudio
import Glibc

// PortAudio for `rtmix-cli live`: initialization, device listing and
// choice, opening the duplex stream (or an output and an input stream).
// Control-thread code only; the callbacks themselves are in LiveHost.swift.

/// PortAudio's status as a message.
func paMessage(_ err: PaError) -> String { String(cString: Pa_GetErrorText(err)) }

/// Pa_Initialize / Pa_Terminate around a run.
final class PortAudioSession {
    init(verbose: Bool) throws(CLIError) {
        rtmix_live_alsa_quiet(verbose ? 0 : 1)
        // Probing the host APIs prints on stderr (ALSA configuration, JACK
        // "server is not running"): hidden unless --verbose.
        var saved: Int32 = -1
        if !verbose {
            fflush(nil)
            saved = dup(2)
            let null = open("/dev/null", O_WRONLY)
            if saved >= 0 && null >= 0 { dup2(null, 2) }
            if null >= 0 { close(null) }
        }
        let err = Pa_Initialize()
        if saved >= 0 { dup2(saved, 2); close(saved) }
        guard err == paNoError.rawValue else { throw CLIError("PortAudio: cannot initialize: \(paMessage(err))") }
    }
    deinit { Pa_Terminate() }

    struct Device {
        let index: PaDeviceIndex
        let name: String
        let hostAPI: String
        let maxInputs: Int, maxOutputs: Int
        let defaultRate: Double
        let lowOutputLatency: Double, lowInputLatency: Double
    }

    var devices: [Device] {
        let n = Pa_GetDeviceCount()
        guard n > 0 else { return [] }
        return (0..<n).compactMap { i in
            guard let info = Pa_GetDeviceInfo(i)?.pointee else { return nil }
            let api = Pa_GetHostApiInfo(info.hostApi).map { String(cString: $0.pointee.name) } ?? "?"
            return Device(index: i, name: String(cString: info.name), hostAPI: api,
                          maxInputs: Int(info.maxInputChannels), maxOutputs: Int(info.maxOutputChannels),
                          defaultRate: info.defaultSampleRate,
                          lowOutputLatency: info.defaultLowOutputLatency, lowInputLatency: info.defaultLowInputLatency)
        }
    }

    /// `--list-devices`.
    func listing() -> String {
        let list = devices
        if list.isEmpty { return "no audio devices (PortAudio \(String(cString: Pa_GetVersionText())))" }
        let dOut = Pa_GetDefaultOutputDevice(), dIn = Pa_GetDefaultInputDevice()
        var lines = ["PortAudio devices (\(String(cString: Pa_GetVersionText()))):"]
        for d in list {
            var marks: [String] = []
            if d.index == dOut { marks.append("default output") }
            if d.index == dIn { marks.append("default input") }
            lines.append("  \(d.index): \(d.name) [\(d.hostAPI)] in \(d.maxInputs) out \(d.maxOutputs), "
                + "\(Int(d.defaultRate)) Hz, low latency out \(fixed(d.lowOutputLatency * 1000, 1)) ms / in "
                + "\(fixed(d.lowInputLatency * 1000, 1)) ms" + (marks.isEmpty ? "" : "  (" + marks.joined(separator: ", ") + ")"))
        }
        return lines.joined(separator: "\n")
    }

    /// The device for `--output` / `--input`: an index, or the first device
    /// whose name contains the text (exact name first); nil: the default.
    func device(_ spec: String?, output: Bool) throws(CLIError) -> Device {
        let role = output ? "output" : "input"
        let list = devices.filter { output ? $0.maxOutputs > 0 : $0.maxInputs > 0 }
        guard !list.isEmpty else {
            throw CLIError("no audio \(role) device found (PortAudio sees \(devices.count) device(s)). "
                + "On a machine without sound hardware start a sound server, e.g. PulseAudio with a null sink "
                + "(see docs/live.md), or list devices with --list-devices")
        }
        guard let spec else {
            let d = output ? Pa_GetDefaultOutputDevice() : Pa_GetDefaultInputDevice()
            if let found = list.first(where: { $0.index == d }) { return found }
            throw CLIError("no default audio \(role) device; choose one with --\(role) (see --list-devices)")
        }
        if let i = Int32(spec) {
            if let found = list.first(where: { $0.index == i }) { return found }
            throw CLIError("--\(role) \(spec): no \(role) device with that index (see --list-devices)")
        }
        if let found = list.first(where: { $0.name == spec })
            ?? list.first(where: { $0.name.lowercased().contains(spec.lowercased()) }) {
            return found
        }
        throw CLIError("--\(role) '\(spec)': no \(role) device with that name (see --list-devices)")
    }
}

/// One open stream: a duplex stream, or the output (render) and input
/// (capture) streams when the devices cannot be opened together.
final class LiveStreams {
    private(set) var duplex: OpaquePointer?
    private(set) var output: OpaquePointer?
    private(set) var input: OpaquePointer?
    var isDuplex: Bool { duplex != nil }
    /// Why a duplex stream did not open (nil when it did, or was not tried).
    private(set) var duplexFailure: String?
    /// Latencies PortAudio reports for the open stream(s), seconds.
    private(set) var outputLatency = 0.0, inputLatency = 0.0

    init(out: PortAudioSession.Device, inp: PortAudioSession.Device, outChannels: Int, rate: Int, period: Int,
         latency: Double?, separate: Bool, host: LiveHost) throws(CLIError) {
        var op = PaStreamParameters(device: out.index, channelCount: Int32(outChannels), sampleFormat: paFloat32,
                                    suggestedLatency: latency ?? out.lowOutputLatency, hostApiSpecificStreamInfo: nil)
        var ip = PaStreamParameters(device: inp.index, channelCount: 1, sampleFormat: paFloat32,
                                    suggestedLatency: latency ?? inp.lowInputLatency, hostApiSpecificStreamInfo: nil)
        let user = Unmanaged.passUnretained(host).toOpaque()
        let fpb = UInt(period)          // 0 = paFramesPerBufferUnspecified: sizes may vary
        let flags = PaStreamFlags(paClipOff)
        var duplexError: PaError = paNoError.rawValue
        if !separate {
            var s: UnsafeMutableRawPointer?
            duplexError = Pa_OpenStream(&s, &ip, &op, Double(rate), fpb, flags, liveDuplexCallback, user)
            if duplexError == paNoError.rawValue, let s {
                duplex = OpaquePointer(s)
                readLatency()
                return
            }
            duplexFailure = paMessage(duplexError)
        }
        var so: UnsafeMutableRawPointer?, si: UnsafeMutableRawPointer?
        var err = Pa_OpenStream(&so, nil, &op, Double(rate), fpb, flags, liveOutputCallback, user)
        guard err == paNoError.rawValue, let so else {
            throw CLIError("cannot open output '\(out.name)' at \(rate) Hz, \(outChannels) ch: \(paMessage(err))"
                + (separate ? "" : " (duplex: \(paMessage(duplexError)))"))
        }
        output = OpaquePointer(so)
        err = Pa_OpenStream(&si, &ip, nil, Double(rate), fpb, flags, liveInputCallback, user)
        guard err == paNoError.rawValue, let si else {
            Pa_CloseStream(UnsafeMutableRawPointer(so)); output = nil
            throw CLIError("cannot open input '\(inp.name)' at \(rate) Hz, mono: \(paMessage(err))")
        }
        input = OpaquePointer(si)
        readLatency()
    }

    private var all: [UnsafeMutableRawPointer] {
        [duplex, output, input].compactMap { $0.map { UnsafeMutableRawPointer($0) } }
    }

    private func readLatency() {
        if let s = duplex ?? output, let info = Pa_GetStreamInfo(UnsafeMutableRawPointer(s)) {
            outputLatency = info.pointee.outputLatency
        }
        if let s = duplex ?? input, let info = Pa_GetStreamInfo(UnsafeMutableRawPointer(s)) {
            inputLatency = info.pointee.inputLatency
        }
    }

    func start(realtime: Bool) throws(CLIError) {
        for s in all {
            // ALSA host API: SCHED_FIFO for the callback thread (ignored when not permitted).
            if realtime, Pa_GetHostApiInfo(Pa_GetDefaultHostApi())?.pointee.type == paALSA { PaAlsa_EnableRealtimeScheduling(s, 1) }
            let err = Pa_StartStream(s)
            guard err == paNoError.rawValue else { throw CLIError("cannot start the stream: \(paMessage(err))") }
        }
    }

    /// All streams still running (a device that went away ends its stream).
    var active: Bool { all.allSatisfy { Pa_IsStreamActive($0) == 1 } }

    func stopAndClose() {
        for s in all {
            Pa_StopStream(s)
            Pa_CloseStream(s)
        }
        duplex = nil; output = nil; input = nil
    }

    deinit { stopAndClose() }
}

// The PortAudio callbacks (PortAudio's real-time thread): no allocation,
// locks, printing or waiting; everything is in the preallocated LiveHost.

func liveDuplexCallback(_ input: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer?, _ frames: UInt,
                        _ time: UnsafePointer<PaStreamCallbackTimeInfo>?, _ flags: PaStreamCallbackFlags,
                        _ user: UnsafeMutableRawPointer?) -> Int32 {
    let host = Unmanaged<LiveHost>.fromOpaque(user!).takeUnretainedValue()
    host.callback(input: input?.assumingMemoryBound(to: Float.self),
                  output: output?.assumingMemoryBound(to: Float.self), frames: Int(frames), flags: UInt(flags),
                  renders: true, captures: true)
    return 0   // paContinue
}

func liveOutputCallback(_ input: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer?, _ frames: UInt,
                        _ time: UnsafePointer<PaStreamCallbackTimeInfo>?, _ flags: PaStreamCallbackFlags,
                        _ user: UnsafeMutableRawPointer?) -> Int32 {
    let host = Unmanaged<LiveHost>.fromOpaque(user!).takeUnretainedValue()
    host.callback(input: nil, output: output?.assumingMemoryBound(to: Float.self), frames: Int(frames), flags: UInt(flags),
                  renders: true, captures: false)
    return 0
}

func liveInputCallback(_ input: UnsafeRawPointer?, _ output: UnsafeMutableRawPointer?, _ frames: UInt,
                       _ time: UnsafePointer<PaStreamCallbackTimeInfo>?, _ flags: PaStreamCallbackFlags,
                       _ user: UnsafeMutableRawPointer?) -> Int32 {
    let host = Unmanaged<LiveHost>.fromOpaque(user!).takeUnretainedValue()
    host.callback(input: input?.assumingMemoryBound(to: Float.self), output: nil, frames: Int(frames), flags: UInt(flags),
                  renders: false, captures: true)
    return 0
}
