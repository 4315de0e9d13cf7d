import XCTest
import CRTMixHeader
@testable import RTMixSession

/// The rtmix_session_* exports, called from Swift: conversions, sizes and
/// error codes. (Tests/CABI/session_scenario.c drives them from C.)
final class CABITests: XCTestCase {

    private func makeSession(_ tweak: (inout rtmix_session_settings) -> Void = { _ in }) -> OpaquePointer {
        var s = rtmix_session_settings()
        XCTAssertEqual(rtmix_session_settings_init(&s), RTMIX_OK)
        s.mic_permission = UInt32(RTMIX_SESSION_MIC_GRANTED.rawValue)
        tweak(&s)
        var out: OpaquePointer? = nil
        XCTAssertEqual(rtmix_session_create(&s, &out), RTMIX_OK)
        return out!
    }

    private func nextAction(_ p: OpaquePointer) -> rtmix_session_action? {
        var a = rtmix_session_action()
        XCTAssertEqual(rtmix_session_action_init(&a), RTMIX_OK)
        let rc = rtmix_session_next_action(p, &a)
        if rc == RTMIX_ERR_NOT_FOUND { return nil }
        XCTAssertEqual(rc, RTMIX_OK)
        return a
    }

    func testCreateRejectsBadSettings() {
        var s = rtmix_session_settings()
        _ = rtmix_session_settings_init(&s)
        var out: OpaquePointer? = OpaquePointer(bitPattern: 0x1)
        s.base_category = 3
        s.base_options = RTMIX_SESSION_OPTION_MIX_WITH_OTHERS  // not valid with record
        XCTAssertEqual(rtmix_session_create(&s, &out), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertNil(out)
        _ = rtmix_session_settings_init(&s)
        s.size = 8
        XCTAssertEqual(rtmix_session_create(&s, &out), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(rtmix_session_create(nil, &out), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(rtmix_session_create(&s, nil), RTMIX_ERR_INVALID_ARGUMENT)
        rtmix_session_destroy(nil)
    }

    func testRequestActionRoundTrip() {
        let p = makeSession()
        defer { rtmix_session_destroy(p) }
        var id: UInt32 = 0
        XCTAssertEqual(rtmix_session_module_register(p, "rtc-sdk", &id), RTMIX_OK)
        XCTAssertEqual(id, 1)
        XCTAssertEqual(rtmix_session_request(p, id, RTMIX_SESSION_NEED_CALL | RTMIX_SESSION_NEED_RECORDING,
                                             RTMIX_SESSION_MODE_NONE, 100), RTMIX_OK)
        let a = nextAction(p)!
        XCTAssertEqual(a.kind, RTMIX_SESSION_ACTION_SET_CONFIGURATION)
        XCTAssertEqual(a.category, UInt32(RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD.rawValue))
        XCTAssertEqual(a.options, 0x0D)
        XCTAssertEqual(a.time_ms, 100)
        let b = nextAction(p)!
        XCTAssertEqual(b.kind, RTMIX_SESSION_ACTION_ACTIVATE)
        XCTAssertEqual(b.attempt, 1)
        XCTAssertNil(nextAction(p))
        XCTAssertEqual(String(cString: rtmix_session_action_name(b.kind)), "ACTIVATE")
        XCTAssertEqual(String(cString: rtmix_session_alarm_name(99)), "UNKNOWN")

        var st = rtmix_session_state()
        _ = rtmix_session_state_init(&st)
        XCTAssertEqual(rtmix_session_get_state(p, &st), RTMIX_OK)
        XCTAssertEqual(st.active_modules, 1)
        XCTAssertEqual(st.options, 0x0D)

        var name = [CChar](repeating: 0, count: 4)
        var len: UInt32 = 0
        XCTAssertEqual(rtmix_session_module_name(p, id, &name, 4, &len), RTMIX_OK)
        XCTAssertEqual(len, 7)
        XCTAssertEqual(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), "rtc")
    }

    func testErrorCodes() {
        let p = makeSession()
        defer { rtmix_session_destroy(p) }
        var id: UInt32 = 0
        XCTAssertEqual(rtmix_session_module_register(p, "", &id), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(rtmix_session_module_register(p, nil, &id), RTMIX_ERR_INVALID_ARGUMENT)
        let long = String(repeating: "x", count: 300)
        XCTAssertEqual(rtmix_session_module_register(p, long, &id), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(rtmix_session_request(p, 7, 1, -1, 0), RTMIX_ERR_NOT_FOUND)
        XCTAssertEqual(rtmix_session_module_register(p, "player", &id), RTMIX_OK)
        XCTAssertEqual(rtmix_session_request(p, id, 0x200, -1, 0), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(rtmix_session_request(p, id, 1, 8, 0), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(rtmix_session_request(nil, id, 1, -1, 0), RTMIX_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(rtmix_session_activation_result(p, 1, 0), RTMIX_ERR_BAD_STATE)
        var due: UInt64 = 123
        XCTAssertEqual(rtmix_session_next_due(p, &due), RTMIX_ERR_NOT_FOUND)
        XCTAssertEqual(due, 123)
        XCTAssertEqual(rtmix_session_set_mic_permission(p, 7, 0), RTMIX_ERR_INVALID_ARGUMENT)
        var route = rtmix_session_route()
        _ = rtmix_session_route_init(&route)
        route.output = 99
        XCTAssertEqual(rtmix_session_route_changed(p, &route, 0), RTMIX_ERR_INVALID_ARGUMENT)
        var small = rtmix_session_action()
        small.size = 4
        XCTAssertEqual(rtmix_session_next_action(p, &small), RTMIX_ERR_INVALID_ARGUMENT)
    }

    /// A newer caller's larger output struct gets back the size we filled
    /// (issue 11, item 10); its extra tail is untouched.
    func testOutputStructSizeIsTheSizeFilled() {
        let p = makeSession()
        defer { rtmix_session_destroy(p) }
        let ours = MemoryLayout<rtmix_session_state>.size
        let raw = UnsafeMutableRawPointer.allocate(byteCount: ours + 16, alignment: 8)
        defer { raw.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 0xCD, count: ours + 16)
        raw.storeBytes(of: UInt32(ours + 16), as: UInt32.self)
        XCTAssertEqual(rtmix_session_get_state(p, raw.assumingMemoryBound(to: rtmix_session_state.self)), RTMIX_OK)
        XCTAssertEqual(raw.load(as: UInt32.self), UInt32(ours))
        XCTAssertEqual(raw.load(fromByteOffset: ours, as: UInt8.self), 0xCD)
    }

    func testObserveUnknownValuesRaisesInvalidConfiguration() {
        let p = makeSession()
        defer { rtmix_session_destroy(p) }
        var cfg = rtmix_session_config()
        _ = rtmix_session_config_init(&cfg)
        cfg.category = 42
        XCTAssertEqual(rtmix_session_observe_config(p, 0, &cfg, 10), RTMIX_OK)
        var alarm = rtmix_session_alarm()
        _ = rtmix_session_alarm_init(&alarm)
        XCTAssertEqual(rtmix_session_next_alarm(p, &alarm), RTMIX_OK)
        XCTAssertEqual(alarm.code, RTMIX_SESSION_ALARM_INVALID_CONFIGURATION)
        XCTAssertEqual(alarm.detail, RTMIX_SESSION_PROBLEM_UNKNOWN_CATEGORY)
        XCTAssertEqual(alarm.severity, RTMIX_SESSION_SEVERITY_WARNING)
        XCTAssertEqual(alarm.time_ms, 10)
        XCTAssertEqual(rtmix_session_next_alarm(p, &alarm), RTMIX_ERR_NOT_FOUND)

        var problems: UInt32 = 0, invalid: UInt32 = 0
        _ = rtmix_session_config_init(&cfg)
        cfg.category = 2
        cfg.options = 0x28
        XCTAssertEqual(rtmix_session_check_config(&cfg, &problems, &invalid), RTMIX_OK)
        XCTAssertEqual(problems, RTMIX_SESSION_PROBLEM_OPTION_NOT_ALLOWED)
        XCTAssertEqual(invalid, 0x28)
    }

    func testQueueOverflowIsReported() {
        let p = makeSession { $0.queue_capacity = 16 }
        defer { rtmix_session_destroy(p) }
        for t in 0..<20 { _ = rtmix_session_secondary_audio_hint(p, 1, UInt64(t)) }
        var count = 0
        while nextAction(p) != nil { count += 1 }
        XCTAssertEqual(count, 16)
        var alarm = rtmix_session_alarm()
        _ = rtmix_session_alarm_init(&alarm)
        XCTAssertEqual(rtmix_session_next_alarm(p, &alarm), RTMIX_OK)
        XCTAssertEqual(alarm.code, RTMIX_SESSION_ALARM_QUEUE_OVERFLOW)
        XCTAssertEqual(alarm.detail, 1)
    }
}
