/* Small static-inline C helpers for the Swift core: a control-thread mutex
 * (Synchronization.Mutex is not available in Embedded Swift) and a monotonic
 * clock. Nothing here is exported from the library. */
#ifndef RTMIX_SUPPORT_H
#define RTMIX_SUPPORT_H
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
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

/* CLOCK_MONOTONIC in nanoseconds (vDSO on Linux: no system call). */
static inline uint64_t rtmix_support_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
static inline float rtmix_support_log10f(float x) { return log10f(x); }
#endif
