/* The RTMix C ABI as the fuzzers see it: exactly the repository's public
 * header (the symbols come from the RTMixKit product's objects). */
#ifndef RTMIX_FUZZ_ABI_H
#define RTMIX_FUZZ_ABI_H
#include "../../../../include/rtmix.h"
#include "../../../../include/rtmix_session.h"
#endif
