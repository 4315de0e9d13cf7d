/* Small static-inline C helpers for the Swift core: a control-thread mutex
 * (Synchronization.Mutex is not available in Embedded Swift) and a monotonic
 * clock. Nothing here is exported from the library. */
#ifndef RTMIX_SUPPORT_H
#define RTMIX_SUPPORT_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

/* Control-thread lock. Never taken on the render or producer paths. */
static inline void *rtmix_support_mutex_create(void) {
    pthread_mutex_t *m = (pthread_mutex_t *)malloc(sizeof(pthread_mutex_t));
    if (m && pthread_mutex_init(m, NULL) != 0) { free(m); m = NULL; }
    return m;
}
static inline void rtmix_support_mutex_lock(void *m) { pthread_mutex_lock((pthread_mutex_t *)m); }
static inline void rtmix_support_mutex_unlock(void *m) { pthread_mutex_unlock((pthread_mutex_t *)m); }
static inline void rtmix_support_mutex_destroy(void *m) {
    if (m) { pthread_mutex_destroy((pthread_mutex_t *)m); free(m); }
}

/* Failable allocation (control paths only): posix_memalign with at least
 * pointer alignment; NULL on failure or overflow, never aborts. A request
 * of 0 bytes allocates 1. Free with rtmix_support_free. */
static inline void *rtmix_support_alloc(size_t bytes, size_t alignment) {
    void *p = NULL;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0) return NULL;
    return p;
}
static inline void rtmix_support_free(void *p) { free(p); }
/* Zeroed memory from calloc, for fuzz builds only (RTMIX_FUZZ_LAZY_ZERO,
 * see Allocation.allocate(repeating:)): calloc takes memory the allocator
 * knows is zero (fresh pages) without writing it, so untouched pages are
 * never faulted in. Alignments above malloc's fall back to posix_memalign
 * and memset. NULL on failure; free with rtmix_support_free. */
static inline void *rtmix_support_alloc_zeroed(size_t bytes, size_t alignment) {
    if (alignment <= _Alignof(max_align_t)) return calloc(bytes ? bytes : 1, 1);
    void *p = rtmix_support_alloc(bytes, alignment);
    if (p) memset(p, 0, bytes);
    return p;
}
/* Zero-fills n bytes (control thread: zeroed buffers at allocation). */
static inline void rtmix_support_zero(void *p, size_t n) { memset(p, 0, n); }

/* CLOCK_MONOTONIC in nanoseconds (vDSO on Linux: no system call). */
static inline uint64_t rtmix_support_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Control threads only: sleeps about `ns` nanoseconds (rtmix_source_remove
 * waiting for a render pass that may be inside a pull callback). */
static inline void rtmix_support_sleep_ns(uint64_t ns) {
    struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
    nanosleep(&ts, NULL);
}

/* Per-thread: the engine whose render pass this thread is inside (NULL:
 * none). Set and cleared by the renderer; read by rtmix_source_remove to
 * tell a call from inside that engine's pull callback, which must not wait
 * for its own pass. Thread-local storage: no system call. */
static inline void **rtmix_support_render_engine(void) {
    static _Thread_local void *engine;
    return &engine;
}

/* dB <-> linear and one-pole smoothing coefficients (control paths only). */
static inline float rtmix_support_db_to_linear(float db) { return powf(10.0f, db / 20.0f); }
static inline float rtmix_support_linear_to_db(float g) { return g > 0.0f ? 20.0f * log10f(g) : -200.0f; }
static inline float rtmix_support_one_pole_coeff(float seconds, float rate) {
    return 1.0f - expf(-1.0f / (seconds * rate));
}
/* Plain libm wrappers for the Swift core (tables built at init, and the
 * capture path's per-frame statistics). */
static inline double rtmix_support_cos(double x) { return cos(x); }
static inline double rtmix_support_exp(double x) { return exp(x); }
static inline float rtmix_support_exp_f(float x) { return expf(x); }
static inline double rtmix_support_sin(double x) { return sin(x); }
static inline float rtmix_support_sqrtf(float x) { return sqrtf(x); }
static inline double rtmix_support_sqrt(double x) { return sqrt(x); }
static inline float rtmix_support_log10f(float x) { return log10f(x); }
#if defined(__clang__)
/* Four square roots at once (the residual-echo suppressor's per-bin gains,
 * one instruction where the target has one); Swift sees SIMD4<Float>. */
typedef float rtmix_support_float4 __attribute__((ext_vector_type(4)));
static inline rtmix_support_float4 rtmix_support_sqrtf4(rtmix_support_float4 x) {
    return __builtin_elementwise_sqrt(x);
}
/* Lane l of a, b, c, d to row l (a 4x4 transpose: the FFT's first pass
 * stores four groups computed one per lane). Shuffles only. */
static inline void rtmix_support_transpose4(rtmix_support_float4 a, rtmix_support_float4 b,
                                            rtmix_support_float4 c, rtmix_support_float4 d,
                                            rtmix_support_float4 *r0, rtmix_support_float4 *r1,
                                            rtmix_support_float4 *r2, rtmix_support_float4 *r3) {
    rtmix_support_float4 ab_lo = __builtin_shufflevector(a, b, 0, 4, 1, 5);
    rtmix_support_float4 ab_hi = __builtin_shufflevector(a, b, 2, 6, 3, 7);
    rtmix_support_float4 cd_lo = __builtin_shufflevector(c, d, 0, 4, 1, 5);
    rtmix_support_float4 cd_hi = __builtin_shufflevector(c, d, 2, 6, 3, 7);
    *r0 = __builtin_shufflevector(ab_lo, cd_lo, 0, 1, 4, 5);
    *r1 = __builtin_shufflevector(ab_lo, cd_lo, 2, 3, 6, 7);
    *r2 = __builtin_shufflevector(ab_hi, cd_hi, 0, 1, 4, 5);
    *r3 = __builtin_shufflevector(ab_hi, cd_hi, 2, 3, 6, 7);
}
#endif
/* The drift resampler's kernel table: RTMIX_DRIFT_PHASES + 1 phases of a
 * RTMIX_DRIFT_TAPS-tap Kaiser-windowed (beta 8) full-band sinc, computed
 * once per process (pthread_once) into static storage and shared by every
 * DriftResampler: creating one costs no table work and no table memory.
 * Control paths only (the first call computes). Tap k of phase p weights
 * input[i0 - (TAPS/2 - 1) + k] for an output at i0 + p / PHASES. */
#define RTMIX_DRIFT_TAPS 48
#define RTMIX_DRIFT_PHASES 256
static inline float *rtmix_support_drift_table_storage(void) {
    static float storage[(RTMIX_DRIFT_PHASES + 1) * RTMIX_DRIFT_TAPS];
    return storage;
}
static inline double rtmix_support_bessel_i0(double x) {
    double sum = 1.0, term = 1.0, k = 1.0;
    while (term > 1e-12 * sum) {
        term *= (x / (2 * k)) * (x / (2 * k));
        sum += term;
        k += 1;
    }
    return sum;
}
static inline void rtmix_support_drift_table_compute(void) {
    const double beta = 8.0, half = RTMIX_DRIFT_TAPS / 2, pi = 3.14159265358979323846;
    const double norm = rtmix_support_bessel_i0(beta);
    for (int p = 0; p <= RTMIX_DRIFT_PHASES; p++) {
        double frac = (double)p / RTMIX_DRIFT_PHASES;
        for (int k = 0; k < RTMIX_DRIFT_TAPS; k++) {
            double t = (double)(k - (RTMIX_DRIFT_TAPS / 2 - 1)) - frac;
            double sinc = t == 0 ? 1.0 : sin(pi * t) / (pi * t);
            double r = t / half;
            double w = r * r >= 1 ? 0.0 : rtmix_support_bessel_i0(beta * sqrt(1 - r * r)) / norm;
            rtmix_support_drift_table_storage()[p * RTMIX_DRIFT_TAPS + k] = (float)(sinc * w);
        }
    }
}
static inline const float *rtmix_support_drift_table(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, rtmix_support_drift_table_compute);
    return rtmix_support_drift_table_storage();
}
#endif
