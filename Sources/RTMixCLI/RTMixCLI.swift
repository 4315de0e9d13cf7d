import ArgumentParser
import RTMix

/// `rtmix-cli`: the RTMix demo and file mixer.
@main
struct RTMixCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtmix-cli",
        abstract: "RTMix real-time mixer: a self-contained demo, an offline file mixer, echo-canceller tools and a live device host.",
        version: "rtmix-cli \(RTMixVersion.major).\(RTMixVersion.minor).\(RTMixVersion.patch)",
        subcommands: [Demo.self, Mix.self, Aec.self, AecSim.self, Live.self],
        defaultSubcommand: Demo.self)
}
