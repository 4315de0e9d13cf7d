import CRTMixHeader
import Synchronization

// The engine's C ABI (include/rtmix.h). Each function only converts between
// C types and the Swift core and returns a status code; no logic lives here.
// `@usableFromInline` exports the symbol from librtmix.so without adding it
// to the Swift API. The render and push entry points are `@_noLocks`.

@usableFromInline typealias CEngine = OpaquePointer

@_noLocks
func core(_ handle: CEngine) -> UnsafeMutablePointer<EngineCore> {
    UnsafeMutablePointer<EngineCore>(handle)
}

@_cdecl("rtmix_version") @usableFromInline @_noLocks
func rtmix_version_impl() -> UInt32 {
    (UInt32(RTMIX_VERSION_MAJOR) << 16) | (UInt32(RTMIX_VERSION_MINOR) << 8) | UInt32(RTMIX_VERSION_PATCH)
}

@_cdecl("rtmix_status_string") @usableFromInline @_noLocks
func rtmix_status_string_impl(_ status: Int32) -> UnsafePointer<CChar> {
    UnsafeRawPointer(RTMixError.message(for: status).utf8Start).assumingMemoryBound(to: CChar.self)
}

// MARK: config and stats structs

@_cdecl("rtmix_engine_config_init") @usableFromInline @_noLocks
func rtmix_engine_config_init_impl(_ cfg: UnsafeMutablePointer<rtmix_engine_config>?) -> Int32 {
    guard let cfg else { return RTMixError.invalidArgument.code }
    cfg.pointee = CConversion.cConfig(EngineConfig())
    return 0
}

@_cdecl("rtmix_source_config_init") @usableFromInline @_noLocks
func rtmix_source_config_init_impl(_ cfg: UnsafeMutablePointer<rtmix_source_config>?, _ domain: Int32,
                                   _ sampleRate: UInt32, _ channels: UInt32) -> Int32 {
    guard let cfg else { return RTMixError.invalidArgument.code }
    var c = rtmix_source_config()
    c.size = UInt32(MemoryLayout<rtmix_source_config>.size)
    c.domain = domain
    c.sample_rate = sampleRate
    c.channels = channels
    c.buffer_frames = 0
    c.gain = 1
    // Drift compensation on, with the domain's target (an unknown domain is
    // refused later by rtmix_source_add).
    c.target_buffer_ms = domain == 1 ? 100 : 40  // SourceConfig.defaultTargetBufferMs
    c.start_threshold_ms = -1
    c.overrun_policy = 0
    cfg.pointee = c
    return 0
}

@_cdecl("rtmix_engine_stats_init") @usableFromInline @_noLocks
func rtmix_engine_stats_init_impl(_ s: UnsafeMutablePointer<rtmix_engine_stats>?) -> Int32 {
    guard let s else { return RTMixError.invalidArgument.code }
    s.pointee = rtmix_engine_stats()
    s.pointee.size = UInt32(MemoryLayout<rtmix_engine_stats>.size)
    return 0
}

@_cdecl("rtmix_source_stats_init") @usableFromInline @_noLocks
func rtmix_source_stats_init_impl(_ s: UnsafeMutablePointer<rtmix_source_stats>?) -> Int32 {
    guard let s else { return RTMixError.invalidArgument.code }
    s.pointee = rtmix_source_stats()
    s.pointee.size = UInt32(MemoryLayout<rtmix_source_stats>.size)
    return 0
}

// MARK: engine

@_cdecl("rtmix_engine_create") @usableFromInline
func rtmix_engine_create_impl(_ cfg: UnsafePointer<rtmix_engine_config>?,
                              _ out: UnsafeMutablePointer<CEngine?>?) -> Int32 {
    guard let out else { return RTMixError.invalidArgument.code }
    out.pointee = nil
    guard let cfg else { return RTMixError.invalidArgument.code }
    guard let config = CConversion.swiftConfig(cfg) else { return RTMixError.invalidArgument.code }
    if let error = config.validate() { return error.code }
    switch EngineCore.create(config) {
    case .success(let p):
        out.pointee = CEngine(p)
        return 0
    case .failure(let error):
        return error.code
    }
}

@_cdecl("rtmix_engine_destroy") @usableFromInline
func rtmix_engine_destroy_impl(_ e: CEngine?) {
    guard let e else { return }
    EngineCore.destroy(core(e))
}

@_cdecl("rtmix_engine_get_config") @usableFromInline @_noLocks
func rtmix_engine_get_config_impl(_ e: CEngine?, _ cfg: UnsafeMutablePointer<rtmix_engine_config>?) -> Int32 {
    guard let e, let cfg else { return RTMixError.invalidArgument.code }
    var current = core(e).pointee.config
    (current.sampleRate, current.channels) = core(e).pointee.currentFormat()
    var full = CConversion.cConfig(current)
    return withUnsafeMutablePointer(to: &full) {
        CConversion.copyOutRaw($0, size: MemoryLayout<rtmix_engine_config>.size, to: cfg,
                               minimum: CConversion.minimumConfigSize)
    }
}

@_cdecl("rtmix_engine_set_output_format") @usableFromInline
func rtmix_engine_set_output_format_impl(_ e: CEngine?, _ sampleRate: UInt32, _ channels: UInt32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.setOutputFormat(core(e), sampleRate: CConversion.int(sampleRate),
                                          channels: CConversion.int(channels))
}

// MARK: sources

@_cdecl("rtmix_source_add") @usableFromInline
func rtmix_source_add_impl(_ e: CEngine?, _ cfg: UnsafePointer<rtmix_source_config>?,
                           _ outID: UnsafeMutablePointer<UInt32>?) -> Int32 {
    guard let e, let cfg, let outID else { return RTMixError.invalidArgument.code }
    guard let config = CConversion.swiftSourceConfig(cfg) else { return RTMixError.invalidArgument.code }
    let r = EngineCore.addSource(core(e), config)
    if r.status == 0 { outID.pointee = r.id }
    return r.status
}

@_cdecl("rtmix_source_add_pull") @usableFromInline
func rtmix_source_add_pull_impl(_ e: CEngine?, _ cfg: UnsafePointer<rtmix_source_config>?,
                                _ callback: PullCallback?, _ user: UnsafeMutableRawPointer?,
                                _ outID: UnsafeMutablePointer<UInt32>?) -> Int32 {
    guard let e, let cfg, let callback, let outID else { return RTMixError.invalidArgument.code }
    guard let config = CConversion.swiftSourceConfig(cfg) else { return RTMixError.invalidArgument.code }
    let r = EngineCore.addSource(core(e), config, pull: callback, context: user)
    if r.status == 0 { outID.pointee = r.id }
    return r.status
}

@_cdecl("rtmix_source_writable_frames") @usableFromInline @_noLocks
func rtmix_source_writable_frames_impl(_ e: CEngine?, _ id: UInt32, _ frames: UnsafeMutablePointer<UInt32>?) -> Int32 {
    guard let e, let frames else { return RTMixError.invalidArgument.code }
    let n = EngineCore.writableFrames(core(e), id: id)
    if n < 0 { return RTMixError.notFound.code }
    frames.pointee = UInt32(clamping: n)
    return 0
}

@_cdecl("rtmix_source_set_paused") @usableFromInline @_noLocks
func rtmix_source_set_paused_impl(_ e: CEngine?, _ id: UInt32, _ on: Int32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.setPaused(core(e), id: id, on != 0)
}

@_cdecl("rtmix_source_flush") @usableFromInline @_noLocks
func rtmix_source_flush_impl(_ e: CEngine?, _ id: UInt32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.flush(core(e), id: id)
}

@_cdecl("rtmix_source_end") @usableFromInline @_noLocks
func rtmix_source_end_impl(_ e: CEngine?, _ id: UInt32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.end(core(e), id: id)
}

@_cdecl("rtmix_source_position_init") @usableFromInline @_noLocks
func rtmix_source_position_init_impl(_ p: UnsafeMutablePointer<rtmix_source_position>?) -> Int32 {
    guard let p else { return RTMixError.invalidArgument.code }
    p.pointee = rtmix_source_position()
    p.pointee.size = UInt32(MemoryLayout<rtmix_source_position>.size)
    return 0
}

@_cdecl("rtmix_source_get_position") @usableFromInline @_noLocks
func rtmix_source_get_position_impl(_ e: CEngine?, _ id: UInt32, _ p: UnsafeMutablePointer<rtmix_source_position>?) -> Int32 {
    guard let e, let p, p.pointee.size >= CConversion.minimumPositionSize else { return RTMixError.invalidArgument.code }
    let (status, pos) = EngineCore.position(core(e), id: id)
    if status != 0 { return status }
    var full = rtmix_source_position()
    full.size = UInt32(MemoryLayout<rtmix_source_position>.size)
    full.sample_rate = UInt32(clamping: pos.sampleRate)
    full.frames_played = pos.framesPlayed
    full.render_time_ns = pos.renderTimeNs
    full.latency_ns = pos.latencyNs
    full.output_latency_ns = pos.outputLatencyNs
    return withUnsafeBytes(of: &full) { src in
        CConversion.copyOutRaw(src.baseAddress.unsafelyUnwrapped, size: MemoryLayout<rtmix_source_position>.size,
                               to: UnsafeMutableRawPointer(p), minimum: CConversion.minimumPositionSize)
    }
}

@_cdecl("rtmix_engine_set_output_latency_ns") @usableFromInline @_noLocks
func rtmix_engine_set_output_latency_ns_impl(_ e: CEngine?, _ ns: UInt64) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    core(e).pointee.outputLatencyNs.store(ns, ordering: .relaxed)
    return 0
}

@_cdecl("rtmix_engine_set_interrupted") @usableFromInline
func rtmix_engine_set_interrupted_impl(_ e: CEngine?, _ on: Int32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.setInterrupted(core(e), on != 0)
}

@_cdecl("rtmix_source_remove") @usableFromInline
func rtmix_source_remove_impl(_ e: CEngine?, _ id: UInt32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.removeSource(core(e), id)
}

@_cdecl("rtmix_source_push_f32") @usableFromInline @_noLocks
func rtmix_source_push_f32_impl(_ e: CEngine?, _ id: UInt32, _ samples: UnsafePointer<Float>?,
                                _ frames: UInt32, _ accepted: UnsafeMutablePointer<UInt32>?) -> Int32 {
    pushC(e, id, UnsafeRawPointer(samples), .f32, frames, accepted)
}

@_cdecl("rtmix_source_push_s16") @usableFromInline @_noLocks
func rtmix_source_push_s16_impl(_ e: CEngine?, _ id: UInt32, _ samples: UnsafePointer<Int16>?,
                                _ frames: UInt32, _ accepted: UnsafeMutablePointer<UInt32>?) -> Int32 {
    pushC(e, id, UnsafeRawPointer(samples), .s16, frames, accepted)
}

@_noLocks
func pushC(_ e: CEngine?, _ id: UInt32, _ samples: UnsafeRawPointer?, _ format: EngineCore.SampleFormat,
           _ frames: UInt32, _ accepted: UnsafeMutablePointer<UInt32>?) -> Int32 {
    accepted?.pointee = 0
    guard let e, let samples else { return RTMixError.invalidArgument.code }
    var n = 0
    let status = EngineCore.push(core(e), id: id, samples: samples, format: format, frames: CConversion.int(frames), accepted: &n)
    accepted?.pointee = UInt32(n)
    return status
}

@_cdecl("rtmix_source_get_buffered") @usableFromInline @_noLocks
func rtmix_source_get_buffered_impl(_ e: CEngine?, _ id: UInt32, _ frames: UnsafeMutablePointer<UInt32>?) -> Int32 {
    guard let e, let frames else { return RTMixError.invalidArgument.code }
    let n = EngineCore.bufferedFrames(core(e), id: id)
    if n < 0 { return RTMixError.notFound.code }
    frames.pointee = UInt32(n)
    return 0
}

@_cdecl("rtmix_source_set_gain") @usableFromInline
func rtmix_source_set_gain_impl(_ e: CEngine?, _ id: UInt32, _ gain: Float) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.setSourceGain(core(e), id, gain: gain, muted: nil)
}

@_cdecl("rtmix_source_set_muted") @usableFromInline
func rtmix_source_set_muted_impl(_ e: CEngine?, _ id: UInt32, _ muted: Int32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.setSourceGain(core(e), id, gain: nil, muted: muted != 0)
}

@_cdecl("rtmix_domain_set_gain") @usableFromInline
func rtmix_domain_set_gain_impl(_ e: CEngine?, _ domain: Int32, _ gain: Float) -> Int32 {
    guard let e, let d = Domain(rawValue: domain) else { return RTMixError.invalidArgument.code }
    return EngineCore.setDomainGain(core(e), d, gain)
}

@_cdecl("rtmix_domain_get_gain") @usableFromInline @_noLocks
func rtmix_domain_get_gain_impl(_ e: CEngine?, _ domain: Int32, _ gain: UnsafeMutablePointer<Float>?) -> Int32 {
    guard let e, let gain, domain == 0 || domain == 1 else { return RTMixError.invalidArgument.code }
    gain.pointee = EngineCore.domainGain(core(e), domain == 0 ? .call : .media)
    return 0
}

// MARK: render

/// Samples an unchecked render zeroes when the engine is NULL:
/// min(frames, 16384), 16384 being the largest `max_frames` (the caller
/// promised frames × channels samples, channels ≥ 1).
@_noLocks
func nullEngineZeroCount(_ frames: UInt32) -> Int {
    min(CConversion.int(frames), 16_384)
}

@_cdecl("rtmix_render_f32") @usableFromInline @_noLocks
func rtmix_render_f32_impl(_ e: CEngine?, _ out: UnsafeMutablePointer<Float>?, _ frames: UInt32) -> Int32 {
    guard let out else { return RTMixError.invalidArgument.code }
    guard let e else {
        out.update(repeating: 0, count: nullEngineZeroCount(frames))
        return RTMixError.invalidArgument.code
    }
    return EngineCore.render(core(e), into: out, frames: CConversion.int(frames))
}

@_cdecl("rtmix_render_s16") @usableFromInline @_noLocks
func rtmix_render_s16_impl(_ e: CEngine?, _ out: UnsafeMutablePointer<Int16>?, _ frames: UInt32) -> Int32 {
    guard let out else { return RTMixError.invalidArgument.code }
    guard let e else {
        out.update(repeating: 0, count: nullEngineZeroCount(frames))
        return RTMixError.invalidArgument.code
    }
    return EngineCore.renderS16(core(e), into: out, frames: CConversion.int(frames))
}

@_cdecl("rtmix_render_f32_checked") @usableFromInline @_noLocks
func rtmix_render_f32_checked_impl(_ e: CEngine?, _ out: UnsafeMutablePointer<Float>?, _ size: UInt,
                                   _ frames: UInt32) -> Int32 {
    guard let out else { return RTMixError.invalidArgument.code }
    // size_t: above Int.max (SIZE_MAX, "no limit") no buffer is larger.
    let capacity = Int(clamping: size)
    guard let e else {
        out.update(repeating: 0, count: EngineCore.zeroCount(frames: CConversion.int(frames), capacity: capacity))
        return RTMixError.invalidArgument.code
    }
    return EngineCore.render(core(e), into: out, frames: CConversion.int(frames), capacity: capacity)
}

@_cdecl("rtmix_render_s16_checked") @usableFromInline @_noLocks
func rtmix_render_s16_checked_impl(_ e: CEngine?, _ out: UnsafeMutablePointer<Int16>?, _ size: UInt,
                                   _ frames: UInt32) -> Int32 {
    guard let out else { return RTMixError.invalidArgument.code }
    // size_t: above Int.max (SIZE_MAX, "no limit") no buffer is larger.
    let capacity = Int(clamping: size)
    guard let e else {
        out.update(repeating: 0, count: EngineCore.zeroCount(frames: CConversion.int(frames), capacity: capacity))
        return RTMixError.invalidArgument.code
    }
    return EngineCore.renderS16(core(e), into: out, frames: CConversion.int(frames), capacity: capacity)
}

// MARK: capture

@_cdecl("rtmix_capture_process_f32") @usableFromInline @_noLocks
func rtmix_capture_process_f32_impl(_ e: CEngine?, _ mic: UnsafePointer<Float>?, _ out: UnsafeMutablePointer<Float>?,
                                    _ frames: UInt32) -> Int32 {
    guard let e, let mic, let out else { return RTMixError.invalidArgument.code }
    return EngineCore.processCapture(core(e), mic: mic, out: out, frames: CConversion.int(frames))
}

@_cdecl("rtmix_capture_process_s16") @usableFromInline @_noLocks
func rtmix_capture_process_s16_impl(_ e: CEngine?, _ mic: UnsafePointer<Int16>?, _ out: UnsafeMutablePointer<Int16>?,
                                    _ frames: UInt32) -> Int32 {
    guard let e, let mic, let out else { return RTMixError.invalidArgument.code }
    return EngineCore.processCaptureS16(core(e), mic: mic, out: out, frames: CConversion.int(frames))
}

@_cdecl("rtmix_set_stream_delay_ms") @usableFromInline @_noLocks
func rtmix_set_stream_delay_ms_impl(_ e: CEngine?, _ ms: Int32) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.setStreamDelay(core(e), ms: Int(ms))
}

@_cdecl("rtmix_domain_set_publish_gain") @usableFromInline @_noLocks
func rtmix_domain_set_publish_gain_impl(_ e: CEngine?, _ domain: Int32, _ gain: Float) -> Int32 {
    guard let e, domain == 0 || domain == 1 else { return RTMixError.invalidArgument.code }
    return EngineCore.setPublishGain(core(e), media: domain == 1, gain)
}

@_cdecl("rtmix_domain_get_publish_gain") @usableFromInline @_noLocks
func rtmix_domain_get_publish_gain_impl(_ e: CEngine?, _ domain: Int32, _ gain: UnsafeMutablePointer<Float>?) -> Int32 {
    guard let e, let gain, domain == 0 || domain == 1 else { return RTMixError.invalidArgument.code }
    gain.pointee = EngineCore.publishGain(core(e), media: domain == 1)
    return 0
}

@_cdecl("rtmix_engine_set_clock") @usableFromInline
func rtmix_engine_set_clock_impl(_ e: CEngine?,
                                 _ clock: (@convention(c) (UnsafeMutableRawPointer?) -> UInt64)?,
                                 _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let e else { return RTMixError.invalidArgument.code }
    return EngineCore.setClock(core(e), clock, context: user)
}

// MARK: statistics

@_cdecl("rtmix_engine_get_stats") @usableFromInline
func rtmix_engine_get_stats_impl(_ e: CEngine?, _ stats: UnsafeMutablePointer<rtmix_engine_stats>?) -> Int32 {
    guard let e, let stats else { return RTMixError.invalidArgument.code }
    guard stats.pointee.size >= CConversion.minimumStatsSize else { return RTMixError.invalidArgument.code }
    var full = CConversion.cStats(EngineCore.engineStats(core(e)))
    return CConversion.copyOut(&full, to: stats, minimum: CConversion.minimumStatsSize)
}

@_cdecl("rtmix_source_get_stats") @usableFromInline
func rtmix_source_get_stats_impl(_ e: CEngine?, _ id: UInt32,
                                 _ stats: UnsafeMutablePointer<rtmix_source_stats>?) -> Int32 {
    guard let e, let stats else { return RTMixError.invalidArgument.code }
    guard stats.pointee.size >= CConversion.minimumSourceStatsSize else { return RTMixError.invalidArgument.code }
    guard let s = EngineCore.sourceStats(core(e), id) else { return RTMixError.notFound.code }
    var full = CConversion.cSourceStats(s)
    return CConversion.copyOut(&full, to: stats, minimum: CConversion.minimumSourceStatsSize)
}

// MARK: events

@_cdecl("rtmix_event_init") @usableFromInline @_noLocks
func rtmix_event_init_impl(_ ev: UnsafeMutablePointer<rtmix_event>?) -> Int32 {
    guard let ev else { return RTMixError.invalidArgument.code }
    ev.pointee = rtmix_event()
    ev.pointee.size = UInt32(MemoryLayout<rtmix_event>.size)
    return 0
}

@_cdecl("rtmix_engine_next_event") @usableFromInline
func rtmix_engine_next_event_impl(_ e: CEngine?, _ ev: UnsafeMutablePointer<rtmix_event>?) -> Int32 {
    guard let e, let ev, ev.pointee.size >= CConversion.minimumEventSize else { return RTMixError.invalidArgument.code }
    var full = rtmix_event()
    full.size = UInt32(MemoryLayout<rtmix_event>.size)
    if let raw = EngineCore.nextEvent(core(e)) {
        full.type = raw.kind
        full.source = raw.source
        full.frame_time = raw.frameTime
        full.value = raw.value
        full.domain = raw.domain
        full.time_ns = raw.timeNs
        full.suppressed = raw.suppressed
    } else {
        full.domain = -1
    }
    return CConversion.copyOut(&full, to: ev, minimum: CConversion.minimumEventSize)
}

@_cdecl("rtmix_event_name") @usableFromInline @_noLocks
func rtmix_event_name_impl(_ type: Int32) -> UnsafePointer<CChar> {
    let name: StaticString
    switch type {  // RTMIX_EVENT_* (EngineEventKind raw values)
    case 1: name = "underrun_began"
    case 2: name = "underrun_ended"
    case 3: name = "buffer_overflow"
    case 4: name = "nonfinite_input"
    case 5: name = "limiter_engaged"
    case 6: name = "render_slow"
    case 7: name = "events_dropped"
    case 8: name = "echo_path_changed"
    case 9: name = "canceller_reset"
    case 10: name = "reference_missing"
    case 11: name = "drift_out_of_range"
    case 12: name = "source_started"
    case 13: name = "source_drained"
    case 14: name = "audio_dropped"
    case 15: name = "render_stalled"
    case 16: name = "render_resumed"
    case 17: name = "call_audio_missing"
    case 18: name = "drift_saturated"
    case 19: name = "limiter_heavy"
    case 0: name = "none"
    default: name = "unknown"
    }
    return UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
}

// MARK: testing

@_cdecl("rtmix_testing_fail_allocation") @usableFromInline
func rtmix_testing_fail_allocation_impl(_ nth: Int64) -> Int64 {
    Int64(truncatingIfNeeded: Allocation.failNth(Int(truncatingIfNeeded: nth)))
}
