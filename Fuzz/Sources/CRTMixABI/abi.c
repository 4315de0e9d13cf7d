/* Intentionally empty: CRTMixABI only provides its header to Swift. */
#include "rtmix_fuzz_abi.h"
