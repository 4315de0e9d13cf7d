// CABI+Session.swift — the rtmix_session_* C exports (include/rtmix_session.h).
// A thin layer: argument checks, struct <-> Swift conversion, error codes.
// All policy lives in SessionEngine and its extensions.

import CRTMixHeader

// MARK: Helpers

@inline(__always) private func status(_ e: SessionError) -> Int32 {
    switch e {
    case .invalidArgument: return RTMIX_ERR_INVALID_ARGUMENT
    case .notFound: return RTMIX_ERR_NOT_FOUND
    case .limit: return RTMIX_ERR_LIMIT
    case .badState: return RTMIX_ERR_BAD_STATE
    }
}

@inline(__always) private func engine(_ p: OpaquePointer) -> SessionEngine {
    Unmanaged<SessionEngine>.fromOpaque(UnsafeRawPointer(p)).takeUnretainedValue()
}

/// Runs `body` on the session behind `p`; NULL is RTMIX_ERR_INVALID_ARGUMENT.
@inline(__always) private func withSession(
    _ p: OpaquePointer?, _ body: (SessionEngine) throws(SessionError) -> Void
) -> Int32 {
    guard let p = p else { return RTMIX_ERR_INVALID_ARGUMENT }
    do throws(SessionError) {
        try body(engine(p))
        return RTMIX_OK
    } catch {
        return status(error)
    }
}

/// Struct sizes of ABI version 0 (RTMix 0.1.0, LP64). Fixed numbers, never
/// derived from the current layout: a caller built against the 0.1 header
/// passes these sizes forever and must keep working when fields are
/// appended. Smaller structs are rejected.
private enum V0 {
    static var config: UInt32 { 16 }
    static var settings: UInt32 { 72 }
    static var route: UInt32 { 36 }
    static var action: UInt32 { 48 }
    static var alarm: UInt32 { 32 }
    static var state: UInt32 { 60 }
}

@inline(__always) private func sizeOK(_ size: UInt32, _ v0: UInt32) -> Bool {
    size >= v0
}

// The struct copy-in/copy-out rules live once, in C (CRTMixHeader's
// rtmix_struct_abi.h), shared with the engine's C layer. The callers here
// check the version-0 size first (sizeOK), so these pass minimum 0.

/// `*_init` of a struct whose defaults are all zero: zero it, set `size`.
private func initEmpty<T>(_ p: UnsafeMutablePointer<T>?, _ empty: T) -> Int32 {
    guard let p else { return RTMIX_ERR_INVALID_ARGUMENT }
    let size = MemoryLayout<T>.size
    _unsafePerformance { rtmix_abi_init_empty(p, size) }  // memset + one store
    return RTMIX_OK
}

/// Reads at most `size` bytes of a caller's input struct (an older caller's
/// struct is shorter than ours); the rest comes from `defaults`.
private func readIn<T>(_ p: UnsafePointer<T>, defaults: T) -> T {
    var value = defaults
    _ = withUnsafeMutableBytes(of: &value) { rtmix_abi_copy_in($0.baseAddress!, MemoryLayout<T>.size, p, 0) }
    return value
}

/// Writes at most the caller's `size` bytes of an output struct and sets
/// `size` to the bytes filled, min(caller's size, ours): a newer caller's
/// struct is longer than ours, and this tells it which fields we filled.
private func writeOut<T>(_ value: T, to p: UnsafeMutablePointer<T>) {
    var v = value
    _ = withUnsafeBytes(of: &v) { rtmix_abi_copy_out(p, $0.baseAddress!, MemoryLayout<T>.size, 0) }
}

private func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

private func moduleID(_ raw: UInt32) -> ModuleID { ModuleID(rawValue: raw) }

// MARK: Struct init

// Real-time safe per rtmix_session.h. The struct inits, the *_name functions are
// `@_noLocks`; config_init, settings_init and check_config are not: the
// compiler cannot check their cross-file callees in debug builds (the
// synthesized `rawValue` accessors, `SessionOptions = []` array-literal
// defaults, OptionSet algebra in ValidityTable). All nine are called inside
// the RealtimeSanitizer harness's nonblocking region (Tests/RTSan), which
// shows no allocation, lock or system call at run time.

@_cdecl("rtmix_session_config_init")
@usableFromInline internal func rtmix_session_config_init(
    _ cfg: UnsafeMutablePointer<rtmix_session_config>?
) -> Int32 {
    guard let cfg = cfg else { return RTMIX_ERR_INVALID_ARGUMENT }
    let d = SessionConfiguration.platformDefault
    cfg.pointee = rtmix_session_config(
        size: UInt32(MemoryLayout<rtmix_session_config>.size),
        category: d.category.rawValue, mode: d.mode.rawValue, options: d.options.rawValue)
    return RTMIX_OK
}

@_cdecl("rtmix_session_settings_init")
@usableFromInline internal func rtmix_session_settings_init(
    _ s: UnsafeMutablePointer<rtmix_session_settings>?
) -> Int32 {
    guard let s = s else { return RTMIX_ERR_INVALID_ARGUMENT }
    let d = SessionSettings()
    var c = rtmix_session_settings()
    c.size = UInt32(MemoryLayout<rtmix_session_settings>.size)
    c.base_category = d.base.category.rawValue
    c.base_mode = d.base.mode.rawValue
    c.base_options = d.base.options.rawValue
    c.engine_sample_rate = d.engineSampleRate
    c.engine_channels = d.engineChannels
    c.hfp_sample_rate = d.defaultHFPSampleRate
    c.reactivation_delay_ms = UInt32(d.reactivationDelayMs)
    c.retry_base_ms = UInt32(d.retryBaseMs)
    c.retry_max_ms = UInt32(d.retryMaxMs)
    c.max_activation_attempts = d.maxActivationAttempts
    c.recording_restart_delay_ms = UInt32(d.recordingRestartDelayMs)
    c.pause_media_on_device_loss = d.pauseMediaOnDeviceLoss ? 1 : 0
    c.propose_speaker_after_interruption = d.proposeSpeakerAfterInterruption ? 1 : 0
    c.deactivate_when_idle = d.deactivateWhenIdle ? 1 : 0
    c.mic_permission = d.micPermission.rawValue
    c.max_modules = d.maxModules
    c.queue_capacity = d.queueCapacity
    s.pointee = c
    return RTMIX_OK
}

@_cdecl("rtmix_session_route_init")
@usableFromInline @_noLocks internal func rtmix_session_route_init(
    _ r: UnsafeMutablePointer<rtmix_session_route>?
) -> Int32 {
    initEmpty(r, rtmix_session_route())
}

@_cdecl("rtmix_session_action_init")
@usableFromInline @_noLocks internal func rtmix_session_action_init(
    _ a: UnsafeMutablePointer<rtmix_session_action>?
) -> Int32 {
    initEmpty(a, rtmix_session_action())
}

@_cdecl("rtmix_session_alarm_init")
@usableFromInline @_noLocks internal func rtmix_session_alarm_init(
    _ a: UnsafeMutablePointer<rtmix_session_alarm>?
) -> Int32 {
    initEmpty(a, rtmix_session_alarm())
}

@_cdecl("rtmix_session_state_init")
@usableFromInline @_noLocks internal func rtmix_session_state_init(
    _ s: UnsafeMutablePointer<rtmix_session_state>?
) -> Int32 {
    initEmpty(s, rtmix_session_state())
}

// MARK: Validity

@_cdecl("rtmix_session_check_config")
@usableFromInline internal func rtmix_session_check_config(
    _ cfg: UnsafePointer<rtmix_session_config>?, _ problems: UnsafeMutablePointer<UInt32>?,
    _ invalidOptions: UnsafeMutablePointer<UInt32>?
) -> Int32 {
    guard let cfg = cfg, let problems = problems,
          sizeOK(cfg.pointee.size, V0.config)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    let c = readIn(cfg, defaults: rtmix_session_config())
    let report = ValidityTable.check(category: c.category, mode: c.mode, options: c.options)
    problems.pointee = report.problems.rawValue
    invalidOptions?.pointee = report.invalidOptions.rawValue
    return RTMIX_OK
}

// MARK: Lifetime

@_cdecl("rtmix_session_create")
@usableFromInline internal func rtmix_session_create(
    _ settings: UnsafePointer<rtmix_session_settings>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let out = out else { return RTMIX_ERR_INVALID_ARGUMENT }
    out.pointee = nil
    guard let settings = settings,
          sizeOK(settings.pointee.size, V0.settings)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    var defaults = rtmix_session_settings()
    _ = rtmix_session_settings_init(&defaults)
    let c = readIn(settings, defaults: defaults)
    guard let cat = SessionCategory(rawValue: c.base_category),
          let mode = SessionMode(rawValue: c.base_mode),
          let perm = MicPermission(rawValue: c.mic_permission)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    var s = SessionSettings()
    s.base = SessionConfiguration(category: cat, mode: mode, options: SessionOptions(rawValue: c.base_options))
    s.engineSampleRate = c.engine_sample_rate
    s.engineChannels = c.engine_channels
    s.defaultHFPSampleRate = c.hfp_sample_rate
    s.reactivationDelayMs = UInt64(c.reactivation_delay_ms)
    s.retryBaseMs = UInt64(c.retry_base_ms)
    s.retryMaxMs = UInt64(c.retry_max_ms)
    s.maxActivationAttempts = c.max_activation_attempts
    s.recordingRestartDelayMs = UInt64(c.recording_restart_delay_ms)
    s.pauseMediaOnDeviceLoss = c.pause_media_on_device_loss != 0
    s.proposeSpeakerAfterInterruption = c.propose_speaker_after_interruption != 0
    s.deactivateWhenIdle = c.deactivate_when_idle != 0
    s.micPermission = perm
    s.maxModules = c.max_modules
    s.queueCapacity = c.queue_capacity
    // Validated before the object exists (see SessionEngine.accepts).
    guard SessionEngine.accepts(s) else { return RTMIX_ERR_INVALID_ARGUMENT }
    do throws(SessionError) {
        let e = try SessionEngine(settings: s)
        out.pointee = OpaquePointer(Unmanaged.passRetained(e).toOpaque())
        return RTMIX_OK
    } catch {
        return status(error)
    }
}

@_cdecl("rtmix_session_destroy")
@usableFromInline internal func rtmix_session_destroy(_ p: OpaquePointer?) {
    guard let p = p else { return }
    Unmanaged<SessionEngine>.fromOpaque(UnsafeRawPointer(p)).release()
}

// MARK: Modules and requests

@_cdecl("rtmix_session_module_register")
@usableFromInline internal func rtmix_session_module_register(
    _ p: OpaquePointer?, _ name: UnsafePointer<CChar>?,
    _ outID: UnsafeMutablePointer<UInt32>?
) -> Int32 {
    guard let name = name, let outID = outID else { return RTMIX_ERR_INVALID_ARGUMENT }
    // Copy at most 256 bytes: a longer name is rejected without reading on.
    var bytes: [UInt8] = []
    var i = 0
    while i <= 255 {
        let b = UInt8(bitPattern: name[i])
        if b == 0 { break }
        bytes.append(b)
        i += 1
    }
    return withSession(p) { (e) throws(SessionError) in
        outID.pointee = try e.register(nameBytes: bytes).rawValue
    }
}

@_cdecl("rtmix_session_module_unregister")
@usableFromInline internal func rtmix_session_module_unregister(
    _ p: OpaquePointer?, _ id: UInt32, _ now: UInt64
) -> Int32 {
    withSession(p) { (e) throws(SessionError) in try e.unregister(moduleID(id), now: now) }
}

@_cdecl("rtmix_session_module_name")
@usableFromInline internal func rtmix_session_module_name(
    _ p: OpaquePointer?, _ id: UInt32, _ buf: UnsafeMutablePointer<CChar>?,
    _ capacity: UInt32, _ length: UnsafeMutablePointer<UInt32>?
) -> Int32 {
    guard let buf = buf, capacity > 0 else { return RTMIX_ERR_INVALID_ARGUMENT }
    return withSession(p) { (e) throws(SessionError) in
        guard let name = e.nameBytes(of: moduleID(id)) else { throw .notFound }
        let cap = Int(truncatingIfNeeded: min(capacity, UInt32(Int32.max)))  // no trap on 32-bit
        let n = name.count < cap - 1 ? name.count : cap - 1
        for i in 0..<n { buf[i] = CChar(bitPattern: name[i]) }
        buf[n] = 0
        length?.pointee = UInt32(name.count)
    }
}

@_cdecl("rtmix_session_request")
@usableFromInline internal func rtmix_session_request(
    _ p: OpaquePointer?, _ id: UInt32, _ needs: UInt32, _ preferredMode: Int32, _ now: UInt64
) -> Int32 {
    var mode: SessionMode? = nil
    if preferredMode != RTMIX_SESSION_MODE_NONE {
        guard preferredMode >= 0, let m = SessionMode(rawValue: UInt32(preferredMode)) else {
            return RTMIX_ERR_INVALID_ARGUMENT
        }
        mode = m
    }
    return withSession(p) { (e) throws(SessionError) in
        try e.request(moduleID(id), SessionRequest(needs: SessionNeeds(rawValue: needs),
                                                   preferredMode: mode), now: now)
    }
}

@_cdecl("rtmix_session_release")
@usableFromInline internal func rtmix_session_release(
    _ p: OpaquePointer?, _ id: UInt32, _ now: UInt64
) -> Int32 {
    withSession(p) { (e) throws(SessionError) in try e.release(moduleID(id), now: now) }
}

@_cdecl("rtmix_session_observe_config")
@usableFromInline internal func rtmix_session_observe_config(
    _ p: OpaquePointer?, _ id: UInt32, _ cfg: UnsafePointer<rtmix_session_config>?, _ now: UInt64
) -> Int32 {
    guard let cfg = cfg, sizeOK(cfg.pointee.size, V0.config)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    let c = readIn(cfg, defaults: rtmix_session_config())
    return withSession(p) { (e) throws(SessionError) in
        try e.observeRaw(category: c.category, mode: c.mode, options: c.options,
                         from: moduleID(id), now: now)
    }
}

// MARK: Interruptions

@_cdecl("rtmix_session_interruption_began")
@usableFromInline internal func rtmix_session_interruption_began(
    _ p: OpaquePointer?, _ now: UInt64
) -> Int32 {
    withSession(p) { e in e.interruptionBegan(now: now) }
}

@_cdecl("rtmix_session_interruption_ended")
@usableFromInline internal func rtmix_session_interruption_ended(
    _ p: OpaquePointer?, _ shouldResume: Int32, _ now: UInt64
) -> Int32 {
    withSession(p) { e in e.interruptionEnded(shouldResume: shouldResume != 0, now: now) }
}

@_cdecl("rtmix_session_activation_result")
@usableFromInline internal func rtmix_session_activation_result(
    _ p: OpaquePointer?, _ success: Int32, _ now: UInt64
) -> Int32 {
    withSession(p) { (e) throws(SessionError) in
        try e.activationResult(success: success != 0, now: now)
    }
}

@_cdecl("rtmix_session_user_play")
@usableFromInline internal func rtmix_session_user_play(_ p: OpaquePointer?, _ now: UInt64) -> Int32 {
    withSession(p) { e in e.userRequestedPlayback(now: now) }
}

@_cdecl("rtmix_session_secondary_audio_hint")
@usableFromInline internal func rtmix_session_secondary_audio_hint(
    _ p: OpaquePointer?, _ silence: Int32, _ now: UInt64
) -> Int32 {
    withSession(p) { e in e.secondaryAudioHint(silence: silence != 0, now: now) }
}

// MARK: Routes, permission, app state, time

@_cdecl("rtmix_session_route_changed")
@usableFromInline internal func rtmix_session_route_changed(
    _ p: OpaquePointer?, _ route: UnsafePointer<rtmix_session_route>?, _ now: UInt64
) -> Int32 {
    guard let route = route, sizeOK(route.pointee.size, V0.route)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    var defaults = rtmix_session_route()
    _ = rtmix_session_route_init(&defaults)
    let r = readIn(route, defaults: defaults)
    guard let output = RoutePort(rawValue: r.output),
          let previous = RoutePort(rawValue: r.previous_output)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    let flags = UInt32(r.flags)
    let info = RouteInfo(output: output, sampleRate: r.sample_rate,
                         isCarKit: flags & RTMIX_SESSION_ROUTE_CAR_KIT != 0,
                         userSelected: flags & RTMIX_SESSION_ROUTE_USER_SELECTED != 0)
    let change = RouteChange(reasonRaw: r.reason, route: info, previousOutput: previous)
    let hasConfig = flags & RTMIX_SESSION_ROUTE_HAS_CONFIG != 0
    let observed: RawConfiguration? =
        hasConfig ? RawConfiguration(category: r.category, mode: r.mode, options: r.options) : nil
    return withSession(p) { e in e.routeChanged(change, observedRaw: observed, now: now) }
}

@_cdecl("rtmix_session_set_mic_permission")
@usableFromInline internal func rtmix_session_set_mic_permission(
    _ p: OpaquePointer?, _ permission: UInt32, _ now: UInt64
) -> Int32 {
    guard let perm = MicPermission(rawValue: permission) else { return RTMIX_ERR_INVALID_ARGUMENT }
    return withSession(p) { e in e.setMicPermission(perm, now: now) }
}

@_cdecl("rtmix_session_app_background")
@usableFromInline internal func rtmix_session_app_background(_ p: OpaquePointer?, _ now: UInt64) -> Int32 {
    withSession(p) { e in e.enteredBackground(now: now) }
}

@_cdecl("rtmix_session_app_foreground")
@usableFromInline internal func rtmix_session_app_foreground(_ p: OpaquePointer?, _ now: UInt64) -> Int32 {
    withSession(p) { e in e.enteredForeground(now: now) }
}

@_cdecl("rtmix_session_set_voice_processing")
@usableFromInline internal func rtmix_session_set_voice_processing(
    _ p: OpaquePointer?, _ enabled: Int32, _ now: UInt64
) -> Int32 {
    withSession(p) { e in e.setVoiceProcessing(enabled != 0, now: now) }
}

@_cdecl("rtmix_session_set_other_audio_playing")
@usableFromInline internal func rtmix_session_set_other_audio_playing(
    _ p: OpaquePointer?, _ playing: Int32, _ now: UInt64
) -> Int32 {
    withSession(p) { e in e.setOtherAudioPlaying(playing != 0, now: now) }
}

@_cdecl("rtmix_session_tick")
@usableFromInline internal func rtmix_session_tick(_ p: OpaquePointer?, _ now: UInt64) -> Int32 {
    withSession(p) { e in e.tick(now: now) }
}

@_cdecl("rtmix_session_next_due")
@usableFromInline internal func rtmix_session_next_due(
    _ p: OpaquePointer?, _ due: UnsafeMutablePointer<UInt64>?
) -> Int32 {
    guard let due = due else { return RTMIX_ERR_INVALID_ARGUMENT }
    return withSession(p) { (e) throws(SessionError) in
        guard let d = e.nextDueMs else { throw .notFound }
        due.pointee = d
    }
}

// MARK: Output

@_cdecl("rtmix_session_next_action")
@usableFromInline internal func rtmix_session_next_action(
    _ p: OpaquePointer?, _ out: UnsafeMutablePointer<rtmix_session_action>?
) -> Int32 {
    guard let out = out, sizeOK(out.pointee.size, V0.action)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    return withSession(p) { (e) throws(SessionError) in
        guard let issued = e.nextAction() else { throw .notFound }
        var c = rtmix_session_action()
        c.size = UInt32(MemoryLayout<rtmix_session_action>.size)
        c.kind = issued.action.kindCode
        c.time_ms = issued.timeMs
        switch issued.action {
        case .setConfiguration(let cfg):
            c.category = cfg.category.rawValue
            c.mode = cfg.mode.rawValue
            c.options = cfg.options.rawValue
        case .activate(let attempt): c.attempt = attempt
        case .deactivate(let notify): c.flag = notify ? 1 : 0
        case .setCallHeld(let held): c.flag = held ? 1 : 0
        case .reconfigureEngine(let rate, let channels):
            c.sample_rate = rate
            c.channels = channels
        case .startRecording(let id), .stopRecording(let id): c.module = id.rawValue
        case .secondaryAudioHint(let silence): c.flag = silence ? 1 : 0
        case .voiceProcessing(let on): c.flag = on ? 1 : 0
        case .pauseOutput, .resumeOutput, .pauseMedia, .resumeMedia, .requestMicPermission,
             .routeToSpeaker:
            break
        }
        writeOut(c, to: out)
    }
}

@_cdecl("rtmix_session_next_alarm")
@usableFromInline internal func rtmix_session_next_alarm(
    _ p: OpaquePointer?, _ out: UnsafeMutablePointer<rtmix_session_alarm>?
) -> Int32 {
    guard let out = out, sizeOK(out.pointee.size, V0.alarm)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    return withSession(p) { (e) throws(SessionError) in
        guard let a = e.nextAlarm() else { throw .notFound }
        var c = rtmix_session_alarm()
        c.size = UInt32(MemoryLayout<rtmix_session_alarm>.size)
        c.code = a.code.rawValue
        c.severity = a.severity.rawValue
        c.module = a.module.rawValue
        c.related_module = a.relatedModule.rawValue
        c.detail = a.detail
        c.time_ms = a.timeMs
        writeOut(c, to: out)
    }
}

@_cdecl("rtmix_session_get_state")
@usableFromInline internal func rtmix_session_get_state(
    _ p: OpaquePointer?, _ out: UnsafeMutablePointer<rtmix_session_state>?
) -> Int32 {
    guard let out = out, sizeOK(out.pointee.size, V0.state)
    else { return RTMIX_ERR_INVALID_ARGUMENT }
    return withSession(p) { e in
        let s = e.state
        var c = rtmix_session_state()
        c.size = UInt32(MemoryLayout<rtmix_session_state>.size)
        c.category = s.configuration.category.rawValue
        c.mode = s.configuration.mode.rawValue
        c.options = s.configuration.options.rawValue
        c.active = s.sessionActive ? 1 : 0
        c.interrupted = s.interrupted ? 1 : 0
        c.call_held = s.callHeld ? 1 : 0
        c.foreground = s.foreground ? 1 : 0
        c.mic_permission = s.micPermission.rawValue
        c.engine_sample_rate = s.engineSampleRate
        c.engine_channels = s.engineChannels
        c.active_modules = s.activeModules
        c.output = s.output.rawValue
        c.pending_actions = UInt32(e.pendingActionCount)
        c.pending_alarms = UInt32(e.pendingAlarmCount)
        c.voice_processing = s.voiceProcessing ? 1 : 0
        writeOut(c, to: out)
    }
}

// MARK: Names

@_cdecl("rtmix_session_action_name")
@usableFromInline @_noLocks internal func rtmix_session_action_name(_ kind: UInt32) -> UnsafePointer<CChar> {
    switch kind {
    case 1: return cString("SET_CONFIGURATION")
    case 2: return cString("ACTIVATE")
    case 3: return cString("DEACTIVATE")
    case 4: return cString("PAUSE_OUTPUT")
    case 5: return cString("RESUME_OUTPUT")
    case 6: return cString("PAUSE_MEDIA")
    case 7: return cString("RESUME_MEDIA")
    case 8: return cString("SET_CALL_HELD")
    case 9: return cString("RECONFIGURE_ENGINE")
    case 10: return cString("REQUEST_MIC_PERMISSION")
    case 11: return cString("START_RECORDING")
    case 12: return cString("STOP_RECORDING")
    case 13: return cString("ROUTE_TO_SPEAKER")
    case 14: return cString("SECONDARY_AUDIO_HINT")
    case 15: return cString("VOICE_PROCESSING")
    default: return cString("UNKNOWN")
    }
}

@_cdecl("rtmix_session_alarm_name")
@usableFromInline @_noLocks internal func rtmix_session_alarm_name(_ code: UInt32) -> UnsafePointer<CChar> {
    switch code {
    case 1: return cString("CONFIGURATION_OVERRIDDEN")
    case 2: return cString("INVALID_CONFIGURATION")
    case 3: return cString("MODE_NOT_APPLIED")
    case 4: return cString("ACTIVATION_FAILED")
    case 5: return cString("INTERRUPTION_END_MISSING")
    case 6: return cString("MIC_PERMISSION_DENIED")
    case 7: return cString("CAR_KIT_RECORDING")
    case 8: return cString("QUEUE_OVERFLOW")
    default: return cString("UNKNOWN")
    }
}
