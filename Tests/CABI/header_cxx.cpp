// header_cxx.cpp — include/rtmix.h must be usable from C++ (extern "C").
// scripts/c-tests checks it with `clang++ -std=c++17 -fsyntax-only` and then
// links it against librtmix.so: without extern "C" the names would be
// mangled and the link would fail.
#include "rtmix.h"

static_assert(sizeof(rtmix_source_id) == 4, "rtmix_source_id is uint32_t");
static_assert(RTMIX_DOMAIN_CALL == 0 && RTMIX_DOMAIN_MEDIA == 1, "domain values");

int main() {
    rtmix_engine_config cfg;
    rtmix_engine *engine = nullptr;
    if (rtmix_engine_config_init(&cfg) != RTMIX_OK) return 1;
    if (rtmix_engine_create(&cfg, &engine) != RTMIX_OK || engine == nullptr) return 1;
    rtmix_domain d = RTMIX_DOMAIN_MEDIA;  // enum usable as a C++ type
    float gain = 0.0f;
    int32_t st = rtmix_domain_get_gain(engine, d, &gain);
    rtmix_engine_destroy(engine);
    return (st == RTMIX_OK && gain == 1.0f && rtmix_status_string(RTMIX_OK) != nullptr) ? 0 : 1;
}
