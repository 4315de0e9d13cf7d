// FuzzEngineC — libFuzzer harness for the RTMix engine.
//
// The input is a program. Its first byte picks the mode:
//   - C ABI (most inputs): up to 96 calls of rtmix_* on two engine slots
//     (create/destroy with fuzzed, often invalid configs; add/remove sources;
//     push f32/s16 with NaN/Inf/huge samples and fuzzed frame counts; gains,
//     mute, domain gains; render f32/s16; output-format changes; stats,
//     events, buffered, names; stale and garbage ids; NULL pointers).
//     With capture on (capture_rate != 0, fuzzed capture config): capture
//     f32/s16 (in place or not) with fuzzed frame counts and NaN/Inf/huge
//     microphone samples, stream delay hints, publish gains.
//   - mirror: the same, but every call goes to both engines with the same
//     arguments; render f32 on one and s16 on the other must agree exactly
//     (saturating, rounded conversion: the s16 output never wraps).
//   - Swift API: the same kind of program through `Engine`, whose buffer
//     arguments carry their own sizes (mismatched channel counts and short
//     buffers must be rejected, never over-read or over-written).
//
// Every buffer passed is exactly as large as the count passed with it
// (heap-allocated, so AddressSanitizer sees any access past it). After every
// call the documented behaviour is checked against a model: exact status
// codes, `*accepted`, zero-filled output on a failed render (as documented),
// output finite and within [-1, 1], statistics consistent with the calls
// made. Any violation aborts.

import CRTMixABI
import FuzzSupport
import RTMix

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Model

/// The documented rules for sources that can never work (rtmix.h,
/// buffer_frames): the ring, rounded up to a power of two (default: 400 ms,
/// or twice the drift target), must hold one render block's input
/// (max_frames at the current output rate, + 0.1 % and 1 frame when
/// resampling), and an explicit ring must hold the drift target. Only for
/// configs that pass the per-field checks.
func sourceNeverWorks(rate: Int, buffer: Int, targetMs: Float, engineMaxFrames: Int, outputRate: Int) -> Bool {
    let target = Double(rate) * Double(targetMs) / 1000
    if buffer > 0 && targetMs > 0 && Double(buffer) < target { return true }
    let wanted = buffer > 0 ? buffer : max(rate * 400 / 1000, Int(Float(rate) * targetMs / 1000) * 2)
    var ring = 1
    while ring < wanted { ring <<= 1 }
    var needed = engineMaxFrames
    if rate != outputRate {
        let exact = (engineMaxFrames * rate + outputRate - 1) / outputRate
        needed = exact + exact / 1000 + 1
    }
    return ring < needed
}

struct SourceModel {
    var id: UInt32
    var domain: Int32
    var rate: Int
    var channels: Int
    var requestedBuffer: Int
    var gain: Float
    var muted = false
    var pushed: UInt64 = 0
    var rejected: UInt64 = 0
    var nonfinite: UInt64 = 0
}

/// The engine clock the harness installs (rtmix_engine_set_clock): it
/// returns what the harness last set, so time moves only as the program
/// says (each render advances it by the block; an op may stall it). With
/// CLOCK_MONOTONIC, a fuzzer descheduled between the two mirror engines'
/// render calls saw a "render stall" in one of them only, and their
/// outputs differed: the 2026-11-26 campaign's "crashes", which did not
/// replay (they did with a clock that jumps; kept in Fuzz/Crashes/FuzzEngineC/).
let fuzzClock: @convention(c) (UnsafeMutableRawPointer?) -> UInt64 = { user in
    user.unsafelyUnwrapped.load(as: UInt64.self)
}

final class EngineModel {
    let handle: OpaquePointer
    /// The clock's time, ns (read by fuzzClock; advanced by opRender).
    let clock = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
    var rate: Int
    var channels: Int
    let maxFrames: Int
    let maxSources: Int
    let callFloor: Float
    let quality: UInt32
    let rampMs: Float
    let limiterDb: Float
    var live: [SourceModel] = []
    var removedIDs: [UInt32] = []
    var everIssued: Set<UInt32> = []
    var renderCalls: UInt64 = 0
    var framesRendered: UInt64 = 0
    var added: UInt64 = 0
    var removed: UInt64 = 0
    var rejectedTotal: UInt64 = 0
    var nonfiniteTotal: UInt64 = 0
    var domainTarget: [Float] = [1, 1]
    // capture path (effective config: fields past cfg.size take defaults)
    let captureRate: Int
    let captureChannels: Int
    var publishGain: Float = 0
    var captureCalls: UInt64 = 0
    var captureFrames: UInt64 = 0
    /// Sum of the RTMIX_EVENT_EVENTS_DROPPED values read so far.
    var droppedReported: UInt64 = 0
    var captureNonfinite: UInt64 = 0
    var captureOn: Bool { captureRate != 0 }

    deinit { clock.deallocate() }

    init(handle: OpaquePointer, cfg: rtmix_engine_config) {
        clock.initialize(to: 1_000_000_000)
        captureRate = Int(cfg.capture_rate)
        captureChannels = Int(cfg.capture_channels)
        self.handle = handle
        rate = Int(cfg.sample_rate)
        channels = Int(cfg.channels)
        maxFrames = Int(cfg.max_frames)
        maxSources = Int(cfg.max_sources)
        callFloor = cfg.call_gain_floor
        quality = cfg.resampler_quality
        rampMs = cfg.gain_ramp_ms
        limiterDb = cfg.limiter_threshold_db
        domainTarget = [max(1, callFloor), 1]
    }

    func liveIndex(_ id: UInt32) -> Int? { live.firstIndex { $0.id == id } }
}

/// Per-input limits that keep one execution fast and its memory bounded.
struct Budget {
    var ops = 96
    var adds = 12
    var bigRings = 2
    var renderFrames = 32_768
    var pushFrames = 100_000
    var captureFrames = 32_768
}

let statusSet: Set<Int32> = Set(documentedStatuses)

// MARK: - Helpers

let sizeofConfig = MemoryLayout<rtmix_engine_config>.size
let sizeofSourceConfig = MemoryLayout<rtmix_source_config>.size
let sizeofStats = MemoryLayout<rtmix_engine_stats>.size
let sizeofSourceStats = MemoryLayout<rtmix_source_stats>.size
let sizeofEvent = MemoryLayout<rtmix_event>.size


let rateTable: [UInt32] = [48000, 44100, 16000, 8000, 192000, 32000, 24000, 22050, 11025, 12000, 96000, 64000,
                           88200, 7999, 192001, 0, UInt32.max, 1, 47999]

func fuzzRate(_ r: inout FuzzReader) -> UInt32 { r.pick(rateTable) { $0.u32() } }
func fuzzChannels(_ r: inout FuzzReader) -> UInt32 { r.pick([2, 1, 0, 3, 2, 1]) { $0.u32() } }

func validRate(_ v: Int) -> Bool { (8000...192_000).contains(v) }
func validChannels(_ v: Int) -> Bool { (1...2).contains(v) }
func validGain(_ g: Float) -> Bool { g.isFinite && g >= 0 && g <= 16 }

func nextPowerOfTwo(_ n: Int) -> Int { var c = 1; while c < n { c <<= 1 }; return c }

// MARK: - PCM generation

enum Fill { case raw, constant, sine, sineWithSpikes }

func makeF32(_ r: inout FuzzReader, samples n: Int) -> UnsafeMutableBufferPointer<Float> {
    let buf = UnsafeMutableBufferPointer<Float>.allocate(capacity: n)
    switch r.u8() % 4 {
    case 0:
        var seed = [Float]()
        for _ in 0..<(1 + Int(r.u8() % 16)) { seed.append(Float(bitPattern: r.u32())) }
        for i in 0..<n { buf[i] = seed[i % seed.count] }
    case 1:
        let v = r.f32()
        for i in 0..<n { buf[i] = v }
    case 2:
        let amp = r.f32()
        let step = Float(1 + Int(r.u8())) / 512
        for i in 0..<n { buf[i] = amp * sinf(Float(i) * step) }
    default:
        let amp = Float(r.u8()) / 16
        let step = Float(1 + Int(r.u8())) / 512
        for i in 0..<n { buf[i] = amp * sinf(Float(i) * step) }
        for _ in 0..<Int(r.u8() % 8) where n > 0 { buf[Int(r.u32()) % n] = r.f32() }
    }
    if avoidKnownBugs {
        // Known bug (Fuzz/Crashes/FuzzEngineC/render-nan-*): finite samples
        // near Float.greatestFiniteMagnitude make the limiter output NaN.
        for i in 0..<n where buf[i].isFinite && abs(buf[i]) > 1e30 { buf[i] = buf[i] < 0 ? -1e30 : 1e30 }
    }
    return buf
}

func makeS16(_ r: inout FuzzReader, samples n: Int) -> UnsafeMutableBufferPointer<Int16> {
    let buf = UnsafeMutableBufferPointer<Int16>.allocate(capacity: n)
    switch r.u8() % 3 {
    case 0:
        var seed = [Int16]()
        for _ in 0..<(1 + Int(r.u8() % 16)) { seed.append(Int16(bitPattern: r.u16())) }
        for i in 0..<n { buf[i] = seed[i % seed.count] }
    case 1:
        let v: Int16 = r.pick([Int16.min, Int16.max, 0, -1, 1]) { Int16(bitPattern: $0.u16()) }
        for i in 0..<n { buf[i] = v }
    default:
        let amp = Float(r.u16())
        let step = Float(1 + Int(r.u8())) / 512
        for i in 0..<n {
            let v = amp * sinf(Float(i) * step)
            buf[i] = Int16(max(-32768, min(32767, v)))
        }
    }
    return buf
}

func nonfiniteCount(_ p: UnsafeMutableBufferPointer<Float>, _ n: Int) -> UInt64 {
    var c: UInt64 = 0
    for i in 0..<n where !p[i].isFinite { c += 1 }
    return c
}

/// The documented s16 conversion of a float in [-1, 1]: x * 32768 rounded
/// to nearest (ties to even), saturated to -32768...32767. Computed in
/// Double, independently of the library's float trick.
func expectedS16(_ x: Float) -> Int16 {
    let scaled = (Double(x) * 32768).rounded(.toNearestOrEven)
    return Int16(max(-32768, min(32767, scaled)))
}

// MARK: - Checks

func checkEngineStats(_ m: EngineModel, _ what: String) {
    var st = rtmix_engine_stats()
    check(rtmix_engine_stats_init(&st) == 0, "stats_init")
    check(st.size == UInt32(sizeofStats), "stats_init size \(st.size)")
    let s = rtmix_engine_get_stats(m.handle, &st)
    checkStatus(s, [0], "get_stats after \(what)")
    check(st.render_calls == m.renderCalls, "\(what): render_calls \(st.render_calls) != \(m.renderCalls)")
    check(st.frames_rendered == m.framesRendered,
          "\(what): frames_rendered \(st.frames_rendered) != sum of successful renders \(m.framesRendered)")
    check(st.active_sources == UInt32(m.live.count), "\(what): active_sources \(st.active_sources) != \(m.live.count)")
    check(st.sources_added == m.added, "\(what): sources_added \(st.sources_added) != \(m.added)")
    check(st.sources_removed == m.removed, "\(what): sources_removed \(st.sources_removed) != \(m.removed)")
    check(st.rejected_frames == m.rejectedTotal, "\(what): rejected_frames \(st.rejected_frames) != \(m.rejectedTotal)")
    check(st.nonfinite_samples >= m.nonfiniteTotal,
          "\(what): nonfinite_samples \(st.nonfinite_samples) < pushed non-finite \(m.nonfiniteTotal)")
    check(st.render_ns_p50 <= st.render_ns_p99 && st.render_ns_p99 <= st.render_ns_max,
          "\(what): p50 \(st.render_ns_p50) <= p99 \(st.render_ns_p99) <= max \(st.render_ns_max)")
    check(st.render_ns_last <= st.render_ns_max, "\(what): last \(st.render_ns_last) > max \(st.render_ns_max)")
    check(st.limiter_active_frames <= st.frames_rendered, "\(what): limiter_active_frames > frames_rendered")
    check(!st.limiter_gain_db.isNaN && st.limiter_gain_db <= 0, "\(what): limiter_gain_db \(st.limiter_gain_db)")
    check(!st.limiter_min_gain_db.isNaN && st.limiter_min_gain_db <= st.limiter_gain_db,
          "\(what): limiter_min_gain_db \(st.limiter_min_gain_db) > gain \(st.limiter_gain_db)")
    if m.renderCalls == 0 { check(st.render_ns_max == 0, "\(what): render time without renders") }
    // capture path
    check(st.capture_rate == UInt32(m.captureRate), "\(what): capture_rate \(st.capture_rate) != \(m.captureRate)")
    check(st.capture_calls == m.captureCalls, "\(what): capture_calls \(st.capture_calls) != \(m.captureCalls)")
    check(st.capture_frames == m.captureFrames, "\(what): capture_frames \(st.capture_frames) != \(m.captureFrames)")
    check(st.capture_nonfinite_samples == m.captureNonfinite,
          "\(what): capture_nonfinite_samples \(st.capture_nonfinite_samples) != \(m.captureNonfinite)")
    check((0...2).contains(st.aec_delay_source), "\(what): aec_delay_source \(st.aec_delay_source)")
    for (name, v) in [("aec_erle_db", st.aec_erle_db), ("aec_delay_ms", st.aec_delay_ms),
                      ("aec_drift_ppm", st.aec_drift_ppm)] {
        check(v.isFinite, "\(what): \(name) = \(v) not finite")
    }
    check(abs(st.aec_drift_ppm) <= 1000.5, "\(what): aec_drift_ppm \(st.aec_drift_ppm)")
    check(st.aec_delay_ms >= 0 && st.aec_delay_ms <= 1000, "\(what): aec_delay_ms \(st.aec_delay_ms)")
    check(st.capture_calls_without_reference <= st.capture_calls, "\(what): calls without reference > calls")
    if !m.captureOn {
        check(st.capture_calls == 0 && st.capture_frames == 0 && st.aec_delay_source == 0
              && st.capture_reference_overflow_frames == 0, "\(what): capture stats while capture is off")
    }
}

func checkSourceStats(_ m: EngineModel, _ src: SourceModel) {
    var st = rtmix_source_stats()
    _ = rtmix_source_stats_init(&st)
    let s = rtmix_source_get_stats(m.handle, src.id, &st)
    checkStatus(s, [0], "source_get_stats live \(src.id)")
    check(st.domain == src.domain && Int(st.sample_rate) == src.rate && Int(st.channels) == src.channels,
          "source stats format \(st.domain)/\(st.sample_rate)/\(st.channels) vs \(src)")
    check(st.frames_pushed == src.pushed, "frames_pushed \(st.frames_pushed) != accepted sum \(src.pushed)")
    check(st.frames_rejected == src.rejected, "frames_rejected \(st.frames_rejected) != \(src.rejected)")
    check(st.nonfinite_samples == src.nonfinite, "source nonfinite \(st.nonfinite_samples) != \(src.nonfinite)")
    let cap = Int(st.capacity_frames)
    check(cap > 0 && cap & (cap - 1) == 0 && cap <= 1 << 22, "capacity \(cap) not a power of two <= 2^22")
    if src.requestedBuffer > 0 { check(cap >= src.requestedBuffer, "capacity \(cap) < requested \(src.requestedBuffer)") }
    check(Int(st.buffered_frames) <= cap, "buffered \(st.buffered_frames) > capacity \(cap)")
    check(st.frames_consumed <= st.frames_pushed, "consumed \(st.frames_consumed) > pushed \(st.frames_pushed)")
    // Frame conservation: what was pushed is consumed, dropped (drop-oldest
    // policy), flushed or still buffered. A drop-oldest ring the producer
    // has lapped reads as full until the renderer skips ahead.
    let outstanding = st.frames_pushed &- st.frames_consumed &- st.frames_dropped &- st.frames_flushed
    check(outstanding == UInt64(st.buffered_frames) || (outstanding > UInt64(cap) && Int(st.buffered_frames) == cap),
          "pushed \(st.frames_pushed) - consumed \(st.frames_consumed) - dropped \(st.frames_dropped) - flushed \(st.frames_flushed) != buffered \(st.buffered_frames)")
    check(st.gain == src.gain, "requested gain \(st.gain) != \(src.gain)")
    check((st.muted != 0) == src.muted, "muted \(st.muted) != \(src.muted)")
    check(st.buffered_ms.isFinite && st.buffered_ms >= 0, "buffered_ms \(st.buffered_ms)")
    check(st.drift_ppm.isFinite && abs(st.drift_ppm) <= 2000.5, "drift_ppm \(st.drift_ppm)")
    var buffered: UInt32 = 0
    checkStatus(rtmix_source_get_buffered(m.handle, src.id, &buffered), [0], "get_buffered live")
    check(buffered == st.buffered_frames, "get_buffered \(buffered) != stats \(st.buffered_frames)")
}

func checkConfig(_ m: EngineModel) {
    var cfg = rtmix_engine_config()
    _ = rtmix_engine_config_init(&cfg)
    checkStatus(rtmix_engine_get_config(m.handle, &cfg), [0], "get_config")
    check(Int(cfg.sample_rate) == m.rate && Int(cfg.channels) == m.channels,
          "get_config format \(cfg.sample_rate)/\(cfg.channels) != \(m.rate)/\(m.channels)")
    check(Int(cfg.max_frames) == m.maxFrames && Int(cfg.max_sources) == m.maxSources
          && cfg.call_gain_floor == m.callFloor && cfg.resampler_quality == m.quality
          && cfg.gain_ramp_ms == m.rampMs && cfg.limiter_threshold_db == m.limiterDb, "get_config fields changed")
}

// MARK: - The C ABI program

final class CProgram {
    var r: FuzzReader
    var engines: [EngineModel?] = [nil, nil]
    var budget = Budget()
    let mirror: Bool
    var mirrorBroken = false

    init(_ r: FuzzReader, mirror: Bool) {
        self.r = r
        self.mirror = mirror
    }

    deinit {
        for e in engines { if let e { rtmix_engine_destroy(e.handle) } }
    }

    /// The engine slots an operation applies to.
    func targets() -> [Int] {
        if mirror && !mirrorBroken { return [0, 1] }
        return [Int(r.u8() & 1)]
    }

    func run() {
        while !r.isEmpty && budget.ops > 0 {
            budget.ops -= 1
            let op = r.u8() % 23
            switch op {
            case 0, 1: opCreateOrDestroy(op == 1)
            case 2, 3: opAdd()
            case 4: opRemove()
            case 5, 6: opPush(f32: true)
            case 7: opPush(f32: false)
            case 8, 9: opRender()
            case 10: opSourceGain()
            case 11: opMute()
            case 12: opDomainGain()
            case 13: opOutputFormat()
            case 14: opStats()
            case 15: opEvents()
            case 16: opNames()
            case 17: opNullPointers()
            case 18: opSmallStructs()
            case 19: opGetConfig()
            case 20: opCapture(f32: true)
            case 21: opCapture(f32: false)
            default: opCaptureControl()
            }
        }
        // Final consistency of every engine still alive.
        for case let m? in engines {
            checkEngineStats(m, "end")
            for s in m.live { checkSourceStats(m, s) }
            checkConfig(m)
        }
    }

    func breakMirror() { mirrorBroken = true }

    // Create with a fuzzed config (often invalid); destroy when one exists.
    func opCreateOrDestroy(_ preferDestroy: Bool) {
        let slots = targets()
        if preferDestroy, engines[slots[0]] != nil {
            for i in slots { if let m = engines[i] { rtmix_engine_destroy(m.handle); engines[i] = nil } }
            return
        }
        var cfg = rtmix_engine_config()
        checkStatus(rtmix_engine_config_init(&cfg), [0], "config_init")
        check(cfg.size == UInt32(sizeofConfig) && cfg.sample_rate == 48000 && cfg.channels == 2
              && cfg.max_frames == 4096 && cfg.max_sources == 32 && cfg.call_gain_floor == 0.1
              && cfg.gain_ramp_ms == 10 && cfg.limiter_threshold_db == -1 && cfg.resampler_quality == 0,
              "config_init defaults")
        let mask = r.u16()
        if mask & 0x001 != 0 { cfg.sample_rate = fuzzRate(&r) }
        if mask & 0x002 != 0 { cfg.channels = fuzzChannels(&r) }
        if mask & 0x004 != 0 { cfg.max_frames = r.pick([1, 16384, 16385, 0, 480, 64, 4096, 17]) { $0.u32() } }
        if mask & 0x008 != 0 { cfg.max_sources = r.pick([1, 256, 257, 0, 2, 8]) { $0.u32() } }
        if mask & 0x010 != 0 { cfg.call_gain_floor = r.f32() }
        if mask & 0x020 != 0 { cfg.gain_ramp_ms = r.f32() }
        if mask & 0x040 != 0 { cfg.limiter_threshold_db = r.f32() }
        if mask & 0x080 != 0 { cfg.resampler_quality = r.pick([0, 1, 2, 3, 4, UInt32.max]) { $0.u32() } }
        if mask & 0x200 != 0 {
            cfg.capture_rate = r.pick([16000, 48000, 8000, 44100, 32000, 11025, 0, 7999, 48001, 22]) { $0.u32() }
            cfg.capture_channels = r.pick([1, 2, 1, 2, 0, 3]) { $0.u32() }
            cfg.aec_tail_ms = r.pick([200, 0, 10, 1000, 50, 5, 1001, 9]) { $0.u32() }
            let sw = r.u8()
            cfg.noise_suppression = Int32(sw & 1)
            cfg.echo_suppression = Int32((sw >> 1) & 1)
            cfg.agc = Int32((sw >> 2) & 1)
        }
        let size = mask & 0x100 != 0 ? fuzzSize(&r, real: sizeofConfig, minimum: 36) : UInt32(sizeofConfig)
        // Fields past `size` are not read: the model uses their defaults.
        var defaults = rtmix_engine_config()
        _ = rtmix_engine_config_init(&defaults)
        if size < 40 { cfg.capture_rate = defaults.capture_rate }
        if size < 44 { cfg.capture_channels = defaults.capture_channels }
        if size < 48 { cfg.aec_tail_ms = defaults.aec_tail_ms }
        if size < 52 { cfg.noise_suppression = defaults.noise_suppression }
        if size < 56 { cfg.echo_suppression = defaults.echo_suppression }
        if size < 60 { cfg.agc = defaults.agc }
        if size < 64 { cfg.aec_stereo_reference = defaults.aec_stereo_reference }
        let boxed = SizedStruct(cfg, size: size)

        // What the header promises for this config.
        var expected = Set<Int32>()
        if size < 36 || cfg.resampler_quality > 3 {
            expected.insert(-1)
        } else {
            if !validRate(Int(cfg.sample_rate)) || !validChannels(Int(cfg.channels)) { expected.insert(-2) }
            if !(1...16384).contains(cfg.max_frames) || !(1...256).contains(cfg.max_sources)
                || !(cfg.call_gain_floor.isFinite && cfg.call_gain_floor >= 0 && cfg.call_gain_floor <= 1)
                || !(cfg.gain_ramp_ms.isFinite && cfg.gain_ramp_ms >= 1 && cfg.gain_ramp_ms <= 1000)
                || !(cfg.limiter_threshold_db.isFinite && cfg.limiter_threshold_db >= -20
                     && cfg.limiter_threshold_db <= 0) {
                expected.insert(-1)
            }
            // capture_channels is checked even with capture off (it sizes
            // the zero-fill of a refused capture call).
            if !validChannels(Int(cfg.capture_channels)) { expected.insert(-2) }
            if cfg.capture_rate != 0 {
                if !(8000...48000).contains(cfg.capture_rate) { expected.insert(-2) }
                if !(cfg.aec_tail_ms == 0 || (10...1000).contains(cfg.aec_tail_ms)) { expected.insert(-1) }
            }
        }
        if expected.isEmpty { expected = [0, -7] }

        var statuses: [Int32] = []
        for i in slots {
            if let m = engines[i] { rtmix_engine_destroy(m.handle); engines[i] = nil }
            var out: OpaquePointer? = OpaquePointer(bitPattern: 0xdead)
            let s = rtmix_engine_create(boxed.pointer, &out)
            checkStatus(s, expected, "engine_create(\(boxed.value), size \(size))")
            check(boxed.size == size, "create changed cfg->size")
            if s == 0 {
                guard let out else { fuzzFail("create OK but *out NULL") }
                let m = EngineModel(handle: out, cfg: cfg)
                checkStatus(rtmix_engine_set_clock(out, fuzzClock, UnsafeMutableRawPointer(m.clock)), [0], "set_clock")
                engines[i] = m
                checkConfig(m)
                checkEngineStats(m, "create")
            } else {
                check(out == nil, "create failed but *out not NULL")
            }
            statuses.append(s)
        }
        if Set(statuses).count > 1 { breakMirror() }
    }

    func opAdd() {
        let slots = targets()
        guard budget.adds > 0 else { return }
        budget.adds -= 1
        var cfg = rtmix_source_config()
        let domain: Int32 = r.pick([0, 1, 1, 2, -1]) { Int32(bitPattern: $0.u32()) }
        checkStatus(rtmix_source_config_init(&cfg, rtmix_domain(UInt32(bitPattern: domain)), fuzzRate(&r),
                                             fuzzChannels(&r)), [0], "source_config_init")
        // Drift compensation on by default: 100 ms for media (domain 1), 40 ms otherwise.
        check(cfg.size == UInt32(sizeofSourceConfig) && cfg.gain == 1 && cfg.buffer_frames == 0
              && cfg.target_buffer_ms == (domain == 1 ? 100 : 40) && cfg.start_threshold_ms == -1
              && cfg.overrun_policy == 0 && cfg.domain == domain, "source_config_init defaults")
        let mask = r.u8()
        if mask & 0x01 != 0 {
            cfg.buffer_frames = r.pick([0, 1, 2, 480, 4096, 1 << 22, (1 << 22) + 1, UInt32.max, 65536, 3]) {
                $0.u32()
            }
        }
        if mask & 0x02 != 0 { cfg.gain = r.f32() }
        if mask & 0x04 != 0 { cfg.target_buffer_ms = r.f32() }
        if mask & 0x08 != 0 { cfg.channels = fuzzChannels(&r) }
        // Keep memory bounded: at most a couple of huge rings per input.
        if cfg.buffer_frames > 65536 && cfg.buffer_frames <= 1 << 22 {
            if budget.bigRings > 0 { budget.bigRings -= 1 } else { cfg.buffer_frames = 4096 }
        }
        let size = mask & 0x10 != 0 ? fuzzSize(&r, real: sizeofSourceConfig, minimum: 28)
            : UInt32(sizeofSourceConfig)
        let boxed = SizedStruct(cfg, size: size)

        var invalid = Set<Int32>()
        if size < 28 || !(cfg.domain == 0 || cfg.domain == 1) {
            invalid.insert(-1)
        } else {
            if !validRate(Int(cfg.sample_rate)) || !validChannels(Int(cfg.channels)) { invalid.insert(-2) }
            if cfg.buffer_frames > 1 << 22 || !validGain(cfg.gain)
                || !(cfg.target_buffer_ms == 0 || (cfg.target_buffer_ms >= 5 && cfg.target_buffer_ms <= 2000)) {
                invalid.insert(-1)
            }
        }
        var statuses: [Int32] = []
        var ids: [UInt32] = []
        for i in slots {
            guard let m = engines[i] else {
                // No engine: the NULL-engine error.
                var id: UInt32 = 0
                checkStatus(rtmix_source_add(nil, boxed.pointer, &id), [-1], "source_add(NULL engine)")
                continue
            }
            var expected = invalid
            if expected.isEmpty && sourceNeverWorks(rate: Int(cfg.sample_rate), buffer: Int(cfg.buffer_frames),
                                                    targetMs: cfg.target_buffer_ms, engineMaxFrames: m.maxFrames,
                                                    outputRate: m.rate) {
                expected = [-1]
            }
            if expected.isEmpty {
                // The 64 MiB default memory cap (RTMIX_ERR_LIMIT): possible
                // when the engine's bytes plus this ring and scratch come near it.
                var st = rtmix_engine_stats()
                _ = rtmix_engine_stats_init(&st)
                _ = rtmix_engine_get_stats(m.handle, &st)
                // The ring is rounded up to a power of two (rtmix.h), with a
                // capacity's headroom: 2^22 stereo frames alone are 64 MiB.
                var ringFrames = 1
                while ringFrames < max(Int(cfg.buffer_frames), 192_000) { ringFrames <<= 1 }
                let ringBytes = UInt64(ringFrames) * 2 * 4 * UInt64(cfg.channels)
                let nearCap = st.memory_bytes + ringBytes + UInt64(m.maxFrames * 3 * 4) + (1 << 20) > 64 << 20
                if m.live.count >= m.maxSources {
                    expected = [-6]
                } else if m.live.count + m.removedIDs.count >= m.maxSources {
                    expected = [0, -6, -7]  // removed sources still fading count
                } else {
                    expected = nearCap ? [0, -6, -7] : [0, -7]
                }
            }
            var id: UInt32 = 0xFFFF_FFFF
            let s = rtmix_source_add(m.handle, boxed.pointer, &id)
            checkStatus(s, expected, "source_add(\(boxed.value) size \(size)) live \(m.live.count)/\(m.maxSources)")
            statuses.append(s)
            if s == 0 {
                check(id != 0, "source id 0")
                check(!m.everIssued.contains(id), "source id \(id) reused")
                m.everIssued.insert(id)
                m.added += 1
                m.live.append(SourceModel(id: id, domain: cfg.domain, rate: Int(cfg.sample_rate),
                                          channels: Int(cfg.channels), requestedBuffer: Int(cfg.buffer_frames),
                                          gain: cfg.gain))
                checkSourceStats(m, m.live.last!)
                ids.append(id)
            } else {
                check(id == 0xFFFF_FFFF, "failed source_add wrote *out_id")
            }
        }
        if Set(statuses).count > 1 || Set(ids).count > 1 { breakMirror() }
    }

    /// An id to use: a live one, a removed one, or garbage.
    func pickID(_ m: EngineModel, selector: UInt8, index: UInt8, garbage: UInt32) -> UInt32 {
        switch selector % 8 {
        case 0...4 where !m.live.isEmpty: return m.live[Int(index) % m.live.count].id
        case 5 where !m.removedIDs.isEmpty: return m.removedIDs[Int(index) % m.removedIDs.count]
        case 6: return 0
        default: return garbage
        }
    }

    func opRemove() {
        let slots = targets()
        let sel = r.u8(), idx = r.u8(), garbage = r.u32()
        for i in slots {
            guard let m = engines[i] else {
                checkStatus(rtmix_source_remove(nil, garbage), [-1], "remove(NULL)")
                continue
            }
            let id = pickID(m, selector: sel, index: idx, garbage: garbage)
            let s = rtmix_source_remove(m.handle, id)
            if let li = m.liveIndex(id) {
                checkStatus(s, [0], "remove live \(id)")
                m.live.remove(at: li)
                m.removedIDs.append(id)
                m.removed += 1
                // The id is invalid at once.
                var accepted: UInt32 = 7
                var two: [Float] = [0, 0]
                checkStatus(rtmix_source_push_f32(m.handle, id, &two, 1, &accepted), [-3], "push to just-removed id")
                check(accepted == 0, "accepted after NOT_FOUND")
                var buffered: UInt32 = 0
                checkStatus(rtmix_source_get_buffered(m.handle, id, &buffered), [-3], "get_buffered removed")
            } else {
                checkStatus(s, [-3], "remove unknown id \(id)")
            }
        }
    }

    func opPush(f32: Bool) {
        let slots = targets()
        let sel = r.u8(), idx = r.u8(), garbage = r.u32()
        var frames = r.count(upTo: 1 << 17)
        if frames > budget.pushFrames { frames = min(frames, 64) }
        budget.pushFrames -= frames
        let passAccepted = r.u8() % 5 != 0
        // Samples for the widest case (2 channels); a known source gets a
        // buffer of exactly frames x its channels.
        let seed = r.u32()
        for i in slots {
            guard let m = engines[i] else {
                var acc: UInt32 = 9
                var one: [Float] = [0, 0]
                checkStatus(rtmix_source_push_f32(nil, 1, &one, 1, &acc), [-1], "push(NULL engine)")
                check(acc == 0, "accepted not zeroed on NULL engine")
                continue
            }
            let id = pickID(m, selector: sel, index: idx, garbage: garbage)
            let li = m.liveIndex(id)
            let channels = li.map { m.live[$0].channels } ?? 2
            let n = frames * channels
            // Same data for both mirrored engines: re-seed a reader per engine.
            var bytes: [UInt8] = []
            var g = seed
            for _ in 0..<96 { g = g &* 1_664_525 &+ 1_013_904_223; bytes.append(UInt8(truncatingIfNeeded: g >> 24)) }
            var accepted: UInt32 = 0xABCD
            var status: Int32 = 0
            var nonfinite: UInt64 = 0
            let acceptedPtr = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
            defer { acceptedPtr.deallocate() }
            acceptedPtr.pointee = 0xABCD
            let accPtr: UnsafeMutablePointer<UInt32>? = passAccepted ? acceptedPtr : nil
            bytes.withUnsafeBufferPointer { bp in
                var dr = FuzzReader(bp.baseAddress, bp.count)
                if f32 {
                    let buf = makeF32(&dr, samples: max(n, 1))
                    defer { buf.deallocate() }
                    status = rtmix_source_push_f32(m.handle, id, buf.baseAddress, UInt32(frames), accPtr)
                    if status == 0 {
                        nonfinite = nonfiniteCount(buf, frames * channels)
                    } else if status == -4 && passAccepted {
                        nonfinite = nonfiniteCount(buf, Int(acceptedPtr.pointee) * channels)
                    }
                } else {
                    let buf = makeS16(&dr, samples: max(n, 1))
                    defer { buf.deallocate() }
                    status = rtmix_source_push_s16(m.handle, id, buf.baseAddress, UInt32(frames), accPtr)
                }
            }
            accepted = acceptedPtr.pointee
            let what = "push_\(f32 ? "f32" : "s16")(id \(id), \(frames) frames)"
            if frames == 0 {
                checkStatus(status, [-1], what)
            } else if li == nil {
                checkStatus(status, [-3], what)
            } else {
                checkStatus(status, [0, -4], what)
            }
            guard passAccepted else {
                if status == -4 { breakMirror() }  // cannot account without *accepted
                if let li, status == 0 {
                    m.live[li].pushed += UInt64(frames)
                    m.live[li].nonfinite += nonfinite
                    m.nonfiniteTotal += nonfinite
                } else if let li, status == -4 {
                    // Unknown split: resynchronise the model from the stats.
                    var st = rtmix_source_stats()
                    _ = rtmix_source_stats_init(&st)
                    _ = rtmix_source_get_stats(m.handle, id, &st)
                    let newRejected = st.frames_rejected - m.live[li].rejected
                    m.rejectedTotal += newRejected
                    m.live[li].pushed = st.frames_pushed
                    m.live[li].rejected = st.frames_rejected
                    m.nonfiniteTotal += st.nonfinite_samples - m.live[li].nonfinite
                    m.live[li].nonfinite = st.nonfinite_samples
                }
                continue
            }
            switch status {
            case 0: check(accepted == UInt32(frames), "\(what): OK but accepted \(accepted)")
            case -4: check(accepted < UInt32(frames), "\(what): BUFFER_FULL but accepted \(accepted)")
            default: check(accepted == 0, "\(what): error \(status) but accepted \(accepted)")
            }
            if let li, status == 0 || status == -4 {
                m.live[li].pushed += UInt64(accepted)
                m.live[li].rejected += UInt64(frames) - UInt64(accepted)
                m.rejectedTotal += UInt64(frames) - UInt64(accepted)
                m.live[li].nonfinite += nonfinite
                m.nonfiniteTotal += nonfinite
                var buffered: UInt32 = 0
                checkStatus(rtmix_source_get_buffered(m.handle, id, &buffered), [0], "get_buffered")
            }
        }
    }

    func opRender() {
        let slots = targets()
        let s16 = r.bool()
        let choice = r.u8()
        var raw = r.count(upTo: 20_000)
        if raw > budget.renderFrames { raw = min(raw, 64) }
        var outs: [(m: EngineModel, f32: UnsafeMutableBufferPointer<Float>?, s16: UnsafeMutableBufferPointer<Int16>?,
                    frames: Int, status: Int32)] = []
        for (k, i) in slots.enumerated() {
            guard let m = engines[i] else {
                var one: [Float] = [7, 7]
                checkStatus(rtmix_render_f32(nil, &one, 1), [-1], "render(NULL engine)")
                check(one == [0, 7], "render(NULL engine) zero-fills min(frames, 16384) samples: \(one)")
                continue
            }
            // One render in eight follows a stall (150 ms without render
            // calls: more than 4 blocks and 100 ms), the same for both
            // mirror engines.
            if choice & 0x38 == 0x38 { m.clock.pointee &+= 150_000_000 }
            var frames = raw
            switch choice % 6 {
            case 0: frames = m.maxFrames
            case 1: frames = m.maxFrames + 1
            case 2: frames = min(raw, m.maxFrames)
            default: break
            }
            budget.renderFrames -= min(frames, m.maxFrames)
            let n = frames * m.channels
            // Mirror: f32 on engine 0, s16 on engine 1 (compared below).
            let asS16 = mirror && !mirrorBroken ? k == 1 : s16
            // The _checked entries (high bit of choice), with an exact or a
            // one-sample-short capacity.
            let checked = choice & 0x80 != 0
            let capacity = checked && choice & 0x40 != 0 && n > 0 ? n - 1 : n
            let what = "render_\(asS16 ? "s16" : "f32")\(checked ? "_checked(cap \(capacity), " : "(")"
                + "\(frames) frames, max \(m.maxFrames), \(m.channels) ch)"
            // On error: zeros first (unchecked: min(frames, max_frames);
            // checked: min(capacity, frames x 2)), nothing written after.
            let zeroed = checked ? min(capacity, frames * 2) : min(frames, m.maxFrames)
            var status: Int32
            if asS16 {
                let buf = UnsafeMutableBufferPointer<Int16>.allocate(capacity: max(n, 1))
                buf.initialize(repeating: 0x5A5A)
                status = checked
                    ? rtmix_render_s16_checked(m.handle, buf.baseAddress, capacity, UInt32(truncatingIfNeeded: frames))
                    : rtmix_render_s16(m.handle, buf.baseAddress, UInt32(truncatingIfNeeded: frames))
                if status != 0 {
                    for (j, v) in buf.enumerated() where v != (j < zeroed ? 0 : 0x5A5A) {
                        fuzzFail("\(what): error \(status), sample \(j) = \(v) (zeroed \(zeroed))")
                    }
                }
                outs.append((m, nil, buf, frames, status))
            } else {
                let buf = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(n, 1))
                buf.initialize(repeating: 4321.5)
                status = checked
                    ? rtmix_render_f32_checked(m.handle, buf.baseAddress, capacity, UInt32(truncatingIfNeeded: frames))
                    : rtmix_render_f32(m.handle, buf.baseAddress, UInt32(truncatingIfNeeded: frames))
                if status != 0 {
                    for (j, v) in buf.enumerated() where v != (j < zeroed ? 0 : 4321.5) {
                        fuzzFail("\(what): error \(status), sample \(j) = \(v) (zeroed \(zeroed))")
                    }
                } else {
                    for (j, v) in buf.enumerated() where j < n && !(v.isFinite && v >= -1 && v <= 1) {
                        fuzzFail("\(what): sample \(j) = \(v) not finite in [-1, 1]")
                    }
                }
                outs.append((m, buf, nil, frames, status))
            }
            let expected: Int32 = frames == 0 ? -1 : frames > m.maxFrames ? -5 : capacity < n ? -1 : 0
            checkStatus(status, [expected], what)
            if status == 0 {
                m.renderCalls += 1
                m.framesRendered += UInt64(frames)
                m.clock.pointee &+= UInt64(frames) * 1_000_000_000 / UInt64(m.rate)
            }
            checkEngineStats(m, what)
        }
        if mirror && !mirrorBroken && outs.count == 2, let a = outs[0].f32, let b = outs[1].s16,
           outs[0].status == 0, outs[1].status == 0, outs[0].m.channels == outs[1].m.channels {
            for j in 0..<(outs[0].frames * outs[0].m.channels) where b[j] != expectedS16(a[j]) {
                fuzzFail("mirror: s16[\(j)] = \(b[j]) but f32 \(a[j]) converts to \(expectedS16(a[j]))")
            }
        }
        for o in outs { o.f32?.deallocate(); o.s16?.deallocate() }
    }

    func opSourceGain() {
        let slots = targets()
        let sel = r.u8(), idx = r.u8(), garbage = r.u32()
        let gain = r.f32()
        for i in slots {
            guard let m = engines[i] else {
                checkStatus(rtmix_source_set_gain(nil, 1, gain), [-1], "set_gain(NULL)")
                continue
            }
            let id = pickID(m, selector: sel, index: idx, garbage: garbage)
            let s = rtmix_source_set_gain(m.handle, id, gain)
            let li = m.liveIndex(id)
            var expected = Set<Int32>()
            if !validGain(gain) { expected.insert(-1) }
            if li == nil { expected.insert(-3) }
            checkStatus(s, expected.isEmpty ? [0] : expected, "set_gain(\(id), \(gain))")
            if s == 0, let li { m.live[li].gain = gain }
        }
    }

    func opMute() {
        let slots = targets()
        let sel = r.u8(), idx = r.u8(), garbage = r.u32()
        let muted = Int32(bitPattern: r.pick([0, 1, 2, UInt32.max]) { $0.u32() })
        for i in slots {
            guard let m = engines[i] else {
                checkStatus(rtmix_source_set_muted(nil, 1, muted), [-1], "set_muted(NULL)")
                continue
            }
            let id = pickID(m, selector: sel, index: idx, garbage: garbage)
            let s = rtmix_source_set_muted(m.handle, id, muted)
            let li = m.liveIndex(id)
            checkStatus(s, li == nil ? [-3] : [0], "set_muted(\(id), \(muted))")
            if let li { m.live[li].muted = muted != 0 }
        }
    }

    func opDomainGain() {
        let slots = targets()
        let domain: Int32 = r.pick([0, 1, 2, -1]) { Int32(bitPattern: $0.u32()) }
        let gain = r.f32()
        let setIt = r.u8() % 4 != 0
        for i in slots {
            guard let m = engines[i] else {
                checkStatus(rtmix_domain_set_gain(nil, rtmix_domain(0), gain), [-1], "domain_set_gain(NULL)")
                var g: Float = 0
                checkStatus(rtmix_domain_get_gain(nil, rtmix_domain(0), &g), [-1], "domain_get_gain(NULL)")
                continue
            }
            let d = rtmix_domain(UInt32(bitPattern: domain))
            let known = domain == 0 || domain == 1
            if setIt {
                let s = rtmix_domain_set_gain(m.handle, d, gain)
                checkStatus(s, known && validGain(gain) ? [0] : [-1], "domain_set_gain(\(domain), \(gain))")
                if s == 0 { m.domainTarget[Int(domain)] = domain == 0 ? max(gain, m.callFloor) : gain }
            }
            var g: Float = -7
            let s = rtmix_domain_get_gain(m.handle, d, &g)
            checkStatus(s, known ? [0] : [-1], "domain_get_gain(\(domain))")
            if s == 0 {
                check(g == m.domainTarget[Int(domain)],
                      "domain \(domain) gain \(g) != expected \(m.domainTarget[Int(domain)]) (floor \(m.callFloor))")
            } else {
                check(g == -7, "domain_get_gain wrote on error")
            }
        }
    }

    func opOutputFormat() {
        let slots = targets()
        let rate = fuzzRate(&r), channels = fuzzChannels(&r)
        var statuses: [Int32] = []
        for i in slots {
            guard let m = engines[i] else {
                checkStatus(rtmix_engine_set_output_format(nil, rate, channels), [-1], "set_output_format(NULL)")
                continue
            }
            let s = rtmix_engine_set_output_format(m.handle, rate, channels)
            let ok = validRate(Int(rate)) && validChannels(Int(channels))
            checkStatus(s, ok ? [0, -7] : [-2], "set_output_format(\(rate), \(channels))")
            if s == 0 {
                m.rate = Int(rate)
                m.channels = Int(channels)
            }
            checkConfig(m)
            statuses.append(s)
        }
        if Set(statuses).count > 1 { breakMirror() }
    }

    /// A capture call: fuzzed frame count, NaN/Inf/huge mic samples, in
    /// place or not. Buffers hold exactly frames x capture channels.
    func opCapture(f32: Bool) {
        let slots = targets()
        let choice = r.u8()
        var raw = r.count(upTo: 20_000)
        if raw > budget.captureFrames { raw = min(raw, 64) }
        let inPlace = r.bool()
        let seed = r.u32()
        for i in slots {
            guard let m = engines[i] else {
                var one: [Float] = [0, 0], two: [Float] = [0, 0]
                checkStatus(rtmix_capture_process_f32(nil, &one, &two, 1), [-1], "capture(NULL engine)")
                continue
            }
            var frames = raw
            switch choice % 6 {
            case 0: frames = m.maxFrames
            case 1: frames = m.maxFrames + 1
            case 2: frames = min(raw, m.maxFrames)
            default: break
            }
            budget.captureFrames -= min(frames, m.maxFrames)
            // The documented layout: capture channels (1 or 2).
            let ch = m.captureOn ? m.captureChannels : max(1, min(2, m.captureChannels))
            let n = frames * ch
            var bytes: [UInt8] = []
            var g = seed
            for _ in 0..<96 { g = g &* 1_664_525 &+ 1_013_904_223; bytes.append(UInt8(truncatingIfNeeded: g >> 24)) }
            let what = "capture_\(f32 ? "f32" : "s16")(\(frames) frames, max \(m.maxFrames), \(ch) ch, "
                + "rate \(m.captureRate)\(inPlace ? ", in place" : ""))"
            var expected: Int32 = 0
            if frames == 0 { expected = -1 } else if frames > m.maxFrames { expected = -5 } else if !m.captureOn {
                expected = -8
            }
            var status: Int32 = 0
            bytes.withUnsafeBufferPointer { bp in
                var dr = FuzzReader(bp.baseAddress, bp.count)
                if f32 {
                    let mic = makeF32(&dr, samples: max(n, 1))
                    defer { mic.deallocate() }
                    let bad = nonfiniteCount(mic, n)
                    let out: UnsafeMutableBufferPointer<Float>
                    if inPlace {
                        out = mic
                    } else {
                        out = .allocate(capacity: max(n, 1))
                        out.initialize(repeating: 4321.5)
                    }
                    defer { if !inPlace { out.deallocate() } }
                    let before = Array(out)
                    status = rtmix_capture_process_f32(m.handle, mic.baseAddress, out.baseAddress,
                                                       UInt32(truncatingIfNeeded: frames))
                    checkStatus(status, [expected], what)
                    switch status {
                    case 0:
                        for j in 0..<n where !(out[j].isFinite && out[j] >= -1 && out[j] <= 1) {
                            fuzzFail("\(what): out[\(j)] = \(out[j]) not finite in [-1, 1]")
                        }
                        m.captureNonfinite += bad
                    case -8:
                        for j in 0..<n where out[j] != 0 { fuzzFail("\(what): BAD_STATE but out[\(j)] = \(out[j])") }
                    default:
                        for j in 0..<out.count where out[j].bitPattern != before[j].bitPattern {
                            fuzzFail("\(what): error \(status) but out[\(j)] written")
                        }
                    }
                } else {
                    let mic = makeS16(&dr, samples: max(n, 1))
                    defer { mic.deallocate() }
                    let out: UnsafeMutableBufferPointer<Int16>
                    if inPlace {
                        out = mic
                    } else {
                        out = .allocate(capacity: max(n, 1))
                        out.initialize(repeating: 0x5A5A)
                    }
                    defer { if !inPlace { out.deallocate() } }
                    let before = Array(out)
                    status = rtmix_capture_process_s16(m.handle, mic.baseAddress, out.baseAddress,
                                                       UInt32(truncatingIfNeeded: frames))
                    checkStatus(status, [expected], what)
                    if status == -8 {
                        for j in 0..<n where out[j] != 0 { fuzzFail("\(what): BAD_STATE but out[\(j)] = \(out[j])") }
                    } else if status != 0 {
                        for j in 0..<out.count where out[j] != before[j] { fuzzFail("\(what): error but out written") }
                    }
                }
            }
            if status == 0 {
                m.captureCalls += 1
                m.captureFrames += UInt64(frames)
            }
            checkEngineStats(m, what)
        }
    }

    /// Delay hint, publish gain (set/get), and the NULL arguments of capture.
    func opCaptureControl() {
        let slots = targets()
        let ms: Int32 = r.pick([40, -1, 0, 1000, 1001, -2, Int32.min, Int32.max, 500, 120]) {
            Int32(bitPattern: $0.u32())
        }
        let domain: Int32 = r.pick([1, 0, 2, -1]) { Int32(bitPattern: $0.u32()) }
        let gain = r.f32()
        let which = r.u8()
        for i in slots {
            guard let m = engines[i] else {
                checkStatus(rtmix_set_stream_delay_ms(nil, 40), [-1], "set_stream_delay_ms(NULL)")
                checkStatus(rtmix_domain_set_publish_gain(nil, rtmix_domain(1), 0.5), [-1], "set_publish_gain(NULL)")
                var g: Float = 3
                checkStatus(rtmix_domain_get_publish_gain(nil, rtmix_domain(1), &g), [-1], "get_publish_gain(NULL)")
                check(g == 3, "get_publish_gain(NULL) wrote")
                continue
            }
            let d = rtmix_domain(UInt32(bitPattern: domain))
            switch which % 4 {
            case 0:
                let valid = ms >= -1 && ms <= 1000
                checkStatus(rtmix_set_stream_delay_ms(m.handle, ms), [valid ? (m.captureOn ? 0 : -8) : -1],
                            "set_stream_delay_ms(\(ms))")
            case 1:
                let valid = domain == 1 && validGain(gain)
                let s = rtmix_domain_set_publish_gain(m.handle, d, gain)
                checkStatus(s, [valid ? (m.captureOn ? 0 : -8) : -1], "set_publish_gain(\(domain), \(gain))")
                if s == 0 { m.publishGain = gain }
            case 2:
                var one: [Float] = [0, 0]
                var sone: [Int16] = [0, 0]
                checkStatus(rtmix_capture_process_f32(m.handle, nil, &one, 1), [-1], "capture_f32(mic NULL)")
                checkStatus(rtmix_capture_process_f32(m.handle, &one, nil, 1), [-1], "capture_f32(out NULL)")
                checkStatus(rtmix_capture_process_s16(m.handle, nil, &sone, 1), [-1], "capture_s16(mic NULL)")
                checkStatus(rtmix_capture_process_s16(m.handle, &sone, nil, 1), [-1], "capture_s16(out NULL)")
                checkStatus(rtmix_domain_get_publish_gain(m.handle, rtmix_domain(1), nil), [-1],
                            "get_publish_gain(gain NULL)")
            default:
                break
            }
            var g: Float = -7
            let s = rtmix_domain_get_publish_gain(m.handle, d, &g)
            if domain == 0 || domain == 1 {
                checkStatus(s, [0], "get_publish_gain(\(domain))")
                let want: Float = domain == 1 && m.captureOn ? m.publishGain : 0
                check(g == want, "publish gain \(g) != \(want) (domain \(domain))")
            } else {
                checkStatus(s, [-1], "get_publish_gain(\(domain))")
                check(g == -7, "get_publish_gain wrote on error")
            }
        }
    }

    func opStats() {
        for i in targets() {
            guard let m = engines[i] else { continue }
            checkEngineStats(m, "stats op")
            for s in m.live { checkSourceStats(m, s) }
            for id in m.removedIDs.suffix(4) {
                var st = rtmix_source_stats()
                _ = rtmix_source_stats_init(&st)
                checkStatus(rtmix_source_get_stats(m.handle, id, &st), [-3], "source_get_stats removed")
            }
            var st = rtmix_source_stats()
            _ = rtmix_source_stats_init(&st)
            let garbage = r.u32()
            if m.liveIndex(garbage) == nil {
                checkStatus(rtmix_source_get_stats(m.handle, garbage, &st), [-3], "source_get_stats(\(garbage))")
            }
        }
    }

    func opEvents() {
        let size = fuzzSize(&r, real: sizeofEvent, minimum: 32)
        let limit = 1 + Int(r.u8())
        for i in targets() {
            guard let m = engines[i] else { continue }
            var ev = rtmix_event()
            checkStatus(rtmix_event_init(&ev), [0], "event_init")
            check(ev.size == UInt32(sizeofEvent) && ev.type == 0, "event_init")
            let boxed = SizedStruct(ev, size: size)
            for _ in 0..<limit {
                let s = rtmix_engine_next_event(m.handle, boxed.pointer)
                checkStatus(s, size < 32 ? [-1] : [0], "next_event(size \(size))")
                if s != 0 { break }
                let e = boxed.value
                check(boxed.size == min(size, UInt32(sizeofEvent)), "next_event size \(boxed.size): not the size filled")
                check((0...19).contains(e.type), "event type \(e.type)")
                // Domain: -1 for engine-wide events, the source's otherwise
                // (or -1 when read after the source went away).
                check(e.source == 0 ? e.domain == -1 : (-1...1).contains(e.domain),
                      "event domain \(e.domain) (source \(e.source))")
                if size >= 48 && e.type != 0 { check(e.time_ns > 0, "event time_ns 0") }
                check(e.source == 0 || m.everIssued.contains(e.source), "event for unknown source \(e.source)")
                if (8...11).contains(e.type) {
                    // Capture events: engine-wide, capture on, frame_time in capture frames.
                    check(m.captureOn && e.source == 0, "capture event \(e.type) (capture on: \(m.captureOn))")
                    check(e.frame_time <= m.captureFrames,
                          "capture event frame_time \(e.frame_time) > captured \(m.captureFrames)")
                } else {
                    check(e.frame_time <= m.framesRendered,
                          "event frame_time \(e.frame_time) > rendered \(m.framesRendered)")
                }
                _ = checkName(rtmix_event_name(e.type), "event_name")
                if e.type == 7 {
                    check(e.value > 0, "events_dropped with value \(e.value)")
                    m.droppedReported += UInt64(max(0, e.value))
                }
                if e.type == 0 {
                    // Drained: every loss has been reported (issue 18), and
                    // the stats count the same losses.
                    var st = rtmix_engine_stats()
                    _ = rtmix_engine_stats_init(&st)
                    checkStatus(rtmix_engine_get_stats(m.handle, &st), [0], "get_stats after a drain")
                    check(st.events_dropped == m.droppedReported,
                          "drained: stats.events_dropped \(st.events_dropped) != EVENTS_DROPPED values read \(m.droppedReported)")
                    break
                }
            }
        }
    }

    func opNames() {
        let code = Int32(bitPattern: r.pick([0, 1, 2, UInt32(bitPattern: -1), UInt32(bitPattern: -8),
                                             UInt32(bitPattern: -9), 8, 7, UInt32(bitPattern: Int32.min)]) { $0.u32() })
        let st = checkName(rtmix_status_string(code), "status_string(\(code))")
        check((st == "unknown status") == !documentedStatuses.contains(code), "status_string(\(code)) = \(st)")
        let ev = checkName(rtmix_event_name(code), "event_name(\(code))")
        check((ev == "unknown") == !(0...19).contains(code), "event_name(\(code)) = \(ev)")  // 8...11: capture
        let header = (UInt32(RTMIX_VERSION_MAJOR) << 16) | (UInt32(RTMIX_VERSION_MINOR) << 8) | UInt32(RTMIX_VERSION_PATCH)
        check(rtmix_version() == header, "version \(rtmix_version()) != the header's \(header)")
    }

    /// Every NULL the header calls an error.
    func opNullPointers() {
        let e = engines[Int(r.u8() & 1)]?.handle
        check(rtmix_engine_config_init(nil) == -1, "config_init(NULL)")
        check(rtmix_source_config_init(nil, rtmix_domain(0), 48000, 2) == -1, "source_config_init(NULL)")
        check(rtmix_engine_stats_init(nil) == -1 && rtmix_source_stats_init(nil) == -1, "stats_init(NULL)")
        check(rtmix_event_init(nil) == -1, "event_init(NULL)")
        var cfg = rtmix_engine_config()
        _ = rtmix_engine_config_init(&cfg)
        check(rtmix_engine_create(&cfg, nil) == -1, "create(cfg, NULL)")
        var out: OpaquePointer? = OpaquePointer(bitPattern: 0xbeef)
        check(rtmix_engine_create(nil, &out) == -1 && out == nil, "create(NULL, out)")
        rtmix_engine_destroy(nil)
        check(rtmix_engine_get_config(nil, &cfg) == -1, "get_config(NULL)")
        var st = rtmix_engine_stats()
        _ = rtmix_engine_stats_init(&st)
        check(rtmix_engine_get_stats(nil, &st) == -1, "get_stats(NULL)")
        var sst = rtmix_source_stats()
        _ = rtmix_source_stats_init(&sst)
        check(rtmix_source_get_stats(nil, 1, &sst) == -1, "source_get_stats(NULL)")
        var ev = rtmix_event()
        _ = rtmix_event_init(&ev)
        check(rtmix_engine_next_event(nil, &ev) == -1, "next_event(NULL)")
        var id: UInt32 = 5
        var scfg = rtmix_source_config()
        _ = rtmix_source_config_init(&scfg, RTMIX_DOMAIN_MEDIA, 48000, 2)
        check(rtmix_source_add(nil, &scfg, &id) == -1, "source_add(NULL)")
        var buffered: UInt32 = 0
        check(rtmix_source_get_buffered(nil, 1, &buffered) == -1, "get_buffered(NULL)")
        guard let e else { return }
        check(rtmix_engine_get_config(e, nil) == -1, "get_config(e, NULL)")
        check(rtmix_engine_get_stats(e, nil) == -1, "get_stats(e, NULL)")
        check(rtmix_source_get_stats(e, 1, nil) == -1, "source_get_stats(e, NULL)")
        check(rtmix_engine_next_event(e, nil) == -1, "next_event(e, NULL)")
        check(rtmix_source_add(e, nil, &id) == -1, "source_add(e, NULL cfg)")
        check(rtmix_source_add(e, &scfg, nil) == -1, "source_add(e, cfg, NULL)")
        var acc: UInt32 = 3
        check(rtmix_source_push_f32(e, 1, nil, 1, &acc) == -1 && acc == 0, "push_f32(NULL samples)")
        acc = 3
        check(rtmix_source_push_s16(e, 1, nil, 1, &acc) == -1 && acc == 0, "push_s16(NULL samples)")
        check(rtmix_source_get_buffered(e, 1, nil) == -1, "get_buffered(e, id, NULL)")
        check(rtmix_domain_get_gain(e, RTMIX_DOMAIN_CALL, nil) == -1, "domain_get_gain(NULL out)")
        check(rtmix_render_f32(e, nil, 1) == -1, "render_f32(NULL out)")
        check(rtmix_render_s16(e, nil, 1) == -1, "render_s16(NULL out)")
        check(rtmix_render_f32_checked(e, nil, 2, 1) == -1, "render_f32_checked(NULL out)")
        check(rtmix_render_s16_checked(e, nil, 2, 1) == -1, "render_s16_checked(NULL out)")
        var two: [Float] = [9, 9]
        check(rtmix_render_f32_checked(nil, &two, 2, 1) == -1 && two == [0, 0], "render_f32_checked(NULL engine)")
    }

    /// Output structs whose size is below the first published version.
    func opSmallStructs() {
        guard let m = engines[Int(r.u8() & 1)] else { return }
        let small = UInt32(r.u8() % 112)
        let stats = SizedStruct(rtmix_engine_stats(), size: small)
        checkStatus(rtmix_engine_get_stats(m.handle, stats.pointer), small < 112 ? [-1] : [0], "get_stats size \(small)")
        let sstats = SizedStruct(rtmix_source_stats(), size: UInt32(r.u8() % 96))
        let id = m.live.first?.id ?? 1
        checkStatus(rtmix_source_get_stats(m.handle, id, sstats.pointer), [-1], "source_get_stats size \(sstats.size)")
    }

    func opGetConfig() {
        let size = fuzzSize(&r, real: sizeofConfig, minimum: 36)
        for i in targets() {
            guard let m = engines[i] else { continue }
            var c = rtmix_engine_config()
            _ = rtmix_engine_config_init(&c)
            let boxed = SizedStruct(c, size: size)
            checkStatus(rtmix_engine_get_config(m.handle, boxed.pointer), size < 36 ? [-1] : [0], "get_config(size \(size))")
            // Success: size = the bytes filled; refused: untouched.
            check(boxed.size == (size < 36 ? size : min(size, UInt32(sizeofConfig))), "get_config size \(boxed.size)")
            if size >= 36 { check(Int(boxed.value.sample_rate) == m.rate, "get_config rate") }
        }
    }
}

// MARK: - The Swift API program

func runSwiftAPI(_ r: inout FuzzReader) {
    var config = EngineConfig()
    let mask = r.u8()
    if mask & 1 != 0 { config.sampleRate = Int(Int32(bitPattern: fuzzRate(&r))) }
    if mask & 2 != 0 { config.channels = Int(Int32(bitPattern: fuzzChannels(&r))) }
    if mask & 4 != 0 { config.maxFrames = r.pick([1, 16384, 16385, 0, -1, 480, Int.max]) { Int($0.u16()) } }
    if mask & 8 != 0 { config.maxSources = r.pick([1, 256, 257, 0, -5, 4]) { Int($0.u8()) } }
    if mask & 16 != 0 { config.callGainFloor = r.f32() }
    if mask & 32 != 0 { config.gainRampMs = r.f32() }
    if mask & 64 != 0 { config.limiterThresholdDb = r.f32() }
    let engine: Engine
    do {
        engine = try Engine(config)
    } catch {
        check(config.validate() != nil, "Engine(\(config)) threw \(error.code) for a valid config")
        checkStatus(error.code, [-1, -2, -7], "Engine() error")
        return
    }
    check(config.validate() == nil, "Engine accepted an invalid config \(config)")
    var sources: [(SourceID, Int)] = []
    var renderBudget = 200_000
    var ops = 96
    while !r.isEmpty && ops > 0 {
        ops -= 1
        switch r.u8() % 8 {
        case 0:
            guard sources.count < 12 else { continue }
            var sc = SourceConfig(domain: r.bool() ? .call : .media, sampleRate: Int(Int32(bitPattern: fuzzRate(&r))),
                                  channels: Int(Int32(bitPattern: fuzzChannels(&r))))
            if r.bool() { sc.bufferFrames = r.pick([0, -1, 1, 4096, 1 << 22, (1 << 22) + 1, Int.min]) { Int($0.u16()) } }
            if r.bool() { sc.gain = r.f32() }
            if r.bool() { sc.targetBufferMs = r.f32() }
            do {
                let id = try engine.addSource(sc)
                check(sc.validate() == nil, "addSource accepted invalid \(sc)")
                sources.append((id, sc.channels))
            } catch {
                checkStatus(error.code, [-1, -2, -6, -7], "addSource")
                if error.code != -6 && error.code != -7 {
                    let c = engine.config
                    check(sc.validate() != nil
                          || sourceNeverWorks(rate: sc.sampleRate, buffer: sc.bufferFrames, targetMs: sc.targetBufferMs,
                                              engineMaxFrames: c.maxFrames, outputRate: c.sampleRate),
                          "addSource rejected valid \(sc)")
                }
            }
        case 1:
            // Push with a fuzzed channel argument and a buffer of any length.
            let id = sources.isEmpty || r.u8() % 6 == 0 ? SourceID(rawValue: r.u32()) : sources[Int(r.u8()) % sources.count].0
            let ch = r.pick([1, 2, 0, 3, -1, Int.max]) { Int($0.u8()) }
            let n = r.count(upTo: 20_000)
            let f32 = r.bool()
            do {
                var accepted = 0
                if f32 {
                    let buf = makeF32(&r, samples: n)
                    defer { buf.deallocate() }
                    accepted = try engine.push(UnsafeBufferPointer(buf), to: id, channels: ch)
                } else {
                    let buf = makeS16(&r, samples: n)
                    defer { buf.deallocate() }
                    accepted = try engine.push(UnsafeBufferPointer(buf), to: id, channels: ch)
                }
                check(ch > 0 && n % ch == 0 && accepted >= 0 && accepted <= n / ch, "push accepted \(accepted) of \(n)/\(ch)")
                if let known = sources.first(where: { $0.0 == id }) {
                    check(known.1 == ch, "push with \(ch) channels to a \(known.1)-channel source succeeded")
                }
            } catch {
                checkStatus(error.code, [-1, -3], "push error")
            }
        case 2:
            // Render into a buffer of fuzzed length, asking for fuzzed frames.
            var frames = r.count(upTo: 20_000)
            let capacity = r.bool() ? frames * engine.config.channels : r.count(upTo: 40_000)
            if frames > renderBudget { frames = min(frames, 64) }
            renderBudget -= frames
            let s16 = r.bool()
            let outChannels = engine.config.channels
            if s16 {
                let buf = UnsafeMutableBufferPointer<Int16>.allocate(capacity: max(capacity, 1))
                defer { buf.deallocate() }
                buf.initialize(repeating: 0x5A5A)
                let view = UnsafeMutableBufferPointer(rebasing: buf[0..<capacity])
                do {
                    try engine.render(into: view, frames: frames)
                    check(frames * outChannels <= capacity, "render s16 wrote \(frames)x\(outChannels) into \(capacity)")
                    for j in (frames * outChannels)..<buf.count { check(buf[j] == 0x5A5A, "render wrote past frames") }
                } catch {
                    checkStatus(error.code, [-1, -5], "render s16 error")
                    // Zeros up to min(capacity, frames x 2), nothing after.
                    let zeroed = min(capacity, frames * 2)
                    for (j, v) in buf.enumerated() {
                        check(v == (j < zeroed ? 0 : 0x5A5A), "render s16 error \(error.code): sample \(j) = \(v)")
                    }
                }
            } else {
                let buf = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(capacity, 1))
                defer { buf.deallocate() }
                buf.initialize(repeating: 4321.5)
                let view = UnsafeMutableBufferPointer(rebasing: buf[0..<capacity])
                do {
                    try engine.render(into: view, frames: frames)
                    check(frames * outChannels <= capacity, "render wrote \(frames)x\(outChannels) into \(capacity)")
                    for j in 0..<(frames * outChannels) {
                        check(buf[j].isFinite && abs(buf[j]) <= 1, "render sample \(buf[j])")
                    }
                    for j in (frames * outChannels)..<buf.count { check(buf[j] == 4321.5, "render wrote past frames") }
                } catch {
                    checkStatus(error.code, [-1, -5], "render error")
                    let zeroed = min(capacity, frames * 2)
                    for (j, v) in buf.enumerated() {
                        check(v == (j < zeroed ? 0 : 4321.5), "render error \(error.code): sample \(j) = \(v)")
                    }
                }
            }
        case 3:
            let id = sources.isEmpty || r.bool() ? SourceID(rawValue: r.u32()) : sources[Int(r.u8()) % sources.count].0
            let g = r.f32()
            do { try engine.setGain(g, for: id); check(validGain(g), "setGain accepted \(g)") } catch {
                checkStatus(error.code, [-1, -3], "setGain")
            }
            do { try engine.setMuted(r.bool(), for: id) } catch { checkStatus(error.code, [-3], "setMuted") }
            if r.bool() {
                do { try engine.removeSource(id); sources.removeAll { $0.0 == id } } catch {
                    checkStatus(error.code, [-3], "removeSource")
                }
            }
        case 4:
            let d: Domain = r.bool() ? .call : .media
            let g = r.f32()
            do {
                try engine.setDomainGain(g, for: d)
                check(validGain(g), "setDomainGain accepted \(g)")
                let want = d == .call ? max(g, engine.config.callGainFloor) : g
                check(engine.domainGain(d) == want, "domainGain \(engine.domainGain(d)) != \(want)")
            } catch { checkStatus(error.code, [-1], "setDomainGain") }
        case 5:
            let rate = Int(Int32(bitPattern: fuzzRate(&r))), ch = Int(Int32(bitPattern: fuzzChannels(&r)))
            do {
                try engine.setOutputFormat(sampleRate: rate, channels: ch)
                check(engine.config.sampleRate == rate && engine.config.channels == ch, "format not applied")
            } catch { checkStatus(error.code, [-2, -7], "setOutputFormat") }
        case 6:
            let st = engine.stats()
            check(st.renderNsP50 <= st.renderNsP99 && st.renderNsP99 <= st.renderNsMax, "stats percentiles")
            check(st.activeSources == sources.count, "activeSources \(st.activeSources) != \(sources.count)")
            for (id, _) in sources {
                do {
                    let s = try engine.stats(for: id)
                    check(s.bufferedFrames <= s.capacityFrames, "buffered > capacity")
                    let b = try engine.bufferedFrames(of: id)
                    check(b == s.bufferedFrames, "bufferedFrames \(b) != \(s.bufferedFrames)")
                } catch { fuzzFail("stats(for: live) threw \(error.code)") }
            }
        default:
            var k = 0
            while let e = engine.nextEvent(), k < 300 { k += 1; _ = e }
        }
    }
}

// MARK: - Entry point

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEngineC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var r = FuzzReader(data, size)
    let mode = r.u8()
    switch mode % 8 {
    case 0:
        runSwiftAPI(&r)
    case 1:
        let p = CProgram(r, mirror: true)
        p.run()
    default:
        let p = CProgram(r, mirror: false)
        p.run()
    }
    return 0
}
