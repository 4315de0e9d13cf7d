// The floor calls libsamplerate directly (same library the engine wraps).
#include <samplerate.h>
