import Foundation
@testable import Osprey

/// Locates `shared/testdata/images` (beside the repository) and makes damaged copies of files.
enum TestData {
    /// `$OSPREY_TESTDATA`, or `../shared/testdata/images` next to the repository root.
    static let imagesDirectory: URL = {
        if let override = ProcessInfo.processInfo.environment["OSPREY_TESTDATA"] {
            return URL(fileURLWithPath: override)
        }
        let repoRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repoRoot.deletingLastPathComponent().appendingPathComponent("shared/testdata/images")
    }()

    static func url(_ name: String) -> URL { imagesDirectory.appendingPathComponent(name) }

    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    static func image(_ name: String, options: DecodingOptions = .default) throws -> Image {
        try Image(data: data(name), options: options)
    }

    /// Every image file in the test data folder.
    static var allImageNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: imagesDirectory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }
}
