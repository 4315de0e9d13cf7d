/*
 * session_scenario.c — drives one audio-session scenario end to end through
 * the C ABI (rtmix_session_*) and asserts the exact actions and alarms.
 *
 * Scenario (a classroom RTC call): the call starts before the microphone
 * permission is known; permission is granted; AirPods switch to HFP; a media
 * player joins; the WebView courseware sets playback without mixWithOthers;
 * a VoIP app interrupts, the first reactivation fails, the second works;
 * the microphone is muted (back to A2DP); everybody leaves.
 * Then one scenario per item of issue 8 (platform behaviour gaps), the C
 * twins of Tests/RTMixSessionTests/PlatformGapScenarioTests.swift.
 *
 * Build and run (see docs/session-policy.md):
 *   swift build --product rtmix
 *   clang -std=c99 -Wall -Wextra -Werror -I include Tests/CABI/session_scenario.c \
 *     -L .build/debug -lrtmix -Wl,-rpath,$PWD/.build/debug -o /tmp/session_scenario
 *   /tmp/session_scenario
 */
#include "rtmix.h"
#include "rtmix_session.h"

#include <stdio.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_OK(expr) CHECK((expr) == RTMIX_OK)

/* Expected action: kind plus the fields that matter for that kind. */
typedef struct expected_action {
    uint32_t kind;
    uint64_t time_ms;
    uint32_t a; /* category | attempt | flag | sample_rate | module */
    uint32_t b; /* options  | channels */
} expected_action;

static void expect_actions(rtmix_session *s, const expected_action *want, int n,
                           int line) {
    int i;
    for (i = 0; i < n; i++) {
        rtmix_session_action got;
        int ok;
        rtmix_session_action_init(&got);
        if (rtmix_session_next_action(s, &got) != RTMIX_OK) {
            failed++;
            fprintf(stderr, "line %d: action %d missing (want %s)\n", line, i,
                    rtmix_session_action_name(want[i].kind));
            return;
        }
        ok = got.kind == want[i].kind && got.time_ms == want[i].time_ms;
        switch (got.kind) {
        case RTMIX_SESSION_ACTION_SET_CONFIGURATION:
            ok = ok && got.category == want[i].a && got.options == want[i].b &&
                 got.mode == RTMIX_SESSION_MODE_DEFAULT;
            break;
        case RTMIX_SESSION_ACTION_ACTIVATE:
            ok = ok && got.attempt == want[i].a;
            break;
        case RTMIX_SESSION_ACTION_DEACTIVATE:
        case RTMIX_SESSION_ACTION_SET_CALL_HELD:
        case RTMIX_SESSION_ACTION_SECONDARY_AUDIO_HINT:
        case RTMIX_SESSION_ACTION_VOICE_PROCESSING:
            ok = ok && (uint32_t)got.flag == want[i].a;
            break;
        case RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE:
            ok = ok && got.sample_rate == want[i].a && got.channels == want[i].b;
            break;
        case RTMIX_SESSION_ACTION_START_RECORDING:
        case RTMIX_SESSION_ACTION_STOP_RECORDING:
            ok = ok && got.module == want[i].a;
            break;
        default:
            break;
        }
        if (ok) {
            passed++;
        } else {
            failed++;
            fprintf(stderr,
                    "line %d: action %d: got %s t=%llu cat=%u opt=0x%x att=%u "
                    "flag=%d rate=%u ch=%u mod=%u; want %s t=%llu a=%u b=0x%x\n",
                    line, i, rtmix_session_action_name(got.kind),
                    (unsigned long long)got.time_ms, got.category, got.options,
                    got.attempt, got.flag, got.sample_rate, got.channels, got.module,
                    rtmix_session_action_name(want[i].kind),
                    (unsigned long long)want[i].time_ms, want[i].a, want[i].b);
        }
    }
    {
        rtmix_session_action extra;
        rtmix_session_action_init(&extra);
        if (rtmix_session_next_action(s, &extra) == RTMIX_ERR_NOT_FOUND) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "line %d: unexpected extra action %s\n", line,
                    rtmix_session_action_name(extra.kind));
        }
    }
}

#define EXPECT_ACTIONS(s, ...)                                                 \
    do {                                                                       \
        static const expected_action want_[] = {__VA_ARGS__};                  \
        expect_actions((s), want_, (int)(sizeof want_ / sizeof want_[0]),      \
                       __LINE__);                                              \
    } while (0)

static void expect_no_actions(rtmix_session *s, int line) {
    rtmix_session_action a;
    rtmix_session_action_init(&a);
    if (rtmix_session_next_action(s, &a) == RTMIX_ERR_NOT_FOUND) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "line %d: unexpected action %s\n", line,
                rtmix_session_action_name(a.kind));
    }
}

static void expect_no_alarms(rtmix_session *s, int line) {
    rtmix_session_alarm a;
    rtmix_session_alarm_init(&a);
    if (rtmix_session_next_alarm(s, &a) == RTMIX_ERR_NOT_FOUND) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "line %d: unexpected alarm %s\n", line,
                rtmix_session_alarm_name(a.code));
    }
}

static void report_route(rtmix_session *s, uint32_t reason, uint32_t output,
                         uint32_t rate, uint32_t options, uint64_t now) {
    rtmix_session_route r;
    rtmix_session_route_init(&r);
    r.reason = reason;
    r.output = output;
    r.sample_rate = rate;
    r.flags = RTMIX_SESSION_ROUTE_HAS_CONFIG;
    r.category = RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD;
    r.mode = RTMIX_SESSION_MODE_DEFAULT;
    r.options = options;
    CHECK_OK(rtmix_session_route_changed(s, &r, now));
}

/* A session with granted microphone permission and the given base. */
static rtmix_session *granted_session(uint32_t base_category) {
    rtmix_session_settings st;
    rtmix_session *s = NULL;
    rtmix_session_settings_init(&st);
    st.mic_permission = RTMIX_SESSION_MIC_GRANTED;
    st.base_category = base_category;
    CHECK_OK(rtmix_session_create(&st, &s));
    return s;
}

static rtmix_session_module_id module(rtmix_session *s, const char *name) {
    rtmix_session_module_id id = 0;
    CHECK_OK(rtmix_session_module_register(s, name, &id));
    return id;
}

static void drain_actions(rtmix_session *s) {
    rtmix_session_action a;
    rtmix_session_action_init(&a);
    while (rtmix_session_next_action(s, &a) == RTMIX_OK) {
    }
}

static void observe(rtmix_session *s, rtmix_session_module_id id, uint32_t category,
                    uint32_t mode, uint32_t options, uint64_t now) {
    rtmix_session_config c;
    rtmix_session_config_init(&c);
    c.category = category;
    c.mode = mode;
    c.options = options;
    CHECK_OK(rtmix_session_observe_config(s, id, &c, now));
}

static void route(rtmix_session *s, uint32_t reason, uint32_t output, uint32_t rate,
                  uint64_t now) {
    rtmix_session_route r;
    rtmix_session_route_init(&r);
    r.reason = reason;
    r.output = output;
    r.sample_rate = rate;
    CHECK_OK(rtmix_session_route_changed(s, &r, now));
}

/* Issue 8, item 1: background playback uses PLAYBACK, not SOLO_AMBIENT. */
static void item1_background_playback(void) {
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    rtmix_session_module_id rec = module(s, "read-along-recorder");
    rtmix_session_module_id player = module(s, "lesson-player");
    CHECK(rec == 1); /* the expected recording actions name module 1 */
    CHECK_OK(rtmix_session_request(s, rec, RTMIX_SESSION_NEED_RECORDING, RTMIX_SESSION_MODE_NONE, 0));
    CHECK_OK(rtmix_session_activation_result(s, 1, 5));
    CHECK_OK(rtmix_session_request(s, player, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 10));
    drain_actions(s);
    CHECK_OK(rtmix_session_app_background(s, 1000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_STOP_RECORDING, 1000, 1, 0},
                   {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 1000, RTMIX_SESSION_CATEGORY_PLAYBACK, 0});
    CHECK_OK(rtmix_session_app_foreground(s, 2000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 2000,
                       RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD, RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER});
    CHECK_OK(rtmix_session_tick(s, 2500));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_START_RECORDING, 2500, 1, 0});
    rtmix_session_destroy(s);

    /* An AMBIENT base keeps mixing in the background. */
    s = granted_session(RTMIX_SESSION_CATEGORY_AMBIENT);
    player = module(s, "sfx-player");
    CHECK_OK(rtmix_session_request(s, player, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 0));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_ACTIVATE, 0, 1, 0});
    CHECK_OK(rtmix_session_app_background(s, 100));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 100, RTMIX_SESSION_CATEGORY_PLAYBACK,
                       RTMIX_SESSION_OPTION_MIX_WITH_OTHERS});
    CHECK_OK(rtmix_session_app_foreground(s, 200));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 200, RTMIX_SESSION_CATEGORY_AMBIENT, 0});
    rtmix_session_destroy(s);
}

/* Item 2: a play-only module leaves SOLO_AMBIENT and restores it after. */
static void item2_play_only_from_solo_ambient(void) {
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    rtmix_session_module_id player = module(s, "video-player");
    CHECK_OK(rtmix_session_request(s, player, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 0));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 0, RTMIX_SESSION_CATEGORY_PLAYBACK, 0},
                   {RTMIX_SESSION_ACTION_ACTIVATE, 0, 1, 0});
    CHECK_OK(rtmix_session_activation_result(s, 1, 5));
    CHECK_OK(rtmix_session_release(s, player, 100));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 100, RTMIX_SESSION_CATEGORY_SOLO_AMBIENT, 0},
                   {RTMIX_SESSION_ACTION_DEACTIVATE, 100, 1, 0});
    rtmix_session_destroy(s);
}

/* Item 3: AMBIENT + DUCK_OTHERS is valid and adopted. */
static void item3_ambient_duck_others(void) {
    rtmix_session_config c;
    rtmix_session_state st;
    uint32_t problems = 99, invalid = 99;
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_AMBIENT);
    rtmix_session_module_id nav = module(s, "navigation-prompts");
    rtmix_session_config_init(&c);
    c.category = RTMIX_SESSION_CATEGORY_AMBIENT;
    c.options = RTMIX_SESSION_OPTION_DUCK_OTHERS;
    CHECK_OK(rtmix_session_check_config(&c, &problems, &invalid));
    CHECK(problems == 0 && invalid == 0);
    CHECK_OK(rtmix_session_request(s, nav, RTMIX_SESSION_NEED_PLAYBACK | RTMIX_SESSION_NEED_DUCK_OTHERS,
                                   RTMIX_SESSION_MODE_NONE, 0));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 0, RTMIX_SESSION_CATEGORY_AMBIENT,
                       RTMIX_SESSION_OPTION_DUCK_OTHERS},
                   {RTMIX_SESSION_ACTION_ACTIVATE, 0, 1, 0});
    CHECK_OK(rtmix_session_release(s, nav, 50));
    drain_actions(s);
    CHECK_OK(rtmix_session_request(s, nav, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 60));
    drain_actions(s);
    observe(s, nav, RTMIX_SESSION_CATEGORY_AMBIENT, RTMIX_SESSION_MODE_DEFAULT,
            RTMIX_SESSION_OPTION_DUCK_OTHERS, 100);
    expect_no_actions(s, __LINE__);
    expect_no_alarms(s, __LINE__);
    rtmix_session_state_init(&st);
    CHECK_OK(rtmix_session_get_state(s, &st));
    CHECK(st.category == RTMIX_SESSION_CATEGORY_AMBIENT && st.options == RTMIX_SESSION_OPTION_DUCK_OTHERS);
    rtmix_session_destroy(s);
}

/* Item 4: A2DP output while recording, asked for by the module's needs; a
 * module is never reported for overriding itself. */
static void item4_a2dp_while_recording(void) {
    const uint32_t PAR = RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD;
    const uint32_t MUSIC_REC = RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER |
                               RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH_A2DP;
    const uint32_t CALL = RTMIX_SESSION_OPTION_MIX_WITH_OTHERS | RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER |
                          RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH;
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    rtmix_session_module_id ww = module(s, "wake-word");
    rtmix_session_module_id rtc = module(s, "rtc");
    CHECK_OK(rtmix_session_request(s, ww, RTMIX_SESSION_NEED_RECORDING | RTMIX_SESSION_NEED_PLAYBACK |
                                              RTMIX_SESSION_NEED_BLUETOOTH_A2DP,
                                   RTMIX_SESSION_MODE_NONE, 0));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 0, PAR, MUSIC_REC},
                   {RTMIX_SESSION_ACTION_ACTIVATE, 0, 1, 0});
    CHECK_OK(rtmix_session_activation_result(s, 1, 5));
    observe(s, ww, PAR, RTMIX_SESSION_MODE_DEFAULT, MUSIC_REC, 10);
    expect_no_actions(s, __LINE__);
    expect_no_alarms(s, __LINE__);
    /* A recording call needs HFP and wins; its release gives A2DP back. */
    CHECK_OK(rtmix_session_request(s, rtc, RTMIX_SESSION_NEED_CALL | RTMIX_SESSION_NEED_RECORDING,
                                   RTMIX_SESSION_MODE_NONE, 20));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 20, PAR, CALL});
    CHECK_OK(rtmix_session_release(s, rtc, 30));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 30, PAR, MUSIC_REC});
    /* The module's own change against its own needs: corrected, no alarm. */
    CHECK_OK(rtmix_session_request(s, ww, RTMIX_SESSION_NEED_RECORDING, RTMIX_SESSION_MODE_NONE, 40));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 40, PAR, 0});
    observe(s, ww, PAR, RTMIX_SESSION_MODE_DEFAULT, RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH_A2DP, 50);
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 50, PAR, 0});
    expect_no_alarms(s, __LINE__);
    rtmix_session_destroy(s);
}

/* Item 5: Bluetooth LE left behind after another app's call. */
static void item5_ble_after_interruption(void) {
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    rtmix_session_module_id rtc = module(s, "rtc");
    CHECK_OK(rtmix_session_request(s, rtc, RTMIX_SESSION_NEED_CALL | RTMIX_SESSION_NEED_RECORDING,
                                   RTMIX_SESSION_MODE_NONE, 0));
    CHECK_OK(rtmix_session_activation_result(s, 1, 5));
    route(s, RTMIX_SESSION_ROUTE_REASON_NEW_DEVICE_AVAILABLE, RTMIX_SESSION_PORT_BUILT_IN_SPEAKER, 0, 6);
    drain_actions(s);
    CHECK_OK(rtmix_session_interruption_began(s, 1000));
    route(s, RTMIX_SESSION_ROUTE_REASON_NEW_DEVICE_AVAILABLE, RTMIX_SESSION_PORT_BLUETOOTH_LE, 0, 1500);
    CHECK_OK(rtmix_session_interruption_ended(s, 1, 2000));
    CHECK_OK(rtmix_session_tick(s, 2500));
    drain_actions(s);
    CHECK_OK(rtmix_session_activation_result(s, 1, 2510));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RESUME_OUTPUT, 2510, 0, 0},
                   {RTMIX_SESSION_ACTION_SET_CALL_HELD, 2510, 0, 0},
                   {RTMIX_SESSION_ACTION_ROUTE_TO_SPEAKER, 2510, 0, 0});
    rtmix_session_destroy(s);
}

/* Item 6: a recorder that is not the call stops and restarts around an
 * interruption. */
static void item6_recorder_and_interruption(void) {
    uint64_t due = 0;
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    rtmix_session_module_id ww = module(s, "wake-word");
    rtmix_session_module_id player = module(s, "player");
    CHECK(ww == 1); /* the expected recording actions name module 1 */
    CHECK_OK(rtmix_session_request(s, ww, RTMIX_SESSION_NEED_RECORDING, RTMIX_SESSION_MODE_NONE, 0));
    CHECK_OK(rtmix_session_activation_result(s, 1, 5));
    CHECK_OK(rtmix_session_request(s, player, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 10));
    drain_actions(s);
    CHECK_OK(rtmix_session_interruption_began(s, 1000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_PAUSE_OUTPUT, 1000, 0, 0},
                   {RTMIX_SESSION_ACTION_STOP_RECORDING, 1000, 1, 0});
    CHECK_OK(rtmix_session_interruption_ended(s, 1, 2000));
    CHECK_OK(rtmix_session_tick(s, 2500));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_ACTIVATE, 2500, 1, 0});
    CHECK_OK(rtmix_session_activation_result(s, 1, 2510));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RESUME_OUTPUT, 2510, 0, 0},
                   {RTMIX_SESSION_ACTION_RESUME_MEDIA, 2510, 0, 0});
    CHECK_OK(rtmix_session_next_due(s, &due));
    CHECK(due == 3010);
    CHECK_OK(rtmix_session_tick(s, due));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_START_RECORDING, 3010, 1, 0});
    rtmix_session_destroy(s);
}

/* Item 7: voice processing makes the mixer mono, and says so. */
static void item7_voice_processing(void) {
    rtmix_session_action a;
    rtmix_session_state st;
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    rtmix_session_module_id rtc = module(s, "rtc");
    CHECK_OK(rtmix_session_request(s, rtc, RTMIX_SESSION_NEED_CALL | RTMIX_SESSION_NEED_RECORDING,
                                   RTMIX_SESSION_MODE_VOICE_CHAT, 0));
    rtmix_session_action_init(&a);
    CHECK_OK(rtmix_session_next_action(s, &a));
    CHECK(a.kind == RTMIX_SESSION_ACTION_SET_CONFIGURATION && a.mode == RTMIX_SESSION_MODE_VOICE_CHAT &&
          a.category == RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD);
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_VOICE_PROCESSING, 0, 1, 0},
                   {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 0, 48000, 1},
                   {RTMIX_SESSION_ACTION_ACTIVATE, 0, 1, 0});
    rtmix_session_state_init(&st);
    CHECK_OK(rtmix_session_get_state(s, &st));
    CHECK(st.voice_processing == 1 && st.engine_channels == 1);
    CHECK(strcmp(rtmix_session_action_name(RTMIX_SESSION_ACTION_VOICE_PROCESSING), "VOICE_PROCESSING") == 0);
    CHECK_OK(rtmix_session_activation_result(s, 1, 5));
    CHECK_OK(rtmix_session_release(s, rtc, 100));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 100, RTMIX_SESSION_CATEGORY_SOLO_AMBIENT, 0},
                   {RTMIX_SESSION_ACTION_VOICE_PROCESSING, 100, 0, 0},
                   {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 100, 48000, 2},
                   {RTMIX_SESSION_ACTION_DEACTIVATE, 100, 1, 0});
    /* The explicit switch. */
    CHECK_OK(rtmix_session_set_voice_processing(s, 1, 200));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_VOICE_PROCESSING, 200, 1, 0},
                   {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 200, 48000, 1});
    CHECK_OK(rtmix_session_set_voice_processing(s, 0, 300));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_VOICE_PROCESSING, 300, 0, 0},
                   {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 300, 48000, 2});
    CHECK(rtmix_session_set_voice_processing(NULL, 1, 0) == RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_session_get_state(s, &st);
    CHECK(st.voice_processing == 0 && st.engine_channels == 2);
    rtmix_session_destroy(s);
}

/* Decision (issue 8): foreground reactivation after a missing "ended" waits
 * reactivation_delay_ms and is retried while another app holds the audio. */
static void decision_foreground_reactivation(void) {
    uint64_t due = 0;
    rtmix_session *s = granted_session(RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    rtmix_session_module_id player = module(s, "player");
    CHECK_OK(rtmix_session_request(s, player, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 0));
    CHECK_OK(rtmix_session_activation_result(s, 1, 5));
    CHECK_OK(rtmix_session_interruption_began(s, 1000));
    CHECK_OK(rtmix_session_set_other_audio_playing(s, 1, 1500));
    CHECK_OK(rtmix_session_app_background(s, 1600));
    drain_actions(s);
    CHECK_OK(rtmix_session_app_foreground(s, 10000));
    expect_no_actions(s, __LINE__);
    CHECK_OK(rtmix_session_next_due(s, &due));
    CHECK(due == 10500);
    CHECK_OK(rtmix_session_tick(s, due));
    expect_no_actions(s, __LINE__); /* other audio still plays */
    CHECK_OK(rtmix_session_next_due(s, &due));
    CHECK(due == 11000);
    CHECK_OK(rtmix_session_set_other_audio_playing(s, 0, 10800));
    CHECK_OK(rtmix_session_tick(s, due));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_ACTIVATE, 11000, 1, 0});
    CHECK(rtmix_session_set_other_audio_playing(NULL, 1, 0) == RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_session_destroy(s);
}

int main(void) {
    const uint32_t PAR = RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD;
    const uint32_t MIC_ON = RTMIX_SESSION_OPTION_MIX_WITH_OTHERS |
                            RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER |
                            RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH; /* 0x0D */
    const uint32_t MIC_OFF = RTMIX_SESSION_OPTION_MIX_WITH_OTHERS |
                             RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER |
                             RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH_A2DP; /* 0x29 */
    rtmix_session_settings settings;
    rtmix_session *s = NULL;
    rtmix_session_module_id rtc = 0, web = 0, player = 0;
    rtmix_session_config cfg;
    rtmix_session_alarm alarm;
    rtmix_session_state state;
    uint64_t due = 0;
    char name[32];
    uint32_t name_len = 0;

    /* Bad input never crashes. */
    CHECK(rtmix_session_settings_init(NULL) == RTMIX_ERR_INVALID_ARGUMENT);
    CHECK(rtmix_session_tick(NULL, 0) == RTMIX_ERR_INVALID_ARGUMENT);
    rtmix_session_destroy(NULL);

    CHECK_OK(rtmix_session_settings_init(&settings));
    CHECK(settings.base_category == RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
    CHECK(settings.mic_permission == RTMIX_SESSION_MIC_UNDETERMINED);
    CHECK_OK(rtmix_session_create(&settings, &s));
    CHECK(s != NULL);
    if (s == NULL) {
        printf("session_scenario: %d passed, %d failed\n", passed, failed);
        return 1;
    }

    CHECK_OK(rtmix_session_module_register(s, "rtc-sdk", &rtc));
    CHECK_OK(rtmix_session_module_register(s, "courseware-webview", &web));
    CHECK_OK(rtmix_session_module_register(s, "courseware-player", &player));
    CHECK(rtc == 1 && web == 2 && player == 3);
    CHECK_OK(rtmix_session_module_name(s, web, name, sizeof name, &name_len));
    CHECK(strcmp(name, "courseware-webview") == 0 && name_len == 18);

    /* t=0: the call starts; the microphone permission is not known yet, so
     * the call is configured without recording (A2DP allowed). */
    CHECK_OK(rtmix_session_request(s, rtc, RTMIX_SESSION_NEED_CALL | RTMIX_SESSION_NEED_RECORDING,
                                   RTMIX_SESSION_MODE_NONE, 0));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_REQUEST_MIC_PERMISSION, 0, 0, 0},
                   {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 0, PAR, MIC_OFF},
                   {RTMIX_SESSION_ACTION_ACTIVATE, 0, 1, 0});
    CHECK_OK(rtmix_session_activation_result(s, 1, 10));

    /* t=1500: permission granted: HFP configuration, recording may start. */
    CHECK_OK(rtmix_session_set_mic_permission(s, RTMIX_SESSION_MIC_GRANTED, 1500));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 1500, PAR, MIC_ON},
                   {RTMIX_SESSION_ACTION_START_RECORDING, 1500, 1, 0});

    /* t=1600: the AirPods switch to HFP at 16 kHz: the mixer follows. */
    report_route(s, RTMIX_SESSION_ROUTE_REASON_CATEGORY_CHANGE, RTMIX_SESSION_PORT_BLUETOOTH_HFP,
                 16000, MIC_ON, 1600);
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 1600, 16000, 1});

    /* t=3000: a media player joins: already satisfied, nothing to do. */
    CHECK_OK(rtmix_session_request(s, player, RTMIX_SESSION_NEED_PLAYBACK,
                                   RTMIX_SESSION_MODE_NONE, 3000));
    expect_no_actions(s, __LINE__);

    /* t=4000: the WebView courseware sets playback without mixWithOthers. */
    CHECK_OK(rtmix_session_config_init(&cfg));
    cfg.category = RTMIX_SESSION_CATEGORY_PLAYBACK;
    CHECK_OK(rtmix_session_observe_config(s, web, &cfg, 4000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 4000, PAR, MIC_ON});
    CHECK_OK(rtmix_session_alarm_init(&alarm));
    CHECK_OK(rtmix_session_next_alarm(s, &alarm));
    CHECK(alarm.code == RTMIX_SESSION_ALARM_CONFIGURATION_OVERRIDDEN);
    CHECK(alarm.severity == RTMIX_SESSION_SEVERITY_WARNING);
    CHECK(alarm.module == web && alarm.related_module == rtc);
    CHECK(alarm.detail == MIC_ON && alarm.time_ms == 4000);
    expect_no_alarms(s, __LINE__);

    /* t=10000: a VoIP app interrupts. */
    CHECK_OK(rtmix_session_interruption_began(s, 10000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_PAUSE_OUTPUT, 10000, 0, 0},
                   {RTMIX_SESSION_ACTION_SET_CALL_HELD, 10000, 1, 0});

    /* t=20000: it ends; reactivation is due 500 ms later. */
    CHECK_OK(rtmix_session_interruption_ended(s, 1, 20000));
    expect_no_actions(s, __LINE__);
    CHECK_OK(rtmix_session_next_due(s, &due));
    CHECK(due == 20500);
    CHECK_OK(rtmix_session_tick(s, due));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_ACTIVATE, 20500, 1, 0});
    /* The first activation fails; the retry comes 250 ms later. */
    CHECK_OK(rtmix_session_activation_result(s, 0, 20510));
    CHECK_OK(rtmix_session_next_due(s, &due));
    CHECK(due == 20760);
    CHECK_OK(rtmix_session_tick(s, due));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_ACTIVATE, 20760, 2, 0});
    CHECK_OK(rtmix_session_activation_result(s, 1, 20770));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RESUME_OUTPUT, 20770, 0, 0},
                   {RTMIX_SESSION_ACTION_SET_CALL_HELD, 20770, 0, 0},
                   {RTMIX_SESSION_ACTION_RESUME_MEDIA, 20770, 0, 0});
    CHECK(rtmix_session_activation_result(s, 1, 20780) == RTMIX_ERR_BAD_STATE);
    CHECK(rtmix_session_next_due(s, &due) == RTMIX_ERR_NOT_FOUND);

    /* t=30000: microphone muted: back to A2DP and the normal mixer format. */
    CHECK_OK(rtmix_session_request(s, rtc, RTMIX_SESSION_NEED_CALL, RTMIX_SESSION_MODE_NONE, 30000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 30000, PAR, MIC_OFF});
    report_route(s, RTMIX_SESSION_ROUTE_REASON_CATEGORY_CHANGE, RTMIX_SESSION_PORT_BLUETOOTH_A2DP,
                 48000, MIC_OFF, 30100);
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE, 30100, 48000, 2});

    /* Everybody leaves, the call first: the player alone gets PLAYBACK (not
     * SOLO_AMBIENT, issue 8 item 2); the last release restores the base. */
    CHECK_OK(rtmix_session_release(s, rtc, 40000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 40000,
                       RTMIX_SESSION_CATEGORY_PLAYBACK, 0});
    CHECK_OK(rtmix_session_release(s, player, 41000));
    EXPECT_ACTIONS(s, {RTMIX_SESSION_ACTION_SET_CONFIGURATION, 41000,
                       RTMIX_SESSION_CATEGORY_SOLO_AMBIENT, 0},
                   {RTMIX_SESSION_ACTION_DEACTIVATE, 41000, 1, 0});
    expect_no_alarms(s, __LINE__);

    CHECK_OK(rtmix_session_state_init(&state));
    CHECK_OK(rtmix_session_get_state(s, &state));
    CHECK(state.category == RTMIX_SESSION_CATEGORY_SOLO_AMBIENT && state.options == 0);
    CHECK(state.active == 0 && state.interrupted == 0 && state.active_modules == 0);
    CHECK(state.engine_sample_rate == 48000 && state.engine_channels == 2);

    CHECK(rtmix_session_request(s, 99, RTMIX_SESSION_NEED_PLAYBACK, RTMIX_SESSION_MODE_NONE, 42000) ==
          RTMIX_ERR_NOT_FOUND);
    CHECK_OK(rtmix_session_module_unregister(s, web, 42000));
    CHECK(rtmix_session_module_unregister(s, web, 42000) == RTMIX_ERR_NOT_FOUND);

    /* ABI evolution: a newer caller's larger state struct gets our fields and
     * keeps its own; a struct smaller than the 0.1 layout is rejected. */
    {
        struct { rtmix_session_state st; uint32_t future_field; } newer;
        memset(&newer, 0x5A, sizeof newer);
        newer.st.size = (uint32_t)sizeof newer;
        CHECK_OK(rtmix_session_get_state(s, &newer.st));
        CHECK(newer.st.size == sizeof(rtmix_session_state)); /* size filled */
        CHECK(newer.st.category == RTMIX_SESSION_CATEGORY_SOLO_AMBIENT);
        CHECK(newer.future_field == 0x5A5A5A5Au);
        CHECK(sizeof(rtmix_session_state) >= 60 && sizeof(rtmix_session_route) >= 36);
        CHECK_OK(rtmix_session_state_init(&state));
        state.size = 59;
        CHECK(rtmix_session_get_state(s, &state) == RTMIX_ERR_INVALID_ARGUMENT);
    }

    rtmix_session_destroy(s);

    item1_background_playback();
    item2_play_only_from_solo_ambient();
    item3_ambient_duck_others();
    item4_a2dp_while_recording();
    item5_ble_after_interruption();
    item6_recorder_and_interruption();
    item7_voice_processing();
    decision_foreground_reactivation();

    printf("session_scenario: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
