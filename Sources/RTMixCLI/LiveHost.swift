import Glibc
import RTMix
import Synchronization

/// A lock-free single-producer/single-consumer ring of mono float frames in
/// `planes` parallel planes (callback → writer thread). Allocated and
/// touched up front: the callback only copies into it.
final class LiveRing: @unchecked Sendable {
    let capacity: Int
    let planes: Int
    let data: UnsafeMutablePointer<Float>
    let produced = Atomic<Int>(0)
    let consumed = Atomic<Int>(0)
    /// Frames the callback could not store (writer too slow).
    let dropped = Atomic<Int>(0)

    init(capacity: Int, planes: Int) {
        self.capacity = capacity
        self.planes = planes
        data = .allocate(capacity: capacity * planes)
        data.initialize(repeating: 0, count: capacity * planes)
    }
    deinit { data.deallocate() }

    /// Callback side: appends `n` frames, plane p from `src[p]` (nil: zeros).
    @inline(__always)
    func write(_ a: UnsafePointer<Float>?, _ b: UnsafePointer<Float>?, count n: Int) {
        let p = produced.load(ordering: .relaxed)
        guard p &+ n &- consumed.load(ordering: .acquiring) <= capacity else {
            dropped.add(n, ordering: .relaxed)
            return
        }
        copy(a, into: data, at: p, count: n)
        if planes > 1 { copy(b, into: data + capacity, at: p, count: n) }
        produced.store(p &+ n, ordering: .releasing)
    }

    @inline(__always)
    private func copy(_ src: UnsafePointer<Float>?, into plane: UnsafeMutablePointer<Float>, at p: Int, count n: Int) {
        var j = p % capacity
        for i in 0..<n {
            plane[j] = src?[i] ?? 0
            j += 1
            if j == capacity { j = 0 }
        }
    }
}

/// The state of `rtmix-cli live`'s device callbacks: the engine, scratch
/// buffers, measurements and the rings to the writer. Everything the
/// callback touches is allocated in `init`; the callback itself does no
/// allocation, locking, printing or waiting (the same rules as the engine's
/// render path), only engine calls, copies, atomics and the vDSO clock.
final class LiveHost: @unchecked Sendable {
    let engine: Engine
    let rate: Int
    let outChannels: Int
    /// Engine max_frames: longer callbacks are processed in chunks.
    let chunk: Int
    let publishScratch: UnsafeMutablePointer<Float>
    let monoScratch: UnsafeMutablePointer<Float>
    let zeros: UnsafeMutablePointer<Float>
    /// Played (mono) frames; captured mic + publish frames.
    let playRing: LiveRing
    let capRing: LiveRing
    /// `--record` only: the engine's render output exactly as played (one
    /// plane per output channel, up to 2) and the timeline of the duplex
    /// callbacks (start on CLOCK_MONOTONIC, frames), so that
    /// `rtmix-cli aec --calls` can replay a live run with its own timing.
    let renderRing: LiveRing?
    let callLogCapacity: Int
    let callLogNs: UnsafeMutablePointer<UInt64>
    let callLogFrames: UnsafeMutablePointer<Int32>
    /// Entries written (callback thread: relaxed is enough, the writer
    /// reads it after the stream stopped and its thread was joined).
    let callLogCount = Atomic<Int>(0)
    let splitScratch: UnsafeMutablePointer<Float>

    // Measurements (written by the callback thread(s), read by the control
    // thread as atomics, the histograms after the stream is stopped).
    let callbacks = Atomic<Int>(0)
    let lastCallbackNs = Atomic<UInt64>(0)
    let framesOut = Atomic<Int>(0)
    let framesIn = Atomic<Int>(0)
    let minFrames = Atomic<Int>(.max)
    let maxFrames = Atomic<Int>(0)
    let sizeChanges = Atomic<Int>(0)
    let outputUnderflows = Atomic<Int>(0)
    let inputOverflows = Atomic<Int>(0)
    let inputUnderflows = Atomic<Int>(0)
    let outputOverflows = Atomic<Int>(0)
    let primingCallbacks = Atomic<Int>(0)
    let renderErrors = Atomic<Int>(0)
    let captureErrors = Atomic<Int>(0)
    let missingInput = Atomic<Int>(0)
    /// Peak levels since the control thread last read them (Float bit patterns).
    let outPeakBits = Atomic<UInt32>(0)
    let micPeakBits = Atomic<UInt32>(0)
    /// Interval between successive (output-side) callbacks, and compute times.
    let interval = MicrosHistogram(maxMicros: 200_000)
    let renderTime = MicrosHistogram(maxMicros: 50_000)
    let captureTime = MicrosHistogram(maxMicros: 50_000)
    let callbackTime = MicrosHistogram(maxMicros: 50_000)
    private var previousStart: UInt64 = 0
    private var previousFrames = 0

    init(engine: Engine, rate: Int, outChannels: Int, chunk: Int, ringSeconds: Int = 8, recordSeconds: Int = 0) {
        self.engine = engine
        self.rate = rate
        self.outChannels = outChannels
        self.chunk = chunk
        publishScratch = .allocate(capacity: chunk); publishScratch.initialize(repeating: 0, count: chunk)
        monoScratch = .allocate(capacity: chunk); monoScratch.initialize(repeating: 0, count: chunk)
        zeros = .allocate(capacity: chunk); zeros.initialize(repeating: 0, count: chunk)
        playRing = LiveRing(capacity: ringSeconds * rate, planes: 1)
        capRing = LiveRing(capacity: ringSeconds * rate, planes: 2)
        renderRing = recordSeconds > 0 ? LiveRing(capacity: ringSeconds * rate, planes: min(2, outChannels)) : nil
        // Callbacks are at least 1 ms apart in practice; 1000 a second of
        // recording is plenty, and a full log just stops logging.
        callLogCapacity = recordSeconds > 0 ? recordSeconds * 1000 : 0
        callLogNs = .allocate(capacity: max(1, callLogCapacity)); callLogNs.initialize(repeating: 0, count: max(1, callLogCapacity))
        callLogFrames = .allocate(capacity: max(1, callLogCapacity)); callLogFrames.initialize(repeating: 0, count: max(1, callLogCapacity))
        splitScratch = .allocate(capacity: 2 * chunk); splitScratch.initialize(repeating: 0, count: 2 * chunk)
    }

    deinit {
        publishScratch.deallocate(); monoScratch.deallocate(); zeros.deallocate()
        callLogNs.deallocate(); callLogFrames.deallocate(); splitScratch.deallocate()
    }

    /// The device callback: for a duplex stream `renders` and `captures`
    /// are both true (render first, then the microphone: the reference for
    /// this callback is in the engine before its echo can arrive).
    func callback(input: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>?, frames: Int, flags: UInt,
                  renders: Bool, captures: Bool) {
        let start = monotonicNs()
        callbacks.add(1, ordering: .relaxed)
        // Interval, sizes and whole-callback time: measured on the output
        // side only (with separate streams the input callback runs on
        // another thread, and these are single-writer).
        if renders {
            if previousStart != 0 { interval.record(ns: start &- previousStart) }
            previousStart = start
            if frames < minFrames.load(ordering: .relaxed) { minFrames.store(frames, ordering: .relaxed) }
            if frames > maxFrames.load(ordering: .relaxed) { maxFrames.store(frames, ordering: .relaxed) }
            if previousFrames != 0 && frames != previousFrames { sizeChanges.add(1, ordering: .relaxed) }
            previousFrames = frames
        }
        lastCallbackNs.store(start, ordering: .releasing)
        if renders && captures {
            let k = callLogCount.load(ordering: .relaxed)
            if k < callLogCapacity {
                callLogNs[k] = start
                callLogFrames[k] = Int32(truncatingIfNeeded: frames)
                callLogCount.store(k + 1, ordering: .relaxed)
            }
        }
        // PortAudio's status flags (paInputUnderflow 1, paInputOverflow 2,
        // paOutputUnderflow 4, paOutputOverflow 8, paPrimingOutput 16).
        if flags & 1 != 0 { inputUnderflows.add(1, ordering: .relaxed) }
        if flags & 2 != 0 { inputOverflows.add(1, ordering: .relaxed) }
        if flags & 4 != 0 { outputUnderflows.add(1, ordering: .relaxed) }
        if flags & 8 != 0 { outputOverflows.add(1, ordering: .relaxed) }
        if flags & 16 != 0 { primingCallbacks.add(1, ordering: .relaxed) }

        let engine = self.engine
        let ch = outChannels
        var renderNs: UInt64 = 0, captureNs: UInt64 = 0
        if renders, let output {
            var done = 0
            var peak: Float = 0
            while done < frames {
                let n = min(chunk, frames - done)
                let out = output + done * ch
                let t0 = monotonicNs()
                do {
                    try engine.render(into: UnsafeMutableBufferPointer(start: out, count: n * ch), frames: n)
                } catch {
                    out.update(repeating: 0, count: n * ch)
                    renderErrors.add(1, ordering: .relaxed)
                }
                renderNs &+= monotonicNs() &- t0
                for i in 0..<n {
                    var m: Float = 0
                    for c in 0..<ch { m += out[i * ch + c] }
                    m /= Float(ch)
                    monoScratch[i] = m
                    peak = max(peak, abs(m))
                }
                playRing.write(monoScratch, nil, count: n)
                if let renderRing {
                    let planes = renderRing.planes
                    for i in 0..<n { for c in 0..<planes { splitScratch[c * chunk + i] = out[i * ch + c] } }
                    renderRing.write(splitScratch, planes > 1 ? UnsafePointer(splitScratch + chunk) : nil, count: n)
                }
                done += n
            }
            framesOut.add(frames, ordering: .relaxed)
            raisePeak(outPeakBits, peak)
            renderTime.record(ns: renderNs)
        }
        if captures {
            if input == nil { missingInput.add(1, ordering: .relaxed) }
            var done = 0
            var peak: Float = 0
            while done < frames {
                let n = min(chunk, frames - done)
                let mic = input.map { $0 + done } ?? UnsafePointer(zeros)
                let t0 = monotonicNs()
                do {
                    try engine.processCapture(mic: UnsafeBufferPointer(start: mic, count: n),
                                              out: UnsafeMutableBufferPointer(start: publishScratch, count: n), frames: n)
                } catch {
                    publishScratch.update(repeating: 0, count: n)
                    captureErrors.add(1, ordering: .relaxed)
                }
                captureNs &+= monotonicNs() &- t0
                for i in 0..<n { peak = max(peak, abs(mic[i])) }
                capRing.write(mic, publishScratch, count: n)
                done += n
            }
            framesIn.add(frames, ordering: .relaxed)
            raisePeak(micPeakBits, peak)
            captureTime.record(ns: captureNs)
        }
        if renders { callbackTime.record(ns: monotonicNs() &- start) }
    }

    @inline(__always)
    private func raisePeak(_ bits: borrowing Atomic<UInt32>, _ value: Float) {
        if value > Float(bitPattern: bits.load(ordering: .relaxed)) || !value.isFinite {
            bits.store(value.isFinite ? value.bitPattern : Float.infinity.bitPattern, ordering: .relaxed)
        }
    }

    /// Control thread: the peak since the last call.
    func takePeak(_ bits: borrowing Atomic<UInt32>) -> Float { Float(bitPattern: bits.exchange(0, ordering: .relaxed)) }
}

/// The writer thread: drains both rings into publish.wav (and, with
/// --record, mic.wav and playout.wav), meters levels, counts non-finite
/// samples, measures ERLE itself (mic / publish power per second) and keeps
/// the recordings the marker measurement needs.
final class LiveWriter: @unchecked Sendable {
    let host: LiveHost
    let publishFile: SoundFile
    let micFile: SoundFile?, playFile: SoundFile?
    /// `--record`: the exact engine output and microphone (float), and
    /// where to write the callback timeline at the end.
    let renderFile: SoundFile?, captureFile: SoundFile?
    let callsPath: String?
    /// Keep played and mic signals in memory (marker measurement), up to this many frames.
    let keepFrames: Int
    var played: [Float] = [], mic: [Float] = []
    var playLevel = LevelMeter(), micLevel = LevelMeter(), pubLevel = LevelMeter()
    /// ERLE per 1 s of capture (mic above -50 dBFS): (start frame, dB).
    var erleWindows: [(start: Int, db: Double)] = []
    private var winMic = 0.0, winPub = 0.0, winFrames = 0, capFrames = 0
    let done = Atomic<Bool>(false)
    var error: CLIError?

    init(host: LiveHost, publishFile: SoundFile, micFile: SoundFile?, playFile: SoundFile?,
         renderFile: SoundFile? = nil, captureFile: SoundFile? = nil, callsPath: String? = nil, keepFrames: Int) {
        self.host = host
        self.publishFile = publishFile
        self.micFile = micFile
        self.playFile = playFile
        self.renderFile = renderFile
        self.captureFile = captureFile
        self.callsPath = callsPath
        self.keepFrames = keepFrames
        if keepFrames > 0 {
            played.reserveCapacity(keepFrames)
            mic.reserveCapacity(keepFrames)
        }
    }

    func run() {
        let block = 1024
        let tmp = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        defer { tmp.deallocate(); interleaved.deallocate() }
        while true {
            let finishing = done.load(ordering: .acquiring)
            let a = drain(host.playRing, tmp, block) { (p, n) throws(CLIError) in
                self.playLevel.add(p, count: n)
                try self.playFile?.write(p, frames: n)
                if self.played.count + n <= self.keepFrames { self.played.append(contentsOf: UnsafeBufferPointer(start: p, count: n)) }
            }
            let b = drain(host.capRing, tmp, block) { (p, n) throws(CLIError) in
                let q = p + block
                self.micLevel.add(p, count: n)
                self.pubLevel.add(q, count: n)
                try self.micFile?.write(p, frames: n)
                try self.captureFile?.write(p, frames: n)
                try self.publishFile.write(q, frames: n)
                if self.mic.count + n <= self.keepFrames { self.mic.append(contentsOf: UnsafeBufferPointer(start: p, count: n)) }
                self.meterErle(p, q, n)
            }
            var r = 0
            if let ring = host.renderRing {
                r = drain(ring, tmp, block) { (p, n) throws(CLIError) in
                    let planes = ring.planes
                    for i in 0..<n { for c in 0..<planes { interleaved[i * planes + c] = p[c * block + i] } }
                    try self.renderFile?.write(interleaved, frames: n)
                }
            }
            if a == 0 && b == 0 && r == 0 {
                if finishing { break }
                usleep(5_000)
            }
        }
        publishFile.close(); micFile?.close(); playFile?.close(); renderFile?.close(); captureFile?.close()
    }

    /// Writes the callback timeline (`--record`): one line per duplex
    /// callback, "<ns since the first callback> <frames>". Call after the
    /// stream stopped.
    func writeCallLog() {
        guard let path = callsPath else { return }
        let count = host.callLogCount.load(ordering: .relaxed)
        var text = "# rtmix-cli live callbacks: ns since the first, frames (render then capture)\n"
        let first = count > 0 ? host.callLogNs[0] : 0
        for k in 0..<count { text += "\(host.callLogNs[k] &- first) \(host.callLogFrames[k])\n" }
        if let f = fopen(path, "w") {
            fputs(text, f)
            fclose(f)
        } else if error == nil {
            error = CLIError("cannot write \(path)")
        }
    }

    /// Copies up to `block` frames per plane out of the ring into tmp
    /// (plane k at tmp + k·block) and hands them to `use`.
    private func drain(_ ring: LiveRing, _ tmp: UnsafeMutablePointer<Float>, _ block: Int,
                       _ use: (UnsafeMutablePointer<Float>, Int) throws(CLIError) -> Void) -> Int {
        let c = ring.consumed.load(ordering: .relaxed)
        let n = min(block, ring.produced.load(ordering: .acquiring) - c)
        guard n > 0 else { return 0 }
        for k in 0..<ring.planes {
            let plane = ring.data + k * ring.capacity
            for i in 0..<n { tmp[k * block + i] = plane[(c + i) % ring.capacity] }
        }
        ring.consumed.store(c + n, ordering: .releasing)
        do { try use(tmp, n) } catch { if self.error == nil { self.error = error } }
        return n
    }

    private func meterErle(_ m: UnsafePointer<Float>, _ p: UnsafePointer<Float>, _ n: Int) {
        for i in 0..<n {
            let a = Double(m[i]), b = Double(p[i])
            if a.isFinite && b.isFinite { winMic += a * a; winPub += b * b }
            winFrames += 1
            if winFrames == host.rate {
                let micPower = winMic / Double(winFrames)
                if micPower > 1e-5 {      // -50 dBFS: something to cancel
                    erleWindows.append((capFrames + i + 1 - winFrames, 10 * log10(winMic / max(winPub, 1e-20))))
                }
                winMic = 0; winPub = 0; winFrames = 0
            }
        }
        capFrames += n
    }
}
