import ArgumentParser
@testable import herald
import Testing
import HeraldTestSupport

/// What `--help` prints is read in terminals 80 columns wide, and its examples are pasted from
/// them.
@Suite(.ownThreads) struct HelpTests {
    /// Every command, subcommands included, with the words that run it (`herald bench send`).
    static func commands(_ command: any ParsableCommand.Type = Herald.self, path: String = "") -> [(String, any ParsableCommand.Type)] {
        let name = path.isEmpty ? command._commandName : path + " " + command._commandName
        return [(name, command)] + command.configuration.subcommands.flatMap { commands($0, path: name) }
    }

    /// ArgumentParser wraps help at the terminal's width with a hard line break: an example line
    /// longer than the terminal would paste as two commands. Each indented line of a command's
    /// discussion (its examples and lists), as rendered without a limit, must stand whole in the
    /// help rendered for 80 columns.
    @Test func examplesSurviveAnEightyColumnTerminal() {
        let commands = Self.commands()
        #expect(commands.count >= 11)
        for (name, command) in commands {
            let unwrapped = Herald.helpMessage(for: command, columns: 10_000)
            let narrow = Set(Herald.helpMessage(for: command, columns: 80).split(separator: "\n"))
            let discussion = unwrapped.components(separatedBy: "\nUSAGE:")[0]
            for line in discussion.split(separator: "\n") where line.first == " " {
                let whole = narrow.contains(line)
                #expect(whole, "\(name) --help: a line of \(line.count) columns is broken at 80: \(line)")
            }
        }
    }
}
