/*
 * rtmix_session.h — public C ABI of RTMix's audio session policy engine
 * (rtmix_session_*). It is part of the same library as the mixer (librtmix)
 * and uses the mixer's status codes (RTMIX_OK, RTMIX_ERR_*), so it includes
 * rtmix.h; a program that uses both includes both (either order).
 */
#ifndef RTMIX_SESSION_H
#define RTMIX_SESSION_H

#include "rtmix.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Audio session policy (rtmix_session_*) ==== */
/*
 * A portable, deterministic audio-session policy engine. On iOS every
 * module of an app (RTC SDK, player, WebView courseware, recorder, speech
 * recognition, sound effects) changes one shared AVAudioSession; this engine
 * encodes the rules that keep RTC and media audible. The host's small
 * platform glue reports what it sees (requests, observed session changes,
 * interruptions, route changes, permission, app state) and applies the
 * actions the engine returns. See docs/session-policy.md for the rules
 * (with the platform documents they come from), the validity table and an
 * example of iOS glue.
 *
 * Conventions of this section
 * - No clocks and no timers: every call that can change state takes the
 *   host's monotonic time `now_ms` (milliseconds, any epoch). A `now_ms`
 *   earlier than one already seen is treated as the latest time seen.
 *   Delayed work (reactivation, retries, recording restarts) is done when a
 *   later call or rtmix_session_tick reaches its due time; ask
 *   rtmix_session_next_due when to tick.
 * - Output is two FIFOs the host drains: actions (rtmix_session_next_action)
 *   and alarms (rtmix_session_next_alarm). Each holds at most
 *   `queue_capacity` items; on overflow new items are dropped and a
 *   RTMIX_SESSION_ALARM_QUEUE_OVERFLOW alarm is queued.
 * - Thread safety (every function taking a session): a session is not
 *   thread-safe; the caller serialises all calls on one session (e.g. the
 *   main thread). Different sessions are independent.
 * - Real-time safe: no for every function taking a session (they may
 *   allocate); never call them from the render thread. The functions that
 *   only fill or check a struct, and the *_name functions, are real-time
 *   safe and may be called from any thread.
 * - Structs start with `size`, set by their `_init` function, and only grow
 *   at the end: the library reads at most `size` bytes of an input struct
 *   (later fields take their defaults) and writes at most `size` bytes of an
 *   output struct. A struct smaller than its first published version
 *   (RTMix 0.1: config 16, settings 72, route 36, action 48, alarm 32,
 *   state 60 bytes) is rejected with RTMIX_ERR_INVALID_ARGUMENT.
 * - Unknown enum values in input are RTMIX_ERR_INVALID_ARGUMENT unless the
 *   function documents otherwise. A function that fails changes nothing.
 */

/* Opaque session policy engine. */
typedef struct rtmix_session rtmix_session;

/* Module ids are returned by rtmix_session_module_register; never 0, never
 * reused during a session's life. 0 means "unknown module". */
typedef uint32_t rtmix_session_module_id;
#define RTMIX_SESSION_MODULE_UNKNOWN 0u

/* Categories. The platform uses strings; these values are stable:
 *   AMBIENT          AVAudioSessionCategoryAmbient
 *   SOLO_AMBIENT     AVAudioSessionCategorySoloAmbient (platform default)
 *   PLAYBACK         AVAudioSessionCategoryPlayback
 *   RECORD           AVAudioSessionCategoryRecord
 *   PLAY_AND_RECORD  AVAudioSessionCategoryPlayAndRecord
 *   MULTI_ROUTE      AVAudioSessionCategoryMultiRoute */
typedef enum rtmix_session_category {
    RTMIX_SESSION_CATEGORY_AMBIENT = 0,
    RTMIX_SESSION_CATEGORY_SOLO_AMBIENT = 1,
    RTMIX_SESSION_CATEGORY_PLAYBACK = 2,
    RTMIX_SESSION_CATEGORY_RECORD = 3,
    RTMIX_SESSION_CATEGORY_PLAY_AND_RECORD = 4,
    RTMIX_SESSION_CATEGORY_MULTI_ROUTE = 5
} rtmix_session_category;

/* Modes (AVAudioSessionMode*, strings on the platform):
 *   DEFAULT Default, VOICE_CHAT VoiceChat, VIDEO_CHAT VideoChat,
 *   GAME_CHAT GameChat, VIDEO_RECORDING VideoRecording,
 *   MOVIE_PLAYBACK MoviePlayback, MEASUREMENT Measurement,
 *   SPOKEN_AUDIO SpokenAudio. */
typedef enum rtmix_session_mode {
    RTMIX_SESSION_MODE_DEFAULT = 0,
    RTMIX_SESSION_MODE_VOICE_CHAT = 1,
    RTMIX_SESSION_MODE_VIDEO_CHAT = 2,
    RTMIX_SESSION_MODE_GAME_CHAT = 3,
    RTMIX_SESSION_MODE_VIDEO_RECORDING = 4,
    RTMIX_SESSION_MODE_MOVIE_PLAYBACK = 5,
    RTMIX_SESSION_MODE_MEASUREMENT = 6,
    RTMIX_SESSION_MODE_SPOKEN_AUDIO = 7
} rtmix_session_mode;

/* `preferred_mode` of rtmix_session_request: no preference. */
#define RTMIX_SESSION_MODE_NONE (-1)

/* Category options: the platform's AVAudioSessionCategoryOptions raw
 * values, so glue passes them straight through. */
#define RTMIX_SESSION_OPTION_MIX_WITH_OTHERS 0x1u
#define RTMIX_SESSION_OPTION_DUCK_OTHERS 0x2u
#define RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH 0x4u /* HFP */
#define RTMIX_SESSION_OPTION_DEFAULT_TO_SPEAKER 0x8u
#define RTMIX_SESSION_OPTION_INTERRUPT_SPOKEN_AUDIO_AND_MIX_WITH_OTHERS 0x11u
#define RTMIX_SESSION_OPTION_ALLOW_BLUETOOTH_A2DP 0x20u
#define RTMIX_SESSION_OPTION_ALLOW_AIR_PLAY 0x40u

/* Validity table (the platform's rules; invalid combinations are reported,
 * never applied):
 *   options  MIX_WITH_OTHERS, INTERRUPT_SPOKEN_AUDIO...:
 *              PLAYBACK, PLAY_AND_RECORD, MULTI_ROUTE (AMBIENT mixes
 *              without it)
 *            DUCK_OTHERS: AMBIENT, PLAYBACK, PLAY_AND_RECORD, MULTI_ROUTE
 *            ALLOW_BLUETOOTH: RECORD, PLAY_AND_RECORD
 *            DEFAULT_TO_SPEAKER, ALLOW_BLUETOOTH_A2DP, ALLOW_AIR_PLAY:
 *              PLAY_AND_RECORD
 *            SOLO_AMBIENT: no options
 *   (AVAudioSessionTypes.h, "... is only valid with ..." per option)
 *   modes    DEFAULT: all; VOICE_CHAT, VIDEO_CHAT, GAME_CHAT:
 *            PLAY_AND_RECORD; VIDEO_RECORDING: RECORD, PLAY_AND_RECORD;
 *            MOVIE_PLAYBACK: PLAYBACK; MEASUREMENT: PLAYBACK, RECORD,
 *            PLAY_AND_RECORD; SPOKEN_AUDIO: PLAYBACK, PLAY_AND_RECORD. */

/* Problems reported by rtmix_session_check_config and in the detail of
 * RTMIX_SESSION_ALARM_INVALID_CONFIGURATION (bitmask). */
#define RTMIX_SESSION_PROBLEM_UNKNOWN_CATEGORY 0x1u
#define RTMIX_SESSION_PROBLEM_UNKNOWN_MODE 0x2u
#define RTMIX_SESSION_PROBLEM_MODE_NOT_ALLOWED 0x4u
#define RTMIX_SESSION_PROBLEM_OPTION_NOT_ALLOWED 0x8u
#define RTMIX_SESSION_PROBLEM_UNKNOWN_OPTIONS 0x10u

/* What a module needs (bitmask for rtmix_session_request). */
#define RTMIX_SESSION_NEED_PLAYBACK 0x1u      /* plays audio */
#define RTMIX_SESSION_NEED_RECORDING 0x2u     /* records the microphone */
#define RTMIX_SESSION_NEED_MIX_WITH_OTHERS 0x4u /* others must keep playing */
#define RTMIX_SESSION_NEED_SPEAKER 0x8u       /* speaker, not receiver */
#define RTMIX_SESSION_NEED_BLUETOOTH 0x10u    /* HFP when recording, else A2DP */
#define RTMIX_SESSION_NEED_CALL 0x20u         /* RTC call: implies PLAYBACK,
                                                 MIX_WITH_OTHERS, SPEAKER,
                                                 BLUETOOTH and (foreground)
                                                 PLAY_AND_RECORD */
#define RTMIX_SESSION_NEED_DUCK_OTHERS 0x40u
#define RTMIX_SESSION_NEED_RECORD_IN_BACKGROUND 0x80u /* may keep recording
                                                         in the background */
#define RTMIX_SESSION_NEED_BLUETOOTH_A2DP 0x100u /* Bluetooth A2DP (stereo)
                                                   output even while
                                                   recording (built-in mic);
                                                   a recording CALL still
                                                   gets HFP */

/* Microphone permission (AVAudioSessionRecordPermission). */
typedef enum rtmix_session_mic_permission {
    RTMIX_SESSION_MIC_UNDETERMINED = 0,
    RTMIX_SESSION_MIC_DENIED = 1,
    RTMIX_SESSION_MIC_GRANTED = 2
} rtmix_session_mic_permission;

/* Output ports (AVAudioSessionPort*, strings on the platform). */
typedef enum rtmix_session_port {
    RTMIX_SESSION_PORT_UNKNOWN = 0,
    RTMIX_SESSION_PORT_BUILT_IN_SPEAKER = 1,  /* BuiltInSpeaker */
    RTMIX_SESSION_PORT_BUILT_IN_RECEIVER = 2, /* BuiltInReceiver */
    RTMIX_SESSION_PORT_HEADPHONES = 3,        /* Headphones, LineOut */
    RTMIX_SESSION_PORT_BLUETOOTH_A2DP = 4,    /* BluetoothA2DPOutput */
    RTMIX_SESSION_PORT_BLUETOOTH_HFP = 5,     /* BluetoothHFP */
    RTMIX_SESSION_PORT_BLUETOOTH_LE = 6,      /* BluetoothLE */
    RTMIX_SESSION_PORT_CAR_AUDIO = 7,         /* CarAudio (CarPlay) */
    RTMIX_SESSION_PORT_AIR_PLAY = 8,          /* AirPlay */
    RTMIX_SESSION_PORT_USB_AUDIO = 9,         /* USBAudio */
    RTMIX_SESSION_PORT_HDMI = 10,             /* HDMI */
    RTMIX_SESSION_PORT_OTHER = 11
} rtmix_session_port;

/* Route change reasons: AVAudioSessionRouteChangeReason raw values (other
 * values are accepted and treated as UNKNOWN). */
#define RTMIX_SESSION_ROUTE_REASON_UNKNOWN 0u
#define RTMIX_SESSION_ROUTE_REASON_NEW_DEVICE_AVAILABLE 1u
#define RTMIX_SESSION_ROUTE_REASON_OLD_DEVICE_UNAVAILABLE 2u
#define RTMIX_SESSION_ROUTE_REASON_CATEGORY_CHANGE 3u
#define RTMIX_SESSION_ROUTE_REASON_OVERRIDE 4u
#define RTMIX_SESSION_ROUTE_REASON_WAKE_FROM_SLEEP 6u
#define RTMIX_SESSION_ROUTE_REASON_NO_SUITABLE_ROUTE 7u
#define RTMIX_SESSION_ROUTE_REASON_CONFIGURATION_CHANGE 8u

/* rtmix_session_route.flags */
#define RTMIX_SESSION_ROUTE_CAR_KIT 0x1u       /* output is a car kit */
#define RTMIX_SESSION_ROUTE_USER_SELECTED 0x2u /* the user picked it */
#define RTMIX_SESSION_ROUTE_HAS_CONFIG 0x4u    /* category/mode/options hold
                                                  the session's current
                                                  configuration */

/* Action kinds (rtmix_session_action.kind). Fields not listed are 0.
 *   SET_CONFIGURATION    setCategory:mode:options: with category, mode,
 *                        options.
 *   ACTIVATE             setActive:YES; `attempt` counts from 1. Report the
 *                        result with rtmix_session_activation_result.
 *   DEACTIVATE           setActive:NO; flag = 1: with
 *                        AVAudioSessionSetActiveOptionNotifyOthersOnDeactivation.
 *   PAUSE_OUTPUT         fade out / pause the mixer's whole output.
 *   RESUME_OUTPUT        fade the mixer's output back in.
 *   PAUSE_MEDIA          pause the media domain (players).
 *   RESUME_MEDIA         resume the media domain.
 *   SET_CALL_HELD        flag = 1: the RTC call is held; 0: no longer held.
 *   RECONFIGURE_ENGINE   recreate/reconfigure the mixer at sample_rate,
 *                        channels (HFP: 8/16/24 kHz mono, and back).
 *   REQUEST_MIC_PERMISSION  ask for record permission, then call
 *                        rtmix_session_set_mic_permission.
 *   START_RECORDING      `module` may (re)start recording now.
 *   STOP_RECORDING       `module` must stop recording now.
 *   ROUTE_TO_SPEAKER     overrideOutputAudioPort:Speaker (a proposal; the
 *                        app may ask the user first).
 *   SECONDARY_AUDIO_HINT flag = 1: silence secondary audio; 0: resume it.
 *   VOICE_PROCESSING     flag = 1: voice processing is now on (VOICE_CHAT or
 *                        VIDEO_CHAT on PLAY_AND_RECORD, or
 *                        rtmix_session_set_voice_processing); the I/O unit
 *                        outputs mono, so RECONFIGURE_ENGINE to 1 channel
 *                        follows. 0: off, RECONFIGURE_ENGINE back follows. */
#define RTMIX_SESSION_ACTION_SET_CONFIGURATION 1u
#define RTMIX_SESSION_ACTION_ACTIVATE 2u
#define RTMIX_SESSION_ACTION_DEACTIVATE 3u
#define RTMIX_SESSION_ACTION_PAUSE_OUTPUT 4u
#define RTMIX_SESSION_ACTION_RESUME_OUTPUT 5u
#define RTMIX_SESSION_ACTION_PAUSE_MEDIA 6u
#define RTMIX_SESSION_ACTION_RESUME_MEDIA 7u
#define RTMIX_SESSION_ACTION_SET_CALL_HELD 8u
#define RTMIX_SESSION_ACTION_RECONFIGURE_ENGINE 9u
#define RTMIX_SESSION_ACTION_REQUEST_MIC_PERMISSION 10u
#define RTMIX_SESSION_ACTION_START_RECORDING 11u
#define RTMIX_SESSION_ACTION_STOP_RECORDING 12u
#define RTMIX_SESSION_ACTION_ROUTE_TO_SPEAKER 13u
#define RTMIX_SESSION_ACTION_SECONDARY_AUDIO_HINT 14u
#define RTMIX_SESSION_ACTION_VOICE_PROCESSING 15u

/* Alarm codes (rtmix_session_alarm.code).
 *   CONFIGURATION_OVERRIDDEN  `module` changed the session against the
 *                        needs of `related_module`; a corrective
 *                        SET_CONFIGURATION was queued. detail = option bits
 *                        the correction adds. (warning)
 *   INVALID_CONFIGURATION a reported configuration is invalid and was not
 *                        adopted; detail = RTMIX_SESSION_PROBLEM_* bits.
 *                        (warning)
 *   MODE_NOT_APPLIED     `module`'s preferred mode (detail) is not valid
 *                        with the chosen category or lost to another
 *                        module's preference. (advisory)
 *   ACTIVATION_FAILED    activation failed detail times in a row; retrying
 *                        stops until foreground, user play or a new
 *                        request. (error)
 *   INTERRUPTION_END_MISSING  an interruption's "ended" never arrived;
 *                        recovered on foreground / user play. (warning)
 *   MIC_PERMISSION_DENIED `module` asked to record without permission.
 *                        (warning)
 *   CAR_KIT_RECORDING    advisory: `module` records while a car kit is
 *                        connected (the car shows "in call" and loses its
 *                        media controls); the app may ask the user.
 *   QUEUE_OVERFLOW       items were dropped; detail = dropped so far. (error) */
#define RTMIX_SESSION_ALARM_CONFIGURATION_OVERRIDDEN 1u
#define RTMIX_SESSION_ALARM_INVALID_CONFIGURATION 2u
#define RTMIX_SESSION_ALARM_MODE_NOT_APPLIED 3u
#define RTMIX_SESSION_ALARM_ACTIVATION_FAILED 4u
#define RTMIX_SESSION_ALARM_INTERRUPTION_END_MISSING 5u
#define RTMIX_SESSION_ALARM_MIC_PERMISSION_DENIED 6u
#define RTMIX_SESSION_ALARM_CAR_KIT_RECORDING 7u
#define RTMIX_SESSION_ALARM_QUEUE_OVERFLOW 8u

/* Alarm severities (rtmix_session_alarm.severity). */
#define RTMIX_SESSION_SEVERITY_ADVISORY 0u
#define RTMIX_SESSION_SEVERITY_WARNING 1u
#define RTMIX_SESSION_SEVERITY_ERROR 2u

/* One session configuration (rtmix_session_category / _mode / options). */
/* A session configuration (category, mode, options), as in AVAudioSession:
 * rtmix_session_config_init; used by requests, routes and state. */
typedef struct rtmix_session_config {
    uint32_t size;     /* sizeof(rtmix_session_config); set by _init */
    uint32_t category; /* rtmix_session_category */
    uint32_t mode;     /* rtmix_session_mode */
    uint32_t options;  /* RTMIX_SESSION_OPTION_* bits */
} rtmix_session_config;

/* Session engine settings: rtmix_session_settings_init, then
 * rtmix_session_create. */
typedef struct rtmix_session_settings {
    uint32_t size;                    /* set by _init */
    uint32_t base_category;           /* configuration with no module active;
                                         default SOLO_AMBIENT */
    uint32_t base_mode;               /* default DEFAULT */
    uint32_t base_options;            /* default 0 */
    uint32_t engine_sample_rate;      /* mixer's normal rate, 8000..192000;
                                         default 48000 */
    uint32_t engine_channels;         /* 1 or 2; default 2 */
    uint32_t hfp_sample_rate;         /* HFP rate when the route reports
                                         none, 8000..48000; default 16000 */
    uint32_t reactivation_delay_ms;   /* after an interruption ends;
                                         default 500 */
    uint32_t retry_base_ms;           /* first retry delay; doubles per
                                         attempt; default 250 */
    uint32_t retry_max_ms;            /* retry delay cap, >= retry_base_ms;
                                         default 4000 */
    uint32_t max_activation_attempts; /* 1..100; default 4 */
    uint32_t recording_restart_delay_ms; /* after returning to the
                                            foreground; default 500 */
    int32_t pause_media_on_device_loss;  /* nonzero: PAUSE_MEDIA when a
                                            private output (headphones,
                                            Bluetooth, ...) disappears;
                                            default 1 */
    int32_t propose_speaker_after_interruption; /* nonzero: ROUTE_TO_SPEAKER
                                            when an interruption leaves the
                                            output on an HFP device the user
                                            did not pick; default 1 */
    int32_t deactivate_when_idle;     /* nonzero: DEACTIVATE (notify others)
                                         when the last module releases;
                                         default 1 */
    uint32_t mic_permission;          /* initial rtmix_session_mic_permission;
                                         default UNDETERMINED */
    uint32_t max_modules;             /* 1..1024; default 64 */
    uint32_t queue_capacity;          /* actions and alarms each, 16..65536;
                                         default 256 */
} rtmix_session_settings;

/* A route change as the host saw it. */
typedef struct rtmix_session_route {
    uint32_t size;            /* set by _init */
    uint32_t reason;          /* RTMIX_SESSION_ROUTE_REASON_* (raw) */
    uint32_t output;          /* rtmix_session_port of the new route */
    uint32_t previous_output; /* rtmix_session_port of the previous route;
                                 UNKNOWN = the last route reported */
    uint32_t sample_rate;     /* hardware rate in Hz, 0 = unknown; for an
                                 HFP output, a value outside 8000..48000 is
                                 treated as unknown (hfp_sample_rate) */
    uint32_t flags;           /* RTMIX_SESSION_ROUTE_* */
    uint32_t category;        /* with RTMIX_SESSION_ROUTE_HAS_CONFIG: the */
    uint32_t mode;            /* session's current configuration; checked */
    uint32_t options;         /* (enforcement) on CATEGORY_CHANGE only */
} rtmix_session_route;

/* An action the host must perform: rtmix_session_next_action. */
typedef struct rtmix_session_action {
    uint32_t size;          /* set by _init */
    uint32_t kind;          /* RTMIX_SESSION_ACTION_* */
    uint64_t time_ms;       /* host time at which it was issued (a delayed
                               action carries its due time) */
    rtmix_session_module_id module; /* START/STOP_RECORDING */
    uint32_t category;      /* SET_CONFIGURATION */
    uint32_t mode;          /* SET_CONFIGURATION */
    uint32_t options;       /* SET_CONFIGURATION */
    uint32_t sample_rate;   /* RECONFIGURE_ENGINE */
    uint32_t channels;      /* RECONFIGURE_ENGINE */
    uint32_t attempt;       /* ACTIVATE, from 1 */
    int32_t flag;           /* DEACTIVATE, SET_CALL_HELD,
                               SECONDARY_AUDIO_HINT, VOICE_PROCESSING */
} rtmix_session_action;

/* A policy alarm for the host to log or show: rtmix_session_next_alarm. */
typedef struct rtmix_session_alarm {
    uint32_t size;          /* set by _init */
    uint32_t code;          /* RTMIX_SESSION_ALARM_* */
    uint32_t severity;      /* RTMIX_SESSION_SEVERITY_* */
    rtmix_session_module_id module;         /* module the alarm is about */
    rtmix_session_module_id related_module; /* second module involved */
    uint32_t detail;        /* per code, see above */
    uint64_t time_ms;       /* host time at which it was raised */
} rtmix_session_alarm;

/* A snapshot of the session engine: rtmix_session_get_state. */
typedef struct rtmix_session_state {
    uint32_t size;           /* set by _init */
    uint32_t category;       /* configuration the engine believes is set */
    uint32_t mode;           /* (category, mode, options) */
    uint32_t options;        /* RTMIX_SESSION_OPTION_* bits */
    int32_t active;          /* 1 if the session is active */
    int32_t interrupted;     /* 1 during an interruption (until recovered) */
    int32_t call_held;       /* 1 while the RTC call is held */
    int32_t foreground;      /* 1 in the foreground */
    uint32_t mic_permission; /* rtmix_session_mic_permission */
    uint32_t engine_sample_rate; /* mixer format the engine asked for */
    uint32_t engine_channels;    /* (rate, channels) */
    uint32_t active_modules; /* modules with a request */
    uint32_t output;         /* rtmix_session_port of the last route */
    uint32_t pending_actions; /* actions queued, not yet read */
    uint32_t pending_alarms;  /* alarms queued, not yet read */
    /* Appended in RTMix 0.2 (a 0.1 caller's 60-byte struct stops above). */
    int32_t voice_processing; /* 1 while voice processing is on (the
                                 mixer output is mono) */
} rtmix_session_state;

/* Fill a struct with its size and defaults (config: SOLO_AMBIENT, DEFAULT,
 * no options; settings: the defaults listed in the struct; route: reason
 * UNKNOWN, ports UNKNOWN, no flags; action/alarm/state: zero).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT if the pointer is NULL.
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_session_config_init(rtmix_session_config *cfg);
int32_t rtmix_session_settings_init(rtmix_session_settings *settings);
int32_t rtmix_session_route_init(rtmix_session_route *route);
int32_t rtmix_session_action_init(rtmix_session_action *action);
int32_t rtmix_session_alarm_init(rtmix_session_alarm *alarm);
int32_t rtmix_session_state_init(rtmix_session_state *state);

/* Checks a configuration against the validity table. Stores the
 * RTMIX_SESSION_PROBLEM_* bits in `*problems` (0 = valid) and the offending
 * option bits in `*invalid_options` (may be NULL). Returns RTMIX_OK for a
 * checked configuration, valid or not.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL cfg or problems, size too small).
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_session_check_config(const rtmix_session_config *cfg, uint32_t *problems,
                                   uint32_t *invalid_options);

/* Creates a session engine and stores it in `*out`. The session starts in
 * the base configuration, inactive, in the foreground.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small, invalid base
 * configuration, value out of range), RTMIX_ERR_NO_MEMORY. On error `*out`
 * is set to NULL (if out is not NULL).
 * Thread safety: any thread. Real-time safe: no (allocates). */
int32_t rtmix_session_create(const rtmix_session_settings *settings, rtmix_session **out);

/* Destroys a session. NULL is a no-op. No other call on it may follow.
 * Thread safety: any thread, once. Real-time safe: no (frees). */
void rtmix_session_destroy(rtmix_session *session);

/* Registers a module by name (NUL-terminated UTF-8, 1..255 bytes, copied)
 * and stores its id in `*out_id`. Alarms and recording actions carry ids.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, empty or longer name),
 * RTMIX_ERR_LIMIT (max_modules registered).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_module_register(rtmix_session *session, const char *name,
                                      rtmix_session_module_id *out_id);

/* Releases the module's request (restoring what the others need, as
 * rtmix_session_release) and forgets the module; its id becomes unknown.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL), RTMIX_ERR_NOT_FOUND.
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_module_unregister(rtmix_session *session, rtmix_session_module_id id,
                                        uint64_t now_ms);

/* Copies a module's name into `buf` (NUL-terminated, truncated to
 * capacity - 1 bytes) and stores its full length (without NUL) in
 * `*length` (may be NULL).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL session/buf, capacity 0),
 * RTMIX_ERR_NOT_FOUND.
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_module_name(rtmix_session *session, rtmix_session_module_id id,
                                  char *buf, uint32_t capacity, uint32_t *length);

/* Sets (or replaces) what a module needs: RTMIX_SESSION_NEED_* bits and a
 * preferred rtmix_session_mode or RTMIX_SESSION_MODE_NONE. If the current
 * configuration already satisfies every active module nothing is queued;
 * otherwise a SET_CONFIGURATION (and ACTIVATE when the session is
 * inactive). A request that needs less than the module's previous one
 * restores the configuration the active modules need. Play-only needs move
 * SOLO_AMBIENT (or RECORD) to PLAYBACK; in the background a player needs a
 * category that plays there (PLAYBACK, PLAY_AND_RECORD, MULTI_ROUTE).
 * RECORDING is gated:
 * undetermined permission queues REQUEST_MIC_PERMISSION, denied raises
 * MIC_PERMISSION_DENIED, in the background it waits for the foreground
 * (unless RECORD_IN_BACKGROUND).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, unknown need bits or mode),
 * RTMIX_ERR_NOT_FOUND.
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_request(rtmix_session *session, rtmix_session_module_id id,
                              uint32_t needs, int32_t preferred_mode, uint64_t now_ms);

/* Releases a module's request (no-op without one) and restores the
 * configuration the remaining modules need (the base configuration when
 * none remains, then DEACTIVATE if deactivate_when_idle). Correct for any
 * release order.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL), RTMIX_ERR_NOT_FOUND.
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_release(rtmix_session *session, rtmix_session_module_id id,
                              uint64_t now_ms);

/* Reports a configuration observed on the platform session, made by module
 * `id` (RTMIX_SESSION_MODULE_UNKNOWN if not known). If it leaves an active
 * module unsatisfied, queues the corrective SET_CONFIGURATION and raises
 * CONFIGURATION_OVERRIDDEN naming the module (never when the only module
 * left unsatisfied is `id` itself: that correction carries no alarm). An
 * invalid configuration
 * (including unknown category/mode values) raises INVALID_CONFIGURATION and
 * is not adopted. Reporting the engine's own configuration does nothing.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small),
 * RTMIX_ERR_NOT_FOUND (id not registered).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_observe_config(rtmix_session *session, rtmix_session_module_id id,
                                     const rtmix_session_config *cfg, uint64_t now_ms);

/* AVAudioSessionInterruptionTypeBegan: queues PAUSE_OUTPUT, STOP_RECORDING
 * for every running recorder that is not the call, and, during a call,
 * SET_CALL_HELD(1). A repeated "began" is ignored.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_interruption_began(rtmix_session *session, uint64_t now_ms);

/* AVAudioSessionInterruptionTypeEnded. With should_resume != 0, or during a
 * call, ACTIVATE is queued after reactivation_delay_ms; its success queues
 * RESUME_OUTPUT, SET_CALL_HELD(0), RESUME_MEDIA (should_resume) or
 * PAUSE_MEDIA (not), maybe ROUTE_TO_SPEAKER (output left on a Bluetooth HFP
 * or LE device the user did not pick), and START_RECORDING for the
 * recorders the interruption stopped recording_restart_delay_ms later.
 * Otherwise the engine waits
 * for rtmix_session_user_play or the foreground. Ignored when no
 * interruption is in progress.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_interruption_ended(rtmix_session *session, int should_resume,
                                         uint64_t now_ms);

/* Reports the result of the last ACTIVATE action (success != 0). A failure
 * is retried after retry_base_ms << (attempt - 1) (capped at retry_max_ms)
 * up to max_activation_attempts, then ACTIVATION_FAILED is raised.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL), RTMIX_ERR_BAD_STATE (no
 * activation result is awaited, e.g. after an interruption began or the
 * session was deactivated; the report is ignored).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_activation_result(rtmix_session *session, int success, uint64_t now_ms);

/* The user pressed play: recovers an interruption whose "ended" never came
 * (raising INTERRUPTION_END_MISSING) or came without should_resume, and
 * resumes media after reactivation; restarts activation after
 * ACTIVATION_FAILED.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_user_play(rtmix_session *session, uint64_t now_ms);

/* Another app's secondary-audio hint (silence != 0: Begin): queues
 * SECONDARY_AUDIO_HINT with the same flag.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_secondary_audio_hint(rtmix_session *session, int silence,
                                           uint64_t now_ms);

/* Reports a route change: OLD_DEVICE_UNAVAILABLE from a private output
 * queues PAUSE_MEDIA (pause_media_on_device_loss, when a media module is
 * active); an HFP output queues RECONFIGURE_ENGINE(HFP rate, 1) and leaving
 * HFP RECONFIGURE_ENGINE(engine rate, channels); CATEGORY_CHANGE with
 * RTMIX_SESSION_ROUTE_HAS_CONFIG runs the enforcement check of
 * rtmix_session_observe_config (module unknown); recording with a car kit
 * raises CAR_KIT_RECORDING once.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small, unknown port).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_route_changed(rtmix_session *session, const rtmix_session_route *route,
                                    uint64_t now_ms);

/* Reports the microphone permission (rtmix_session_mic_permission).
 * GRANTED applies waiting recording requests and queues START_RECORDING for
 * them; DENIED raises MIC_PERMISSION_DENIED for them.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, unknown value).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_set_mic_permission(rtmix_session *session, uint32_t permission,
                                         uint64_t now_ms);

/* The app entered the background: modules recording without
 * RECORD_IN_BACKGROUND get STOP_RECORDING and the session switches to the
 * play-only configuration the remaining needs give (PLAYBACK rather than
 * SOLO_AMBIENT/AMBIENT, which screen lock silences). Repeats are ignored.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_app_background(rtmix_session *session, uint64_t now_ms);

/* The app returned to the foreground: the recording configuration is
 * restored at once, START_RECORDING follows after
 * recording_restart_delay_ms; a missing interruption "ended" is recovered
 * (ACTIVATE after reactivation_delay_ms, see
 * rtmix_session_set_other_audio_playing).
 * Repeats are ignored.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_app_foreground(rtmix_session *session, uint64_t now_ms);

/* The host's explicit voice-processing switch (enabled != 0), e.g.
 * AVAudioInputNode setVoiceProcessingEnabled:. Voice processing is on while
 * this is set or the configuration is PLAY_AND_RECORD with VOICE_CHAT or
 * VIDEO_CHAT; a change queues VOICE_PROCESSING and RECONFIGURE_ENGINE
 * (mono while on). Repeats change nothing.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_set_voice_processing(rtmix_session *session, int enabled, uint64_t now_ms);

/* The platform's isOtherAudioPlaying (playing != 0: another app holds the
 * audio). While set, a delayed reactivation (after an interruption, or on
 * the foreground after a missing "ended") of a configuration that does not
 * mix with others is retried reactivation_delay_ms later instead of queueing
 * ACTIVATE. Default 0.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_set_other_audio_playing(rtmix_session *session, int playing,
                                              uint64_t now_ms);

/* Does the delayed work due at or before now_ms (every other call taking
 * now_ms does it too, first).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_tick(rtmix_session *session, uint64_t now_ms);

/* Stores in `*due_ms` the earliest time at which rtmix_session_tick has
 * work to do.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL), RTMIX_ERR_NOT_FOUND (nothing
 * pending; *due_ms untouched).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_next_due(rtmix_session *session, uint64_t *due_ms);

/* Removes the oldest pending action and copies it into `*action` (set its
 * size with rtmix_session_action_init first).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small),
 * RTMIX_ERR_NOT_FOUND (queue empty; *action untouched).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_next_action(rtmix_session *session, rtmix_session_action *action);

/* As rtmix_session_next_action, for alarms.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small),
 * RTMIX_ERR_NOT_FOUND (queue empty; *alarm untouched).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_next_alarm(rtmix_session *session, rtmix_session_alarm *alarm);

/* Copies a snapshot of the engine state into `*state`.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small).
 * Thread safety: see conventions. Real-time safe: no. */
int32_t rtmix_session_get_state(rtmix_session *session, rtmix_session_state *state);

/* Static, NUL-terminated names for logs ("SET_CONFIGURATION",
 * "CONFIGURATION_OVERRIDDEN", ...; "UNKNOWN" for other values). Never NULL.
 * Thread safety: any thread. Real-time safe: yes. */
const char *rtmix_session_action_name(uint32_t kind);
const char *rtmix_session_alarm_name(uint32_t code);

/* ==== end of audio session policy ==== */

#ifdef __cplusplus
}
#endif

#endif /* RTMIX_SESSION_H */
