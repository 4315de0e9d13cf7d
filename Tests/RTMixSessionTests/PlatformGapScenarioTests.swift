import XCTest
@testable import RTMixSession

/// Issue 8: scenarios replaying the documented AVAudioSession behaviour
/// through the Swift API, one per gap (items 1–7). Each failed before its fix.
final class PlatformGapScenarioTests: XCTestCase {

    // 1. A classroom app records in the foreground and keeps only a player in
    // the background: SoloAmbient is silenced by screen lock and the ringer
    // switch, so the background needs Playback.
    func testItem1BackgroundPlaybackUsesPlaybackCategory() throws {
        let e = makeEngine()
        let rec = try e.register(name: "read-along-recorder")
        let player = try e.register(name: "lesson-player")
        try e.request(rec, SessionRequest(needs: [.recording]), now: 0)
        try e.activationResult(success: true, now: 5)
        try e.request(player, SessionRequest(needs: [.playback]), now: 10)
        _ = e.takeActions()
        XCTAssertEqual(e.configuration.category, .playAndRecord)

        e.enteredBackground(now: 1000)
        expect(e, [.stopRecording(rec), .setConfiguration(SessionConfiguration(category: .playback))])

        // Back in the foreground: the recording configuration again.
        e.enteredForeground(now: 2000)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playAndRecord, options: [speaker]))])
        e.tick(now: 2500)
        expect(e, [.startRecording(rec)])

        // An app whose base is Ambient also gets Playback in the background,
        // keeping Ambient's mixing (mixWithOthers).
        let a = makeEngine(base: SessionConfiguration(category: .ambient))
        let p = try a.register(name: "sfx-player")
        try a.request(p, SessionRequest(needs: [.playback]), now: 0)
        expect(a, [.activate(attempt: 1)])
        a.enteredBackground(now: 100)
        expect(a, [.setConfiguration(SessionConfiguration(category: .playback, options: [mix]))])
        a.enteredForeground(now: 200)
        expect(a, [.setConfiguration(SessionConfiguration(category: .ambient))])
    }

    // 2. A play-only module on SoloAmbient (the platform default) moves to a
    // category that plays and restores afterwards.
    func testItem2PlayOnlyOnSoloAmbientMovesToPlayback() throws {
        let e = makeEngine()
        let player = try e.register(name: "video-player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        expect(e, [.setConfiguration(SessionConfiguration(category: .playback)), .activate(attempt: 1)])
        try e.activationResult(success: true, now: 5)
        try e.release(player, now: 100)
        expect(e, [.setConfiguration(.platformDefault), .deactivate(notifyOthers: true)])

        // Ambient, Playback and PlayAndRecord are left alone.
        for cat in [SessionCategory.ambient, .playback, .playAndRecord] {
            let b = makeEngine(base: SessionConfiguration(category: cat))
            let m = try b.register(name: "player")
            try b.request(m, SessionRequest(needs: [.playback]), now: 0)
            let changed = b.takeActions().contains { if case .setConfiguration(let c) = $0 { return c.category != cat } else { return false } }
            XCTAssertFalse(changed, "\(cat)")
        }
    }

    // 3. Ambient + DuckOthers is a valid configuration (AVAudioSessionTypes.h:
    // "DuckOthers is only valid with Ambient, PlayAndRecord, Playback, and
    // MultiRoute").
    func testItem3AmbientDuckOthersIsValid() throws {
        let ambientDuck = SessionConfiguration(category: .ambient, options: [.duckOthers])
        XCTAssertTrue(ValidityTable.check(ambientDuck).isValid)

        let e = makeEngine(base: SessionConfiguration(category: .ambient))
        let nav = try e.register(name: "navigation-prompts")
        try e.request(nav, SessionRequest(needs: [.playback]), now: 0)
        _ = e.takeActions()
        // The platform reports Ambient + DuckOthers: adopted, no alarm.
        try e.observe(ambientDuck, from: nav, now: 100)
        expect(e, [])
        XCTAssertEqual(e.configuration, ambientDuck)

        // A ducking module on an Ambient base stays Ambient.
        let b = makeEngine(base: SessionConfiguration(category: .ambient))
        let m = try b.register(name: "coach")
        try b.request(m, SessionRequest(needs: [.playback, .duckOthers]), now: 0)
        expect(b, [.setConfiguration(ambientDuck), .activate(attempt: 1)])
    }

    // 4. A2DP output while recording (built-in microphone): a wake-word
    // recorder with music-quality playback asks for it through its needs;
    // a module is never reported for overriding itself.
    func testItem4A2DPWhileRecording() throws {
        let a2dpNeed = SessionNeeds.bluetoothA2DP
        let e = makeEngine()
        let ww = try e.register(name: "wake-word")
        try e.request(ww, SessionRequest(needs: [.recording, .playback, a2dpNeed]), now: 0)
        let musicRec = SessionConfiguration(category: .playAndRecord, options: [speaker, a2dp])
        expect(e, [.setConfiguration(musicRec), .activate(attempt: 1)])
        try e.activationResult(success: true, now: 5)
        // The module's own report of that configuration changes nothing.
        try e.observe(musicRec, from: ww, now: 10)
        expect(e, [])

        // A call that records needs HFP: it wins over the A2DP preference.
        let rtc = try e.register(name: "rtc")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 20)
        expect(e, [.setConfiguration(callConfig)])
        try e.release(rtc, now: 30)
        expect(e, [.setConfiguration(musicRec)])

        // A module setting a configuration against its own needs is never
        // reported for overriding itself (the correction carries no alarm).
        let f = makeEngine()
        let rec = try f.register(name: "recorder")
        try f.request(rec, SessionRequest(needs: [.recording]), now: 0)
        _ = f.takeActions()
        try f.observe(SessionConfiguration(category: .playAndRecord, options: [a2dp]), from: rec, now: 10)
        expect(f, [.setConfiguration(SessionConfiguration(category: .playAndRecord))], alarms: [])
    }

    // 5. Bluetooth LE left behind after another app's call: propose the
    // speaker, as for HFP.
    func testItem5BluetoothLEAfterInterruptionProposesSpeaker() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc")
        try e.request(rtc, SessionRequest(needs: [.call, .recording]), now: 0)
        try e.activationResult(success: true, now: 5)
        e.routeChanged(RouteChange(reason: .newDeviceAvailable, route: RouteInfo(output: .builtInSpeaker)), now: 6)
        _ = e.takeActions()
        e.interruptionBegan(now: 1000)
        e.routeChanged(RouteChange(reason: .newDeviceAvailable, route: RouteInfo(output: .bluetoothLE)), now: 1500)
        e.interruptionEnded(shouldResume: true, now: 2000)
        e.tick(now: 2500)
        _ = e.takeActions()
        try e.activationResult(success: true, now: 2510)
        expect(e, [.resumeOutput, .setCallHeld(false), .routeToSpeaker])
    }

    // 6. A recorder that is not the call is stopped when an interruption
    // begins and restarted after reactivation (with the foreground delay).
    func testItem6RecorderStoppedAndRestartedAroundInterruption() throws {
        let e = makeEngine()
        let ww = try e.register(name: "wake-word")
        let player = try e.register(name: "player")
        try e.request(ww, SessionRequest(needs: [.recording]), now: 0)
        try e.activationResult(success: true, now: 5)
        try e.request(player, SessionRequest(needs: [.playback]), now: 10)
        _ = e.takeActions()

        e.interruptionBegan(now: 1000)
        expect(e, actions: [at(1000, .pauseOutput), at(1000, .stopRecording(ww))])
        e.interruptionEnded(shouldResume: true, now: 2000)
        e.tick(now: 2500)
        expect(e, actions: [at(2500, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 2510)
        expect(e, actions: [at(2510, .resumeOutput), at(2510, .resumeMedia)])
        XCTAssertEqual(e.nextDueMs, 3010)
        e.tick(now: 3010)
        expect(e, actions: [at(3010, .startRecording(ww))])
    }

    // 7. Voice processing (VoiceChat/VideoChat on PlayAndRecord, or the
    // host's explicit switch) gives mono output: the mixer goes mono while it
    // is on, and back after; the state and an action say so.
    func testItem7VoiceProcessingReconfiguresMixerToMono() throws {
        let e = makeEngine()
        let rtc = try e.register(name: "rtc")
        try e.request(rtc, SessionRequest(needs: [.call, .recording], preferredMode: .voiceChat), now: 0)
        let vc = SessionConfiguration(category: .playAndRecord, mode: .voiceChat, options: [mix, speaker, hfp])
        expect(e, [.setConfiguration(vc), .voiceProcessing(enabled: true),
                   .reconfigureEngine(sampleRate: 48000, channels: 1), .activate(attempt: 1)])
        XCTAssertEqual(e.state.engineChannels, 1)
        XCTAssertTrue(e.state.voiceProcessing)
        try e.activationResult(success: true, now: 5)

        // HFP while voice processing is on: HFP rate, still mono; leaving HFP
        // keeps mono while voice processing is on.
        e.routeChanged(RouteChange(reason: .newDeviceAvailable,
                                   route: RouteInfo(output: .bluetoothHFP, sampleRate: 16000)), now: 10)
        expect(e, [.reconfigureEngine(sampleRate: 16000, channels: 1)])
        e.routeChanged(RouteChange(reason: .oldDeviceUnavailable, route: RouteInfo(output: .builtInSpeaker)), now: 20)
        expect(e, [.reconfigureEngine(sampleRate: 48000, channels: 1)])

        try e.release(rtc, now: 100)
        expect(e, [.setConfiguration(.platformDefault), .voiceProcessing(enabled: false),
                   .reconfigureEngine(sampleRate: 48000, channels: 2), .deactivate(notifyOthers: true)])
        XCTAssertEqual(e.state.engineChannels, 2)
        XCTAssertFalse(e.state.voiceProcessing)

        // The explicit switch (e.g. a voice-processing input node) does the same.
        e.setVoiceProcessing(true, now: 200)
        expect(e, [.voiceProcessing(enabled: true), .reconfigureEngine(sampleRate: 48000, channels: 1)])
        e.setVoiceProcessing(true, now: 210)
        expect(e, [])
        e.setVoiceProcessing(false, now: 300)
        expect(e, [.voiceProcessing(enabled: false), .reconfigureEngine(sampleRate: 48000, channels: 2)])
    }
}

/// Issue 8, "worth deciding": reactivation on foreground after a missing
/// "ended" waits `reactivationDelayMs` (documented practice), and is retried
/// later while another app still holds the audio (isOtherAudioPlaying).
final class ForegroundReactivationDecisionTests: XCTestCase {
    func testForegroundReactivationIsDelayed() throws {
        let e = makeEngine()
        let player = try e.register(name: "player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        try e.activationResult(success: true, now: 5)
        _ = e.takeActions()
        e.interruptionBegan(now: 1000)
        _ = e.takeActions()
        e.enteredBackground(now: 1100)
        _ = e.takeActions()
        e.enteredForeground(now: 10_000)
        expect(e, actions: [], alarms: [SessionAlarm(.interruptionEndMissing, timeMs: 10_000)])
        XCTAssertEqual(e.nextDueMs, 10_500)
        e.tick(now: 10_500)
        expect(e, actions: [at(10_500, .activate(attempt: 1))])
    }

    /// Found by fuzzing: the "other audio still plays" poll rescheduled
    /// itself once per delay up to the new time (a jump of the host clock
    /// looped for ever), and never ended at the end of the clock's range.
    func testOtherAudioPollSurvivesClockJumps() throws {
        let e = makeEngine()
        let player = try e.register(name: "player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        try e.activationResult(success: true, now: 5)
        e.interruptionBegan(now: 1000)
        e.setOtherAudioPlaying(true, now: 1500)
        e.enteredBackground(now: 1600)
        e.enteredForeground(now: 10_000)
        _ = e.takeActions()
        _ = e.takeAlarms()
        e.tick(now: 1 << 62)                 // one poll, not 2^62 / 500 (the old code hung here)
        XCTAssertEqual(e.nextDueMs, (1 << 62) + 500)
        e.tick(now: UInt64.max)              // nothing later than that: stop
        XCTAssertNil(e.nextDueMs)
        expect(e, actions: [])
    }

    func testReactivationWaitsWhileOtherAudioPlays() throws {
        let e = makeEngine()
        let player = try e.register(name: "player")
        try e.request(player, SessionRequest(needs: [.playback]), now: 0)
        try e.activationResult(success: true, now: 5)
        _ = e.takeActions()
        e.interruptionBegan(now: 1000)
        e.setOtherAudioPlaying(true, now: 1500)
        e.enteredBackground(now: 1600)
        e.enteredForeground(now: 10_000)
        _ = e.takeActions()
        _ = e.takeAlarms()
        e.tick(now: 10_500)                 // music app still plays: retry later
        expect(e, actions: [])
        XCTAssertEqual(e.nextDueMs, 11_000)
        e.setOtherAudioPlaying(false, now: 10_800)
        e.tick(now: 11_000)
        expect(e, actions: [at(11_000, .activate(attempt: 1))])
        try e.activationResult(success: true, now: 11_010)
        expect(e, actions: [at(11_010, .resumeOutput), at(11_010, .pauseMedia)])

        // A call mixes with others: it reactivates whatever plays.
        let c = makeEngine()
        let rtc = try c.register(name: "rtc")
        try c.request(rtc, SessionRequest(needs: [.call, .recording]), now: 0)
        try c.activationResult(success: true, now: 5)
        c.interruptionBegan(now: 1000)
        c.setOtherAudioPlaying(true, now: 1500)
        c.interruptionEnded(shouldResume: false, now: 2000)
        _ = c.takeActions()
        c.tick(now: 2500)
        expect(c, actions: [at(2500, .activate(attempt: 1))])
    }
}
