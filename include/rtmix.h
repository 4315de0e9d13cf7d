/*
 * rtmix.h — public C ABI of RTMix, an embeddable real-time audio mixer.
 *
 * RTMix mixes far-end RTC voices (the CALL domain) and decoded media PCM
 * (the MEDIA domain) on the device's real-time output thread, so that all
 * audio goes through one output, one volume system and one echo-canceller
 * reference.
 *
 * Data flow of one render call:
 *   producer --push--> SPSC ring --> resampler --> channel map --> gain ramps
 *            (source gain x mute x domain gain) --> sum --> limiter --> out
 *
 * Conventions used by every function below
 * - All functions return an rtmix status (int32_t): RTMIX_OK (0) or a
 *   negative RTMIX_ERR_* code. A function that fails changes nothing, unless
 *   its documentation says otherwise (partial pushes).
 * - PCM is interleaved. "frames" counts sample frames (one sample per
 *   channel); "samples" = frames x channels. Input and output buffers may
 *   not overlap.
 * - Structs start with a `size` field, set by their `_init` function. New
 *   fields are only ever appended, so a program compiled against an older
 *   header keeps working. Input structs: the library reads at most `size`
 *   bytes (later fields take their defaults). Output structs: the library
 *   writes at most `size` bytes and then sets `size` to the number of bytes
 *   it filled, min(caller's size, library's size); a caller compiled
 *   against a newer header than the library's finds its extra fields
 *   untouched and `size` smaller than its sizeof. A `size` below the
 *   struct's first published size is RTMIX_ERR_INVALID_ARGUMENT and nothing
 *   is written.
 * - Status values are never renumbered or reused.
 *
 * Threads
 * - Render thread: the device callback. Exactly one thread renders at a time
 *   (a concurrent second render call returns RTMIX_ERR_BAD_STATE).
 * - Producer thread: one thread per source pushes PCM into that source.
 * - Control threads: any other thread(s); control calls are serialised by an
 *   internal lock that the render and producer threads never take.
 * "Real-time safe: yes" means the function never locks, allocates, frees,
 * logs, makes a blocking system call or waits for another thread.
 */
#ifndef RTMIX_H
#define RTMIX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

/* The version of this header. Any addition (function, struct field,
 * status or event code) bumps the minor version; the notes "appended in
 * X.Y" below name the version that added a field (CHANGELOG.md has one
 * section per version). The SONAME is librtmix.so.MAJOR and every
 * function carries the symbol version RTMIX_MAJOR; within a major
 * version the ABI only grows (CHANGELOG.md, "ABI promise"). */
#define RTMIX_VERSION_MAJOR 0
#define RTMIX_VERSION_MINOR 4
#define RTMIX_VERSION_PATCH 0

/* Returns (major << 16) | (minor << 8) | patch of the linked library.
 * Thread safety: any thread. Real-time safe: yes. */
uint32_t rtmix_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

#define RTMIX_OK 0 /* success */
/* A pointer was NULL, a value was out of range, NaN or infinite, or a frame
 * count was zero. */
#define RTMIX_ERR_INVALID_ARGUMENT (-1)
/* Sample rate or channel count is not supported (output and source rates
 * 8000..192000 Hz, capture rate 8000..48000 Hz; 1 or 2 channels). */
#define RTMIX_ERR_UNSUPPORTED_FORMAT (-2)
/* The source id is unknown or was removed. */
#define RTMIX_ERR_NOT_FOUND (-3)
/* A push did not fit completely; `*accepted` says how much did. */
#define RTMIX_ERR_BUFFER_FULL (-4)
/* A render or capture call asked for more than `max_frames` frames. */
#define RTMIX_ERR_TOO_MANY_FRAMES (-5)
/* A configured limit was reached (max_sources, or the source id space). */
#define RTMIX_ERR_LIMIT (-6)
/* Memory (or a resampler) could not be allocated. */
#define RTMIX_ERR_NO_MEMORY (-7)
/* The call is not allowed in the current state (e.g. two threads rendering
 * the same engine at once). */
#define RTMIX_ERR_BAD_STATE (-8)

/* Returns a static, NUL-terminated English description of a status code
 * ("unknown status" for values that are not RTMIX status codes).
 * Thread safety: any thread. Real-time safe: yes. Never returns NULL. */
const char *rtmix_status_string(int32_t status);

/* ------------------------------------------------------------------------ */
/* Types                                                                     */
/* ------------------------------------------------------------------------ */

/* Opaque engine handle. */
typedef struct rtmix_engine rtmix_engine;

/* Source ids are never 0 and never reused during an engine's life. */
typedef uint32_t rtmix_source_id;

/* Gain domains. CALL: far-end RTC voices; its gain never goes below the
 * configured floor. MEDIA: decoded player PCM; its gain may be 0. */
typedef enum rtmix_domain {
    RTMIX_DOMAIN_CALL = 0,
    RTMIX_DOMAIN_MEDIA = 1
} rtmix_domain;

/* Resampler quality. SINC_FASTEST (default): RTMix's own exact-phase
 * polyphase FIR (>= 98 dB SNR on a 1 kHz tone) for every rate pair it can
 * tabulate (all pairs of 8, 11.025, 12, 16, 22.05, 24, 32, 44.1, 48, 64,
 * 88.2, 96, 176.4 and 192 kHz); libsamplerate SRC_SINC_FASTEST for finer
 * ratios (e.g. 8001 Hz -> 48 kHz). The other values always use the
 * libsamplerate converter of that name. */
typedef enum rtmix_resampler_quality {
    RTMIX_RESAMPLER_SINC_FASTEST = 0, /* default: lowest cost */
    RTMIX_RESAMPLER_SINC_MEDIUM = 1,
    RTMIX_RESAMPLER_SINC_BEST = 2,
    RTMIX_RESAMPLER_LINEAR = 3 /* cheapest, audible aliasing; tests only */
} rtmix_resampler_quality;

/* Largest linear gain accepted by the gain setters (+24 dB). */
#define RTMIX_MAX_GAIN 16.0f

/* Engine configuration: rtmix_engine_config_init, then rtmix_engine_create
 * (read back with rtmix_engine_get_config). */
typedef struct rtmix_engine_config {
    uint32_t size;            /* sizeof(rtmix_engine_config); set by _init */
    uint32_t sample_rate;     /* output rate in Hz, 8000..192000; default 48000 */
    uint32_t channels;        /* output channels, 1 or 2; default 2 */
    uint32_t max_frames;      /* largest frame count per render call,
                                 1..16384; default 4096 */
    uint32_t max_sources;     /* simultaneous sources, 1..256; default 32 */
    float call_gain_floor;    /* lowest CALL domain gain, 0..1; default 0.1 */
    float gain_ramp_ms;       /* duration of every gain ramp, 1..1000 ms;
                                 default 10 */
    float limiter_threshold_db; /* limiter threshold in dBFS, -20..0;
                                   default -1. Samples below it pass
                                   bit-exact; at 0 every sample in
                                   [-1, 1] does (ceiling +-1.0) */
    uint32_t resampler_quality; /* rtmix_resampler_quality; default
                                   RTMIX_RESAMPLER_SINC_FASTEST */
    /* --- capture path (appended in 0.2; see "Capture") --- */
    uint32_t capture_rate;    /* microphone rate in Hz, 8000..48000; 0 =
                                 capture off (default: hosts that only
                                 render are unchanged) */
    uint32_t capture_channels; /* microphone channels, 1 or 2; default 1 */
    uint32_t aec_tail_ms;     /* echo canceller tail, 10..1000 ms; default
                                 200; 0 = canceller off. Rooms ringing
                                 0.5 s or more: 300..400 removes far more
                                 echo and keeps the talker cleaner, when
                                 the host gives clock information (paced
                                 callbacks or rtmix_engine_set_clock);
                                 without it drift is followed worse, and
                                 the capture costs ~1.4x (300) / ~1.7x
                                 (400) what it does at 200
                                 (docs/capture.md) */
    int32_t noise_suppression; /* 1 (default) / 0 */
    int32_t echo_suppression;  /* residual-echo suppression, 1 (default) / 0 */
    int32_t agc;               /* automatic gain control, 0 (default) / 1 */
    int32_t aec_stereo_reference; /* stereo output: 1 (default) cancels each
                                     loudspeaker's echo (speexdsp's
                                     two-speaker canceller: +7..+31 dB over
                                     a mono downmix with two distinct
                                     loudspeaker paths, 1.8x the canceller's
                                     cost); 0 = one canceller on the mono
                                     downmix. Ignored for mono output. */
    /* --- ducking and alarms (appended in 0.3; see docs/ducking.md and
     *     docs/events.md) --- */
    float duck_depth_db;      /* media is lowered by this much while call
                                 voice is active (local playout only; the
                                 published media keeps its publish gain):
                                 -60..0 dB. Default 0 = ducking off: the
                                 media keeps the level the app set (render
                                 output bit-exact as without ducking).
                                 Opt-in, e.g. -12 (docs/ducking.md) */
    float duck_attack_ms;     /* time to reach the depth, 1..1000 ms;
                                 default 20 */
    float duck_release_ms;    /* time back to 0 dB once the voice (and a
                                 100 ms hold) ended, 1..5000 ms; default 300 */
    uint32_t call_audio_missing_ms; /* "no RTC sound" alarm: a call source
                                 inaudible at the output for this long,
                                 100..60000 ms; default 2000; 0 = off */
    /* --- memory cap (appended in 0.3; see docs/memory.md) --- */
    uint64_t max_memory_bytes; /* cap on the memory RTMix allocates for the
                                  engine and its sources (rings, scratch,
                                  capture buffers; not the resampler
                                  libraries' or speexdsp's own state);
                                  default 67108864 (64 MiB); 0 = no cap.
                                  An engine over it is not created and a
                                  source that would exceed it is not added
                                  (RTMIX_ERR_LIMIT); see memory_bytes in
                                  rtmix_engine_stats */
} rtmix_engine_config;

/* Overrun policies (rtmix_source_config.overrun_policy). */
#define RTMIX_OVERRUN_DOMAIN_DEFAULT 0 /* call: DROP_OLDEST, media: REJECT */
#define RTMIX_OVERRUN_DROP_OLDEST 1 /* favour latency: every push is taken,
                                       the oldest audio is dropped (counted,
                                       RTMIX_EVENT_AUDIO_DROPPED) */
#define RTMIX_OVERRUN_REJECT 2      /* favour completeness: what does not
                                       fit is refused (RTMIX_ERR_BUFFER_FULL
                                       and *accepted) */

/* Playback states (rtmix_source_stats.state). */
#define RTMIX_SOURCE_STATE_PRIMING 0 /* waiting for its start threshold */
#define RTMIX_SOURCE_STATE_PLAYING 1
#define RTMIX_SOURCE_STATE_STARVED 2 /* underrun: silent, re-priming */
#define RTMIX_SOURCE_STATE_PAUSED 3
#define RTMIX_SOURCE_STATE_DRAINED 4 /* ended and played out */

/* Source configuration: rtmix_source_config_init, then rtmix_source_add. */
typedef struct rtmix_source_config {
    uint32_t size;          /* sizeof(rtmix_source_config); set by _init */
    int32_t domain;         /* rtmix_domain */
    uint32_t sample_rate;   /* source rate in Hz, 8000..192000 */
    uint32_t channels;      /* 1 or 2 */
    uint32_t buffer_frames; /* ring capacity in source frames, 0 = default
                               (at least 400 ms, rounded up to a power of
                               two); at most 2^22. Rejected
                               (RTMIX_ERR_INVALID_ARGUMENT) when, rounded
                               up to a power of two, it is smaller than one
                               render block's input (max_frames output
                               frames at the current output rate), or when
                               explicit and smaller than target_buffer_ms */
    float gain;             /* initial linear gain, 0..RTMIX_MAX_GAIN;
                               default 1 */
    float target_buffer_ms; /* clock-drift control, ms. Default
                               (rtmix_source_config_init): 40 call, 100
                               media; 0 = off; else 5..2000. Rules:
                               (1) nothing is corrected until drift is
                               shown: a producer on the render clock
                               (lockstep, pacing on writable_frames,
                               pushing until refused, refilling at a
                               threshold of its own, primed deeper than
                               the target) is never resampled: bit-exact
                               at equal rates, exact pitch, and the level
                               it keeps is its own. (2) Drift is shown by
                               the producer's rate (frames delivered vs
                               render time, sampled at each 0.5 s
                               window's low-water mark and at its mean,
                               2 s after a start and over >= 10 s; the
                               more significant line; at least 50 ppm and 5
                               standard errors from 0, and the last 20 s
                               a ramp, not a step: a one-time change of
                               the delivery delay is not drift) or by its
                               level leaving its settled level by more than
                               max(10 ms, 2 x its own burst swing) in
                               the direction of the rate. (3) Then the
                               source is resampled by the estimate (at
                               most +-1000 ppm) plus a slow trim of the
                               low-water mark (least audio buffered in
                               each 0.5 s) towards this target (at most
                               +-1000 ppm), +-2000 ppm in all.
                               (4) A level that does not move as the
                               correction says is the producer's: control
                               is released back to exactly 1 (never
                               wound up or saturated); a refused push does
                               the same at once. (5) The target held is
                               this one raised to cover the producer's
                               delivery jitter (the deepest dip of the
                               level below its low-water mark, or an
                               underrun's gap, plus one block and 15 ms;
                               at most half the ring; held 60 s, then
                               decaying): after an underrun the source
                               re-primes to it (effective_target_ms in
                               the source stats). Windows with a dip
                               stay out of the rate in (2). It never
                               engages control by itself. See
                               docs/source-timing.md */
    /* --- appended in 0.3 (older, shorter structs get the defaults) --- */
    float start_threshold_ms; /* audio a source must hold before it starts
                               (and restarts after an underrun or a flush),
                               ms. -1 (default) = target_buffer_ms; 0 =
                               start with the first audio; else <= 2000 */
    int32_t overrun_policy;  /* RTMIX_OVERRUN_*, what a push into a full
                               ring does; default 0 = by domain */
} rtmix_source_config;

/* Engine statistics: rtmix_engine_stats_init, then rtmix_engine_get_stats. */
typedef struct rtmix_engine_stats {
    uint32_t size;                  /* set by rtmix_engine_stats_init */
    uint32_t active_sources;        /* sources added and not removed */
    uint64_t render_calls;          /* successful render calls */
    uint64_t frames_rendered;       /* output frames produced */
    uint64_t underrun_frames;       /* sum over sources (see source stats) */
    uint64_t rejected_frames;       /* sum of frames refused by pushes */
    uint64_t nonfinite_samples;     /* NaN/Inf samples replaced by 0 (push
                                       and mix) */
    uint64_t limiter_active_frames; /* output frames the limiter changed */
    float limiter_gain_db;          /* limiter gain at the end of the last
                                       render, <= 0 dB */
    float limiter_min_gain_db;      /* lowest limiter gain seen */
    uint64_t render_ns_last;        /* duration of the last render call */
    uint64_t render_ns_max;         /* longest render call */
    uint64_t render_ns_p50;         /* median render duration (histogram
                                       bucket upper bound, <= 12.5% above) */
    uint64_t render_ns_p99;         /* 99th percentile, same resolution */
    uint64_t sources_added;         /* successful rtmix_source_add calls */
    uint64_t sources_removed;       /* successful rtmix_source_remove calls */
    /* --- capture path (appended in 0.2; all 0 when capture is off) --- */
    uint64_t capture_calls;         /* successful capture calls */
    uint64_t capture_frames;        /* microphone frames processed */
    uint32_t capture_latency_frames; /* frames `out` lags `mic`: re-blocking
                                       to the 10 ms canceller frame (0 when
                                       every call is a multiple of 10 ms)
                                       + the preprocessor's frame (10 ms)
                                       when suppression or AGC is on */
    int32_t aec_delay_source;       /* RTMIX_DELAY_SOURCE_* of aec_delay_ms */
    float aec_erle_db;              /* echo return loss enhancement over the
                                       last 1 s of far-end-only audio, dB
                                       (0 until measured) */
    float aec_delay_ms;             /* playout-to-capture delay the reference
                                       is aligned for */
    float aec_estimated_delay_ms;   /* the estimator's latest raw estimate */
    float aec_estimate_confidence;  /* its correlation peak-to-RMS ratio
                                       (>= 6 is trusted) */
    float aec_drift_ppm;            /* render clock vs capture clock, ppm
                                       (> 0: render runs faster): from the
                                       calls' timing, or, when that shows
                                       none, from the echo's slide */
    int32_t aec_double_talk;        /* 1 while near-end talk overlaps the
                                       far end */
    int32_t aec_diverged;           /* 1 while the canceller adds energy */
    uint32_t capture_rate;          /* the configured capture rate */
    uint64_t aec_double_talk_frames; /* capture frames in double talk */
    uint64_t aec_resets;            /* canceller resets (divergence, or
                                       before speexdsp would reset itself;
                                       RTMIX_EVENT_CANCELLER_RESET) */
    uint64_t capture_calls_without_reference; /* capture calls that found
                                       no reference (render not running) */
    uint64_t aec_delay_changes;     /* times the delay in use changed */
    uint64_t capture_reference_overflow_frames; /* reference frames the
                                       render thread dropped because capture
                                       was not draining them */
    uint64_t capture_nonfinite_samples; /* NaN/Inf mic samples, replaced
                                       by 0 */
    uint64_t capture_ns_max;        /* longest capture call */
    /* --- ducking and alarms (appended in 0.3) --- */
    float duck_gain_db;             /* media duck gain at the end of the
                                       last render, <= 0 dB (0: not ducked) */
    uint32_t reserved0;             /* 0 */
    uint64_t ducked_frames;         /* output frames rendered with the
                                       media ducked */
    uint64_t events_suppressed;     /* events held back by the rate
                                       limiter (see rtmix_engine_next_event) */
    uint64_t memory_bytes;          /* bytes RTMix holds for the engine and
                                       its sources (removed ones until
                                       freed), as counted against
                                       max_memory_bytes */
    /* --- appended in 0.4 --- */
    uint64_t events_dropped;        /* events lost because an event queue
                                       was full (each loss is also reported
                                       by RTMIX_EVENT_EVENTS_DROPPED) */
} rtmix_engine_stats;

/* aec_delay_source values. */
#define RTMIX_DELAY_SOURCE_NONE 0      /* no delay known yet: the newest
                                          reference is used */
#define RTMIX_DELAY_SOURCE_HINT 1      /* rtmix_set_stream_delay_ms */
#define RTMIX_DELAY_SOURCE_ESTIMATOR 2 /* the engine's own estimate */

/* Source statistics: rtmix_source_stats_init, then rtmix_source_get_stats. */
typedef struct rtmix_source_stats {
    uint32_t size;            /* set by rtmix_source_stats_init */
    int32_t domain;           /* the source's rtmix_domain */
    uint32_t sample_rate;     /* the source's rate, Hz */
    uint32_t channels;        /* the source's channel count */
    uint64_t frames_pushed;   /* source frames accepted by pushes */
    uint64_t frames_rejected; /* source frames refused (ring full) */
    uint64_t frames_consumed; /* source frames read by the renderer */
    uint64_t frames_rendered; /* output frames this source took part in */
    uint64_t underrun_frames; /* output frames, after the source's first
                                 push, for which it had no data (rendered as
                                 silence after a short fade) */
    uint64_t underrun_events; /* times the source went from playing to
                                 starved */
    uint64_t nonfinite_samples; /* NaN/Inf samples pushed, replaced by 0 */
    uint32_t buffered_frames; /* frames waiting in the ring */
    uint32_t capacity_frames; /* ring capacity in frames */
    float buffered_ms;        /* buffered_frames in milliseconds */
    float gain;               /* requested source gain */
    int32_t muted;            /* 1 if muted */
    float drift_ppm;          /* current drift correction, ppm (> 0: the
                                 source is consumed faster); 0 when off */
    /* --- appended in 0.3 --- */
    float drift_estimate_ppm; /* estimated clock drift of the producer vs
                                 the output, ppm (> 0: it runs fast) */
    float low_water_ms;       /* least audio buffered in the last 0.5 s
                                 window (what drift control holds at
                                 target_ms); -1 before the first window */
    float target_ms;          /* drift target, 0 when off */
    int32_t drift_saturated;  /* 1: the correction sits at +-2000 ppm */
    uint64_t frames_dropped;  /* frames dropped to bound latency (drop-oldest
                                 policy: overwritten or stale audio) */
    uint64_t frames_flushed;  /* frames dropped by rtmix_source_flush */
    int32_t state;            /* RTMIX_SOURCE_STATE_* */
    int32_t paused;           /* 1 while paused */
    int32_t ended;            /* 1 after rtmix_source_end */
    int32_t pull;             /* 1 for a pull source */
    uint32_t writable_frames; /* frames a push could add without dropping
                                 or refusing audio */
    uint32_t reserved;        /* 0 */
    /* --- appended in 0.4 --- */
    float effective_target_ms; /* the low-water mark drift control holds
                                 now (rule 5 at target_buffer_ms):
                                 target_ms raised to cover the producer's
                                 delivery jitter (network holds, late
                                 packets, underrun gaps), at most half the
                                 ring; decays back once the jitter is gone.
                                 = target_ms without jitter; 0 when off */
    uint32_t reserved2;       /* 0 */
} rtmix_source_stats;

/* ------------------------------------------------------------------------ */
/* Engine                                                                    */
/* ------------------------------------------------------------------------ */

/* Fills `cfg` with defaults (48000 Hz, 2 channels, 4096 max frames, 32
 * sources, call floor 0.1, 10 ms ramps, -1 dBFS limiter, fastest sinc).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT if cfg is NULL.
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_engine_config_init(rtmix_engine_config *cfg);

/* Creates an engine and stores it in `*out`. All memory the render path
 * needs is allocated here (and in rtmix_source_add).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL cfg/out, cfg->size too small,
 * value out of range), RTMIX_ERR_UNSUPPORTED_FORMAT (rate/channels),
 * RTMIX_ERR_LIMIT (the engine's own buffers exceed cfg->max_memory_bytes),
 * RTMIX_ERR_NO_MEMORY (an allocation failed; everything already allocated
 * is freed). On error `*out` is set to NULL (if out is not NULL).
 * Thread safety: any thread. Real-time safe: no (allocates). */
int32_t rtmix_engine_create(const rtmix_engine_config *cfg, rtmix_engine **out);

/* Destroys the engine and every source. NULL is a no-op. No other call on
 * this engine may be running or follow.
 * Thread safety: any thread, once. Real-time safe: no (frees). */
void rtmix_engine_destroy(rtmix_engine *engine);

/* Copies the engine's effective configuration, with the current output
 * format, into `*cfg` (up to cfg->size bytes; set cfg->size first, e.g.
 * with rtmix_engine_config_init).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small).
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_engine_get_config(const rtmix_engine *engine, rtmix_engine_config *cfg);

/* Changes the output sample rate and channel count of a running engine,
 * e.g. when the route changes to a Bluetooth HFP headset (16 kHz mono) and
 * back (the session policy engine's RECONFIGURE_ENGINE action). Sources,
 * their ids, rings, gains and statistics are kept; their resamplers are
 * rebuilt here (allocates, on the calling thread) and their playback
 * restarts cleanly. Call it while the device is stopped: render calls made
 * during the change fail with RTMIX_ERR_BAD_STATE (they never wait), and
 * if a render call is in progress the function returns RTMIX_ERR_BAD_STATE
 * at once (try again). Producers may keep pushing. The same format again
 * is a no-op. rtmix_engine_get_config reports the current format.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL), RTMIX_ERR_UNSUPPORTED_FORMAT
 * (rate outside 8000..192000, channels not 1 or 2), RTMIX_ERR_BAD_STATE,
 * RTMIX_ERR_NO_MEMORY (nothing changed).
 * Thread safety: control threads. Real-time safe: no; never blocks the
 * render or producer threads. */
int32_t rtmix_engine_set_output_format(rtmix_engine *engine, uint32_t sample_rate,
                                       uint32_t channels);

/* ------------------------------------------------------------------------ */
/* Sources                                                                   */
/* ------------------------------------------------------------------------ */

/* Fills `cfg` with defaults for a source of the given format (default
 * buffer, gain 1). The values are checked by rtmix_source_add, not here.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT if cfg is NULL.
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_source_config_init(rtmix_source_config *cfg, rtmix_domain domain,
                                 uint32_t sample_rate, uint32_t channels);

/* Adds a source and stores its id in `*out_id`. It is mixed from the next
 * render call on; until its first push it is silent and counts no underrun.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, bad domain/gain/buffer size,
 * a ring that cannot hold one render block's input or an explicit ring
 * smaller than target_buffer_ms, size too small),
 * RTMIX_ERR_UNSUPPORTED_FORMAT (rate/channels), RTMIX_ERR_LIMIT
 * (max_sources reached, counting removed sources whose fade out the
 * renderer has not finished; or the source would take the engine above
 * max_memory_bytes), RTMIX_ERR_NO_MEMORY (an allocation failed; nothing
 * changed).
 * Thread safety: control threads. Real-time safe: no (allocates); never
 * blocks the render or producer threads. */
int32_t rtmix_source_add(rtmix_engine *engine, const rtmix_source_config *cfg,
                         rtmix_source_id *out_id);

/* Removes a source. The id is invalid as soon as this returns (pushes get
 * RTMIX_ERR_NOT_FOUND); the renderer fades the source out over the gain
 * ramp, and its memory is freed by a later control call (or at destroy)
 * once neither the render nor the producer thread can touch it.
 * Pull sources (rtmix_source_add_pull): once this returns, the callback is
 * never called again and its user_data may be freed at once. The fade-out
 * plays what the source already holds; if a render pass is inside the
 * callback when the source is removed, this call waits for that pass to
 * end (at most one render block's work). Called from inside the callback
 * itself, it does not wait: that call is the last.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_NOT_FOUND.
 * Thread safety: control threads (or, for a pull source, its own
 * callback). Real-time safe: no; never blocks the render or producer
 * threads (it may wait for the render thread, never the reverse). */
int32_t rtmix_source_remove(rtmix_engine *engine, rtmix_source_id id);

/* Pushes `frames` interleaved frames (at the source's rate and channel
 * count) into the source's ring and stores the number of frames taken in
 * `*accepted` (may be NULL). When the ring is full: a REJECT source writes
 * what fits; a DROP_OLDEST source takes everything and the renderer drops
 * the oldest audio (rtmix_source_config.overrun_policy). NaN/Inf samples
 * are stored as 0 and counted; subnormal samples are stored as 0 (not
 * counted).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine or samples, frames == 0;
 * *accepted = 0), RTMIX_ERR_NOT_FOUND (*accepted = 0),
 * RTMIX_ERR_BUFFER_FULL (REJECT only: not everything fit, *accepted <
 * frames; the frames that did fit were written), RTMIX_ERR_BAD_STATE
 * (*accepted = 0: another push into the same source is in progress on
 * another thread, a contract violation detected instead of corrupting the
 * ring; or a pull source; or the source was ended).
 * Thread safety: one producer thread per source at a time (a second one
 * gets RTMIX_ERR_BAD_STATE). Real-time safe: yes (wait-free). */
int32_t rtmix_source_push_f32(rtmix_engine *engine, rtmix_source_id id,
                              const float *interleaved, uint32_t frames,
                              uint32_t *accepted);

/* As rtmix_source_push_f32, for int16 PCM (converted as sample / 32768). */
int32_t rtmix_source_push_s16(rtmix_engine *engine, rtmix_source_id id,
                              const int16_t *interleaved, uint32_t frames,
                              uint32_t *accepted);

/* Stores the number of frames waiting in a source's ring in `*frames`
 * (for a producer that paces itself on the buffer level; use
 * rtmix_source_get_stats for the full picture).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL), RTMIX_ERR_NOT_FOUND.
 * Thread safety: any thread. Real-time safe: yes (no lock). */
int32_t rtmix_source_get_buffered(rtmix_engine *engine, rtmix_source_id id, uint32_t *frames);

/* Stores in `*frames` how many frames a push could add now without
 * dropping (drop-oldest) or refusing (reject) audio: a decoder paces
 * itself on this.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL), RTMIX_ERR_NOT_FOUND.
 * Thread safety: any thread. Real-time safe: yes (no lock). */
int32_t rtmix_source_writable_frames(rtmix_engine *engine, rtmix_source_id id, uint32_t *frames);

/* Source timing ---------------------------------------------------------- */
/*
 * Each source runs a playback state machine (RTMIX_SOURCE_STATE_*):
 * PRIMING until it holds its start threshold, then PLAYING (fading in over
 * 2 ms). Running dry is an underrun (STARVED: the audio stops with a 2 ms
 * faded tail, silence is counted as underrun, and it re-primes). Pause,
 * flush and end are below. docs/source-timing.md has the full model.
 */

/* Pauses (on != 0: silence after a 2 ms fade; the ring is untouched and
 * nothing counts as underrun) or resumes (fade in) a source.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_NOT_FOUND.
 * Thread safety: any thread. Real-time safe: yes (no lock). */
int32_t rtmix_source_set_paused(rtmix_engine *engine, rtmix_source_id id, int32_t on);

/* Drops everything pushed so far (a seek), with a fade-out. The id, gains,
 * position and statistics are kept; the source re-primes with what is
 * pushed next. Clears rtmix_source_end.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_NOT_FOUND,
 * RTMIX_ERR_BAD_STATE (a pull source).
 * Thread safety: the source's producer thread (or any thread while no push
 * is in flight): audio pushed after it returns is kept. Real-time safe:
 * yes (no lock). */
int32_t rtmix_source_flush(rtmix_engine *engine, rtmix_source_id id);

/* End of stream: everything pushed plays out, including the resampler's
 * tail; then RTMIX_EVENT_SOURCE_DRAINED, the state becomes DRAINED and no
 * underrun is counted. Later pushes get RTMIX_ERR_BAD_STATE until a flush.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_NOT_FOUND,
 * RTMIX_ERR_BAD_STATE (a pull source: return a negative count instead).
 * Thread safety: the producer thread, after its last push (or any thread
 * once it stopped). Real-time safe: yes (no lock). */
int32_t rtmix_source_end(rtmix_engine *engine, rtmix_source_id id);

/* A source's position for A/V sync, as of the last render call. */
typedef struct rtmix_source_position {
    uint32_t size;              /* set by rtmix_source_position_init */
    uint32_t sample_rate;       /* the source's rate */
    uint64_t frames_played;     /* source frames that reached the engine's
                                   output by the end of the last render
                                   block (flushed/dropped frames excluded) */
    uint64_t render_time_ns;    /* engine clock (rtmix_engine_set_clock;
                                   CLOCK_MONOTONIC by default) at the start
                                   of that render call */
    uint64_t latency_ns;        /* from render_time_ns until a frame pushed
                                   then leaves the engine: the block, plus
                                   the ring and resampler queue ahead of it */
    uint64_t output_latency_ns; /* rtmix_engine_set_output_latency_ns */
} rtmix_source_position;

/* Sets `pos->size` and clears the rest.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT if pos is NULL.
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_source_position_init(rtmix_source_position *pos);

/* Copies a source's position (up to pos->size bytes). A player's video
 * clock: the frame heard at time t (same clock) is
 *   frames_played - (render_time_ns + block_ns + output_latency_ns - t)
 *                   * sample_rate / 1e9
 * and a frame pushed at render_time_ns is heard at render_time_ns +
 * latency_ns + output_latency_ns. docs/source-timing.md has the recipe.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size smaller than 40),
 * RTMIX_ERR_NOT_FOUND, RTMIX_ERR_BAD_STATE (the renderer was publishing
 * for every retry: call again).
 * Thread safety: any thread. Real-time safe: yes (no lock). */
int32_t rtmix_source_get_position(rtmix_engine *engine, rtmix_source_id id, rtmix_source_position *pos);

/* The host's output latency (device buffer + hardware, ns), reported back
 * in rtmix_source_position.output_latency_ns.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine).
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_engine_set_output_latency_ns(rtmix_engine *engine, uint64_t ns);

/* Interruption (a phone call, the app losing the device). While on, every
 * render call, the first one after this returns included, writes exact
 * silence (zeros) and consumes nothing: what was playing stops at the block
 * boundary with no fade-out (the device is being taken away; a host whose
 * device keeps playing and wants a click-free stop first pauses the
 * sources (2 ms fade) or sets the domain gains to 0 (gain_ramp_ms), renders
 * that long, then sets this).
 * Removed sources are retired at once. When it ends (on = 0), the next
 * render resumes: call sources drop audio older than their target (latency
 * does not grow), media continues where it stopped; both fade in from
 * silence over 2 ms (sample_rate / 500 frames: 96 at 48 kHz). The same
 * resume happens by itself when render calls stop for more than four block
 * periods (and at least 100 ms: audio servers deliver callbacks in bursts;
 * there sources without a start threshold continue without a fade).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine).
 * Thread safety: control threads. Real-time safe: no (takes the control
 * lock); never blocks the render or producer threads. */
int32_t rtmix_engine_set_interrupted(rtmix_engine *engine, int32_t on);

/* A pull source's callback: write `frames` interleaved frames of
 * `channels` channels to `out` and return how many were written (0..frames;
 * fewer is an underrun), or a negative value at the end of the stream (the
 * source then drains). It runs on the render thread inside
 * rtmix_render_*: it must be real-time safe (no locks, allocation, I/O or
 * waiting) and must not call rtmix functions other than the real-time
 * safe getters. NaN/Inf it writes are replaced by 0. */
typedef int32_t (*rtmix_pull_callback)(void *user_data, float *out, int32_t frames, int32_t channels);

/* Adds a pull source (WebRTC NetEq / pjmedia port style): instead of being
 * pushed to, it is asked for audio on the render thread, for the frames
 * each block needs (a few frames of resampler look-ahead more at most).
 * It runs on the render clock: no drift compensation, no start threshold;
 * push, flush and end return RTMIX_ERR_BAD_STATE for it.
 * Errors: as rtmix_source_add, and RTMIX_ERR_INVALID_ARGUMENT for a NULL
 * callback.
 * Thread safety / real-time: as rtmix_source_add. */
int32_t rtmix_source_add_pull(rtmix_engine *engine, const rtmix_source_config *cfg,
                              rtmix_pull_callback callback, void *user_data, rtmix_source_id *id);

/* Sets a source's linear gain (0..RTMIX_MAX_GAIN); the change is ramped.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, negative, NaN/Inf, too large),
 * RTMIX_ERR_NOT_FOUND.
 * Thread safety: control threads. Real-time safe: no (takes the control
 * lock); never blocks the render or producer threads. */
int32_t rtmix_source_set_gain(rtmix_engine *engine, rtmix_source_id id, float gain);

/* Mutes (muted != 0) or unmutes a source; ramped like a gain change. Mute
 * is the way to silence a CALL voice completely.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_NOT_FOUND.
 * Thread safety / real-time: as rtmix_source_set_gain. */
int32_t rtmix_source_set_muted(rtmix_engine *engine, rtmix_source_id id, int muted);

/* Sets a domain's linear gain (0..RTMIX_MAX_GAIN), ramped. The CALL domain
 * is clamped to the configured call_gain_floor (the call never silently
 * goes to 0); that clamp is not an error. Read the effective value with
 * rtmix_domain_get_gain.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, unknown domain, negative,
 * NaN/Inf, too large).
 * Thread safety / real-time: as rtmix_source_set_gain. */
int32_t rtmix_domain_set_gain(rtmix_engine *engine, rtmix_domain domain, float gain);

/* Stores a domain's effective (post-floor) target gain in `*gain`.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, unknown domain).
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_domain_get_gain(const rtmix_engine *engine, rtmix_domain domain, float *gain);

/* ------------------------------------------------------------------------ */
/* Render                                                                    */
/* ------------------------------------------------------------------------ */

/* Mixes `frames` interleaved frames at the engine's rate and channel count
 * into `out` (overwriting it). `out` must hold frames x channels samples
 * for the engine's *current* channel count, which a format change may
 * alter (rtmix_engine_set_output_format): prefer the _checked variants
 * below, which check the buffer's capacity under the render role. Output is
 * always finite and within [-1.0, 1.0]. No look-ahead: the mix adds no
 * latency beyond resampling.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, frames == 0),
 * RTMIX_ERR_TOO_MANY_FRAMES (frames > max_frames), RTMIX_ERR_BAD_STATE
 * (another thread is rendering this engine, or the format is changing).
 * On error (a NULL engine included) the first min(frames, max_frames)
 * samples of `out` are set to 0 (the part of the buffer that exists for
 * every channel count; the library cannot know the rest is there; with a
 * NULL engine max_frames is taken as 16384, the largest allowed) and the
 * rest is untouched.
 * Thread safety: the render thread (one at a time).
 * Real-time safe: yes. */
int32_t rtmix_render_f32(rtmix_engine *engine, float *out, uint32_t frames);

/* As rtmix_render_f32, converted to int16: sample x 32768 rounded to
 * nearest, saturated (never wraps). int16 pushed into a bypass source
 * (same rate and channels, gain 1, limiter threshold 0 dBFS) comes back
 * bit-exact for every value. */
int32_t rtmix_render_s16(rtmix_engine *engine, int16_t *out, uint32_t frames);

/* As rtmix_render_f32 / rtmix_render_s16, for a buffer `out` of
 * `capacity_samples` samples. Under the render role (so that a concurrent
 * rtmix_engine_set_output_format cannot change it in between) the library
 * checks capacity_samples >= frames x current channels and never writes
 * past capacity_samples. Any size_t is accepted: a capacity above
 * INT64_MAX (e.g. SIZE_MAX, "unknown") counts as unlimited.
 * Errors: as rtmix_render_f32, plus RTMIX_ERR_INVALID_ARGUMENT when the
 * buffer is too small for `frames` at the current channel count (query it
 * with rtmix_engine_get_config). On any error except a NULL `out`, the
 * first min(capacity_samples, frames x 2) samples of `out` are set to 0,
 * so a host that ignores the status plays silence.
 * Thread safety: the render thread (one at a time).
 * Real-time safe: yes. */
int32_t rtmix_render_f32_checked(rtmix_engine *engine, float *out, size_t capacity_samples,
                                 uint32_t frames);
int32_t rtmix_render_s16_checked(rtmix_engine *engine, int16_t *out, size_t capacity_samples,
                                 uint32_t frames);

/* ------------------------------------------------------------------------ */
/* Capture: echo cancellation against the whole playout, publish mix         */
/* ------------------------------------------------------------------------ */
/*
 * With capture_rate != 0 the engine also processes the microphone:
 *
 *   render: ... -> limiter -> out ---> [mono, to capture rate] -> reference
 *                                       FIFO (lock-free) ----------------+
 *   capture: mic -> downmix -> 10 ms frames -> echo canceller (speexdsp, <+
 *            reference aligned by delay and drift) -> residual-echo and
 *            noise suppression -> + media x publish gain -> out
 *
 * - Reference = exactly what render produced (after gains and limiter):
 *   the far-end voices AND the media, so neither echoes back.
 * - Threads: capture calls come from the device's input callback, one at a
 *   time: their own real-time thread, or the render thread right after
 *   render (duplex callbacks). A concurrent second capture call returns
 *   RTMIX_ERR_BAD_STATE.
 * - Latency: `out` lags `mic` by stats.capture_latency_frames: 0 when
 *   every call is a multiple of 10 ms, else 10 ms (once, on the first call
 *   that needs it), plus 10 ms when suppression or AGC is on (the
 *   preprocessor's frame).
 * - Alignment: the canceller needs the reference to lead the echo a
 *   little (the engine keeps an 8 ms lead) and never lag it. The delay
 *   comes from rtmix_set_stream_delay_ms or, when that is absent or wrong,
 *   from the engine's estimator (GCC-PHAT, 0..600 ms; a host hint that
 *   disagrees with it by more than 4 ms for ~0.5 s is replaced). Moving
 *   the delay (route change) keeps the adapted canceller. When the echo
 *   path itself moves by 20 ms or more, two consecutive estimator hops
 *   (256 ms apart) that see it move the delay and make the suppressor
 *   fall back to the echo the reference explains: measured, the echo
 *   leaks for 0.75-1.0 s after a jump of -100..+300 ms.
 * - Drift: render and capture may run on different clocks; the engine
 *   measures the reference FIFO's level against the calls' timing and,
 *   when the timing shows nothing (one duplex callback driving two
 *   devices, file processing), the echo's slide against the reference, and
 *   resamples the reference to follow (up to +-1000 ppm;
 *   RTMIX_EVENT_DRIFT_OUT_OF_RANGE beyond). On one clock it corrects
 *   nothing (aec_drift_ppm stays 0).
 * - Publish: `out` is the processed microphone plus the MEDIA domain
 *   (source gains applied, not the local media volume) at its publish gain
 *   (default 0). CALL audio is never published.
 */

/* Processes `frames` microphone frames (capture_rate, capture_channels,
 * interleaved) into `out` (the same layout: every channel carries the
 * processed mono voice plus published media). `out` may be the same
 * buffer as `mic`. NaN/Inf microphone samples are treated as 0 and
 * counted; `out` is always finite and within [-1.0, 1.0].
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, frames == 0),
 * RTMIX_ERR_TOO_MANY_FRAMES (frames > max_frames; `out` untouched),
 * RTMIX_ERR_BAD_STATE (capture is off, or another thread is in a capture
 * call on this engine). On RTMIX_ERR_BAD_STATE `out` is zero-filled (a
 * host that ignores the status publishes silence, not stale memory).
 * Thread safety: the capture thread (one at a time; may be the render
 * thread). Real-time safe: yes. */
int32_t rtmix_capture_process_f32(rtmix_engine *engine, const float *mic, float *out,
                                  uint32_t frames);

/* As rtmix_capture_process_f32, for int16 PCM (in: sample / 32768; out:
 * rounded, saturating). */
int32_t rtmix_capture_process_s16(rtmix_engine *engine, const int16_t *mic, int16_t *out,
                                  uint32_t frames);

/* The host's estimate of the playout-to-capture delay in ms (output +
 * input latency, as WebRTC's set_stream_delay_ms), 0..1000; -1 = unknown.
 * A hint: repeating the same value (or one within 4 ms of it) changes
 * nothing, and the engine's estimator replaces a hint that is wrong.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, out of range; nothing
 * changed), RTMIX_ERR_BAD_STATE (capture is off).
 * Thread safety: any thread. Real-time safe: yes (one atomic store). */
int32_t rtmix_set_stream_delay_ms(rtmix_engine *engine, int32_t ms);

/* Sets the gain (0..RTMIX_MAX_GAIN, ramped over 10 ms) at which a domain
 * is mixed into the capture output (what the RTC encoder sends). Only
 * RTMIX_DOMAIN_MEDIA can be published (default 0: media is heard locally
 * only); the local media volume (rtmix_domain_set_gain) does not affect
 * it. RTMIX_DOMAIN_CALL is refused: far-end voices are never sent back.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, CALL or unknown domain,
 * negative, NaN/Inf, too large), RTMIX_ERR_BAD_STATE (capture is off).
 * Thread safety: any thread. Real-time safe: yes (one atomic store). */
int32_t rtmix_domain_set_publish_gain(rtmix_engine *engine, rtmix_domain domain, float gain);

/* Stores a domain's publish gain in `*gain` (always 0 for CALL).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, unknown domain).
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_domain_get_publish_gain(const rtmix_engine *engine, rtmix_domain domain, float *gain);

/* The engine clock: what render-call stall detection, source positions
 * (A/V sync) and the capture path's render/capture drift measurement use.
 * `now_ns(user)` returns nanoseconds on any monotonic timeline. Default
 * (and after passing NULL): CLOCK_MONOTONIC read at each call. A host with
 * device timestamps (when the rendered block will play / the captured
 * block was recorded) gives better drift figures with its own clock; a
 * simulation or a file processor that runs faster than real time must
 * provide one (without it, calls much faster than real time are timed by
 * their sample counts only, and render stalls are judged on wall time).
 * `now_ns` runs on the render and capture threads: it must be real-time
 * safe and must not call back into the engine.
 * The same clock stamps events (rtmix_event.time_ns), times their rate
 * limit and the render stall/resume detection, with or without capture;
 * a host clock is then also read by control threads (in
 * rtmix_engine_next_event), so it must be callable from any thread.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine).
 * Thread safety: control threads, only while neither render nor capture
 * runs (before the device starts). Real-time safe: no. */
int32_t rtmix_engine_set_clock(rtmix_engine *engine, uint64_t (*now_ns)(void *user), void *user);

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

/* Set `stats->size` (and zero the rest).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT if stats is NULL.
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_engine_stats_init(rtmix_engine_stats *stats);
int32_t rtmix_source_stats_init(rtmix_source_stats *stats);

/* Copies engine statistics (up to stats->size bytes). Counters are read
 * without stopping the renderer, so fields may be from slightly different
 * moments.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small).
 * Thread safety: control threads. Real-time safe: no (takes the control
 * lock); never blocks the render or producer threads. */
int32_t rtmix_engine_get_stats(rtmix_engine *engine, rtmix_engine_stats *stats);

/* Test hook: makes the `nth` failable allocation from now on fail (1 = the
 * next one; 0 or negative = none), so a test can drive every allocation
 * failure point of rtmix_engine_create, rtmix_source_add and
 * rtmix_engine_set_output_format in turn, and returns how many failable
 * allocations were made since the previous call. Process-wide (allocations
 * on other threads count too); for tests only, never in production.
 * Errors: none. Thread safety: any thread. Real-time safe: no (test hook;
 * a first call may initialise the counters). */
int64_t rtmix_testing_fail_allocation(int64_t nth);

/* Copies one source's statistics (up to stats->size bytes).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small),
 * RTMIX_ERR_NOT_FOUND.
 * Thread safety / real-time: as rtmix_engine_get_stats. */
int32_t rtmix_source_get_stats(rtmix_engine *engine, rtmix_source_id id,
                               rtmix_source_stats *stats);

/* ------------------------------------------------------------------------ */
/* Events: why audio went missing                                            */
/* ------------------------------------------------------------------------ */

/* Event types (never renumbered). `value` meaning in brackets. */
#define RTMIX_EVENT_NONE 0            /* the queue was empty */
#define RTMIX_EVENT_UNDERRUN_BEGAN 1  /* a playing source ran dry [frames
                                         missing in that block] */
#define RTMIX_EVENT_UNDERRUN_ENDED 2  /* it has data again [output frames
                                         missed in the episode] */
#define RTMIX_EVENT_BUFFER_OVERFLOW 3 /* pushes refused, ring full [frames
                                         refused since the last report] */
#define RTMIX_EVENT_NONFINITE_INPUT 4 /* NaN/Inf pushed, replaced by 0
                                         [samples since the last report] */
#define RTMIX_EVENT_LIMITER_ENGAGED 5 /* the limiter started reducing gain
                                         [the overload: the gain that brings
                                         the block's loudest peak down to the
                                         threshold (threshold / peak), in
                                         millibels (dB x 100), rounded down:
                                         -1 or less] */
#define RTMIX_EVENT_RENDER_SLOW 6     /* a render call took more than half
                                         of its block's duration [ns] */
#define RTMIX_EVENT_EVENTS_DROPPED 7  /* a queue (256 events) was full;
                                         returned once the queued events
                                         are read [events lost since the
                                         last such report] */
/* Capture events (frame_time: capture frames processed before the call). */
#define RTMIX_EVENT_ECHO_PATH_CHANGED 8 /* the echo delay in use changed
                                         (estimator, or a new hint)
                                         [new delay, microseconds] */
#define RTMIX_EVENT_CANCELLER_RESET 9   /* the canceller was reset [reason:
                                         1 = diverged (its output was louder
                                         than its input for 0.5 s);
                                         2 = speexdsp's own test was about
                                         to fire (its error above the
                                         microphone for 45 of its 50
                                         frames: it would reset itself and
                                         print to stderr from the capture
                                         call)] */
#define RTMIX_EVENT_REFERENCE_MISSING 10 /* capture ran without reference
                                         (render not running); once per
                                         episode [samples missing] */
#define RTMIX_EVENT_DRIFT_OUT_OF_RANGE 11 /* render/capture clock drift at
                                         the follower's limit (+-1000 ppm)
                                         [ppm] */
/* Source timing and alarms. */
#define RTMIX_EVENT_SOURCE_STARTED 12   /* a source finished priming and
                                         started playing [frames it held] */
#define RTMIX_EVENT_SOURCE_DRAINED 13   /* a source ended with
                                         rtmix_source_end played out, tail
                                         included [input frames played] */
#define RTMIX_EVENT_AUDIO_DROPPED 14    /* a call source's oldest audio was
                                         dropped to bound its latency
                                         [frames dropped] */
#define RTMIX_EVENT_RENDER_STALLED 15   /* the render callback stopped
                                         arriving: no call for 4 block
                                         periods (at least 20 ms) while
                                         sources exist and the output is not
                                         marked interrupted. Detected on the
                                         control side, by
                                         rtmix_engine_next_event; once per
                                         absence [ns since the last call] */
#define RTMIX_EVENT_RENDER_RESUMED 16   /* rendering resumed after a stall or
                                         an interruption: the gap since the
                                         previous call exceeded 4 periods
                                         [ns it was absent] */
#define RTMIX_EVENT_CALL_AUDIO_MISSING 17 /* "no RTC sound": a call source
                                         produced nothing audible at the
                                         output for call_audio_missing_ms;
                                         once, re-armed when it is audible
                                         again. Silence is not counted
                                         while the source is drained (ended
                                         by rtmix_source_end and played
                                         out) or the engine interrupted
                                         [cause, RTMIX_CALL_MISSING_*] */
#define RTMIX_EVENT_DRIFT_SATURATED 18  /* a source's drift controller is at
                                         its limit (+-2000 ppm) [ppm] */
#define RTMIX_EVENT_LIMITER_HEAVY 19    /* the limiter reduced the gain by
                                         more than 6 dB; once per episode
                                         (it ends when the gain is back above
                                         -3 dB) [lowest gain, millibels] */

/* Causes of RTMIX_EVENT_CALL_AUDIO_MISSING (the event's value). */
#define RTMIX_CALL_MISSING_NOT_FED 1      /* nothing was pushed during the
                                             interval: the host stopped
                                             feeding the source (or never
                                             started) */
#define RTMIX_CALL_MISSING_SILENT_INPUT 2 /* audio is pushed but silent
                                             (below -60 dBFS): the far end or
                                             the decoder delivers silence */
#define RTMIX_CALL_MISSING_MUTED 3        /* audio is pushed and audible but
                                             the source is muted, or source x
                                             call domain gain makes it
                                             inaudible */
#define RTMIX_CALL_MISSING_STARVED 4      /* audio is pushed but never plays:
                                             too little to start or keep
                                             playing (underrun) */

/* rtmix_event.domain of engine-wide events. */
#define RTMIX_EVENT_DOMAIN_NONE (-1)

/* One event: rtmix_event_init, then rtmix_engine_next_event. */
typedef struct rtmix_event {
    uint32_t size;          /* set by rtmix_event_init */
    int32_t type;           /* RTMIX_EVENT_* */
    rtmix_source_id source; /* 0 for engine-wide events */
    int32_t domain;         /* the source's rtmix_domain;
                               RTMIX_EVENT_DOMAIN_NONE (-1) for engine-wide
                               events (and for a source event read after the
                               source was removed, if the renderer did not
                               know it). Was `reserved` (always 0) in 0.2. */
    uint64_t frame_time;    /* engine output frames rendered before the
                               block the event happened in */
    int64_t value;          /* see the type */
    /* --- appended in 0.3 (callers with the 32-byte struct still work) --- */
    uint64_t time_ns;       /* when it was posted: CLOCK_MONOTONIC in ns, or
                               the host clock of rtmix_engine_set_clock */
    uint32_t suppressed;    /* events of the same type and source held back
                               by the rate limit just before this one */
    uint32_t reserved;      /* 0 */
} rtmix_event;

/* Sets `ev->size` and clears the rest.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT if ev is NULL.
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_event_init(rtmix_event *ev);

/* Takes the oldest unread event. The renderer and the capture thread each
 * queue events (at most 256 each; render events are returned first);
 * control threads read them. On overflow the producer counts the loss
 * (rtmix_engine_stats.events_dropped) and, once the queued events have
 * been read, this call returns one RTMIX_EVENT_EVENTS_DROPPED with the
 * count: a host that drains until RTMIX_EVENT_NONE always sees it. When the queues are empty, this call checks
 * for a render stall (RTMIX_EVENT_RENDER_STALLED); otherwise it returns
 * RTMIX_OK with ev->type = RTMIX_EVENT_NONE. Poll it at least every few
 * hundred ms for timely alarms.
 * Rate limit: each (type, source) pair may post 16 events at once and 8
 * per second on average (on the engine's clock; sources share 16 lanes, by
 * id). Events over the limit are dropped and counted: the next event of the
 * pair that passes carries the count in `suppressed`, and
 * rtmix_engine_stats.events_suppressed keeps the total.
 * RTMIX_EVENT_EVENTS_DROPPED is never limited.
 * ev->size: 32 (the 0.2 struct: no time_ns/suppressed) or more.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, ev->size smaller than 32).
 * Thread safety: control threads. Real-time safe: no (takes the control
 * lock); never blocks the render or producer threads. */
int32_t rtmix_engine_next_event(rtmix_engine *engine, rtmix_event *ev);

/* A static name for an event type ("underrun_began", ...; "unknown").
 * Thread safety: any thread. Real-time safe: yes. Never returns NULL. */
const char *rtmix_event_name(int32_t type);

/* The audio session policy engine (rtmix_session_*) is declared in
 * rtmix_session.h (same library). */

#ifdef __cplusplus
}
#endif

#endif /* RTMIX_H */
