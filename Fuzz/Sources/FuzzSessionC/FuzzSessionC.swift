// FuzzSessionC — libFuzzer harness for the audio-session policy engine.
//
// The input is a program of rtmix_session_* calls (most inputs) or of
// `SessionEngine` calls (first byte % 4 == 0): fuzzed settings (often
// invalid), module registration with long, empty and non-UTF-8 names,
// requests with unknown need bits and modes, observed configurations with
// out-of-range enums, route changes, interruptions, activation results,
// permission and app-state changes, ticks with non-monotonic and huge times,
// draining actions and alarms, NULL pointers and too-small structs.
//
// Checked after every call: only documented status codes, and the exact one
// where the header says which; ids never 0 and never reused; names round-trip;
// both queues bounded by queue_capacity; every action and alarm drained is
// well-formed (known kind/code, documented severity, valid configurations,
// supported engine formats, known module ids, times not in the future).

import CRTMixABI
import FuzzSupport
import RTMixSession

#if canImport(Glibc)
import Glibc
#endif

let sizeofSettings = MemoryLayout<rtmix_session_settings>.size
let sizeofSConfig = MemoryLayout<rtmix_session_config>.size
let sizeofRoute = MemoryLayout<rtmix_session_route>.size
let sizeofAction = MemoryLayout<rtmix_session_action>.size
let sizeofAlarm = MemoryLayout<rtmix_session_alarm>.size
let sizeofState = MemoryLayout<rtmix_session_state>.size


func isValidConfig(_ category: UInt32, _ mode: UInt32, _ options: UInt32) -> Bool {
    var c = rtmix_session_config()
    _ = rtmix_session_config_init(&c)
    c.category = category
    c.mode = mode
    c.options = options
    var problems: UInt32 = 0xFFFF
    var invalid: UInt32 = 0xFFFF
    checkStatus(rtmix_session_check_config(&c, &problems, &invalid), [0], "check_config")
    check(problems & ~0x1F == 0, "problem bits \(problems)")
    check(invalid & ~options == 0, "invalid options \(invalid) not within options \(options)")
    return problems == 0
}

let alarmSeverity: [UInt32: UInt32] = [1: 1, 2: 1, 3: 0, 4: 2, 5: 1, 6: 1, 7: 0, 8: 2]

final class SessionProgram {
    var r: FuzzReader
    var session: OpaquePointer?
    var queueCapacity = 256
    var maxModules = 64
    var live: [UInt32] = []
    var gone: [UInt32] = []
    var everIssued: Set<UInt32> = []
    var latestNow: UInt64 = 0
    var ops = 160

    init(_ r: FuzzReader) { self.r = r }
    deinit { rtmix_session_destroy(session) }

    func now() -> UInt64 {
        let t: UInt64
        switch r.u8() % 8 {
        case 0: t = latestNow &- UInt64(r.u16())            // back in time
        case 1: t = UInt64.max &- UInt64(r.u16())           // near the end of time
        case 2: t = r.u64()
        case 3: t = latestNow
        default: t = latestNow &+ UInt64(r.u16())
        }
        if t > latestNow { latestNow = t }
        return t
    }

    func pickID() -> UInt32 {
        switch r.u8() % 8 {
        case 0...4 where !live.isEmpty: return live[Int(r.u8()) % live.count]
        case 5 where !gone.isEmpty: return gone[Int(r.u8()) % gone.count]
        case 6: return 0
        default: return r.u32()
        }
    }

    func run() {
        create()
        while !r.isEmpty && ops > 0 {
            ops -= 1
            switch r.u8() % 24 {
            case 0: create()
            case 1, 2: register()
            case 3: idCall("unregister") { rtmix_session_module_unregister($0, $1, $2) }
            case 4, 5: request()
            case 6: idCall("release") { rtmix_session_release($0, $1, $2) }
            case 7: observe()
            case 8: simple("interruption_began") { rtmix_session_interruption_began($0, $1) }
            case 9:
                let resume = Int32(bitPattern: r.u32() % 3)
                simple("interruption_ended") { rtmix_session_interruption_ended($0, resume, $1) }
            case 10:
                let ok = Int32(bitPattern: r.u32() % 3)
                simple("activation_result", allowed: [0, -8]) { rtmix_session_activation_result($0, ok, $1) }
            case 11: simple("user_play") { rtmix_session_user_play($0, $1) }
            case 12:
                let s = Int32(r.u8() % 3)
                simple("secondary_audio_hint") { rtmix_session_secondary_audio_hint($0, s, $1) }
            case 13, 14: route()
            case 15:
                let perm = r.pick([0, 1, 2, 3, UInt32.max]) { $0.u32() }
                simple("set_mic_permission(\(perm))", allowed: perm <= 2 ? [0] : [-1]) {
                    rtmix_session_set_mic_permission($0, perm, $1)
                }
            case 16: simple("app_background") { rtmix_session_app_background($0, $1) }
            case 17: simple("app_foreground") { rtmix_session_app_foreground($0, $1) }
            case 18:
                let sel = r.u8() % 8
                if sel < 2 {
                    let on = Int32(bitPattern: r.u32() % 3)
                    simple("set_voice_processing") { rtmix_session_set_voice_processing($0, on, $1) }
                } else if sel < 4 {
                    let on = Int32(bitPattern: r.u32() % 3)
                    simple("set_other_audio_playing") { rtmix_session_set_other_audio_playing($0, on, $1) }
                } else {
                    simple("tick") { rtmix_session_tick($0, $1) }
                }
            case 19: drainActions(Int(r.u8()))
            case 20: drainAlarms(Int(r.u8()))
            case 21: state()
            case 22: flood()
            default: misc()
            }
            if session != nil && r.u8() & 7 == 0 { state() }
        }
        state()
        drainActions(Int.max)
        drainAlarms(Int.max)
        state()
    }

    func create() {
        var st = rtmix_session_settings()
        checkStatus(rtmix_session_settings_init(&st), [0], "settings_init")
        check(st.size == UInt32(sizeofSettings) && st.base_category == 1 && st.engine_sample_rate == 48000
              && st.engine_channels == 2 && st.hfp_sample_rate == 16000 && st.max_modules == 64
              && st.queue_capacity == 256 && st.max_activation_attempts == 4, "settings_init defaults")
        let mask = r.u32()
        if mask & 1 << 0 != 0 { st.base_category = r.pick([0, 1, 2, 3, 4, 5, 6]) { $0.u32() } }
        if mask & 1 << 1 != 0 { st.base_mode = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8]) { $0.u32() } }
        if mask & 1 << 2 != 0 { st.base_options = r.pick([0, 1, 2, 4, 8, 0x11, 0x20, 0x40, 0x80]) { $0.u32() } }
        if mask & 1 << 3 != 0 { st.engine_sample_rate = r.pick([8000, 192000, 7999, 192001, 16000, 0]) { $0.u32() } }
        if mask & 1 << 4 != 0 { st.engine_channels = r.pick([0, 1, 2, 3]) { $0.u32() } }
        if mask & 1 << 5 != 0 { st.hfp_sample_rate = r.pick([8000, 48000, 7999, 48001, 24000, 0]) { $0.u32() } }
        if mask & 1 << 6 != 0 { st.reactivation_delay_ms = r.pick([0, 1, UInt32.max]) { $0.u32() } }
        if mask & 1 << 7 != 0 { st.retry_base_ms = r.pick([0, 1, 4000, 4001, UInt32.max]) { $0.u32() } }
        if mask & 1 << 8 != 0 { st.retry_max_ms = r.pick([0, 1, 4000, UInt32.max]) { $0.u32() } }
        if mask & 1 << 9 != 0 { st.max_activation_attempts = r.pick([0, 1, 100, 101, 2]) { $0.u32() } }
        if mask & 1 << 10 != 0 { st.recording_restart_delay_ms = r.pick([0, UInt32.max]) { $0.u32() } }
        if mask & 1 << 11 != 0 { st.pause_media_on_device_loss = Int32(bitPattern: r.u32()) }
        if mask & 1 << 12 != 0 { st.propose_speaker_after_interruption = Int32(bitPattern: r.u32()) }
        if mask & 1 << 13 != 0 { st.deactivate_when_idle = Int32(bitPattern: r.u32()) }
        if mask & 1 << 14 != 0 { st.mic_permission = r.pick([0, 1, 2, 3]) { $0.u32() } }
        if mask & 1 << 15 != 0 { st.max_modules = r.pick([0, 1, 2, 1024, 1025, 3]) { $0.u32() } }
        if mask & 1 << 16 != 0 { st.queue_capacity = r.pick([15, 16, 17, 65536, 65537, 0]) { $0.u32() } }
        let size = mask & 1 << 17 != 0 ? fuzzSize(&r, real: sizeofSettings, minimum: 72) : UInt32(sizeofSettings)
        let boxed = SizedStruct(st, size: size)
        let v = boxed.value
        // Fields past `size` take their defaults.
        var eff = rtmix_session_settings()
        _ = rtmix_session_settings_init(&eff)
        withUnsafeMutableBytes(of: &eff) { dst in
            withUnsafeBytes(of: v) { src in
                dst.baseAddress!.copyMemory(from: src.baseAddress!, byteCount: min(Int(size), sizeofSettings))
            }
        }
        var valid = size >= 72 && eff.base_category <= 5 && eff.base_mode <= 7 && eff.mic_permission <= 2
        if valid { valid = isValidConfig(eff.base_category, eff.base_mode, eff.base_options) }
        valid = valid && (8000...192_000).contains(eff.engine_sample_rate) && (1...2).contains(eff.engine_channels)
            && (8000...48000).contains(eff.hfp_sample_rate) && (1...100).contains(eff.max_activation_attempts)
            && eff.retry_base_ms <= eff.retry_max_ms && (1...1024).contains(eff.max_modules)
            && (16...65536).contains(eff.queue_capacity)

        rtmix_session_destroy(session)
        session = nil
        live = []
        gone = []
        everIssued = []
        var out: OpaquePointer? = OpaquePointer(bitPattern: 0xdead)
        let s = rtmix_session_create(boxed.pointer, &out)
        checkStatus(s, valid ? [0, -7] : [-1], "session_create(size \(size), \(eff))")
        if s == 0 {
            guard let out else { fuzzFail("create OK, *out NULL") }
            session = out
            queueCapacity = Int(eff.queue_capacity)
            maxModules = Int(eff.max_modules)
            latestNow = 0
        } else {
            check(out == nil, "failed create left *out")
        }
    }

    func register() {
        // Name bytes: ASCII, empty, 255/256/long, non-UTF-8, embedded NUL.
        var name: [UInt8]
        switch r.u8() % 8 {
        case 0: name = []
        case 1: name = Array(repeating: UInt8(ascii: "a"), count: 255)
        case 2: name = Array(repeating: UInt8(ascii: "b"), count: 256)
        case 3: name = Array(repeating: 0xFF, count: Int(r.u16() % 3000))
        case 4: name = [0xC0, 0x80, 0xFE, 0xFF, 0xED, 0xA0, 0x80]
        default:
            let n = Int(r.u8())
            name = (0..<n).map { _ in r.u8() }
        }
        let effective = name.firstIndex(of: 0).map { Array(name[..<$0]) } ?? name
        var cstr = name.map { CChar(bitPattern: $0) }
        cstr.append(0)
        var id: UInt32 = 0xEEEE
        guard let session else {
            check(rtmix_session_module_register(nil, cstr, &id) == -1, "register(NULL)")
            return
        }
        let s = rtmix_session_module_register(session, cstr, &id)
        let expected: Set<Int32> = effective.isEmpty || effective.count > 255 ? [-1]
            : live.count >= maxModules ? [-6] : [0]
        checkStatus(s, expected, "register(\(effective.count) bytes) with \(live.count)/\(maxModules)")
        guard s == 0 else { check(id == 0xEEEE, "failed register wrote id"); return }
        check(id != 0 && !everIssued.contains(id), "module id \(id) zero or reused")
        everIssued.insert(id)
        live.append(id)
        // The name round-trips, truncated to capacity - 1.
        let capacity = Int(r.pick([0, 1, 2, 255, 256, 300]) { UInt32($0.u8()) })
        let buf = UnsafeMutablePointer<CChar>.allocate(capacity: max(capacity, 1))
        defer { buf.deallocate() }
        buf.initialize(repeating: 0x55, count: max(capacity, 1))
        let lengthPtr = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
        defer { lengthPtr.deallocate() }
        lengthPtr.pointee = 0
        let ns = rtmix_session_module_name(session, id, buf, UInt32(capacity), r.bool() ? lengthPtr : nil)
        let length = lengthPtr.pointee
        checkStatus(ns, capacity == 0 ? [-1] : [0], "module_name(capacity \(capacity))")
        if ns == 0 {
            let n = min(effective.count, capacity - 1)
            for i in 0..<n { check(UInt8(bitPattern: buf[i]) == effective[i], "name byte \(i) differs") }
            check(buf[n] == 0, "name not NUL-terminated at \(n)")
            check(length == 0 || length == UInt32(effective.count), "name length \(length) != \(effective.count)")
        }
    }

    func idCall(_ what: String, _ call: (OpaquePointer?, UInt32, UInt64) -> Int32) {
        let id = pickID()
        let t = now()
        guard let session else { checkStatus(call(nil, id, t), [-1], "\(what)(NULL)"); return }
        let s = call(session, id, t)
        checkStatus(s, live.contains(id) ? [0] : [-3], "\(what)(\(id))")
        if what == "unregister" && s == 0 {
            live.removeAll { $0 == id }
            gone.append(id)
        }
    }

    func simple(_ what: String, allowed: Set<Int32> = [0], _ call: (OpaquePointer?, UInt64) -> Int32) {
        let t = now()
        guard let session else { checkStatus(call(nil, t), [-1], "\(what)(NULL)"); return }
        checkStatus(call(session, t), allowed, what)
    }

    func request() {
        let id = pickID()
        let needs: UInt32 = r.pick([0x1, 0x3, 0x20, 0x22, 0x2, 0x85, 0xFF, 0x100, 0x102, 0x200, 0x4, 0x18, 0x40]) { raw in
            let v = raw.u32()
            return raw.bool() ? v & 0x1FF : v
        }
        let mode = Int32(bitPattern: r.pick([UInt32(bitPattern: -1), 0, 1, 2, 4, 5, 7, 8, UInt32(bitPattern: -2)]) { $0.u32() })
        let t = now()
        guard let session else { check(rtmix_session_request(nil, id, needs, mode, t) == -1, "request(NULL)"); return }
        let s = rtmix_session_request(session, id, needs, mode, t)
        var expected = Set<Int32>()
        if needs & ~0x1FF != 0 || !(mode == -1 || (0...7).contains(mode)) { expected.insert(-1) }
        if !live.contains(id) { expected.insert(-3) }
        checkStatus(s, expected.isEmpty ? [0] : expected, "request(\(id), needs \(needs), mode \(mode))")
    }

    func observe() {
        let id = pickID()
        var c = rtmix_session_config()
        checkStatus(rtmix_session_config_init(&c), [0], "config_init")
        check(c.size == UInt32(sizeofSConfig) && c.category == 1 && c.mode == 0 && c.options == 0, "config_init defaults")
        c.category = r.pick([0, 1, 2, 3, 4, 5, 6]) { $0.u32() }
        c.mode = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8]) { $0.u32() }
        c.options = r.pick([0, 1, 2, 4, 8, 0x11, 0x20, 0x40, 0x25, 0x80]) { $0.u32() }
        let size = fuzzSize(&r, real: sizeofSConfig, minimum: 16)
        let boxed = SizedStruct(c, size: size)
        let t = now()
        guard let session else {
            check(rtmix_session_observe_config(nil, id, boxed.pointer, t) == -1, "observe(NULL)")
            return
        }
        let s = rtmix_session_observe_config(session, id, boxed.pointer, t)
        var expected = Set<Int32>()
        if size < 16 { expected.insert(-1) }
        if id != 0 && !live.contains(id) { expected.insert(-3) }
        checkStatus(s, expected.isEmpty ? [0] : expected, "observe_config(\(id), \(c), size \(size))")
    }

    func route() {
        var rt = rtmix_session_route()
        checkStatus(rtmix_session_route_init(&rt), [0], "route_init")
        check(rt.size == UInt32(sizeofRoute) && rt.output == 0 && rt.flags == 0, "route_init defaults")
        rt.reason = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]) { $0.u32() }
        rt.output = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) { $0.u32() }
        rt.previous_output = r.pick([0, 1, 3, 4, 5, 7, 12]) { $0.u32() }
        rt.sample_rate = r.pick([0, 8000, 16000, 24000, 48000, 1, UInt32.max]) { $0.u32() }
        rt.flags = r.pick([0, 1, 2, 4, 5, 7, 8]) { $0.u32() }
        rt.category = r.pick([0, 1, 2, 3, 4, 5, 6]) { $0.u32() }
        rt.mode = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8]) { $0.u32() }
        rt.options = r.pick([0, 1, 2, 4, 8, 0x11, 0x20, 0x40]) { $0.u32() }
        let size = fuzzSize(&r, real: sizeofRoute, minimum: 36)
        if avoidKnownBugs && rt.output == 5 && rt.sample_rate != 0 && !(8000...48000).contains(rt.sample_rate) {
            rt.sample_rate = 16000  // known bug: Fuzz/Crashes/FuzzSessionC/hfp-route-rate-out-of-range
        }
        let boxed = SizedStruct(rt, size: size)
        let t = now()
        guard let session else { check(rtmix_session_route_changed(nil, boxed.pointer, t) == -1, "route(NULL)"); return }
        let s = rtmix_session_route_changed(session, boxed.pointer, t)
        let ok = size >= 36 && rt.output <= 11 && rt.previous_output <= 11
        checkStatus(s, ok ? [0] : [-1], "route_changed(\(rt), size \(size))")
    }

    func drainActions(_ limit: Int) {
        guard let session else { return }
        let size = r.u8() % 8 == 0 ? fuzzSize(&r, real: sizeofAction, minimum: 48) : UInt32(sizeofAction)
        var a = rtmix_session_action()
        checkStatus(rtmix_session_action_init(&a), [0], "action_init")
        check(a.size == UInt32(sizeofAction) && a.kind == 0, "action_init")
        let boxed = SizedStruct(a, size: size)
        var k = 0
        while k < limit {
            k += 1
            let s = rtmix_session_next_action(session, boxed.pointer)
            if size < 48 { checkStatus(s, [-1], "next_action(size \(size))"); return }
            checkStatus(s, [0, -3], "next_action")
            if s != 0 { return }
            let v = boxed.value
            check(boxed.size == min(size, UInt32(sizeofAction)), "next_action size \(boxed.size): not the size filled")
            check((1...15).contains(v.kind), "action kind \(v.kind)")
            check(checkName(rtmix_session_action_name(v.kind), "action_name") != "UNKNOWN", "action name of \(v.kind)")
            check(v.time_ms <= latestNow, "action time \(v.time_ms) after latest now \(latestNow)")
            switch v.kind {
            case 1:
                check(isValidConfig(v.category, v.mode, v.options),
                      "SET_CONFIGURATION with invalid config \(v.category)/\(v.mode)/\(v.options)")
            case 2: check(v.attempt >= 1, "ACTIVATE attempt \(v.attempt)")
            case 9:
                check((8000...192_000).contains(v.sample_rate) && (1...2).contains(v.channels),
                      "RECONFIGURE_ENGINE \(v.sample_rate)/\(v.channels)")
            case 11, 12: check(everIssued.contains(v.module), "recording action for unknown module \(v.module)")
            case 3, 8, 14, 15: check(v.flag == 0 || v.flag == 1, "flag \(v.flag)")
            default: break
            }
        }
    }

    func drainAlarms(_ limit: Int) {
        guard let session else { return }
        let size = r.u8() % 8 == 0 ? fuzzSize(&r, real: sizeofAlarm, minimum: 32) : UInt32(sizeofAlarm)
        var a = rtmix_session_alarm()
        checkStatus(rtmix_session_alarm_init(&a), [0], "alarm_init")
        let boxed = SizedStruct(a, size: size)
        var k = 0
        while k < limit {
            k += 1
            let s = rtmix_session_next_alarm(session, boxed.pointer)
            if size < 32 { checkStatus(s, [-1], "next_alarm(size \(size))"); return }
            checkStatus(s, [0, -3], "next_alarm")
            if s != 0 { return }
            let v = boxed.value
            check((1...8).contains(v.code), "alarm code \(v.code)")
            check(alarmSeverity[v.code] == v.severity, "alarm \(v.code) severity \(v.severity)")
            check(checkName(rtmix_session_alarm_name(v.code), "alarm_name") != "UNKNOWN", "alarm name")
            check(v.module == 0 || everIssued.contains(v.module), "alarm module \(v.module) never issued")
            check(v.related_module == 0 || everIssued.contains(v.related_module), "alarm related \(v.related_module)")
            check(v.time_ms <= latestNow, "alarm time \(v.time_ms) after latest now \(latestNow)")
        }
    }

    func state() {
        let size = r.u8() % 8 == 0 ? fuzzSize(&r, real: sizeofState, minimum: 60) : UInt32(sizeofState)
        var st = rtmix_session_state()
        checkStatus(rtmix_session_state_init(&st), [0], "state_init")
        let boxed = SizedStruct(st, size: size)
        guard let session else { check(rtmix_session_get_state(nil, boxed.pointer) == -1, "get_state(NULL)"); return }
        let s = rtmix_session_get_state(session, boxed.pointer)
        checkStatus(s, size < 60 ? [-1] : [0], "get_state(size \(size))")
        guard s == 0, size >= UInt32(sizeofState) else { return }
        let v = boxed.value
        check(Int(v.pending_actions) <= queueCapacity, "pending_actions \(v.pending_actions) > \(queueCapacity)")
        check(Int(v.pending_alarms) <= queueCapacity, "pending_alarms \(v.pending_alarms) > \(queueCapacity)")
        check(Int(v.active_modules) <= live.count, "active_modules \(v.active_modules) > registered \(live.count)")
        check(isValidConfig(v.category, v.mode, v.options), "state config \(v.category)/\(v.mode)/\(v.options) invalid")
        check(v.mic_permission <= 2 && v.output <= 11, "state enums \(v.mic_permission)/\(v.output)")
        check((8000...192_000).contains(v.engine_sample_rate) && (1...2).contains(v.engine_channels),
              "state engine format \(v.engine_sample_rate)/\(v.engine_channels)")
        for b in [v.active, v.interrupted, v.call_held, v.foreground, v.voice_processing] { check(b == 0 || b == 1, "state flag \(b)") }
        var due: UInt64 = 0
        checkStatus(rtmix_session_next_due(session, &due), [0, -3], "next_due")
    }

    /// Many calls without draining: the queues must stay bounded.
    func flood() {
        guard let session else { return }
        let n = 1 + Int(r.u16() % 600)
        var c = rtmix_session_config()
        _ = rtmix_session_config_init(&c)
        c.category = 9  // invalid: raises INVALID_CONFIGURATION each time
        for i in 0..<n {
            let t = latestNow
            checkStatus(rtmix_session_observe_config(session, 0, &c, t), [0], "flood observe")
            if i % 2 == 0 { checkStatus(rtmix_session_interruption_began(session, t), [0], "flood began") }
            if i % 2 == 1 { checkStatus(rtmix_session_interruption_ended(session, 1, t), [0], "flood ended") }
            checkStatus(rtmix_session_secondary_audio_hint(session, Int32(i & 1), t), [0], "flood hint")
        }
        state()
    }

    func misc() {
        switch r.u8() % 4 {
        case 0:
            let code = r.u32()
            _ = checkName(rtmix_session_action_name(code), "action_name")
            _ = checkName(rtmix_session_alarm_name(code), "alarm_name")
        case 1:
            // check_config with any values and sizes.
            var c = rtmix_session_config()
            _ = rtmix_session_config_init(&c)
            c.category = r.u32() % 8
            c.mode = r.u32() % 10
            c.options = r.u32()
            let size = fuzzSize(&r, real: sizeofSConfig, minimum: 16)
            let boxed = SizedStruct(c, size: size)
            var problems: UInt32 = 0
            var invalid: UInt32 = 0
            let s = r.bool() ? rtmix_session_check_config(boxed.pointer, &problems, nil)
                : rtmix_session_check_config(boxed.pointer, &problems, &invalid)
            checkStatus(s, size < 16 ? [-1] : [0], "check_config(size \(size))")
        case 2:
            // NULL pointers the header calls errors.
            check(rtmix_session_config_init(nil) == -1 && rtmix_session_settings_init(nil) == -1
                  && rtmix_session_route_init(nil) == -1 && rtmix_session_action_init(nil) == -1
                  && rtmix_session_alarm_init(nil) == -1 && rtmix_session_state_init(nil) == -1, "init(NULL)")
            var c = rtmix_session_config()
            _ = rtmix_session_config_init(&c)
            var p: UInt32 = 0
            check(rtmix_session_check_config(nil, &p, nil) == -1 && rtmix_session_check_config(&c, nil, nil) == -1,
                  "check_config(NULL)")
            var st = rtmix_session_settings()
            _ = rtmix_session_settings_init(&st)
            check(rtmix_session_create(&st, nil) == -1, "create(st, NULL)")
            var out: OpaquePointer? = OpaquePointer(bitPattern: 0xbeef)
            check(rtmix_session_create(nil, &out) == -1 && out == nil, "create(NULL, out)")
            rtmix_session_destroy(nil)
            guard let session else { return }
            var id: UInt32 = 0
            check(rtmix_session_module_register(session, nil, &id) == -1, "register(NULL name)")
            check(rtmix_session_module_register(session, "x", nil) == -1, "register(NULL out)")
            var buf: [CChar] = [0, 0]
            check(rtmix_session_module_name(session, live.first ?? 1, nil, 2, nil) == -1, "module_name(NULL buf)")
            check(rtmix_session_module_name(nil, 1, &buf, 2, nil) == -1, "module_name(NULL session)")
            check(rtmix_session_observe_config(session, 0, nil, latestNow) == -1, "observe(NULL cfg)")
            check(rtmix_session_route_changed(session, nil, latestNow) == -1, "route(NULL)")
            check(rtmix_session_next_due(session, nil) == -1, "next_due(NULL)")
            check(rtmix_session_next_action(session, nil) == -1 && rtmix_session_next_alarm(session, nil) == -1,
                  "next_action/alarm(NULL)")
            check(rtmix_session_get_state(session, nil) == -1, "get_state(NULL)")
        default:
            var due: UInt64 = 0
            guard let session else { check(rtmix_session_next_due(nil, &due) == -1, "next_due(NULL session)"); return }
            let s = rtmix_session_next_due(session, &due)
            checkStatus(s, [0, -3], "next_due")
            if s == 0 {
                // Ticking to the due time must do that work.
                if due > latestNow { latestNow = due }
                checkStatus(rtmix_session_tick(session, due), [0], "tick(due)")
                var due2: UInt64 = 0
                if rtmix_session_next_due(session, &due2) == 0 {
                    check(due2 > due || due == UInt64.max, "tick(\(due)) left work due at \(due2)")
                }
            }
        }
    }
}

// MARK: - Swift API program

func runSwiftSession(_ r: inout FuzzReader) {
    var settings = SessionSettings()
    let mask = r.u16()
    if mask & 1 != 0, let c = SessionCategory(rawValue: r.u32() % 7) { settings.base = SessionConfiguration(category: c) }
    if mask & 2 != 0 { settings.queueCapacity = r.pick([16, 15, 65537, 20]) { $0.u32() } }
    if mask & 4 != 0 { settings.maxModules = r.pick([1, 0, 1025, 3]) { $0.u32() } }
    if mask & 8 != 0 { settings.retryBaseMs = r.u64(); settings.retryMaxMs = r.u64() }
    if mask & 16 != 0 { settings.reactivationDelayMs = r.u64() }
    if mask & 32 != 0 { settings.recordingRestartDelayMs = r.u64() }
    if mask & 64 != 0 { settings.maxActivationAttempts = r.u32() % 102 }
    if mask & 128 != 0 { settings.engineSampleRate = r.u32(); settings.engineChannels = r.u32() % 4 }
    guard let e = try? SessionEngine(settings: settings) else { return }
    var ids: [ModuleID] = []
    var t: UInt64 = 0
    var ops = 160
    while !r.isEmpty && ops > 0 {
        ops -= 1
        let step = r.u8()
        t = step & 0x80 != 0 ? r.u64() : t &+ UInt64(r.u16())
        let id = ids.isEmpty || r.u8() % 5 == 0 ? ModuleID(rawValue: r.u32()) : ids[Int(r.u8()) % ids.count]
        switch step % 14 {
        case 0:
            let bytes = (0..<Int(r.u16() % 300)).map { _ in r.u8() }
            if let m = try? e.register(name: String(decoding: bytes, as: UTF8.self)) { ids.append(m) }
        case 1:
            let mode = SessionMode(rawValue: r.u32() % 9)
            try? e.request(id, SessionRequest(needs: SessionNeeds(rawValue: r.u32() & 0x1FF), preferredMode: mode), now: t)
        case 2: try? e.release(id, now: t)
        case 3: try? e.unregister(id, now: t)
        case 4: try? e.observeRaw(category: r.u32() % 8, mode: r.u32() % 9, options: r.u32(), from: id, now: t)
        case 5: e.interruptionBegan(now: t)
        case 6: e.interruptionEnded(shouldResume: r.bool(), now: t)
        case 7: try? e.activationResult(success: r.bool(), now: t)
        case 8:
            var rate = r.u32()
            if avoidKnownBugs && rate != 0 && !(8000...48000).contains(rate) { rate = 16000 }
            let route = RouteInfo(output: RoutePort(rawValue: r.u32() % 12) ?? .unknown, sampleRate: rate,
                                  isCarKit: r.bool(), userSelected: r.bool())
            e.routeChanged(RouteChange(reasonRaw: r.u32() % 10, route: route,
                                       previousOutput: RoutePort(rawValue: r.u32() % 12) ?? .unknown), now: t)
        case 9: e.setMicPermission(MicPermission(rawValue: r.u32() % 3) ?? .granted, now: t)
        case 10: if r.bool() { e.enteredBackground(now: t) } else { e.enteredForeground(now: t) }
        case 11: e.tick(now: t); e.userRequestedPlayback(now: t); e.setVoiceProcessing(r.bool(), now: t); e.setOtherAudioPlaying(r.bool(), now: t)
        case 12:
            for _ in 0..<Int(r.u8()) { _ = e.nextAction(); _ = e.nextAlarm() }
        default:
            _ = e.drainActions()
            _ = e.drainAlarms()
        }
        check(e.pendingActionCount <= Int(settings.queueCapacity) && e.pendingAlarmCount <= Int(settings.queueCapacity),
              "Swift API queues \(e.pendingActionCount)/\(e.pendingAlarmCount) > \(settings.queueCapacity)")
        check(ValidityTable.check(e.configuration).isValid, "Swift API configuration invalid: \(e.configuration)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessionC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var r = FuzzReader(data, size)
    if r.u8() % 4 == 0 {
        runSwiftSession(&r)
    } else {
        let p = SessionProgram(r)
        p.run()
    }
    return 0
}
