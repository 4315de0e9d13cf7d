# Sourced by scripts/live-check and scripts/aec-eval/live-record.
# pulse_null_sink_start DIR: starts a PulseAudio of our own in user space (as
# root too: --system=false), its files and native-protocol socket under DIR,
# no autospawn, with a null sink "rtmix_null" (48 kHz stereo) whose monitor
# is the default source: what a client plays comes back as its microphone.
# Exports PULSE_SERVER and PULSE_CLIENTCONFIG, sets pulse_pid, writes the
# server's log to DIR/pulse.log and `pactl info` to DIR/pactl.txt. Returns
# 1 when the server does not answer within 10 s (still running or not:
# the caller stops pulse_pid).
# The server asks for real-time scheduling (its sink thread SCHED_RR, the
# daemon nice -11), as a desktop's PulseAudio gets through rtkit; as root it
# sets them itself, elsewhere it goes on without. Without them, with two busy
# loops on the 2-core VM, the callbacks stopped for 1-6 s at a time in 2 of
# 4 live-check runs (7 times in one 20 s run, which failed on the
# host-measured ERLE; 2026-12-02); with them, none of 5 such runs saw an
# absence but the one the suspend provokes. RTMIX_PULSE_FLAGS adds flags of its own
# (--realtime=no --high-priority=no takes both back).
pulse_null_sink_start() {
    local dir=$1
    printf 'autospawn = no\n' >"$dir/client.conf"
    export PULSE_CLIENTCONFIG=$dir/client.conf
    mkdir -p "$dir/home" "$dir/run" "$dir/state"
    cat >"$dir/default.pa" <<PA
load-module module-native-protocol-unix socket=$dir/native auth-anonymous=1
load-module module-null-sink sink_name=rtmix_null rate=48000 channels=2 sink_properties=device.description=RTMix-null-sink
set-default-sink rtmix_null
set-default-source rtmix_null.monitor
PA
    HOME=$dir/home XDG_RUNTIME_DIR=$dir/run PULSE_RUNTIME_PATH=$dir/run PULSE_STATE_PATH=$dir/state \
        pulseaudio --daemonize=no --system=false --exit-idle-time=-1 -n -F "$dir/default.pa" \
        --use-pid-file=false --disable-shm=yes --log-target=stderr --high-priority=yes --realtime=yes ${RTMIX_PULSE_FLAGS:-} >"$dir/pulse.log" 2>&1 &
    pulse_pid=$!
    export PULSE_SERVER=unix:$dir/native
    for _ in $(seq 100); do
        timeout 5 pactl info >/dev/null 2>&1 && break
        kill -0 "$pulse_pid" 2>/dev/null || break
        sleep 0.1
    done
    timeout 5 pactl info >"$dir/pactl.txt" 2>&1
}
