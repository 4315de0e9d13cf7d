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
 *   header keeps working.
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

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

#define RTMIX_VERSION_MAJOR 0
#define RTMIX_VERSION_MINOR 1
#define RTMIX_VERSION_PATCH 0

/* Returns (major << 16) | (minor << 8) | patch of the linked library.
 * Thread safety: any thread. Real-time safe: yes. */
uint32_t rtmix_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

#define RTMIX_OK 0
/* A pointer was NULL, a value was out of range, NaN or infinite, or a frame
 * count was zero. */
#define RTMIX_ERR_INVALID_ARGUMENT (-1)
/* Sample rate or channel count is not supported (rates 8000..192000 Hz,
 * 1 or 2 channels). */
#define RTMIX_ERR_UNSUPPORTED_FORMAT (-2)
/* The source id is unknown or was removed. */
#define RTMIX_ERR_NOT_FOUND (-3)
/* A push did not fit completely; `*accepted` says how much did. */
#define RTMIX_ERR_BUFFER_FULL (-4)
/* A render call asked for more than `max_frames` frames. */
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

/* Resampler quality (libsamplerate converters). */
typedef enum rtmix_resampler_quality {
    RTMIX_RESAMPLER_SINC_FASTEST = 0, /* default: ~97 dB SNR, lowest cost */
    RTMIX_RESAMPLER_SINC_MEDIUM = 1,
    RTMIX_RESAMPLER_SINC_BEST = 2,
    RTMIX_RESAMPLER_LINEAR = 3 /* cheapest, audible aliasing; tests only */
} rtmix_resampler_quality;

/* Largest linear gain accepted by the gain setters (+24 dB). */
#define RTMIX_MAX_GAIN 16.0f

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
                                   default -1 */
    uint32_t resampler_quality; /* rtmix_resampler_quality; default
                                   RTMIX_RESAMPLER_SINC_FASTEST */
} rtmix_engine_config;

typedef struct rtmix_source_config {
    uint32_t size;          /* sizeof(rtmix_source_config); set by _init */
    int32_t domain;         /* rtmix_domain */
    uint32_t sample_rate;   /* source rate in Hz, 8000..192000 */
    uint32_t channels;      /* 1 or 2 */
    uint32_t buffer_frames; /* ring capacity in source frames, 0 = default
                               (at least 400 ms, rounded up to a power of
                               two); at most 2^22 */
    float gain;             /* initial linear gain, 0..RTMIX_MAX_GAIN;
                               default 1 */
    float target_buffer_ms; /* clock-drift compensation: 0 = off (default;
                               the source plays at its nominal rate). 5..2000:
                               the renderer keeps this much audio buffered
                               by resampling up to +-1000 ppm faster or
                               slower (inaudible), for sources pushed on a
                               clock of their own. Forces the resampler on
                               (no bit-exact bypass). */
} rtmix_source_config;

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
} rtmix_engine_stats;

typedef struct rtmix_source_stats {
    uint32_t size;            /* set by rtmix_source_stats_init */
    int32_t domain;
    uint32_t sample_rate;
    uint32_t channels;
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
 * RTMIX_ERR_NO_MEMORY. On error `*out` is set to NULL (if out is not NULL).
 * Thread safety: any thread. Real-time safe: no (allocates). */
int32_t rtmix_engine_create(const rtmix_engine_config *cfg, rtmix_engine **out);

/* Destroys the engine and every source. NULL is a no-op. No other call on
 * this engine may be running or follow.
 * Thread safety: any thread, once. Real-time safe: no (frees). */
void rtmix_engine_destroy(rtmix_engine *engine);

/* Copies the engine's effective configuration into `*cfg` (up to
 * cfg->size bytes; set cfg->size first, e.g. with rtmix_engine_config_init).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small).
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_engine_get_config(const rtmix_engine *engine, rtmix_engine_config *cfg);

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
 * size too small), RTMIX_ERR_UNSUPPORTED_FORMAT (rate/channels),
 * RTMIX_ERR_LIMIT (max_sources reached, counting removed sources whose fade
 * out the renderer has not finished), RTMIX_ERR_NO_MEMORY.
 * Thread safety: control threads. Real-time safe: no (allocates); never
 * blocks the render or producer threads. */
int32_t rtmix_source_add(rtmix_engine *engine, const rtmix_source_config *cfg,
                         rtmix_source_id *out_id);

/* Removes a source. The id is invalid as soon as this returns (pushes get
 * RTMIX_ERR_NOT_FOUND); the renderer fades the source out over the gain
 * ramp, and its memory is freed by a later control call (or at destroy)
 * once neither the render nor the producer thread can touch it.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_NOT_FOUND.
 * Thread safety: control threads. Real-time safe: no; never blocks the
 * render or producer threads. */
int32_t rtmix_source_remove(rtmix_engine *engine, rtmix_source_id id);

/* Pushes `frames` interleaved frames (at the source's rate and channel
 * count) into the source's ring. Writes what fits and stores the number of
 * frames written in `*accepted` (may be NULL). NaN/Inf samples are stored
 * as 0 and counted.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine or samples, frames == 0;
 * *accepted = 0), RTMIX_ERR_NOT_FOUND (*accepted = 0),
 * RTMIX_ERR_BUFFER_FULL (not everything fit: *accepted < frames; the frames
 * that did fit were written).
 * Thread safety: one producer thread per source at a time.
 * Real-time safe: yes (wait-free). */
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
 * into `out` (overwriting it). Output is always finite and within
 * [-1.0, 1.0].
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, frames == 0),
 * RTMIX_ERR_TOO_MANY_FRAMES (frames > max_frames), RTMIX_ERR_BAD_STATE
 * (another thread is rendering this engine). On error `out` is untouched.
 * Thread safety: the render thread (one at a time).
 * Real-time safe: yes. */
int32_t rtmix_render_f32(rtmix_engine *engine, float *out, uint32_t frames);

/* As rtmix_render_f32, converted to int16 with saturation (never wraps). */
int32_t rtmix_render_s16(rtmix_engine *engine, int16_t *out, uint32_t frames);

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

/* Copies one source's statistics (up to stats->size bytes).
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, size too small),
 * RTMIX_ERR_NOT_FOUND.
 * Thread safety / real-time: as rtmix_engine_get_stats. */
int32_t rtmix_source_get_stats(rtmix_engine *engine, rtmix_source_id id,
                               rtmix_source_stats *stats);


#ifdef __cplusplus
}
#endif

#endif /* RTMIX_H */
