/*
 * rejected_create.c — creates that fail validation must not leak.
 *
 * Issue 18: the installable (Embedded) library leaked 268 bytes per
 * rtmix_session_create rejected for its settings (a bad queue capacity, a
 * mode invalid with the category); the SwiftPM build did not. This program
 * makes 2,000 rejected session creates and 2,000 rejected engine creates
 * and compares the heap in use (glibc mallinfo2) before and after: a leak of
 * even 16 bytes per call would show as 32,000 bytes. Run by scripts/c-tests
 * (SwiftPM library) and scripts/install-check (the installed library).
 */
#include "rtmix.h"
#include "rtmix_session.h"

#include <malloc.h>
#include <stdio.h>

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                     \
        }                                                                      \
    } while (0)

static size_t heap_in_use(void) {
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* One round of rejected creates; returns how many were rejected. */
static int rejected_round(void) {
    int rejected = 0;
    rtmix_session *s = NULL;
    rtmix_session_settings st;
    rtmix_engine *e = NULL;
    rtmix_engine_config cfg;

    rtmix_session_settings_init(&st);
    st.queue_capacity = 3; /* below 16 */
    if (rtmix_session_create(&st, &s) == RTMIX_ERR_INVALID_ARGUMENT && s == NULL) rejected++;

    rtmix_session_settings_init(&st);
    st.base_category = RTMIX_SESSION_CATEGORY_AMBIENT;
    st.base_mode = RTMIX_SESSION_MODE_VOICE_CHAT; /* needs play-and-record */
    if (rtmix_session_create(&st, &s) == RTMIX_ERR_INVALID_ARGUMENT && s == NULL) rejected++;

    rtmix_session_settings_init(&st);
    st.max_modules = 0;
    if (rtmix_session_create(&st, &s) == RTMIX_ERR_INVALID_ARGUMENT && s == NULL) rejected++;

    rtmix_engine_config_init(&cfg);
    cfg.sample_rate = 1234;
    if (rtmix_engine_create(&cfg, &e) != RTMIX_OK && e == NULL) rejected++;
    return rejected;
}

int main(void) {
    int i, rejected = 0;
    size_t before, after;
    rtmix_session *s = NULL;
    rtmix_session_settings st;

    /* Warm up: one-time allocations (runtime metadata, stdio) happen here. */
    for (i = 0; i < 50; i++) rejected_round();
    rtmix_session_settings_init(&st);
    CHECK(rtmix_session_create(&st, &s) == RTMIX_OK && s != NULL);
    rtmix_session_destroy(s);

    before = heap_in_use();
    for (i = 0; i < 500; i++) rejected += rejected_round();
    after = heap_in_use();
    CHECK(rejected == 500 * 4);
    printf("rejected_create: %d rejected creates, heap in use %zu -> %zu bytes\n", rejected, before, after);
    CHECK(after <= before + 4096);

    printf("rejected_create: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
