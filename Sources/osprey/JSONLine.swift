import Foundation

/// One-line JSON output with sorted keys, as every `--json` flag prints it.
enum JSONLine {
    static func string<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
