// header_cxx.cpp — include/rtmix.h and include/rtmix_session.h must be
// usable from C++ (extern "C").
// scripts/c-tests checks it with `clang++ -std=c++17 -fsyntax-only` and then
// links it against librtmix.so: without extern "C" the names would be
// mangled and the link would fail.
#include "rtmix.h"
#include "rtmix_session.h"
#include "rtmix.hpp"

#include <cstdio>

static_assert(sizeof(rtmix_source_id) == 4, "rtmix_source_id is uint32_t");
static_assert(RTMIX_DOMAIN_CALL == 0 && RTMIX_DOMAIN_MEDIA == 1, "domain values");

// Issue 11: a mono engine switched to stereo behind the wrapper's back (a
// plain C call) must not make try_render write past a span sized for mono;
// the span is zero-filled instead. Returns the number of failed checks.
static int hpp_render_after_format_change() {
    int failed = 0;
    rtmix_engine_config cfg;
    rtmix_engine_config_init(&cfg);
    cfg.channels = 1;
    rtmix::engine eng(cfg);
    if (rtmix_engine_set_output_format(eng.get(), 48000, 2) != RTMIX_OK) return 1;
    static float buf[960];
    for (float &x : buf) x = 7.0f;
    int32_t st = eng.try_render(rtmix::span<float>(buf, 480));  // 480 mono frames
    int overrun = 0, stale = 0;
    for (int i = 480; i < 960; i++) overrun += buf[i] != 7.0f;
    for (int i = 0; i < 480; i++) stale += buf[i] != 0.0f;
    if (st != RTMIX_ERR_INVALID_ARGUMENT) { std::printf("FAIL try_render status %d\n", (int)st); failed++; }
    if (overrun) { std::printf("FAIL try_render wrote %d samples past the span\n", overrun); failed++; }
    if (stale) { std::printf("FAIL %d stale samples left in the span\n", stale); failed++; }
    // Through the wrapper the cached format follows.
    eng.set_output_format(16000, 1);
    if (eng.channels() != 1 || eng.sample_rate() != 16000) { std::printf("FAIL cached format\n"); failed++; }
    if (eng.try_render(rtmix::span<float>(buf, 160)) != RTMIX_OK) { std::printf("FAIL render after change\n"); failed++; }
    return failed;
}

int main() {
    if (hpp_render_after_format_change() != 0) return 1;
    rtmix_engine_config cfg;
    rtmix_engine *engine = nullptr;
    if (rtmix_engine_config_init(&cfg) != RTMIX_OK) return 1;
    if (rtmix_engine_create(&cfg, &engine) != RTMIX_OK || engine == nullptr) return 1;
    rtmix_domain d = RTMIX_DOMAIN_MEDIA;  // enum usable as a C++ type
    float gain = 0.0f;
    int32_t st = rtmix_domain_get_gain(engine, d, &gain);
    rtmix_engine_destroy(engine);
    rtmix_session_config scfg;  // the session header's functions link too
    if (rtmix_session_config_init(&scfg) != RTMIX_OK) return 1;
    return (st == RTMIX_OK && gain == 1.0f && rtmix_status_string(RTMIX_OK) != nullptr) ? 0 : 1;
}
