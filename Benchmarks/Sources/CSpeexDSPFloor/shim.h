// The engine-backend floor calls speexdsp's resampler directly (same library
// the engine's Resampler uses for voice-rate sources).
#include <speex/speex_resampler.h>
