import XCTest
@testable import RTMixSession

/// Route, Bluetooth, car-kit and headphone scenarios.
final class RouteScenarioTests: XCTestCase {

    // AirPods switch A2DP -> HFP when the microphone turns on, and back.
    func testAirPodsA2DPToHFPAndBack() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc-sdk")
        // In the call, microphone muted: playAndRecord keeps A2DP quality.
        try e.request(rtc, SessionRequest(needs: [.call]), now: 0)
        expect(e, actions: [at(0, .setConfiguration(listenConfig)), at(0, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 5)
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothA2DP, sampleRate: 48000)),
                       now: 1000)
        expect(e, actions: [])                           // already 48 kHz stereo

        // Microphone on: HFP (allowBluetooth), A2DP removed.
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 5000)
        expect(e, actions: [at(5000, .setConfiguration(callConfig))])
        e.routeChanged(RouteChange(reason: .categoryChange,
                                   route: RouteInfo(output: .bluetoothHFP, sampleRate: 16000)),
                       observed: callConfig, now: 5100)
        expect(e, actions: [at(5100, .reconfigureEngine(sampleRate: 16000, channels: 1))])
        XCTAssertEqual(e.state.engineSampleRate, 16000)
        XCTAssertEqual(e.state.engineChannels, 1)

        // Microphone off: back to A2DP and to the normal mixer format.
        try e.request(rtc, SessionRequest(needs: [.call]), now: 9000)
        expect(e, actions: [at(9000, .setConfiguration(listenConfig))])
        e.routeChanged(RouteChange(reason: .categoryChange,
                                   route: RouteInfo(output: .bluetoothA2DP, sampleRate: 48000)),
                       observed: listenConfig, now: 9100)
        expect(e, actions: [at(9100, .reconfigureEngine(sampleRate: 48000, channels: 2))])
    }

    func testHFPWithoutReportedRateUsesDefault() throws {
        let e = makeEngine { $0.defaultHFPSampleRate = 24000 }
        e.routeChanged(RouteChange(reason: .newDeviceAvailable, route: RouteInfo(output: .bluetoothHFP)),
                       now: 0)
        e.routeChanged(RouteChange(reason: .routeConfigurationChange,
                                   route: RouteInfo(output: .bluetoothHFP)), now: 10)
        expect(e, actions: [at(0, .reconfigureEngine(sampleRate: 24000, channels: 1))])
    }

    /// A reported HFP rate the mixer could not take (found by fuzzing:
    /// Fuzz/Crashes/FuzzSessionC/hfp-route-rate-out-of-range) is treated as
    /// unknown.
    func testHFPWithImplausibleReportedRateUsesDefault() throws {
        let e = makeEngine { $0.defaultHFPSampleRate = 16000 }
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothHFP, sampleRate: 1)), now: 0)
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothA2DP, sampleRate: 48000)), now: 5)
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothHFP, sampleRate: 134_163_811)), now: 10)
        expect(e, actions: [at(0, .reconfigureEngine(sampleRate: 16000, channels: 1)),
                            at(5, .reconfigureEngine(sampleRate: 48000, channels: 2)),
                            at(10, .reconfigureEngine(sampleRate: 16000, channels: 1))])
    }

    // Headphones unplugged during media.
    func testHeadphonesUnpluggedPausesMedia() throws {
        let e = makeEngine()
        let player = try e.register(name: "player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        try e.activationResult(success: true, now: 1)
        _ = e.takeActions()
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .headphones, sampleRate: 48000)), now: 100)
        expect(e, actions: [])
        // Previous route taken from the engine's record of the last route.
        e.routeChanged(RouteChange(reason: .oldDeviceUnavailable,
                                   route: RouteInfo(output: .builtInSpeaker, sampleRate: 48000)), now: 200)
        expect(e, actions: [at(200, .pauseMedia)])
        // Previous route given by the host; from the speaker nothing is lost.
        e.routeChanged(RouteChange(reason: .oldDeviceUnavailable,
                                   route: RouteInfo(output: .builtInReceiver, sampleRate: 48000),
                                   previousOutput: .builtInSpeaker), now: 300)
        expect(e, actions: [])
        e.routeChanged(RouteChange(reason: .oldDeviceUnavailable,
                                   route: RouteInfo(output: .builtInSpeaker, sampleRate: 48000),
                                   previousOutput: .bluetoothA2DP), now: 400)
        expect(e, actions: [at(400, .pauseMedia)])
    }

    func testUnplugDuringCallOnlyDoesNotPause() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 0)
        _ = e.takeActions()
        e.routeChanged(RouteChange(reason: .oldDeviceUnavailable, route: RouteInfo(output: .builtInSpeaker),
                                   previousOutput: .headphones), now: 100)
        expect(e, actions: [])
    }

    func testUnplugPauseCanBeDisabled() throws {
        let e = makeEngine { $0.pauseMediaOnDeviceLoss = false }
        let player = try e.register(name: "player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        _ = e.takeActions()
        e.routeChanged(RouteChange(reason: .oldDeviceUnavailable, route: RouteInfo(output: .builtInSpeaker),
                                   previousOutput: .headphones), now: 100)
        expect(e, actions: [])
    }

    // A car kit is connected while the microphone turns on.
    func testCarKitConnectedWhileMicrophoneTurnsOn() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc-sdk")
        try e.request(rtc, SessionRequest(needs: [.call]), now: 0)
        try e.activationResult(success: true, now: 1)
        _ = e.takeActions()
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothA2DP, sampleRate: 48000,
                                                    isCarKit: true)), now: 1000)
        expect(e, actions: [])                          // not recording: no advisory

        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 2000)
        expect(e, actions: [at(2000, .setConfiguration(callConfig))],
               alarms: [SessionAlarm(.carKitRecording, module: rtc, timeMs: 2000)])
        XCTAssertEqual(SessionAlarmCode.carKitRecording.severity, .advisory)
        // The car kit switches to HFP: format change, no repeated advisory.
        e.routeChanged(RouteChange(reason: .categoryChange,
                                   route: RouteInfo(output: .bluetoothHFP, sampleRate: 16000,
                                                    isCarKit: true)),
                       observed: callConfig, now: 2100)
        expect(e, actions: [at(2100, .reconfigureEngine(sampleRate: 16000, channels: 1))])

        // Microphone off, then on again: a new advisory.
        try e.request(rtc, SessionRequest(needs: [.call]), now: 3000)
        _ = e.takeActions()
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 4000)
        expect(e, [.setConfiguration(callConfig)],
               alarms: [SessionAlarm(.carKitRecording, module: rtc, timeMs: 4000)])
    }

    func testCarPlayConnectingWhileRecordingRaisesAdvisory() throws {
        let e = makeEngine()
        let rec = try e.register(name: "recorder")
        try e.request(rec, SessionRequest(needs: [.recording]), now: 0)
        _ = e.takeActions()
        e.routeChanged(RouteChange(reason: .newDeviceAvailable, route: RouteInfo(output: .carAudio)),
                       now: 500)
        expect(e, actions: [], alarms: [SessionAlarm(.carKitRecording, module: rec, timeMs: 500)])
    }
}
