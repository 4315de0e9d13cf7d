import ArgumentParser

/// `rtmix-cli`: the RTMix demo and file mixer.
@main
struct RTMixCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtmix-cli",
        abstract: "RTMix real-time mixer: a self-contained demo and an offline file mixer.",
        subcommands: [Demo.self, Mix.self, Aec.self, AecSim.self],
        defaultSubcommand: Demo.self)
}
