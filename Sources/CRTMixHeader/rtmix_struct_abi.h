/* The one copy-in / copy-out of the C ABI's versioned structs, shared by the
 * engine's C layer (Sources/RTMix/CABI/CConversion.swift) and the session
 * engine's (Sources/RTMixSession/CABI+Session.swift). Static inline: compiled
 * into each Swift module that imports CRTMixHeader, never exported.
 *
 * Every public struct starts with `uint32_t size` and only grows at the end
 * (rtmix.h, "Conventions"):
 * - input: the library reads at most the caller's `size` bytes; later
 *   fields keep their defaults;
 * - output: the library writes at most the caller's `size` bytes and sets
 *   `size` to the bytes filled, min(caller's size, library's size);
 * - a `size` below the struct's first published size (`minimum`) is
 *   RTMIX_ERR_INVALID_ARGUMENT and nothing is read or written.
 * Real-time safe (memcpy/memset of at most one struct). */
#ifndef RTMIX_STRUCT_ABI_H
#define RTMIX_STRUCT_ABI_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "../../include/rtmix.h"

/* Copies min(caller's size, value_size) bytes of `caller` over `value`,
 * which holds the defaults. */
static inline int32_t rtmix_abi_copy_in(void *value, size_t value_size, const void *caller,
                                        uint32_t minimum) {
    uint32_t size;
    memcpy(&size, caller, sizeof size);
    if (size < minimum) return RTMIX_ERR_INVALID_ARGUMENT;
    memcpy(value, caller, size < value_size ? (size_t)size : value_size);
    return RTMIX_OK;
}

/* Copies min(caller's size, value_size) bytes of `value` into `caller` and
 * stores that count in the caller's `size`. */
static inline int32_t rtmix_abi_copy_out(void *caller, const void *value, size_t value_size,
                                         uint32_t minimum) {
    uint32_t size, filled;
    memcpy(&size, caller, sizeof size);
    if (size < minimum) return RTMIX_ERR_INVALID_ARGUMENT;
    filled = size < value_size ? size : (uint32_t)value_size;
    memcpy(caller, value, filled);
    memcpy(caller, &filled, sizeof filled);
    return RTMIX_OK;
}

/* `*_init` of a struct whose defaults are all zero: zero it, set `size`. */
static inline void rtmix_abi_init_empty(void *p, size_t size) {
    uint32_t s = (uint32_t)size;
    memset(p, 0, size);
    memcpy(p, &s, sizeof s);
}
#endif
