import ArgumentParser

/// A scripted run: `scroll:ITEM;wait;screenshot:PATH;quit`.
enum GalleryScript {
    enum Command: Equatable {
        /// Brings item ITEM to the top row.
        case scroll(Int)
        /// Waits until no load runs and the frame clock drew.
        case wait
        /// Writes the window as PNG and prints the cells as one JSON line.
        case screenshot(String)
        /// Ends the program.
        case quit
    }

    static func parse(_ script: String) throws -> [Command] {
        try script.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { step in
            let parts = step.split(separator: ":", maxSplits: 1).map(String.init)
            switch (parts[0], parts.count) {
            case ("scroll", 2):
                guard let item = Int(parts[1]), item >= 0 else { throw ValidationError("scroll needs an item index, got \(step)") }
                return .scroll(item)
            case ("wait", 1): return .wait
            case ("screenshot", 2): return .screenshot(parts[1])
            case ("quit", 1): return .quit
            default: throw ValidationError("unknown script step \(step) (scroll:ITEM, wait, screenshot:PATH, quit)")
            }
        }
    }
}
