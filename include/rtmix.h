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

/* Resampler quality. SINC_FASTEST (default): speexdsp's resampler
 * (quality 3, >= 97 dB SNR on a 1 kHz tone) for a source whose rate has a
 * small integer ratio to the output's (8/12/16/24/32/64/96/192 kHz -> 48 kHz)
 * and no drift compensation; libsamplerate SRC_SINC_FASTEST otherwise
 * (44.1 kHz, drift compensation). The other values always use the
 * libsamplerate converter of that name. */
typedef enum rtmix_resampler_quality {
    RTMIX_RESAMPLER_SINC_FASTEST = 0, /* default: lowest cost */
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
                                 200; 0 = canceller off */
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
                                       (> 0: render runs faster) */
    int32_t aec_double_talk;        /* 1 while near-end talk overlaps the
                                       far end */
    int32_t aec_diverged;           /* 1 while the canceller adds energy */
    uint32_t capture_rate;          /* the configured capture rate */
    uint64_t aec_double_talk_frames; /* capture frames in double talk */
    uint64_t aec_resets;            /* canceller resets after divergence */
    uint64_t capture_calls_without_reference; /* capture calls that found
                                       no reference (render not running) */
    uint64_t aec_delay_changes;     /* times the delay in use changed */
    uint64_t capture_reference_overflow_frames; /* reference frames the
                                       render thread dropped because capture
                                       was not draining them */
    uint64_t capture_nonfinite_samples; /* NaN/Inf mic samples, replaced
                                       by 0 */
    uint64_t capture_ns_max;        /* longest capture call */
    uint64_t memory_bytes;          /* bytes RTMix holds for the engine and
                                       its sources (removed ones until
                                       freed), as counted against
                                       max_memory_bytes */
} rtmix_engine_stats;

/* aec_delay_source values. */
#define RTMIX_DELAY_SOURCE_NONE 0      /* no delay known yet: the newest
                                          reference is used */
#define RTMIX_DELAY_SOURCE_HINT 1      /* rtmix_set_stream_delay_ms */
#define RTMIX_DELAY_SOURCE_ESTIMATOR 2 /* the engine's own estimate */

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
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_NOT_FOUND.
 * Thread safety: control threads. Real-time safe: no; never blocks the
 * render or producer threads. */
int32_t rtmix_source_remove(rtmix_engine *engine, rtmix_source_id id);

/* Pushes `frames` interleaved frames (at the source's rate and channel
 * count) into the source's ring. Writes what fits and stores the number of
 * frames written in `*accepted` (may be NULL). NaN/Inf samples are stored
 * as 0 and counted; subnormal samples are stored as 0 (not counted).
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
 * into `out` (overwriting it). `out` must hold frames x channels samples
 * for the engine's *current* channel count, which a format change may
 * alter (rtmix_engine_set_output_format): prefer the _checked variants
 * below, which check the buffer's capacity under the render role. Output is
 * always finite and within [-1.0, 1.0]. No look-ahead: the mix adds no
 * latency beyond resampling.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, frames == 0),
 * RTMIX_ERR_TOO_MANY_FRAMES (frames > max_frames), RTMIX_ERR_BAD_STATE
 * (another thread is rendering this engine, or the format is changing).
 * On error the first min(frames, max_frames) samples of `out` are set to 0
 * (the part of the buffer that exists for every channel count; the library
 * cannot know the rest is there) and the rest is untouched.
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
 * past capacity_samples.
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
 *   the delay (route change) keeps the adapted canceller.
 * - Drift: render and capture may run on different clocks; the engine
 *   measures the reference FIFO's level and resamples the reference to
 *   follow (up to +-1000 ppm; RTMIX_EVENT_DRIFT_OUT_OF_RANGE beyond).
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

/* The clock the capture path times render and capture calls with, to
 * measure the drift between the two devices: `now_ns(user)` returns
 * nanoseconds on any monotonic timeline. Default (and after passing NULL):
 * CLOCK_MONOTONIC read at each call. A host with device timestamps (when
 * the rendered block will play / the captured block was recorded) gives
 * better drift figures with its own clock; a simulation or a file
 * processor that runs faster than real time must provide one (without it,
 * calls much faster than real time are timed by their sample counts only).
 * `now_ns` runs on the render and capture threads: it must be real-time
 * safe and must not call back into the engine.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL engine), RTMIX_ERR_BAD_STATE
 * (capture is off).
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
                                         [lowest gain of the block, millibels
                                         (dB x 100), negative] */
#define RTMIX_EVENT_RENDER_SLOW 6     /* a render call took more than half
                                         of its block's duration [ns] */
#define RTMIX_EVENT_EVENTS_DROPPED 7  /* the queue (256 events) was full
                                         [events lost] */
/* Capture events (frame_time: capture frames processed before the call). */
#define RTMIX_EVENT_ECHO_PATH_CHANGED 8 /* the echo delay in use changed
                                         (estimator, or a new hint)
                                         [new delay, microseconds] */
#define RTMIX_EVENT_CANCELLER_RESET 9   /* the canceller was reset [reason:
                                         1 = diverged (its output was louder
                                         than its input for 0.5 s)] */
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
                                         arriving [ns since the last one] */
#define RTMIX_EVENT_RENDER_RESUMED 16   /* rendering resumed after a stall or
                                         an interruption [ns it was absent] */
#define RTMIX_EVENT_CALL_AUDIO_MISSING 17 /* "no RTC sound": a call source
                                         produced nothing audible for the
                                         alarm interval [cause,
                                         RTMIX_CALL_MISSING_*] */
#define RTMIX_EVENT_DRIFT_SATURATED 18  /* a source's drift controller is at
                                         its limit (+-1000 ppm) [ppm] */
#define RTMIX_EVENT_LIMITER_HEAVY 19    /* the limiter reduced the gain by
                                         more than 6 dB [lowest gain,
                                         millibels] */

typedef struct rtmix_event {
    uint32_t size;          /* set by rtmix_event_init */
    int32_t type;           /* RTMIX_EVENT_* */
    rtmix_source_id source; /* 0 for engine-wide events */
    uint32_t reserved;      /* 0 */
    uint64_t frame_time;    /* engine output frames rendered before the
                               block the event happened in */
    int64_t value;          /* see the type */
} rtmix_event;

/* Sets `ev->size` and clears the rest.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT if ev is NULL.
 * Thread safety: any thread. Real-time safe: yes. */
int32_t rtmix_event_init(rtmix_event *ev);

/* Takes the oldest unread event. The renderer and the capture thread each
 * queue events (at most 256 each; render events are returned first;
 * on overflow it counts the loss and reports RTMIX_EVENT_EVENTS_DROPPED);
 * control threads read them. When the queue is empty, returns RTMIX_OK with
 * ev->type = RTMIX_EVENT_NONE.
 * Errors: RTMIX_ERR_INVALID_ARGUMENT (NULL, ev->size smaller than 32).
 * Thread safety: control threads. Real-time safe: no (takes the control
 * lock); never blocks the render or producer threads. */
int32_t rtmix_engine_next_event(rtmix_engine *engine, rtmix_event *ev);

/* A static name for an event type ("underrun_began", ...; "unknown").
 * Thread safety: any thread. Real-time safe: yes. Never returns NULL. */
const char *rtmix_event_name(int32_t type);

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
typedef struct rtmix_session_config {
    uint32_t size;     /* sizeof(rtmix_session_config); set by _init */
    uint32_t category; /* rtmix_session_category */
    uint32_t mode;     /* rtmix_session_mode */
    uint32_t options;  /* RTMIX_SESSION_OPTION_* bits */
} rtmix_session_config;

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

typedef struct rtmix_session_alarm {
    uint32_t size;          /* set by _init */
    uint32_t code;          /* RTMIX_SESSION_ALARM_* */
    uint32_t severity;      /* RTMIX_SESSION_SEVERITY_* */
    rtmix_session_module_id module;         /* module the alarm is about */
    rtmix_session_module_id related_module; /* second module involved */
    uint32_t detail;        /* per code, see above */
    uint64_t time_ms;       /* host time at which it was raised */
} rtmix_session_alarm;

typedef struct rtmix_session_state {
    uint32_t size;           /* set by _init */
    uint32_t category;       /* configuration the engine believes is set */
    uint32_t mode;
    uint32_t options;
    int32_t active;          /* 1 if the session is active */
    int32_t interrupted;     /* 1 during an interruption (until recovered) */
    int32_t call_held;       /* 1 while the RTC call is held */
    int32_t foreground;      /* 1 in the foreground */
    uint32_t mic_permission; /* rtmix_session_mic_permission */
    uint32_t engine_sample_rate; /* mixer format the engine asked for */
    uint32_t engine_channels;
    uint32_t active_modules; /* modules with a request */
    uint32_t output;         /* rtmix_session_port of the last route */
    uint32_t pending_actions;
    uint32_t pending_alarms;
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

#endif /* RTMIX_H */
